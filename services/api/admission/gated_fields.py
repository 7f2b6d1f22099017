"""Dropping fields whose feature gate is off, as Kubernetes' registry strategies do.

Why this module exists: an alpha field whose gate is off must not be
*introduced* by a write, yet an object that already uses it must not lose it
on an unrelated update (that would corrupt it). Kubernetes handles this in
each resource's ``PrepareForCreate``/``PrepareForUpdate``; draplane calls
`drop_disabled_fields` at the same point of admission, on create (``old`` is
None), update and status update alike.

Which field depends on which gate follows Kubernetes 1.31 exactly
(pkg/registry/resource/*/strategy.go, pkg/api/pod/util.go), plus 1.32's
DRAAdminAccess (see `services.kube.feature_gates`):

DRAControlPlaneController off
  - ResourceClaim ``spec.controller``: dropped on create; on update kept only
    if the old claim had one.
  - ResourceClaim ``status.allocation.controller``: dropped when the old claim
    had neither ``spec.controller`` nor an allocation at all (an allocation
    that used a controller, or a claim handled by one, keeps it).
  - ResourceClaim ``status.deallocationRequested``: dropped unless the old
    claim already requested deallocation or the new allocation (after the
    step above) still names a controller.
  - DeviceClass ``spec.suitableNodes``: dropped on create; on update kept only
    if the old class had it.
  - ResourceClaimTemplate ``spec.spec.controller`` is *not* touched: 1.31's
    template strategy has no gate handling (claims generated from a template
    lose the field at their own create).
  - PodSchedulingContext is registered and writable regardless of the gate, so
    stale objects can be cleaned up after the gate is turned off.

DynamicResourceAllocation off, and the old pod's ``spec.resourceClaims`` empty
  - Pod ``spec.resourceClaims``, ``resources.claims`` of containers, init
    containers and ephemeral containers, and ``status.resourceClaimStatuses``
    (the status field too depends on the old *spec*, as in Kubernetes).

DRAAdminAccess off (1.32 semantics)
  - ``adminAccess`` of ResourceClaim ``spec.devices.requests[]`` and of
    ResourceClaimTemplate ``spec.spec.devices.requests[]``: dropped unless the
    old object set ``adminAccess`` (to any value) in some request.

Kubernetes 1.37's gates (pkg/registry/resource/*/strategy.go and
pkg/api/resourceclaimspec of 1.37.2, ``dropDisabledFields``), on the hub form
(docs/decisions/api-versions.md: a request's ``exactly`` fields flat in the
request, a device's fields under ``basic``). Each gate's fields are dropped
when the gate is off and the old object does not use the feature ("in use":
a non-empty list, or a present pointer); at release 1.31 these gates are
pre-alpha, hence off:

DRAPrioritizedList
  - requests' ``firstAvailable`` (claim and template spec).
DRADeviceTaints
  - requests' and subrequests' ``tolerations``; slice devices' ``taints``.
DRAAdminAccess (1.37 adds the status)
  - allocation results' ``adminAccess``, unless the old claim's spec or
    results used ``adminAccess``.
DRAConsumableCapacity
  - constraints' ``distinctAttribute``, requests' and subrequests'
    ``capacity``; in the claim status results' ``shareID`` and
    ``consumedCapacity`` and ``status.devices[].shareID`` (in use: any of
    those in the old claim, spec included); slice devices'
    ``allowMultipleAllocations`` and capacities' ``requestPolicy``.
DRAResourceClaimDeviceStatus
  - claim ``status.devices``.
DRADeviceBindingConditions
  - allocation results' ``bindingConditions``/``bindingFailureConditions``;
    slice devices' ``bindingConditions``, ``bindingFailureConditions`` and
    ``bindsToNode`` (kept only with DRAResourceClaimDeviceStatus on too).
DRAPartitionableDevices
  - slice ``sharedCounters`` and ``perDeviceNodeSelection``, devices'
    ``consumesCounters``, ``nodeName``, ``nodeSelector`` and ``allNodes``.
DRAExtendedResource
  - DeviceClass ``spec.extendedResourceName``; pod ``status.extendedResourceClaimStatus``.

DRADeviceTaintRules gates the DeviceTaintRule kind itself (its registry
row), DRASchedulerFilterTimeout the scheduler's filter timeout: neither has
fields to drop. Alpha gates draplane does not model (DRADerivedAttributes,
DRAOptionalNodeOperations, DRAListTypeAttributes, ...) are not handled here.

CoordinatedLeaderElection (beta and off by default in 1.37; not a gate draplane knows, so always off)
  - Lease ``spec.strategy`` and ``spec.preferredHolder``: dropped unless the
    old Lease had them (pkg/registry/coordination/lease/strategy.go).

The caller is responsible for the rest of the strategy (a status update keeps
the old spec, a spec update the old status); this module only drops fields.
Objects are wire dicts, changed in place. A "set" string field is a non-empty
one and a "set" pointer field a present, non-null one, as in Go.
"""

from __future__ import annotations

from typing import Any

from services.api.types.registry import COORDINATION_GROUP, CORE, RESOURCE_GROUP, ResourceType
from services.kube.feature_gates import (
    DRA_CONSUMABLE_CAPACITY,
    DRA_DEVICE_BINDING_CONDITIONS,
    DRA_DEVICE_TAINTS,
    DRA_EXTENDED_RESOURCE,
    DRA_PARTITIONABLE_DEVICES,
    DRA_PRIORITIZED_LIST,
    DRA_RESOURCE_CLAIM_DEVICE_STATUS,
    FeatureGates,
)

__all__ = [
    "drop_disabled_claim_spec_fields",
    "drop_disabled_claim_status_fields",
    "drop_disabled_fields",
    "drop_disabled_slice_fields",
]

Obj = dict[str, Any]


def drop_disabled_fields(rt: ResourceType, new: Obj, old: Obj | None, gates: FeatureGates) -> None:
    """Drop the gated fields ``new`` may not introduce (``old`` is None on create)."""
    if rt.group == RESOURCE_GROUP:
        if rt.kind == "ResourceClaim":
            _claim_control_plane_fields(new, old, gates)
            drop_disabled_claim_spec_fields(_get(new, "spec"), _get(old, "spec"), gates)
            drop_disabled_claim_status_fields(new, old, gates)
        elif rt.kind == "ResourceClaimTemplate":
            drop_disabled_claim_spec_fields(_get(_get(new, "spec"), "spec"), _get(_get(old, "spec"), "spec"), gates)
        elif rt.kind == "DeviceClass":
            _class_control_plane_fields(new, old, gates)
            _class_extended_resource(new, old, gates)
        elif rt.kind == "ResourceSlice":
            drop_disabled_slice_fields(_get(new, "spec"), _get(old, "spec"), gates)
    elif rt.group == CORE and rt.kind == "Pod":
        _pod_dra_fields(new, old, gates)
    elif rt.group == COORDINATION_GROUP and rt.kind == "Lease":
        _lease_coordinated_fields(new, old)


def _lease_coordinated_fields(new: Obj, old: Obj | None) -> None:
    """CoordinatedLeaderElection (beta, off by default in 1.37, not a gate here): Lease ``spec.strategy`` and
    ``spec.preferredHolder`` are dropped unless the old Lease had them (pkg/registry/coordination/lease)."""
    spec, old_spec = _get(new, "spec"), _get(old, "spec")
    for field in ("strategy", "preferredHolder"):
        if old_spec is None or _get(old_spec, field) is None:
            _pop(spec, field)


# --------------------------------------------------------------------------
# resource.k8s.io


def _claim_control_plane_fields(new: Obj, old: Obj | None, gates: FeatureGates) -> None:
    if gates.dra_control_plane_controller:
        return
    spec = _get(new, "spec")
    if old is None:
        # Always drop on create; there is no status yet.
        _pop(spec, "controller")
        return
    old_spec, old_status = _get(old, "spec"), _get(old, "status")
    old_controller = bool(_get(old_spec, "controller"))
    if not old_controller:
        _pop(spec, "controller")
    status = _get(new, "status")
    allocation = _get(status, "allocation")
    old_allocation = _get(old_status, "allocation")
    if not old_controller and allocation is not None and old_allocation is None:
        _pop(allocation, "controller")
    if not _get(old_status, "deallocationRequested") and (allocation is None or not _get(allocation, "controller")):
        _pop(status, "deallocationRequested")


def _class_control_plane_fields(new: Obj, old: Obj | None, gates: FeatureGates) -> None:
    if gates.dra_control_plane_controller:
        return
    if old is None or _get(_get(old, "spec"), "suitableNodes") is None:
        _pop(_get(new, "spec"), "suitableNodes")


def _admin_access(claim_spec: Any, old_claim_spec: Any, gates: FeatureGates) -> None:
    """``claim_spec`` is a ResourceClaimSpec (of a claim, or inside a template)."""
    if gates.dra_admin_access:
        return
    if any(_get(r, "adminAccess") is not None for r in _requests(old_claim_spec)):
        return
    for request in _requests(claim_spec):
        _pop(request, "adminAccess")


def _requests(claim_spec: Any) -> list[Any]:
    requests = _get(_get(claim_spec, "devices"), "requests")
    return requests if isinstance(requests, list) else []


def drop_disabled_claim_spec_fields(claim_spec: Any, old_claim_spec: Any, gates: FeatureGates) -> None:
    """1.37's ``resourceclaimspec.DropDisabledFields`` on a hub ResourceClaimSpec (of a claim or a template).

    Each gate is looked at only when ``claim_spec`` holds one of its fields, so
    a claim without them costs one pass over its requests.
    """
    requests = _requests(claim_spec)
    present = _keys(requests)
    if "firstAvailable" in present:
        present |= _keys([sub for r in requests for sub in _list(_get(r, "firstAvailable"))])
    constraints = _list(_get(_get(claim_spec, "devices"), "constraints"))
    if constraints:
        present |= _keys(constraints)
    if "firstAvailable" in present and not gates.enabled(DRA_PRIORITIZED_LIST):
        if not any(_get(r, "firstAvailable") for r in _requests(old_claim_spec)):
            for request in requests:
                _pop(request, "firstAvailable")
    if "tolerations" in present and not gates.enabled(DRA_DEVICE_TAINTS):
        if not any(_get(r, "tolerations") for r in _requests_and_subrequests(old_claim_spec)):
            for request in _requests_and_subrequests(claim_spec):
                _pop(request, "tolerations")
    if "adminAccess" in present:
        _admin_access(claim_spec, old_claim_spec, gates)
    if ("capacity" in present or "distinctAttribute" in present) and not gates.enabled(DRA_CONSUMABLE_CAPACITY):
        if not _claim_spec_uses_capacity(old_claim_spec):
            for constraint in constraints:
                _pop(constraint, "distinctAttribute")
            for request in _requests_and_subrequests(claim_spec):
                _pop(request, "capacity")


_CAPACITY_RESULT_FIELDS = frozenset({"shareID", "consumedCapacity"})
_BINDING_RESULT_FIELDS = frozenset({"bindingConditions", "bindingFailureConditions"})


def drop_disabled_claim_status_fields(new: Obj, old: Obj | None, gates: FeatureGates) -> None:
    """1.37's ``dropDisabledStatusFields`` of ResourceClaim (the gates draplane models)."""
    status = _get(new, "status")
    if not isinstance(status, dict):
        return
    old_status = _get(old, "status")
    results = _results(status)
    present = _keys(results)
    devices = _list(status.get("devices"))
    if "devices" in status and not gates.enabled(DRA_RESOURCE_CLAIM_DEVICE_STATUS):
        if not _get(old_status, "devices"):
            _pop(status, "devices")
            devices = []
    if "adminAccess" in present and not gates.dra_admin_access:
        old_results = _results(old_status)
        if not (_uses_admin_access(_get(old, "spec")) or any(_get(r, "adminAccess") is not None for r in old_results)):
            for result in results:
                _pop(result, "adminAccess")
    shares = any(_get(d, "shareID") is not None for d in devices)
    if (present & _CAPACITY_RESULT_FIELDS or shares) and not gates.enabled(DRA_CONSUMABLE_CAPACITY):
        if not _claim_uses_capacity(old):
            for result in results:
                _pop(result, "shareID")
                _pop(result, "consumedCapacity")
            for device in devices:
                _pop(device, "shareID")
    if present & _BINDING_RESULT_FIELDS and not gates.enabled(DRA_DEVICE_BINDING_CONDITIONS):
        old_results = _results(old_status)
        if not any(
            _get(r, "bindingConditions") is not None or _get(r, "bindingFailureConditions") is not None
            for r in old_results
        ):
            for result in results:
                _pop(result, "bindingConditions")
                _pop(result, "bindingFailureConditions")


_DEVICE_NODE_FIELDS = ("nodeName", "nodeSelector", "allNodes")
_PARTITION_DEVICE_FIELDS = frozenset({"consumesCounters", *_DEVICE_NODE_FIELDS})
_BINDING_DEVICE_FIELDS = frozenset({"bindingConditions", "bindingFailureConditions", "bindsToNode"})


def drop_disabled_slice_fields(spec: Any, old_spec: Any, gates: FeatureGates) -> None:
    """1.37's ResourceSlice ``dropDisabledFields`` on a hub slice spec (devices' fields under ``basic``)."""
    if not isinstance(spec, dict):
        return
    devices = _basic_devices(spec)
    present = _keys(devices)
    if "taints" in present and not gates.enabled(DRA_DEVICE_TAINTS):
        if not any(_get(d, "taints") for d in _basic_devices(old_spec)):
            for device in devices:
                _pop(device, "taints")
    partitions = present & _PARTITION_DEVICE_FIELDS or "sharedCounters" in spec or "perDeviceNodeSelection" in spec
    if partitions and not gates.enabled(DRA_PARTITIONABLE_DEVICES):
        if not _slice_partitions(old_spec, _basic_devices(old_spec)):
            _pop(spec, "sharedCounters")
            _pop(spec, "perDeviceNodeSelection")
            for device in devices:
                for key in _PARTITION_DEVICE_FIELDS:
                    _pop(device, key)
    binding = gates.enabled(DRA_DEVICE_BINDING_CONDITIONS) and gates.enabled(DRA_RESOURCE_CLAIM_DEVICE_STATUS)
    if present & _BINDING_DEVICE_FIELDS and not binding:
        if not any(
            _get(d, "bindingConditions") or _get(d, "bindingFailureConditions") or _get(d, "bindsToNode") is not None
            for d in _basic_devices(old_spec)
        ):
            for device in devices:
                for key in _BINDING_DEVICE_FIELDS:
                    _pop(device, key)
    if not gates.enabled(DRA_CONSUMABLE_CAPACITY) and any(_device_shares(d) for d in devices):
        if not any(_device_shares(d) for d in _basic_devices(old_spec)):
            for device in devices:
                _pop(device, "allowMultipleAllocations")
                for capacity in _values(_get(device, "capacity")):
                    _pop(capacity, "requestPolicy")


def _class_extended_resource(new: Obj, old: Obj | None, gates: FeatureGates) -> None:
    if gates.enabled(DRA_EXTENDED_RESOURCE) or _get(_get(old, "spec"), "extendedResourceName") is not None:
        return
    _pop(_get(new, "spec"), "extendedResourceName")


def _uses_admin_access(claim_spec: Any) -> bool:
    return any(_get(r, "adminAccess") is not None for r in _requests(claim_spec))


def _claim_spec_uses_capacity(claim_spec: Any) -> bool:
    constraints = _list(_get(_get(claim_spec, "devices"), "constraints"))
    return any(_get(c, "distinctAttribute") is not None for c in constraints) or any(
        _get(r, "capacity") is not None for r in _requests_and_subrequests(claim_spec)
    )


def _claim_uses_capacity(claim: Obj | None) -> bool:
    if _claim_spec_uses_capacity(_get(claim, "spec")):
        return True
    status = _get(claim, "status")
    if any(_get(r, "shareID") is not None or _get(r, "consumedCapacity") is not None for r in _results(status)):
        return True
    return any(_get(d, "shareID") is not None for d in _list(_get(status, "devices")))


def _slice_partitions(spec: Any, devices: list[Any]) -> bool:
    if _get(spec, "sharedCounters") or _get(spec, "perDeviceNodeSelection") is not None:
        return True
    return any(
        _get(d, "consumesCounters") or any(_get(d, key) is not None for key in _DEVICE_NODE_FIELDS) for d in devices
    )


def _device_shares(device: Any) -> bool:
    if _get(device, "allowMultipleAllocations") is not None:
        return True
    return any(_get(c, "requestPolicy") is not None for c in _values(_get(device, "capacity")))


def _requests_and_subrequests(claim_spec: Any) -> list[Any]:
    out: list[Any] = []
    for request in _requests(claim_spec):
        out.append(request)
        out.extend(_list(_get(request, "firstAvailable")))
    return out


def _results(status: Any) -> list[Any]:
    return _list(_get(_get(_get(status, "allocation"), "devices"), "results"))


def _basic_devices(slice_spec: Any) -> list[Any]:
    """The ``basic`` part of each hub device: where v1beta1 keeps every device field but the name."""
    return [basic for d in _list(_get(slice_spec, "devices")) if isinstance(basic := _get(d, "basic"), dict)]


# --------------------------------------------------------------------------
# core/v1 Pod


def _pod_dra_fields(new: Obj, old: Obj | None, gates: FeatureGates) -> None:
    if not gates.enabled(DRA_EXTENDED_RESOURCE) and _get(_get(old, "status"), "extendedResourceClaimStatus") is None:
        # pkg/api/pod dropDisabledPodStatusFields (draExendedResourceInUse)
        _pop(_get(new, "status"), "extendedResourceClaimStatus")
    if gates.dynamic_resource_allocation:
        return
    if old is not None and _get(_get(old, "spec"), "resourceClaims"):
        return
    spec = _get(new, "spec")
    for key in ("containers", "initContainers", "ephemeralContainers"):
        containers = _get(spec, key)
        if isinstance(containers, list):
            for container in containers:
                _pop(_get(container, "resources"), "claims")
    _pop(spec, "resourceClaims")
    _pop(_get(new, "status"), "resourceClaimStatuses")


# --------------------------------------------------------------------------
# dict helpers: tolerate missing or null parents


def _keys(entries: list[Any]) -> set[str]:
    """Every key of the dicts among ``entries``."""
    out: set[str] = set()
    for entry in entries:
        if isinstance(entry, dict):
            out.update(entry)
    return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _values(value: Any) -> list[Any]:
    return list(value.values()) if isinstance(value, dict) else []


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _pop(obj: Any, key: str) -> None:
    if isinstance(obj, dict):
        obj.pop(key, None)


def drop_deallocated_status_devices(new: Obj, old: Obj | None, gates: FeatureGates) -> None:
    """1.37's ``dropDeallocatedStatusDevices`` (ResourceClaim status strategy).

    A status update that deallocates devices drops their ``status.devices``
    entries, so that a client unaware of device status (the resourceclaim
    controller clearing an allocation) does not leave stale entries that
    validation would refuse. Applies with DRAResourceClaimDeviceStatus on, or
    when the old claim already has device status.
    """
    old_status = _get(old, "status")
    if not gates.enabled(DRA_RESOURCE_CLAIM_DEVICE_STATUS) and not _get(old_status, "devices"):
        return
    status = _get(new, "status")
    if not isinstance(status, dict) or not isinstance(status.get("devices"), list):
        return

    def shared_id(entry: Any) -> tuple[Any, ...]:
        return tuple(_get(entry, key) for key in ("driver", "pool", "device", "shareID"))

    deallocated = {shared_id(r) for r in _results(old_status)} - {shared_id(r) for r in _results(status)}
    if deallocated:
        status["devices"] = [d for d in status["devices"] if shared_id(d) not in deallocated]
