"""A claim's ``status.devices`` entries for devices a status update deallocates are dropped by the apiserver.

Why this module exists: once a claim's last consumer is gone, the
resourceclaim controller clears ``status.allocation`` but leaves
``status.devices`` alone, as Kubernetes' does; the entries the driver wrote
for the deallocated devices would then fail validation ("must be an
allocated device in the claim") and the claim could never be released.
Kubernetes 1.37 drops them in the status strategy's ``PrepareForUpdate``
(``dropDeallocatedStatusDevices`` in pkg/registry/resource/resourceclaim/strategy.go),
so that clients unaware of device status keep working; draplane does the same
at the same point of admission. Pure: it edits the new object in place.
"""

from __future__ import annotations

from typing import Any

from services.kube.feature_gates import DRA_RESOURCE_CLAIM_DEVICE_STATUS, FeatureGates

Obj = dict[str, Any]
DeviceKey = tuple[Any, Any, Any, Any]  # driver, pool, device, shareID (None when not shared)


def _status(claim: Obj | None) -> Obj:
    status = (claim or {}).get("status")
    return status if isinstance(status, dict) else {}


def _allocated(claim: Obj | None) -> set[DeviceKey]:
    allocation = _status(claim).get("allocation")
    if not isinstance(allocation, dict):
        return set()
    results = (allocation.get("devices") or {}).get("results") or ()
    return {(r.get("driver"), r.get("pool"), r.get("device"), r.get("shareID")) for r in results if isinstance(r, dict)}


def drop_deallocated_status_devices(new: Obj, old: Obj, gates: FeatureGates) -> None:
    """Remove from ``new``'s ``status.devices`` the devices ``old`` had allocated and ``new`` no longer has."""
    old_devices = _status(old).get("devices")
    if not gates.enabled(DRA_RESOURCE_CLAIM_DEVICE_STATUS) and not old_devices:
        return
    gone = _allocated(old) - _allocated(new)
    status = _status(new)
    devices = status.get("devices")
    if not isinstance(devices, list):
        return
    kept = [
        d
        for d in devices
        if not (isinstance(d, dict) and (d.get("driver"), d.get("pool"), d.get("device"), d.get("shareID")) in gone)
    ]
    if kept:
        status["devices"] = kept
    else:
        status.pop("devices", None)
