"""resource.k8s.io/v1alpha3 (Kubernetes 1.31's shape) ↔ the storage form.

Why this module exists: the storage form holds every 1.31 field under the same
name and in the same place — the classic DRA fields included — with one
exception: 1.31 stores a device's capacity as a bare quantity
(``capacity: {memory: 80Gi}``), the storage form as 1.32+'s DeviceCapacity
(``capacity: {memory: {value: 80Gi}}``), as Kubernetes 1.32's v1alpha3
conversion did. So:

- to the storage form, a bare capacity quantity is wrapped in ``{value}``;
  nothing else changes, and wrapping is idempotent (an already wrapped value
  is left alone), so an object recorded by a pre-hub log reads back with this
  one function;
- from the storage form, capacity is unwrapped (a capacity with no ``value``,
  e.g. only a ``requestPolicy``, has no 1.31 form and is left out) and
  everything 1.31 cannot express is dropped by projection onto the 1.31
  models; `unrepresentable.keep_unrepresentable` keeps it on an update.

PodSchedulingContext exists only here and is stored as it is. DeviceTaintRule
has no 1.31 form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from services.api.machinery.conversions.projection import project
from services.api.types import resource_v1alpha3

__all__ = ["KINDS", "from_hub", "to_hub"]

KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "PodSchedulingContext")


def to_hub(obj: dict[str, Any], *, kind: str) -> dict[str, Any]:
    """A 1.31 v1alpha3 ``kind`` in the storage form (idempotent)."""
    if kind != "ResourceSlice":
        return obj
    return _map_capacity(obj, _wrap)


def from_hub(obj: dict[str, Any], *, kind: str) -> dict[str, Any]:
    """A stored ``kind`` as 1.31's v1alpha3."""
    if kind == "ResourceSlice":
        obj = _map_capacity(obj, _unwrap)
    return dict(project(obj, getattr(resource_v1alpha3, kind)))


def _wrap(capacity: dict[str, Any]) -> dict[str, Any]:
    return {name: v if isinstance(v, dict) or v is None else {"value": v} for name, v in capacity.items()}


def _unwrap(capacity: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, v in capacity.items():
        if isinstance(v, dict):
            if v.get("value") is not None:
                out[name] = v["value"]
        else:
            out[name] = v
    return out


def _map_capacity(obj: dict[str, Any], fn: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    spec = obj.get("spec")
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not isinstance(devices, list):
        return obj
    out_devices = []
    for device in devices:
        basic = device.get("basic") if isinstance(device, dict) else None
        if isinstance(basic, dict) and isinstance(basic.get("capacity"), dict):
            device = {**device, "basic": {**basic, "capacity": fn(basic["capacity"])}}
        out_devices.append(device)
    return {**obj, "spec": {**spec, "devices": out_devices}}
