"""Why a pod is pending, as ``draplane explain pod`` tells it: its claims and the devices they could take.

The scheduler's records say what happened at each attempt, in Kubernetes'
words (``cannot allocate all claims`` on every node). This module looks at
the state of the log now and says what a person needs to act:

- a claim that does not exist (yet): ``waiting for ResourceClaim X to be
  created``, with the reason the scheduler's PreEnqueue gives in Kubernetes'
  words (``could not find ResourceClaim "ns/x"``), because such a pod never
  reaches a scheduling attempt;
- for the claims the scheduler would allocate: per request, how many devices
  match the class and selectors, on how many nodes, how many are free, and
  which count or ``matchAttribute`` constraint fails on how many nodes —
  computed by the allocator the scheduler uses
  (`services.kube.structured.diagnosis`), at the release the scheduler runs
  by default (1.37: a partitionable device whose shared counters are used up
  shows as "counters exhausted");
- for an allocated claim with prioritized lists: the subrequest it got
  ("subrequest chosen").

Claims are looked at in the order and with the checks of the DynamicResources
plugin (PreEnqueue, then PreFilter). Pure: an `ObjectState` in, a `Pending`
out, and `render` turns that into text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from services.kube.device_taints import rules_taints, slice_devices
from services.kube.feature_gates import DRA_DEVICE_TAINT_RULES, DRA_DEVICE_TAINTS, FeatureGates
from services.kube.resourceclaim import (
    ClaimLookupError,
    ClaimNameError,
    ClaimNotFoundError,
    allocation,
    can_be_reserved,
    check_is_for_pod,
    claim_key,
    claim_name,
    claim_not_found,
    is_reserved_for_pod,
)
from services.kube.structured import SliceIndex
from services.kube.structured.allocator import Features
from services.kube.structured.diagnosis import (
    COUNT,
    COUNTERS,
    FITS,
    TAINT,
    NodeFit,
    RequestSummary,
    chosen_subrequests,
    diagnose_node,
    summarize,
)
from services.replay.state import ObjectState
from services.scheduler.dra.assume_cache import allocated_device_ids
from services.scheduler.dra.binding_conditions import pending_reasons

RESOURCE_GROUP = "resource.k8s.io"
VERDICT_WORDS = {
    COUNT: "not enough free devices",
    COUNTERS: "counters exhausted",
    "constraint": "a constraint cannot be met",
    "together": "the claims do not fit at once",
    TAINT: "taint not tolerated",
    "error": "the allocator refused the claims",
}
MAX_NODES_SHOWN = 5


@dataclass(slots=True)
class Pending:
    """What stands between a pod and a node, as far as its claims go."""

    pod: str
    node: str = ""  # spec.nodeName: the pod is not pending
    waiting: list[str] = field(default_factory=list)  # human line, Kubernetes' reason after " — "
    claims: list[str] = field(default_factory=list)  # one line per claim that needs no allocation
    to_allocate: list[str] = field(default_factory=list)  # keys of the claims the scheduler must allocate
    requests: list[RequestSummary] = field(default_factory=list)
    fits: list[NodeFit] = field(default_factory=list)
    nodes: int = 0


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    return meta


def _lookup(pod: Mapping[str, Any], state: ObjectState, out: Pending) -> list[Mapping[str, Any]]:
    """The claims to allocate; what keeps the pod out of the queue goes to ``out.waiting``."""
    namespace = str(_meta(pod).get("namespace", ""))
    to_allocate: list[Mapping[str, Any]] = []
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        pod_claim_name = str(pod_claim.get("name", ""))
        try:
            name, must_check_owner = claim_name(pod, pod_claim)
        except ClaimNotFoundError as err:
            template = pod_claim.get("resourceClaimTemplateName", "")
            out.waiting.append(
                f"waiting for the ResourceClaim of pod claim {pod_claim_name} (from template {template}) "
                f"to be created — {err}"
            )
            continue
        except ClaimNameError as err:
            out.waiting.append(f"pod claim {pod_claim_name}: {err}")
            continue
        if name is None:
            continue  # no claim was needed
        claim = state.get(RESOURCE_GROUP, "resourceclaims", namespace, name)
        if claim is None:
            out.waiting.append(
                f"waiting for ResourceClaim {namespace}/{name} to be created — {claim_not_found(namespace, name)}"
            )
            continue
        if _meta(claim).get("deletionTimestamp"):
            out.waiting.append(
                f'ResourceClaim {namespace}/{name} is being deleted — resourceclaim "{name}" is being deleted'
            )
            continue
        if must_check_owner:
            try:
                check_is_for_pod(pod, claim)
            except ClaimLookupError as err:
                out.waiting.append(f"ResourceClaim {namespace}/{name} belongs to another pod — {err}")
                continue
        alloc = allocation(claim)
        if alloc is not None:
            where = ""
            devices = [
                f"{r.get('driver', '')}/{r.get('pool', '')}/{r.get('device', '')}"
                for r in (alloc.get("devices") or {}).get("results") or ()
            ]
            if devices:
                where = f": {', '.join(devices)}"
            chosen = chosen_subrequests(claim)
            if chosen:
                where += f"; subrequest chosen: {', '.join(chosen)}"
            if not can_be_reserved(claim) and not is_reserved_for_pod(pod, claim):
                out.claims.append(
                    f"claim {claim_key(claim)}: allocated{where}; in use by too many — resourceclaim in use"
                )
            else:
                out.claims.append(f"claim {claim_key(claim)}: allocated{where}")
            out.claims.extend(f"claim {claim_key(claim)}: {reason}" for reason in pending_reasons(claim))
            continue
        if (claim.get("spec") or {}).get("controller"):
            out.claims.append(
                f"claim {claim_key(claim)}: waits for its driver {claim['spec']['controller']} (classic DRA)"
            )
            continue
        to_allocate.append(claim)
    return to_allocate


def explain_pending(
    state: ObjectState, namespace: str, name: str, *, gates: FeatureGates | None = None
) -> Pending | None:
    """Why the pod is pending now; None when there is no such pod. ``gates``: the scheduler's (1.37's defaults)."""
    pod = state.get("", "pods", namespace, name)
    if pod is None:
        return None
    out = Pending(pod=f"{namespace}/{name}", node=str((pod.get("spec") or {}).get("nodeName") or ""))
    if out.node:
        return out
    claims = _lookup(pod, state, out)
    if out.waiting or not claims:
        return out
    out.to_allocate = [claim_key(c) for c in claims]
    in_use: set[tuple[str, str, str]] = set()
    for other in state.list(RESOURCE_GROUP, "resourceclaims"):
        in_use |= allocated_device_ids(other)
    classes = {str(_meta(c).get("name", "")): c for c in state.list(RESOURCE_GROUP, "deviceclasses")}
    slice_objs = state.list(RESOURCE_GROUP, "resourceslices")
    slices = SliceIndex(slice_objs)
    gates = gates or FeatureGates()
    features = Features.from_gates(gates)
    taints = {}
    if gates.enabled(DRA_DEVICE_TAINTS) and gates.enabled(DRA_DEVICE_TAINT_RULES):
        taints = rules_taints(state.list(RESOURCE_GROUP, "devicetaintrules"), slice_devices(slice_objs))
    nodes = state.list("", "nodes")
    out.nodes = len(nodes)
    out.fits = [
        diagnose_node(
            claims,
            node,
            allocated_devices=in_use,
            classes=classes,
            slices=slices,
            features=features,
            device_taints=taints,
        )
        for node in nodes
    ]
    out.requests = summarize(out.fits)
    return out


def _nodes(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NODES_SHOWN])
    return shown + (f" and {len(names) - MAX_NODES_SHOWN} more" if len(names) > MAX_NODES_SHOWN else "")


def _request_lines(summary: RequestSummary) -> list[str]:
    need = "all matching devices" if summary.all_devices else f"{summary.count} device(s)"
    lines = [f"  claim {summary.claim}, request {summary.request}: needs {need} of class {summary.class_name}"]
    if summary.matching == 0:
        lines.append("    no device matches the class and selectors")
        return lines
    lines.append(
        f"    {summary.matching} device(s) match the class and selectors on {summary.matching_nodes} node(s); "
        f"{summary.free} free on {summary.free_nodes} node(s), at most {summary.most_free_on_one_node} on one node"
    )
    return lines


def render(pending: Pending) -> list[str]:
    """Lines for a person (empty when the pod is bound)."""
    if pending.node:
        return []
    lines = [f"Pod {pending.pod} is not scheduled."]
    for line in pending.waiting:
        lines.append(f"  {line}")
    lines.extend(f"  {line}" for line in pending.claims)
    if not pending.to_allocate:
        return lines
    for summary in pending.requests:
        lines.extend(_request_lines(summary))
    fit = [f.node for f in pending.fits if f.verdict == FITS]
    if not pending.fits:
        lines.append(f"  no node can take the claims: the cluster has {pending.nodes} node(s)")
    elif fit:
        lines.append(f"  the claims can be allocated now on {len(fit)} node(s): {_nodes(fit)}")
    by_reason: dict[tuple[str, str], list[str]] = {}
    for node_fit in pending.fits:
        if node_fit.verdict != FITS:
            by_reason.setdefault((node_fit.verdict, node_fit.detail), []).append(node_fit.node)
    for (verdict, detail), nodes in sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0])):
        lines.append(f"  {VERDICT_WORDS.get(verdict, verdict)} on {len(nodes)} node(s) ({_nodes(nodes)}): {detail}")
    return lines
