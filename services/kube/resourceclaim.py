"""ResourceClaims and the pods that use them (k8s.io/dynamic-resource-allocation/resourceclaim, 1.31).

The resourceclaim controller, the scheduler, the driver and the node agent
must agree on the claim behind every pod claim and on who may use a claim, in
the same way Kubernetes does:

- a pod claim with ``resourceClaimName`` names an existing, shared claim;
- a pod claim with ``resourceClaimTemplateName`` gets a claim generated for the
  pod (``generateName: <pod>-<podclaim>-``, both parts truncated in proportion
  beyond 57 characters). Its generated name is recorded in
  ``pod.status.resourceClaimStatuses``; an entry there *without* a name
  records that no claim was needed, and consumers skip it;
- before Kubernetes 1.28 the generated name was the deterministic
  ``<pod>-<podclaim>`` (`legacy_claim_name`); the controller adopts such claims.

A claim lists its consumers in ``status.reservedFor`` (`is_reserved_for_pod`),
at most `RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE` of them (`can_be_reserved`).

Everything here is pure: plain dicts in, values or exceptions out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from services.kube.resource_limits import RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE

Obj = Mapping[str, Any]

FINALIZER = "resource.kubernetes.io/delete-protection"
"""The finalizer that keeps an allocated claim until it is deallocated."""


POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""Annotation on a generated claim: the ``pod.spec.resourceClaims[].name`` it was generated for."""

MAX_GENERATE_NAME_BASE_LENGTH = 57
"""Leaves room for a hyphen and the apiserver's 5 random characters in a 63-character name."""


class ClaimLookupError(Exception):
    """The pod cannot use its claims (yet); ``str()`` is Kubernetes' message (the base of the errors below)."""


class ClaimNameError(ClaimLookupError):
    """The claim name of a pod claim cannot be determined (the base of both kinds below)."""


class ClaimNotFoundError(ClaimNameError):
    """Kubernetes' ``ErrClaimNotFound``: the claim for a template has not been created (recorded) yet."""

    sentinel = "ResourceClaim not created yet"


class APIUnsupportedError(ClaimNameError):
    """Kubernetes' ``ErrAPIUnsupported``: none of the fields this code knows is set.

    Either the pod is invalid or the API grew a field that this code does not
    know yet; callers must not guess.
    """

    sentinel = "none of the supported fields are set"


class ClaimNotForPodError(ClaimLookupError):
    """A claim found under a pod claim's name was not created for that pod (`check_is_for_pod`)."""


def claim_not_found(namespace: str, name: str) -> str:
    """Why a pod waits for a claim that does not exist: the scheduler's claim cache's words.

    kube-scheduler's PreEnqueue (DynamicResources) and PreFilter report the
    assume cache's ``NotFoundError`` as is: ``could not find ResourceClaim "ns/name"``.
    """
    return f"could not find ResourceClaim {_quote(f'{namespace}/{name}')}"


def _quote(text: str) -> str:
    """Go's ``%q`` for the names this module prints (valid names need no escapes)."""
    return orjson.dumps(text).decode()


def _meta(obj: Obj) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    return meta


def generate_name_prefix(pod_name: str, pod_claim_name: str) -> str:
    """The ``generateName`` of a claim generated for a pod claim: ``<pod>-<podclaim>-``.

    Beyond 57 characters both parts are truncated in proportion to their
    lengths (and the trailing hyphen is dropped), as Kubernetes does, so the
    pod claim name survives a long pod name.
    """
    prefix = f"{pod_name}-{pod_claim_name}-"
    total = len(prefix)
    if total <= MAX_GENERATE_NAME_BASE_LENGTH:
        return prefix
    pod_part = pod_name[: len(pod_name) * MAX_GENERATE_NAME_BASE_LENGTH // total]
    claim_part = pod_claim_name[: len(pod_claim_name) * MAX_GENERATE_NAME_BASE_LENGTH // total]
    return f"{pod_part}-{claim_part}"


def legacy_claim_name(pod_name: str, pod_claim_name: str) -> str:
    """The deterministic name Kubernetes <= 1.27 gave a generated claim: ``<pod>-<podclaim>``."""
    return f"{pod_name}-{pod_claim_name}"


def claim_name(pod: Obj, pod_claim: Obj) -> tuple[str | None, bool]:
    """The name of the claim behind ``pod_claim``, and whether its owner must be checked.

    Kubernetes' ``resourceclaim.Name``. Three outcomes:

    - ``(name, must_check_owner)``: the claim is ``name``. ``must_check_owner``
      is true for generated claims: call `check_is_for_pod` after fetching the
      claim and before using it.
    - ``(None, True)``: the pod status records that no claim was needed; skip
      this pod claim. (``must_check_owner`` carries no meaning then.)
    - raises `ClaimNotFoundError` when the generated claim is not recorded in
      the pod status yet, and `APIUnsupportedError` when neither
      ``resourceClaimName`` nor ``resourceClaimTemplateName`` is set.
    """
    meta = _meta(pod)
    pod_ref = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    if pod_claim.get("resourceClaimName") is not None:
        return str(pod_claim["resourceClaimName"]), False
    if pod_claim.get("resourceClaimTemplateName") is not None:
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
            if status.get("name") == pod_claim.get("name"):
                name = status.get("resourceClaimName")
                return (str(name) if name is not None else None), True
        raise ClaimNotFoundError(f'pod "{pod_ref}": {ClaimNotFoundError.sentinel}')
    raise APIUnsupportedError(
        f'pod "{pod_ref}", spec.resourceClaim {_quote(str(pod_claim.get("name", "")))}: {APIUnsupportedError.sentinel}'
    )


def controller_ref(obj: Obj) -> Mapping[str, Any] | None:
    """The owner reference with ``controller: true`` (``metav1.GetControllerOf``)."""
    for ref in _meta(obj).get("ownerReferences") or ():
        if ref.get("controller"):
            found: Mapping[str, Any] = ref
            return found
    return None


def owning_pod(claim: Obj) -> tuple[str, str] | None:
    """(name, uid) of the pod that controls ``claim``, or None when no pod does."""
    ref = controller_ref(claim)
    if ref is not None and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod":
        return str(ref.get("name", "")), str(ref.get("uid", ""))
    return None


def is_for_pod(pod: Obj, claim: Obj) -> bool:
    """Whether ``claim`` was created for ``pod``: same namespace, and the pod is its controller."""
    return _meta(claim).get("namespace") == _meta(pod).get("namespace") and is_controlled_by(claim, pod)


def check_is_for_pod(pod: Obj, claim: Obj) -> None:
    """Kubernetes' ``resourceclaim.IsForPod``: raise `ClaimNotForPodError` unless the claim is the pod's."""
    if not is_for_pod(pod, claim):
        cm, pm = _meta(claim), _meta(pod)
        raise ClaimNotForPodError(
            f"ResourceClaim {cm.get('namespace', '')}/{cm.get('name', '')} was not created for pod "
            f"{pm.get('namespace', '')}/{pm.get('name', '')} (pod is not owner)"
        )


def is_reserved_for_pod(pod: Obj, claim: Obj) -> bool:
    """``IsReservedForPod``: whether ``claim.status.reservedFor`` lists the pod (by uid)."""
    uid = _meta(pod).get("uid")
    return any(ref.get("uid") == uid for ref in reserved_for(claim))


def reserved_for(claim: Obj) -> list[Mapping[str, Any]]:
    """``status.reservedFor``: the consumers the claim is reserved for."""
    return list((claim.get("status") or {}).get("reservedFor") or ())


def can_be_reserved(claim: Obj, *, limit: int | None = RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE) -> bool:
    """Whether the claim could be reserved for one more consumer (fewer than ``limit`` hold it).

    Kubernetes 1.31's ``resourceclaim.CanBeReserved`` returns true ("currently
    no restrictions on sharing") and leaves the limit to API validation, which
    rejects a ``reservedFor`` with more entries; checking it here reaches the
    same outcome without a write that must fail. ``limit=None`` is Kubernetes'
    function as it is: the 1.37 scheduler leaves the limit (256) to the write,
    so the consumer past it fails in PreBind with validation's message, as in
    kube's own integration test. Whether a claim being deleted or deallocated
    may take new consumers is a different question, asked by the callers that
    need it.
    """
    return limit is None or len(reserved_for(claim)) < limit


def claim_pod_owner_uids(claim: Obj) -> Iterable[str]:
    """Index function: uids of the pods that control the claim (``claimPodOwnerIndexFunc``)."""
    ref = controller_ref(claim)
    if ref is not None and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod" and ref.get("uid"):
        return (str(ref["uid"]),)
    return ()


def known_claim_names(pod: Obj) -> list[str]:
    """Names of the claims the pod uses whose names are known (unknown and unneeded ones are skipped)."""
    names = []
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        try:
            name, _ = claim_name(pod, pod_claim)
        except ClaimNameError:
            continue
        if name is not None:
            names.append(name)
    return names


def pod_claim_keys(pod: Obj) -> Iterable[str]:
    """Index function: ``<namespace>/<claim>`` of every claim the pod uses and whose name is known."""
    namespace = _meta(pod).get("namespace", "")
    return [f"{namespace}/{name}" for name in known_claim_names(pod)]


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    """``metav1.IsControlledBy``: the controller owner reference of ``obj`` has ``owner``'s uid."""
    ref = controller_ref(obj)
    return ref is not None and ref.get("uid") == _meta(owner).get("uid")


def allocation(claim: Obj) -> Mapping[str, Any] | None:
    """``status.allocation``, None while the claim is not allocated (``IsAllocated`` is ``is not None``)."""
    found: Mapping[str, Any] | None = (claim.get("status") or {}).get("allocation")
    return found


def is_classic(claim: Obj) -> bool:
    """Allocated (or to be allocated) by a control-plane controller rather than the scheduler."""
    alloc = allocation(claim)
    if alloc is not None:
        return bool(alloc.get("controller"))
    return bool((claim.get("spec") or {}).get("controller"))


def claim_key(claim: Obj) -> str:
    """``<namespace>/<name>`` (``cache.MetaNamespaceKeyFunc``)."""
    meta = _meta(claim)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
