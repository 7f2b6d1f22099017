"""Which claims a pod uses on this node, whether it may use them, and what each container got.

Why this module exists: before kubelet prepares a pod's resources
(``pkg/kubelet/cm/dra/manager.go``, 1.31) it resolves every pod claim to its
ResourceClaim (`services.kube.resourceclaim`), checks that a generated
claim belongs to the pod and that the claim's ``status.reservedFor`` lists the
pod, and fails with kubelet's message otherwise (the node agent emits it as a
``FailedPrepareDynamicResources`` event and retries). After preparing, each
container gets the CDI devices of the claims it references, limited to one
request when it names one. Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.kube.resourceclaim import (
    ClaimNameError,
    ClaimNotForPodError,
    check_is_for_pod,
    claim_name,
    is_reserved_for_pod,
)

Obj = dict[str, Any]

FAILED_PREPARE_REASON = "FailedPrepareDynamicResources"
FAILED_PREPARE_PREFIX = "Failed to prepare dynamic resources: "


class PodClaimsError(Exception):
    """The pod cannot be prepared yet; ``str()`` is kubelet's message (without the event prefix)."""


@dataclass(frozen=True, slots=True)
class ClaimUse:
    """One pod claim and the ResourceClaim behind it."""

    pod_claim_name: str
    claim: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str((self.claim.get("metadata") or {}).get("name", ""))

    @property
    def uid(self) -> str:
        return str((self.claim.get("metadata") or {}).get("uid", ""))


def claims_of_pod(pod: Mapping[str, Any], lookup: Callable[[str, str], Mapping[str, Any] | None]) -> list[ClaimUse]:
    """The pod's claims, each checked as kubelet's ``PrepareResources`` checks it.

    ``lookup(namespace, name)`` returns a ResourceClaim or None. Raises
    `PodClaimsError` with kubelet's message for the first claim that fails.
    """
    meta = pod.get("metadata") or {}
    namespace, pod_name, pod_uid = meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", "")
    uses = []
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        try:
            name, must_check_owner = claim_name(pod, pod_claim)
        except ClaimNameError as err:
            raise PodClaimsError(f"prepare resource claim: {err}") from None
        if name is None:
            continue  # no claim was needed for this pod claim
        claim = lookup(namespace, name)
        if claim is None:
            raise PodClaimsError(
                f"failed to fetch ResourceClaim {name} referenced by pod {pod_name}: "
                f'resourceclaims.resource.k8s.io "{name}" not found'
            )
        if must_check_owner:
            try:
                check_is_for_pod(pod, claim)
            except ClaimNotForPodError as err:
                raise PodClaimsError(str(err)) from None
        if not is_reserved_for_pod(pod, claim):
            claim_uid = (claim.get("metadata") or {}).get("uid", "")
            raise PodClaimsError(f"pod {pod_name}({pod_uid}) is not allowed to use resource claim {name}({claim_uid})")
        uses.append(ClaimUse(str(pod_claim.get("name", "")), claim))
    return uses


def drivers_of(claim: Mapping[str, Any]) -> list[str]:
    """The drivers that must prepare the claim: those named in its allocation results."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    drivers = {str(r.get("driver")) for r in (allocation.get("devices") or {}).get("results") or () if r.get("driver")}
    return sorted(drivers)


def allocated_resources_status(
    pod: Mapping[str, Any], devices: Mapping[str, Sequence[Mapping[str, Any]]]
) -> dict[str, list[Obj]]:
    """``allocatedResourcesStatus`` per container from the prepared devices per pod claim.

    ``devices`` maps a pod claim name to the plugin API devices of its claim
    (``requestNames``, ``cdiDeviceIDs``). A container that names a request
    gets that request's devices only, as kubelet's ``GetResources`` does.
    """
    result: dict[str, list[Obj]] = {}
    for container in (pod.get("spec") or {}).get("containers") or ():
        entries = []
        for ref in (container.get("resources") or {}).get("claims") or ():
            pod_claim, request = str(ref.get("name", "")), str(ref.get("request") or "")
            if pod_claim not in devices:
                continue
            ids: list[str] = []
            for device in devices[pod_claim]:
                if request and request not in (device.get("requestNames") or ()):
                    continue
                ids.extend(i for i in device.get("cdiDeviceIDs") or () if i not in ids)
            name = f"claim:{pod_claim}/{request}" if request else f"claim:{pod_claim}"
            entries.append({"name": name, "resources": [{"resourceID": i, "health": "Healthy"} for i in ids]})
        if entries:
            result[str(container.get("name", ""))] = entries
    return result
