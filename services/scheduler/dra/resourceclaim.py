"""Which ResourceClaim a pod's claim entry refers to, and whether the pod may use it.

This is ``k8s.io/dynamic-resource-allocation/resourceclaim`` (1.31) on wire
objects. A pod claim names its claim directly (``resourceClaimName``) or via a
template, in which case the claim controller records the generated name in
``pod.status.resourceClaimStatuses``. An entry with no name there means no
claim was needed; no entry means the claim was not created yet. A generated
claim must be controlled by the pod (``mustCheckOwner``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FINALIZER = "resource.kubernetes.io/delete-protection"
RESERVED_FOR_MAX_SIZE = 32
POD_SCHEDULING_NODE_LIST_MAX_SIZE = 128


class ClaimLookupError(Exception):
    """The pod cannot use its claims (yet); ``str()`` is Kubernetes' message."""


class ClaimNotCreatedError(ClaimLookupError):
    pass


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def claim_name(pod: Mapping[str, Any], pod_claim: Mapping[str, Any]) -> tuple[str | None, bool]:
    """``resourceclaim.Name``: (claim name or None when no claim is needed, must_check_owner)."""
    meta = _meta(pod)
    if pod_claim.get("resourceClaimName") is not None:
        return str(pod_claim["resourceClaimName"]), False
    if pod_claim.get("resourceClaimTemplateName") is not None:
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
            if status.get("name") == pod_claim.get("name"):
                name = status.get("resourceClaimName")
                return (str(name) if name is not None else None), True
        pod_ref = f'{meta.get("namespace", "")}/{meta.get("name", "")}'
        raise ClaimNotCreatedError(f'pod "{pod_ref}": ResourceClaim not created yet')
    raise ClaimLookupError(
        f'pod "{meta.get("namespace", "")}/{meta.get("name", "")}", spec.resourceClaim '
        f'"{pod_claim.get("name", "")}": none of the supported fields are set'
    )


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    owner_uid = _meta(owner).get("uid")
    return any(
        ref.get("controller") and ref.get("uid") == owner_uid for ref in _meta(obj).get("ownerReferences") or ()
    )


def check_is_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> None:
    """``resourceclaim.IsForPod``: raise unless the pod controls the claim."""
    pod_meta, claim_meta = _meta(pod), _meta(claim)
    if claim_meta.get("namespace") != pod_meta.get("namespace") or not is_controlled_by(claim, pod):
        raise ClaimLookupError(
            f"ResourceClaim {claim_meta.get('namespace', '')}/{claim_meta.get('name', '')} was not created for pod "
            f"{pod_meta.get('namespace', '')}/{pod_meta.get('name', '')} (pod is not owner)"
        )


def reserved_for(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((claim.get("status") or {}).get("reservedFor") or ())


def is_reserved_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    uid = _meta(pod).get("uid")
    return any(ref.get("uid") == uid for ref in reserved_for(claim))


def can_be_reserved(claim: Mapping[str, Any]) -> bool:
    return len(reserved_for(claim)) < RESERVED_FOR_MAX_SIZE


def allocation(claim: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return (claim.get("status") or {}).get("allocation")


def is_classic(claim: Mapping[str, Any]) -> bool:
    """Allocated (or to be allocated) by a control-plane controller rather than the scheduler."""
    alloc = allocation(claim)
    if alloc is not None:
        return bool(alloc.get("controller"))
    return bool((claim.get("spec") or {}).get("controller"))


def claim_key(claim: Mapping[str, Any]) -> str:
    meta = _meta(claim)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
