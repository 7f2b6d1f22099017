"""Per node, a version that moves whenever the usage of a pool the node reaches changes.

Why: the equivalence cache (``equivalence_cache``) may reuse DynamicResources'
verdict on a node only while the devices of every pool that node reaches are
used exactly as before. Recomputing that from the pools' usage generations
cost a call and a tuple per node and cycle; this index keeps the answer
ready, as one integer per node, updated only when a pool's usage changes
(the claim assume cache reports each change, in-flight allocations included).

Versions come from one counter and are never reused: learning a node's pools
again (its labels changed, the slices changed) gives it a fresh version too,
so a version remembered earlier can never match by accident.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

PoolID = tuple[str, str]  # (driver, pool name)


class NodeUsage:
    def __init__(self) -> None:
        self._versions: dict[str, int] = {}
        self._nodes_of_pool: dict[PoolID, set[str]] = {}
        self._pools_of_node: dict[str, tuple[PoolID, ...]] = {}
        self._counter = itertools.count(1)

    @property
    def versions(self) -> Mapping[str, int]:
        """Node name -> usage version, for the nodes whose pools are known (read-only, live)."""
        return self._versions

    def learn(self, node: str, pools: tuple[PoolID, ...] | None) -> None:
        """The pools ``node`` reaches now; None when they cannot be told (the node then has no version)."""
        for pool in self._pools_of_node.pop(node, ()):
            nodes = self._nodes_of_pool.get(pool)
            if nodes is not None:
                nodes.discard(node)
                if not nodes:
                    del self._nodes_of_pool[pool]
        if pools is None:
            self._versions.pop(node, None)
            return
        self._pools_of_node[node] = pools
        for pool in pools:
            self._nodes_of_pool.setdefault(pool, set()).add(node)
        self._versions[node] = next(self._counter)

    def pool_changed(self, pool: PoolID) -> None:
        for node in self._nodes_of_pool.get(pool, ()):
            self._versions[node] = next(self._counter)

    def clear(self) -> None:
        """Forget every node (the slices changed); the counter goes on."""
        self._versions.clear()
        self._nodes_of_pool.clear()
        self._pools_of_node.clear()
