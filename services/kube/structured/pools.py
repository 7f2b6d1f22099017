"""Resource pools as the allocator sees them from one node.

Mirrors ``GatherPools`` in ``k8s.io/dynamic-resource-allocation/structured``:
a pool is the set of ResourceSlices with the same driver and pool name that
are reachable from the node (``nodeName`` equal to the node, ``allNodes``, or
a ``nodeSelector`` matching it). Only slices of the newest pool generation
count; a pool with fewer slices than ``resourceSliceCount`` is *incomplete*,
one in which a device name repeats is *invalid*.

`SliceIndex` sorts the slices once (by node name, cluster-wide with parsed
node selectors) and remembers the pools of each node it was asked about, so
that the scheduler, which asks for every node and every pod, does not rescan
every slice each time. Build a new index when the slices change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from services.kube.node_selectors import NodeSelector, NodeSelectorError

DeviceID = tuple[str, str, str]
"""(driver, pool, device): a device's identity in allocation results."""


class PoolError(ValueError):
    """Slices that cannot be interpreted (for example an unparsable node selector)."""


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    generation: int
    slices: list[Mapping[str, Any]] = field(default_factory=list)
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _spec(slice_: Mapping[str, Any]) -> Mapping[str, Any]:
    return slice_.get("spec") or {}


def _slice_name(slice_: Mapping[str, Any]) -> str:
    return str((slice_.get("metadata") or {}).get("name", ""))


def _add_slice(pools: dict[tuple[str, str], Pool], slice_: Mapping[str, Any]) -> None:
    spec = _spec(slice_)
    pool_spec = spec.get("pool") or {}
    key = (str(spec.get("driver", "")), str(pool_spec.get("name", "")))
    generation = int(pool_spec.get("generation") or 0)
    pool = pools.get(key)
    if pool is None:
        pools[key] = Pool(key[0], key[1], generation, [slice_])
        return
    if generation < pool.generation:
        return  # Out-dated.
    if generation > pool.generation:
        # Newer, replaces all old slices.
        pool.generation = generation
        pool.slices = []
    pool.slices.append(slice_)


def _finish(pools: Iterable[Pool]) -> list[Pool]:
    result: list[Pool] = []
    for pool in pools:
        count = int((_spec(pool.slices[0]).get("pool") or {}).get("resourceSliceCount") or 0)
        pool.is_incomplete = len(pool.slices) != count
        seen: set[str] = set()
        for slice_ in pool.slices:
            for device in _spec(slice_).get("devices") or ():
                name = str(device.get("name", ""))
                if name in seen and not pool.is_invalid:
                    pool.is_invalid = True
                    pool.invalid_reason = f"duplicate device name {name}"
                seen.add(name)
        result.append(pool)
    return result


class SliceIndex:
    """Slices indexed for repeated per-node pool gathering."""

    def __init__(self, slices: Iterable[Mapping[str, Any]]) -> None:
        self._by_node: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
        self._all_nodes: list[tuple[int, Mapping[str, Any]]] = []
        self._selected: list[tuple[int, Mapping[str, Any], NodeSelector | str]] = []
        self._pools: dict[Any, list[Pool]] = {}
        for position, slice_ in enumerate(slices):
            spec = _spec(slice_)
            node_name = spec.get("nodeName")
            if node_name:
                self._by_node.setdefault(str(node_name), []).append((position, slice_))
            elif spec.get("allNodes"):
                self._all_nodes.append((position, slice_))
            elif spec.get("nodeSelector") is not None:
                parsed: NodeSelector | str
                try:
                    parsed = NodeSelector.parse(spec["nodeSelector"])
                except NodeSelectorError as err:
                    # Reported when a node asks, as Kubernetes does.
                    parsed = f"node selector in resource slice {_slice_name(slice_)}: {err}"
                self._selected.append((position, slice_, parsed))
            # Anything else is a future extension and is skipped.

    def pools_for(self, node: Mapping[str, Any] | None) -> list[Pool]:
        """The pools reachable from a node (None: only cluster-wide slices with allNodes).

        The same node (name and labels) gets the same `Pool` objects back; treat them as read-only.
        """
        metadata = (node or {}).get("metadata") or {}
        cache_key: Any = None
        if node is not None:
            labels = metadata.get("labels") or {}
            cache_key = (metadata.get("name", ""), frozenset(labels.items()))
        pools = self._pools.get(cache_key)
        if pools is None:
            pools = self._gather(node)
            self._pools[cache_key] = pools
        return pools

    def _gather(self, node: Mapping[str, Any] | None) -> list[Pool]:
        node_name = str(((node or {}).get("metadata") or {}).get("name", "")) if node else ""
        chosen: list[tuple[int, Mapping[str, Any]]] = list(self._by_node.get(node_name, ())) if node_name else []
        chosen += self._all_nodes
        for position, slice_, selector in self._selected:
            if isinstance(selector, str):
                raise PoolError(selector)
            if selector.matches(node):
                chosen.append((position, slice_))
        chosen.sort(key=lambda item: item[0])
        pools: dict[tuple[str, str], Pool] = {}
        for _, slice_ in chosen:
            _add_slice(pools, slice_)
        return _finish(pools.values())


def gather_pools(slices: Iterable[Mapping[str, Any]], node: Mapping[str, Any] | None) -> list[Pool]:
    """All pools with devices accessible from ``node`` (``GatherPools``).

    Raises `PoolError` for a slice whose node selector cannot be parsed.
    """
    return SliceIndex(slices).pools_for(node)
