"""Remembered Filter statuses and raw Score values of node-local plugins, per pod spec and node version.

Why: every cycle runs each Filter plugin on up to 230 of 500 nodes and each
Score plugin on every feasible node. A run of pods with the same spec (one
Deployment, one claim template) asks the same questions of nodes of which
only one changed since the previous pod. Python pays microseconds per call
where Go pays nanoseconds, so the repetition dominated the cycle.

A plugin opts in with ``node_local = True`` when its Filter status and raw
Score depend only on the pod's ``spec`` and the node's ``NodeInfo`` (the node
object and the pods on it), plus its own fixed arguments — NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity, NodeResourcesFit and
BalancedAllocation do. Whatever such a plugin puts into the cycle state in
PreFilter/PreScore is itself derived from the pod spec. A NodeInfo's
``generation`` changes whenever the node or its pods change, and the node
object is compared by identity as well, so an entry is used only for the very
same node version. Normalization (which looks at all nodes) always runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from services.scheduler.node_info import NodeInfo

DEFAULT_MAX_ENTRIES = 1 << 18
_MISSING: Any = object()


def pod_signature(pod: Mapping[str, Any]) -> bytes:
    """The pod spec, canonically encoded: equal for pods node-local plugins cannot tell apart."""
    return orjson.dumps(pod.get("spec") or {}, option=orjson.OPT_SORT_KEYS)


def is_node_local(plugin: Any) -> bool:
    return bool(getattr(plugin, "node_local", False))


class NodeLocalMemo:
    """(plugin, pod signature, node name) → (node generation, node object, remembered value)."""

    def __init__(self, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: dict[tuple[str, bytes, str], tuple[int, Any, Any]] = {}
        self.hits = 0
        self.misses = 0

    def get(self, plugin: str, signature: bytes, info: NodeInfo) -> Any:
        """The remembered value for this exact node version, or ``MISSING``."""
        entry = self._entries.get((plugin, signature, info.name))
        if entry is not None and entry[0] == info.generation and entry[1] is info.node:
            self.hits += 1
            return entry[2]
        self.misses += 1
        return _MISSING

    def put(self, plugin: str, signature: bytes, info: NodeInfo, value: Any) -> None:
        if len(self._entries) >= self.max_entries:
            self._entries.clear()
        self._entries[(plugin, signature, info.name)] = (info.generation, info.node, value)

    def __len__(self) -> int:
        return len(self._entries)


MISSING = _MISSING
