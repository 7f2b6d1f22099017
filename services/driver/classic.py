"""Classic DRA decisions of a control-plane controller (Kubernetes 1.31), as pure functions.

Why this module exists: with ``DRAControlPlaneController`` a claim whose
``spec.controller`` names a driver is allocated by that driver, not by the
scheduler. The scheduler and the driver talk through the pod's
PodSchedulingContext: the scheduler lists ``spec.potentialNodes`` and later
picks ``spec.selectedNode``; the driver answers
``status.resourceClaims[{name, unsuitableNodes}]`` and allocates for the
selected node. This module holds the decisions of
``k8s.io/dynamic-resource-allocation/controller`` (1.31) that need no I/O:
the driver's finalizer, which nodes are unsuitable (here: where the
structured allocator finds no devices among this driver's ResourceSlices),
truncating to 128 entries while keeping the selected node, the status update
of the scheduling context, and the allocation and deallocation writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.kube.resource_limits import POD_SCHEDULING_NODE_LIST_MAX_SIZE
from services.kube.structured import AllocationError, Allocator, DeviceID

Obj = dict[str, Any]


def finalizer_for(driver: str) -> str:
    """The finalizer a control-plane controller puts on claims it allocates."""
    return f"{driver}/deletion-protection"


def truncate_nodes(nodes: Sequence[str], selected_node: str) -> list[str]:
    """``truncateNodes``: at most 128 nodes, dropping one from the end only when the first is the selected one.

    The list checked was "potential nodes + selected node", so it can be one
    too long; the selected node must stay listed.
    """
    nodes = list(nodes)
    if len(nodes) > POD_SCHEDULING_NODE_LIST_MAX_SIZE:
        if nodes[0] == selected_node:
            nodes = nodes[: len(nodes) - 1]
        else:
            nodes = nodes[1:]
    return nodes


def nodes_to_check(spec: Mapping[str, Any]) -> list[str]:
    """The potential nodes plus the selected node (the scheduler may not have listed it)."""
    potential = list(spec.get("potentialNodes") or ())
    selected = spec.get("selectedNode") or ""
    if selected and selected not in potential:
        potential.append(selected)
    return potential


@dataclass
class PendingClaim:
    """A pod claim this controller must allocate (``ClaimAllocation``)."""

    pod_claim_name: str
    claim: Mapping[str, Any]
    unsuitable_nodes: list[str] = field(default_factory=list)


def allocated_device_ids(claims: Iterable[Mapping[str, Any]]) -> set[DeviceID]:
    """(driver, pool, device) of every device some claim's allocation uses."""
    used: set[DeviceID] = set()
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or ():
            used.add((str(result.get("driver")), str(result.get("pool")), str(result.get("device"))))
    return used


def minimal_node(name: str) -> Obj:
    """A node object for the allocator when the Node is not (yet) known."""
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def allocate_on(
    claims: Sequence[Mapping[str, Any]],
    node: Mapping[str, Any],
    *,
    driver: str,
    slices: Sequence[Mapping[str, Any]],
    classes: Mapping[str, Mapping[str, Any]],
    allocated: set[DeviceID],
) -> list[Obj] | None:
    """Allocation results for all ``claims`` together on ``node`` from ``driver``'s slices, or None.

    Raises `AllocationError` for input no node can satisfy (unknown class, CEL errors ...).
    """
    own = [s for s in slices if (s.get("spec") or {}).get("driver") == driver]
    results = Allocator(claims, allocated, classes, own).allocate(node)
    if results is None:
        return None
    for result in results:
        result["controller"] = driver
    return results


def unsuitable_nodes(
    pending: Sequence[PendingClaim],
    potential_nodes: Sequence[str],
    *,
    fits: Callable[[str], bool],
) -> None:
    """Fill in each pending claim's unsuitable nodes.

    A node where not all of the pod's claims of this driver fit together is
    unsuitable for every one of them (the driver library's advice: "mark
    nodes as unsuitable for all claims, if all claims cannot be allocated").
    """
    bad = [node for node in potential_nodes if not fits(node)]
    for claim in pending:
        claim.unsuitable_nodes = list(bad)


def scheduling_status_update(
    scheduling_ctx: Mapping[str, Any], pending: Sequence[PendingClaim], selected_node: str
) -> Obj | None:
    """The new ``status`` of the PodSchedulingContext, or None when nothing changed."""
    status = dict(scheduling_ctx.get("status") or {})
    entries = [dict(e) for e in status.get("resourceClaims") or ()]
    modified = False
    for claim in pending:
        for entry in entries:
            if entry.get("name") == claim.pod_claim_name:
                if list(entry.get("unsuitableNodes") or ()) != claim.unsuitable_nodes:
                    entry["unsuitableNodes"] = truncate_nodes(claim.unsuitable_nodes, selected_node)
                    modified = True
                break
        else:
            entries.append(
                {"name": claim.pod_claim_name, "unsuitableNodes": truncate_nodes(claim.unsuitable_nodes, selected_node)}
            )
            modified = True
    if not modified:
        return None
    status["resourceClaims"] = entries
    return status


def with_finalizer(claim: Mapping[str, Any], finalizer: str) -> Obj:
    meta = dict(claim.get("metadata") or {})
    meta["finalizers"] = [*(meta.get("finalizers") or ()), finalizer]
    return {**claim, "metadata": meta}


def without_finalizer(claim: Mapping[str, Any], finalizer: str) -> Obj:
    meta = dict(claim.get("metadata") or {})
    kept = [f for f in meta.get("finalizers") or () if f != finalizer]
    if kept:
        meta["finalizers"] = kept
    else:
        meta.pop("finalizers", None)
    return {**claim, "metadata": meta}


def allocated_status(claim: Mapping[str, Any], allocation: Obj, consumer: Mapping[str, Any] | None) -> Obj:
    """The claim status after allocation, reserved for ``consumer`` (the pod) as the library does."""
    status = dict(claim.get("status") or {})
    status["allocation"] = allocation
    if consumer is not None:
        status["reservedFor"] = [*(status.get("reservedFor") or ()), dict(consumer)]
    return status


def deallocated_status(claim: Mapping[str, Any]) -> Obj:
    """The claim status after deallocation: no allocation, no deallocation request."""
    status = dict(claim.get("status") or {})
    status.pop("allocation", None)
    status.pop("deallocationRequested", None)
    return status


def pod_consumer(pod: Mapping[str, Any]) -> Obj:
    meta = pod.get("metadata") or {}
    return {"resource": "pods", "name": meta.get("name", ""), "uid": meta.get("uid", "")}


__all__ = [
    "POD_SCHEDULING_NODE_LIST_MAX_SIZE",
    "AllocationError",
    "PendingClaim",
    "allocate_on",
    "allocated_device_ids",
    "allocated_status",
    "deallocated_status",
    "finalizer_for",
    "minimal_node",
    "nodes_to_check",
    "pod_consumer",
    "scheduling_status_update",
    "truncate_nodes",
    "unsuitable_nodes",
    "with_finalizer",
    "without_finalizer",
]
