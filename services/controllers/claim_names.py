"""Which ResourceClaim a pod's ``spec.resourceClaims[]`` entry means: names and the shared lookup.

Why this module exists: the resourceclaim controller, the scheduler and the
node agent must agree on the claim behind every pod claim, and they must agree
in the same way Kubernetes does (``k8s.io/dynamic-resource-allocation/
resourceclaim``, 1.31):

- a pod claim with ``resourceClaimName`` names an existing, shared claim;
- a pod claim with ``resourceClaimTemplateName`` gets a claim generated for the
  pod (``generateName: <pod>-<podclaim>-``, both parts truncated in proportion
  beyond 57 characters). Its generated name is recorded in
  ``pod.status.resourceClaimStatuses``; an entry there *without* a name
  records that no claim was needed, and consumers skip it;
- before Kubernetes 1.28 the generated name was the deterministic
  ``<pod>-<podclaim>`` (`legacy_claim_name`); the controller adopts such claims.

Everything here is pure: plain dicts in, values or exceptions out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

Obj = Mapping[str, Any]

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""Annotation on a generated claim: the ``pod.spec.resourceClaims[].name`` it was generated for."""

MAX_GENERATE_NAME_BASE_LENGTH = 57
"""Leaves room for a hyphen and the apiserver's 5 random characters in a 63-character name."""


class ClaimNameError(Exception):
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


class ClaimNotForPodError(Exception):
    """A claim found under a pod claim's name was not created for that pod (`check_is_for_pod`)."""


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
    if _meta(claim).get("namespace") != _meta(pod).get("namespace"):
        return False
    ref = controller_ref(claim)
    return ref is not None and ref.get("uid") == _meta(pod).get("uid")


def check_is_for_pod(pod: Obj, claim: Obj) -> None:
    """Kubernetes' ``resourceclaim.IsForPod``: raise `ClaimNotForPodError` unless the claim is the pod's."""
    if not is_for_pod(pod, claim):
        cm, pm = _meta(claim), _meta(pod)
        raise ClaimNotForPodError(
            f"ResourceClaim {cm.get('namespace', '')}/{cm.get('name', '')} was not created for pod "
            f"{pm.get('namespace', '')}/{pm.get('name', '')} (pod is not owner)"
        )


def is_reserved_for_pod(pod: Obj, claim: Obj) -> bool:
    """Whether ``claim.status.reservedFor`` lists the pod (by uid)."""
    uid = _meta(pod).get("uid")
    return any(ref.get("uid") == uid for ref in (claim.get("status") or {}).get("reservedFor") or ())


def can_be_reserved(claim: Obj) -> bool:
    """Whether the claim could be reserved for one more consumer.

    Kubernetes 1.31 puts no restriction on sharing here (validation caps
    reservedFor at 32). A claim being deleted or with ``deallocationRequested``
    set cannot take new consumers: validation would reject the write, so
    trying is pointless.
    """
    status = claim.get("status") or {}
    return not _meta(claim).get("deletionTimestamp") and not status.get("deallocationRequested")


def claim_pod_owner_uids(claim: Obj) -> Iterable[str]:
    """Index function: uids of the pods that control the claim (``claimPodOwnerIndexFunc``)."""
    ref = controller_ref(claim)
    if ref is not None and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod" and ref.get("uid"):
        return (str(ref["uid"]),)
    return ()


def pod_claim_keys(pod: Obj) -> Iterable[str]:
    """Index function: ``<namespace>/<claim>`` of every claim the pod uses and whose name is known."""
    namespace = _meta(pod).get("namespace", "")
    keys = []
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        try:
            name, _ = claim_name(pod, pod_claim)
        except ClaimNameError:
            continue
        if name is not None:
            keys.append(f"{namespace}/{name}")
    return keys
