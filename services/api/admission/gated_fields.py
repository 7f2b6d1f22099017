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
from services.kube.feature_gates import FeatureGates

__all__ = ["drop_disabled_fields"]

Obj = dict[str, Any]


def drop_disabled_fields(rt: ResourceType, new: Obj, old: Obj | None, gates: FeatureGates) -> None:
    """Drop the gated fields ``new`` may not introduce (``old`` is None on create)."""
    if rt.group == RESOURCE_GROUP:
        if rt.kind == "ResourceClaim":
            _claim_control_plane_fields(new, old, gates)
            _admin_access(_get(new, "spec"), _get(old, "spec"), gates)
        elif rt.kind == "ResourceClaimTemplate":
            _admin_access(_get(_get(new, "spec"), "spec"), _get(_get(old, "spec"), "spec"), gates)
        elif rt.kind == "DeviceClass":
            _class_control_plane_fields(new, old, gates)
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


# --------------------------------------------------------------------------
# core/v1 Pod


def _pod_dra_fields(new: Obj, old: Obj | None, gates: FeatureGates) -> None:
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


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _pop(obj: Any, key: str) -> None:
    if isinstance(obj, dict):
        obj.pop(key, None)
