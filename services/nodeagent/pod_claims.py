"""Which claims a pod uses on this node, whether it may use them, and what each container got.

Why this module exists: before kubelet prepares a pod's resources
(``pkg/kubelet/cm/dra/manager.go``, 1.31) it resolves every pod claim to its
ResourceClaim (`services.kube.resourceclaim`), checks that a generated
claim belongs to the pod and that the claim's ``status.reservedFor`` lists the
pod, and fails with kubelet's message otherwise (the node agent emits it as a
``FailedPrepareDynamicResources`` event and retries). After preparing, each
container gets the devices of the claims it references, limited to one
request when it names one, with the health its driver last reported
(`allocated_resources_status`). A pod whose extended resources the scheduler
served through DRA (1.37, DRAExtendedResource) also uses the claim named in
``status.extendedResourceClaimStatus``: it is prepared like any other, and a
container gets the devices of the requests mapped to it there
(`container_cdi_devices`). Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.kube.extended_resources import is_dra_extended_resource_name
from services.kube.quantity import amount_value
from services.kube.resourceclaim import (
    ClaimNameError,
    ClaimNotForPodError,
    check_is_for_pod,
    claim_name,
    is_reserved_for_pod,
    known_claim_names,
)
from services.kubeletplugin.health import UNKNOWN

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


EXTENDED_POD_CLAIM = ""  # the pod claim name kubelet gives the extended resource claim (it has none)


def extended_claim_name(pod: Mapping[str, Any]) -> str | None:
    """The claim the scheduler made for the pod's extended resources, if any."""
    status = ((pod.get("status") or {}).get("extendedResourceClaimStatus")) or {}
    name = status.get("resourceClaimName")
    return str(name) if name else None


def used_claim_names(pod: Mapping[str, Any]) -> list[str]:
    """Every claim the pod uses whose name is known: its pod claims', then the extended resource claim."""
    names = known_claim_names(dict(pod))
    extended = extended_claim_name(pod)
    if extended is not None and extended not in names:
        names.append(extended)
    return names


def used_claim_keys(pod: Mapping[str, Any]) -> list[str]:
    """Index function: ``<namespace>/<claim>`` of every claim in `used_claim_names`."""
    namespace = (pod.get("metadata") or {}).get("namespace", "")
    return [f"{namespace}/{name}" for name in used_claim_names(pod)]


def claims_of_pod(pod: Mapping[str, Any], lookup: Callable[[str, str], Mapping[str, Any] | None]) -> list[ClaimUse]:
    """The pod's claims, each checked as kubelet's ``PrepareResources`` checks it.

    ``lookup(namespace, name)`` returns a ResourceClaim or None. Raises
    `PodClaimsError` with kubelet's message for the first claim that fails.
    """
    meta = pod.get("metadata") or {}
    namespace, pod_name, pod_uid = meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", "")
    uses = []
    pod_claims = list((pod.get("spec") or {}).get("resourceClaims") or ())
    extended = extended_claim_name(pod)
    if extended is not None:
        # kubelet appends it as a pod claim that names the claim directly: no owner check, reservedFor is.
        pod_claims.append({"name": EXTENDED_POD_CLAIM, "resourceClaimName": extended})
    for pod_claim in pod_claims:
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
    pod: Mapping[str, Any],
    devices: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    health: Callable[[str, str, str], str] = lambda driver, pool, device: UNKNOWN,
) -> dict[str, list[Obj]]:
    """``allocatedResourcesStatus`` per container, as kubelet 1.37's ``UpdateAllocatedResourcesStatus`` fills it.

    ``devices`` maps a pod claim name to the plugin API devices of its claim
    (``requestNames``, ``poolName``, ``deviceName``, ``cdiDeviceIDs``, and the
    ``driver`` that prepared it); ``health(driver, pool, device)`` is the
    driver's last health report (Unknown without one). Per claim reference of
    a container (``claim:<pod claim>`` or ``claim:<pod claim>/<request>``,
    only that request's devices), one entry per device: ``resourceID`` is the
    device's first CDI id, else ``<driver>/<pool>/<device>``; repeated ids are
    left out and references without devices are dropped. Init containers get
    none (kubelet walks ``containerStatuses`` only).
    """
    result: dict[str, list[Obj]] = {}
    for container in (pod.get("spec") or {}).get("containers") or ():
        entries = []
        for ref in (container.get("resources") or {}).get("claims") or ():
            pod_claim, request = str(ref.get("name", "")), str(ref.get("request") or "")
            if pod_claim not in devices:
                continue
            base_request = request.split("/", 1)[0]
            seen: set[str] = set()
            resources: list[Obj] = []
            for device in devices[pod_claim]:
                names = device.get("requestNames") or ()
                if request and names and base_request not in names:
                    continue
                driver, pool, name = (
                    str(device.get("driver", "")),
                    str(device.get("poolName", "")),
                    str(device.get("deviceName", "")),
                )
                ids = list(device.get("cdiDeviceIDs") or ())
                resource_id = ids[0] if ids else f"{driver}/{pool}/{name}"
                if resource_id in seen:
                    continue
                seen.add(resource_id)
                resources.append({"resourceID": resource_id, "health": health(driver, pool, name)})
            if resources:
                label = f"claim:{pod_claim}/{request}" if request else f"claim:{pod_claim}"
                entries.append({"name": label, "resources": resources})
        if entries:
            result[str(container.get("name", ""))] = entries
    return result


def container_cdi_devices(
    pod: Mapping[str, Any], devices: Mapping[str, Sequence[Mapping[str, Any]]]
) -> dict[str, list[str]]:
    """The CDI device ids each regular container gets (kubelet's ``GetResources``), per container name.

    ``devices`` as for `allocated_resources_status`; the extended resource
    claim's devices are under ``EXTENDED_POD_CLAIM``. A container gets the
    devices of the requests mapped to it for the extended resources it asks for.
    """
    extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus")) or {}
    result: dict[str, list[str]] = {}
    for container in (pod.get("spec") or {}).get("containers") or ():
        name = str(container.get("name", ""))
        wanted: list[tuple[str, str]] = [
            (str(ref.get("name", "")), str(ref.get("request") or ""))
            for ref in (container.get("resources") or {}).get("claims") or ()
        ]
        requests = (container.get("resources") or {}).get("requests") or {}
        asked = {r for r, q in requests.items() if is_dra_extended_resource_name(r) and amount_value(q) != 0}
        for mapping in extended.get("requestMappings") or ():
            if mapping.get("containerName") == name and mapping.get("resourceName") in asked:
                wanted.append((EXTENDED_POD_CLAIM, str(mapping.get("requestName") or "")))
        ids: list[str] = []
        for pod_claim, request in wanted:
            for device in devices.get(pod_claim, ()):
                if request and request not in (device.get("requestNames") or ()):
                    continue
                ids.extend(i for i in device.get("cdiDeviceIDs") or () if i not in ids)
        if ids:
            result[name] = ids
    return result
