"""Remembered per-node allocation results, so identical pods do not re-run the allocator on every node.

Why: Filter runs the structured allocator once per candidate node, and kube's
adaptive rule looks at up to 230 of 500 nodes per pod. Pods from one template
ask the same question of the same nodes again and again, and between two pods
usually only one node changed (the one the previous pod got a device on). In
Go that repetition is cheap; in Python it dominated the scheduling cycle.

The allocator is a pure function of its inputs, so its outcome can be reused
whenever every input is the same. For one node those inputs are:

* the specs of the claims to allocate (requests, selectors, constraints, config;
  not their names, which only appear in error messages — errors are never
  remembered);
* the DeviceClasses (the class store's change counter);
* the ResourceSlices (the slice index's change counter) and, through them, the
  pools the node can reach — which depend on the node's name and labels;
* which devices of those pools are in use: the claim assume cache counts, per
  pool, every change of its allocated devices and of its shared devices'
  consumed capacity, in-flight ones included;
* the DeviceTaintRules (their store's change counter);
* the allocator's feature gates (fixed per plugin).

The key holds exactly these, so a remembered outcome is the outcome the
allocator would compute. Outcomes are shared between pods: callers must not
modify them (Reserve copies the one it keeps).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import orjson

DEFAULT_MAX_ENTRIES = 1 << 16

Outcome = list[dict[str, Any]] | None  # the allocations, or None: no solution on this node
_MISSING: Any = object()


def claims_signature(claims: Sequence[Mapping[str, Any]]) -> bytes:
    """The allocation-relevant part of the claims, canonically encoded."""
    return orjson.dumps([claim.get("spec") or {} for claim in claims], option=orjson.OPT_SORT_KEYS)


def node_identity(node: Mapping[str, Any] | None) -> Hashable:
    """What pool gathering sees of a node: its name and labels (as ``SliceIndex`` keys it)."""
    if node is None:
        return None
    metadata = node.get("metadata") or {}
    return (str(metadata.get("name", "")), frozenset((metadata.get("labels") or {}).items()))


class AllocationMemo:
    """A bounded map from (claims, classes, slices, node, pool usage) to the allocator's outcome.

    The caller builds the key: ``(claims signature, classes version, slices
    version, taint rules version)`` once per cycle, the node's identity and pools once per node
    version, and the pools' usage generations per call.
    """

    def __init__(self, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._outcomes: dict[Hashable, Outcome] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> Outcome | Any:
        """The remembered outcome, or ``MISSING``."""
        outcome = self._outcomes.get(key, _MISSING)
        if outcome is _MISSING:
            self.misses += 1
        else:
            self.hits += 1
        return outcome

    def put(self, key: Hashable, outcome: Outcome) -> None:
        if len(self._outcomes) >= self.max_entries:
            self._outcomes.clear()
        self._outcomes[key] = outcome

    def __len__(self) -> int:
        return len(self._outcomes)


MISSING = _MISSING
