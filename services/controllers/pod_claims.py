"""What a pod needs from the resourceclaim controller, decided from informer state alone.

Why this module exists: the controller's event handlers and its pod worker
ask the same questions — is this pod still going to run, does it still need
its claims, is there anything left to create or reserve — and the answers must
be testable without a log. These are Kubernetes 1.31's ``podNeedsClaims``,
``podNeedsWork`` and ``isPodDone``; claims are read through a lookup function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from services.kube.resourceclaim import (
    ClaimNameError,
    ClaimNotForPodError,
    can_be_reserved,
    check_is_for_pod,
    claim_name,
    is_reserved_for_pod,
)

Obj = Mapping[str, Any]
ClaimLookup = Callable[[str, str], Obj | None]
"""(namespace, name) -> the claim, or None when it does not exist."""

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def is_pod_terminal(pod: Obj) -> bool:
    """The pod has finished for good (``podutil.IsPodPhaseTerminal``)."""
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES


def is_being_deleted(obj: Obj) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def is_scheduled(pod: Obj) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def is_pod_done(pod: Obj) -> bool:
    """Certain that none of the pod's containers runs or ever will: terminal, or deleted before scheduling."""
    return is_pod_terminal(pod) or (is_being_deleted(pod) and not is_scheduled(pod))


def pod_needs_claims(pod: Obj, *, deleted: bool) -> tuple[bool, str]:
    """Whether the pod may still use its claims; the reason says why (for logs)."""
    if deleted:
        return False, "pod got removed"
    if is_pod_terminal(pod):
        return False, "pod has terminated"
    if is_being_deleted(pod) and not is_scheduled(pod):
        return False, "pod got deleted before scheduling"
    return True, "pod might run"


def pod_needs_work(pod: Obj, claims: ClaimLookup) -> tuple[bool, str]:
    """Whether a pod worker has something to do: create a claim, record it, or reserve one.

    Errors of the name lookup count as work (the worker reports them), as in
    Kubernetes.
    """
    if is_being_deleted(pod):
        return False, "pod is deleted"
    namespace = (pod.get("metadata") or {}).get("namespace", "")
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        try:
            name, check_owner = claim_name(pod, pod_claim)
        except ClaimNameError as err:
            return True, str(err)
        if name is None:
            # Kubernetes stops looking at the first skipped claim here; later
            # claims are still handled whenever the pod is worked on.
            return False, "claim is not needed"
        claim = claims(namespace, name)
        if claim is None:
            if pod_claim.get("resourceClaimTemplateName") is not None:
                return True, "must create ResourceClaim from template"
            return False, "claim is missing and must be created by user"
        if check_owner:
            try:
                check_is_for_pod(pod, claim)
            except ClaimNotForPodError as err:
                # Cannot proceed with the pod unless that other claim gets deleted.
                return False, str(err)
        if not is_scheduled(pod):
            continue
        if needs_reservation(pod, claim):
            meta = claim.get("metadata") or {}
            return True, f"need to reserve claim {meta.get('namespace', '')}/{meta.get('name', '')} for pod"
    return False, "nothing to do"


def needs_reservation(pod: Obj, claim: Obj) -> bool:
    """A scheduled pod's allocated claim that does not list the pod yet (the scheduler was bypassed).

    Besides Kubernetes' checks (allocated, not reserved for the pod, room in
    ``reservedFor``), a claim being deleted or with ``deallocationRequested``
    takes no new consumer here: validation would reject the write.
    """
    status = claim.get("status") or {}
    return (
        status.get("allocation") is not None
        and not is_reserved_for_pod(pod, claim)
        and can_be_reserved(claim)
        and not (claim.get("metadata") or {}).get("deletionTimestamp")
        and not status.get("deallocationRequested")
    )


def consumer_reference(pod: Obj) -> dict[str, str]:
    """The ``reservedFor`` entry for a pod."""
    meta = pod.get("metadata") or {}
    return {"resource": "pods", "name": str(meta.get("name", "")), "uid": str(meta.get("uid", ""))}
