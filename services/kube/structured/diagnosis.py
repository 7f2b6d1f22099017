"""Why a pod's claims cannot be allocated on a node, and across the cluster, in counts.

The scheduler's Filter says only Kubernetes' ``cannot allocate all claims``
per node. A person whose pod is pending needs to know which request ran out:
how many devices match its class and selectors, on how many nodes, how many
of them are free, and whether the count or a ``matchAttribute`` constraint
is what failed. This module answers that with the allocator the scheduler
uses (`Allocator.matching_devices` for the counts, `Allocator.allocate` for
the verdicts), never a second copy of its rules:

- ``count``: a request needs more devices than are free on the node;
- ``constraint``: every request has enough free devices, but no choice of
  them agrees on a ``matchAttribute`` (named);
- ``counters``: enough devices are free, but the partitionable devices among
  them need more of their pool's shared counters than the allocated devices
  left (``DRAPartitionableDevices``; the allocator's own counter accounting);
- ``taint``: enough devices are free, but too few without a NoSchedule or
  NoExecute taint the request does not tolerate (DRADeviceTaints);
- ``together``: each claim (or request) fits alone, not all at once;
- ``error``: the allocator refused the input (its message, Kubernetes' words);
- ``fits``: the claims can be allocated on the node now.

For a claim that is allocated, `chosen_subrequests` says which alternative of
each prioritized list (``firstAvailable``) it got.

Pure: wire-form objects in, values out; nothing is modified.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.kube import quantity as q
from services.kube.structured.allocator import AllocationError, Allocator, Features, RequestMatch, claim_ref
from services.kube.structured.pools import DeviceID, Pool, PoolError, SliceIndex
from services.kube.structured.selectors import SelectorCache

FITS = "fits"
COUNT = "count"
CONSTRAINT = "constraint"
COUNTERS = "counters"
TOGETHER = "together"
TAINT = "taint"
ERROR = "error"


@dataclass(frozen=True, slots=True)
class NodeFit:
    """The verdict for one node; ``detail`` names what failed (request, constraint, or the error message)."""

    node: str
    verdict: str
    detail: str
    requests: tuple[RequestMatch, ...]


@dataclass(frozen=True, slots=True)
class RequestSummary:
    """One request over all nodes: distinct matching and free devices, and where they are."""

    claim: str
    request: str
    class_name: str
    count: int  # needed on one node (largest over the nodes for allocationMode All)
    all_devices: bool
    matching: int
    matching_nodes: int
    free: int
    free_nodes: int
    most_free_on_one_node: int


def _with_constraints(claim: Mapping[str, Any], constraints: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The claim with only ``constraints`` (a shallow copy; the input stays as it is)."""
    spec = dict(claim.get("spec") or {})
    devices = dict(spec.get("devices") or {})
    devices["constraints"] = list(constraints)
    spec["devices"] = devices
    return {**claim, "spec": spec}


def _constraint_text(constraint: Mapping[str, Any]) -> str:
    text = f"matchAttribute {constraint.get('matchAttribute', '')}"
    requests = constraint.get("requests") or ()
    if requests:
        text += f" (requests {', '.join(str(r) for r in requests)})"
    return text


def _count_text(match: RequestMatch) -> str:
    if match.all_devices:
        return (
            f"claim {match.claim}, request {match.request}: asks for all {match.count} matching device(s), "
            f"{len(match.free)} free"
        )
    return (
        f"claim {match.claim}, request {match.request}: count {match.count} > free {len(match.free)} "
        f"({len(match.matching)} matching)"
    )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def chosen_subrequests(claim: Mapping[str, Any]) -> list[str]:
    """Per prioritized list of an allocated claim, the subrequest its allocation took, e.g. ``gpu/one (2nd of 2)``."""
    results = ((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}
    allocated = {str(r.get("request", "")) for r in results.get("results") or ()}
    out: list[str] = []
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        alternatives = request.get("firstAvailable") or ()
        for i, sub in enumerate(alternatives):
            ref = f"{request.get('name', '')}/{sub.get('name', '')}"
            if ref in allocated:
                out.append(f"{ref} ({_ordinal(i + 1)} of {len(alternatives)})")
                break
    return out


def _counter_shortfall(
    allocator: Allocator, slices: SliceIndex, node: Mapping[str, Any], match: RequestMatch
) -> str | None:
    """Why too few of the request's free devices can be taken for their shared counters (None: enough can)."""
    features = allocator.features
    if not features.partitionable_devices or match.all_devices:
        return None
    try:
        pools = {(p.driver, p.name): p for p in slices.pools_for(node, features.pool_mode)}
    except PoolError:
        return None  # the allocator reports it
    fitting = 0
    first_short = ""
    for device_id in match.free:
        pool = pools.get((device_id[0], device_id[1]))
        short = _device_short(allocator, pool, device_id[2]) if pool is not None else ""
        if not short:
            fitting += 1
        elif not first_short:
            first_short = short
    if fitting >= match.count or not first_short:
        return None
    return (
        f"claim {match.claim}, request {match.request}: counters exhausted: "
        f"{len(match.free) - fitting} of {len(match.free)} free matching device(s) need more shared counters "
        f"than are left, e.g. {first_short}"
    )


def _device_short(allocator: Allocator, pool: Pool, device_name: str) -> str:
    """What one device's ``consumesCounters`` lacks in its pool now ("" when it fits)."""
    device = next(
        (
            d
            for s in pool.slices
            for d in (s.get("spec") or {}).get("devices") or ()
            if str(d.get("name", "")) == device_name
        ),
        None,
    )
    consumes = ((device or {}).get("basic") or {}).get("consumesCounters") or ()
    if not consumes:
        return ""
    left = allocator.available_counters(pool)
    for consumption in consumes:
        set_name = str(consumption.get("counterSet", ""))
        for name, counter in (consumption.get("counters") or {}).items():
            have = left.get(set_name, {}).get(name)
            if have is None or have >= q.amount_value(counter.get("value", 0)):
                continue
            need = q.parse_wire_quantity(counter.get("value", 0))
            left_text = q.canonical(have, fmt=need.format)
            return f"device {pool.pool_id}/{device_name} needs {set_name}/{name} {need}, {left_text} left"
    return ""


def _taint_text(match: RequestMatch, tainted: Sequence[DeviceID]) -> str:
    names = ", ".join("/".join(d) for d in tainted[:3]) + (" …" if len(tainted) > 3 else "")
    return (
        f"claim {match.claim}, request {match.request}: {len(tainted)} of {len(match.free)} free device(s) "
        f"have a taint it does not tolerate ({names})"
    )


def diagnose_node(
    claims: Sequence[Mapping[str, Any]],
    node: Mapping[str, Any],
    *,
    allocated_devices: Container[DeviceID],
    classes: Mapping[str, Mapping[str, Any]],
    slices: SliceIndex,
    features: Features | None = None,
    cache: SelectorCache | None = None,
    device_taints: Mapping[DeviceID, Sequence[Mapping[str, Any]]] | None = None,
) -> NodeFit:
    """Whether ``claims`` (unallocated, structured) can be allocated on ``node``, and if not, why."""
    cache = cache if cache is not None else SelectorCache()
    features = features or Features()
    name = str((node.get("metadata") or {}).get("name", ""))

    def allocator(subset: Sequence[Mapping[str, Any]]) -> Allocator:
        return Allocator(
            subset,
            allocated_devices,
            classes,
            slices,
            features=features,
            cache=cache,
            device_taints=device_taints or {},
        )

    try:
        matches = tuple(allocator(claims).matching_devices(node))
    except AllocationError as err:
        return NodeFit(name, ERROR, str(err), ())
    for match in matches:
        if len(match.free) < match.count:
            return NodeFit(name, COUNT, _count_text(match), matches)
    for match in matches:
        tainted = [d for d in match.free if d in match.untolerated]
        if tainted and len(match.free) - len(tainted) < match.count:
            return NodeFit(name, TAINT, _taint_text(match, tainted), matches)
        shortfall = _counter_shortfall(allocator(claims), slices, node, match)
        if shortfall is not None:
            return NodeFit(name, COUNTERS, shortfall, matches)
    try:
        if allocator(claims).allocate(node) is not None:
            return NodeFit(name, FITS, "", matches)
        for claim in claims:
            if allocator([claim]).allocate(node) is not None:
                continue
            constraints = list(((claim.get("spec") or {}).get("devices") or {}).get("constraints") or ())
            if not constraints or allocator([_with_constraints(claim, [])]).allocate(node) is None:
                return NodeFit(name, TOGETHER, f"claim {claim_ref(claim)}: its requests do not fit at once", matches)
            failing = [c for c in constraints if allocator([_with_constraints(claim, [c])]).allocate(node) is None]
            texts = [_constraint_text(c) for c in (failing or constraints)]
            return NodeFit(name, CONSTRAINT, f"claim {claim_ref(claim)}: {'; '.join(texts)}", matches)
    except AllocationError as err:
        return NodeFit(name, ERROR, str(err), matches)
    return NodeFit(name, TOGETHER, "the claims do not fit at once", matches)


def summarize(fits: Iterable[NodeFit]) -> list[RequestSummary]:
    """Per request (in the pod's order), the distinct devices that match and are free over every node."""
    order: list[tuple[str, str]] = []
    seen: dict[tuple[str, str], list[RequestMatch]] = {}
    for fit in fits:
        for match in fit.requests:
            key = (match.claim, match.request)
            if key not in seen:
                seen[key] = []
                order.append(key)
            seen[key].append(match)
    out: list[RequestSummary] = []
    for key in order:
        matches = seen[key]
        matching: set[DeviceID] = set()
        free: set[DeviceID] = set()
        for match in matches:
            matching.update(match.matching)
            free.update(match.free)
        out.append(
            RequestSummary(
                claim=key[0],
                request=key[1],
                class_name=matches[0].class_name,
                count=max(m.count for m in matches),
                all_devices=matches[0].all_devices,
                matching=len(matching),
                matching_nodes=sum(1 for m in matches if m.matching),
                free=len(free),
                free_nodes=sum(1 for m in matches if m.free),
                most_free_on_one_node=max(len(m.free) for m in matches),
            )
        )
    return out
