"""The ResourceSlices a driver wants for its node, and the writes that get there from what exists.

Why this module exists: Kubernetes' ResourceSlice controller
(``k8s.io/dynamic-resource-allocation/resourceslice``) publishes one pool per
node, named after the node, split into slices of at most 128 devices, each
carrying ``pool.resourceSliceCount`` so the scheduler knows when it has seen
the whole pool, and bumps ``pool.generation`` whenever the pool changes so
slices of an older generation are ignored while the update is in flight.
This module reproduces that as pure functions: `desired_slices` builds the
slices, `plan_slices` compares them with the existing ones (from an
informer) and returns the creates, updates and deletes. Slice names are
deterministic (``<node>-<driver>-<n>``), so a restarted driver finds and
reuses its own slices instead of leaking them.

Counter sets (``sharedCounters``, partitionable devices) go into a slice of
their own, the pool's first, as 1.35+ require (a slice holds devices or
counter sets, never both); dra-example-driver's partitionable profile
publishes the same two-slice pool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.api.admission.validation.resource_slice import max_devices_per_slice
from services.api.types.registry import RESOURCE_GROUP, STORED_AS
from services.kube.resource_limits import RESOURCE_SLICE_MAX_DEVICES

Obj = dict[str, Any]

API_VERSION = f"{RESOURCE_GROUP}/{STORED_AS}"  # the storage form components write


def slice_name(*, node: str, driver: str, index: int) -> str:
    """The name of slice ``index`` of ``driver``'s pool on ``node``."""
    return f"{node}-{driver}-{index}"


def split_devices(devices: Sequence[Obj], *, per_slice: int = RESOURCE_SLICE_MAX_DEVICES) -> list[list[Obj]]:
    """Devices in chunks of at most ``per_slice``; an empty pool is still one (empty) slice."""
    if not devices:
        return [[]]
    return [list(devices[i : i + per_slice]) for i in range(0, len(devices), per_slice)]


def node_owner(node: Mapping[str, Any] | None) -> list[Obj]:
    """The owner reference to the Node, so the garbage collector removes slices of a deleted node."""
    if not node:
        return []
    meta = node.get("metadata") or {}
    if not meta.get("uid"):
        return []
    return [{"apiVersion": "v1", "kind": "Node", "name": meta.get("name", ""), "uid": meta["uid"], "controller": True}]


def desired_slices(
    *,
    node: str,
    driver: str,
    devices: Sequence[Obj],
    generation: int,
    owners: Sequence[Obj] = (),
    per_slice: int = RESOURCE_SLICE_MAX_DEVICES,
    shared_counters: Sequence[Obj] = (),
) -> list[Obj]:
    """The full set of slices for ``devices`` (and ``shared_counters``) at ``generation``."""
    per_slice = min(per_slice, max_devices_per_slice(list(devices)))
    chunks: list[list[Obj] | None] = [*split_devices(devices, per_slice=per_slice)]
    if shared_counters:
        chunks = [None, *(c for c in chunks if c)]  # None: the counter-set slice
    result = []
    for index, chunk in enumerate(chunks):
        metadata: Obj = {"name": slice_name(node=node, driver=driver, index=index)}
        if owners:
            metadata["ownerReferences"] = [dict(o) for o in owners]
        result.append(
            {
                "apiVersion": API_VERSION,
                "kind": "ResourceSlice",
                "metadata": metadata,
                "spec": {
                    "driver": driver,
                    "pool": {"name": node, "generation": generation, "resourceSliceCount": len(chunks)},
                    "nodeName": node,
                    **(
                        {"sharedCounters": [dict(c) for c in shared_counters]}
                        if chunk is None
                        else {"devices": [dict(d) for d in chunk]}
                    ),
                },
            }
        )
    return result


def pool_generation(existing: Iterable[Mapping[str, Any]]) -> int:
    """The highest pool generation among existing slices (0 when there are none)."""
    return max((int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0) for s in existing), default=0)


def _device_key(device: Mapping[str, Any]) -> Any:
    # Unset and zero fields compare equal, and a taint's timeAdded (which a server may stamp) is not ours.
    basic = {k: v for k, v in (device.get("basic") or {}).items() if v not in (None, [], {}, False)}
    if "taints" in basic:
        basic["taints"] = [{k: v for k, v in t.items() if k != "timeAdded"} for t in basic["taints"]]
    return (device.get("name"), basic)


def _content(spec: Mapping[str, Any]) -> Any:
    """What makes two slice specs the same pool content (the generation aside)."""
    pool = spec.get("pool") or {}
    return (
        spec.get("driver"),
        spec.get("nodeName"),
        pool.get("name"),
        pool.get("resourceSliceCount"),
        [_device_key(d) for d in spec.get("devices") or ()],
        spec.get("sharedCounters") or [],
    )


@dataclass
class SlicePlan:
    """The writes that turn the existing slices into the desired ones."""

    generation: int
    creates: list[Obj] = field(default_factory=list)
    updates: list[Obj] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.creates or self.updates or self.deletes)


def plan_slices(
    *,
    existing: Iterable[Mapping[str, Any]],
    node: str,
    driver: str,
    devices: Sequence[Obj] | None,
    owners: Sequence[Obj] = (),
    per_slice: int = RESOURCE_SLICE_MAX_DEVICES,
    last_generation: int = 0,
    shared_counters: Sequence[Obj] = (),
) -> SlicePlan:
    """Compare ``existing`` (this node's and driver's slices) with the desired ones.

    ``devices=None`` means "publish nothing": every existing slice is
    deleted (decommissioning). When the pool content differs in any way, every
    desired slice is written with the next generation (after the highest of
    the existing ones and ``last_generation``, the last one this publisher
    wrote, so generations never repeat even when every slice was deleted);
    when only the owner references differ, those slices are updated in place.
    """
    current = sorted(existing, key=lambda s: str((s.get("metadata") or {}).get("name", "")))
    generation = pool_generation(current)
    if devices is None:
        return SlicePlan(generation, deletes=[str(s["metadata"]["name"]) for s in current])
    by_name: dict[str, Mapping[str, Any]] = {str(s["metadata"]["name"]): s for s in current}
    same_generation = len({int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0) for s in current}) <= 1
    unchanged = desired_slices(
        node=node,
        driver=driver,
        devices=devices,
        generation=generation,
        owners=owners,
        per_slice=per_slice,
        shared_counters=shared_counters,
    )
    content_same = (
        bool(current)
        and same_generation
        and [s["metadata"]["name"] for s in unchanged] == [s["metadata"]["name"] for s in current]
        and all(_content(d["spec"]) == _content(by_name[d["metadata"]["name"]].get("spec") or {}) for d in unchanged)
    )
    plan = SlicePlan(generation)
    if content_same:
        for desired in unchanged:
            old = by_name[desired["metadata"]["name"]]
            if list((old.get("metadata") or {}).get("ownerReferences") or []) != list(owners):
                plan.updates.append(_carry_metadata(desired, old))
        return plan
    plan.generation = max(generation, last_generation) + 1
    wanted = desired_slices(
        node=node,
        driver=driver,
        devices=devices,
        generation=plan.generation,
        owners=owners,
        per_slice=per_slice,
        shared_counters=shared_counters,
    )
    for desired in wanted:
        name = desired["metadata"]["name"]
        if name in by_name:
            plan.updates.append(_carry_metadata(desired, by_name.pop(name)))
        else:
            plan.creates.append(desired)
    plan.deletes = sorted(by_name)
    return plan


def _carry_metadata(desired: Obj, old: Mapping[str, Any]) -> Obj:
    """The desired slice as an update of ``old``: its metadata, with our owner references."""
    metadata = dict(old.get("metadata") or {})
    owners = desired["metadata"].get("ownerReferences")
    if owners:
        metadata["ownerReferences"] = owners
    else:
        metadata.pop("ownerReferences", None)
    return {**desired, "metadata": metadata}
