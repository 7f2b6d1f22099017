"""resource.k8s.io/v1 ↔ the storage form (1.37's v1beta1 layout plus the classic fields).

Why this module exists: v1 (and v1beta2, whose structs are identical) differs
from the storage form exactly where Kubernetes' internal type differs from
v1beta1, so these functions follow ``pkg/apis/resource/v1beta1/conversion.go``
of Kubernetes 1.37 read in the opposite direction (rules reproduced, not
copied):

- a Device's fields sit beside ``name`` in v1 and under ``basic`` in the
  storage form; converting to the storage form always writes ``basic``, also
  when it is empty (``Convert_resource_Device_To_v1beta1_Device``);
- a DeviceRequest's ``exactly`` is flattened beside ``name`` and
  ``firstAvailable``; back, ``exactly`` is written only when one of its fields
  is set in Go's sense (a non-empty string, a non-zero count, a present list
  or pointer: ``hasAnyMainRequestFieldsSet``), so empty values are dropped;
- ResourceSlice ``spec.nodeName``/``spec.allNodes`` are pointers in v1 and
  plain values in the storage form: ``""``/``false`` there are absent here and
  an absent or empty/false pointer here is absent there.

Fields v1 cannot express (the 1.31 classic fields) are dropped on the way out
by projecting onto the v1 models; `unrepresentable.keep_unrepresentable`
keeps their stored values on an update.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from services.api.machinery.conversions.projection import project
from services.api.types import resource_v1

__all__ = ["EXACT_FIELDS", "KINDS", "from_hub", "has_exact_fields", "to_hub"]

KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceTaintRule")

# The fields of v1's ExactDeviceRequest: flat beside firstAvailable in the storage form.
EXACT_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
    "derivedAttributes",
)
_STRINGS = frozenset({"deviceClassName", "allocationMode"})


def has_exact_fields(request: dict[str, Any]) -> bool:
    """Whether a flat request sets any ``exactly`` field, as Go sees a decoded v1beta1 request."""
    for key in EXACT_FIELDS:
        value = request.get(key)
        if key in _STRINGS:
            if value:
                return True
        elif key == "count":
            if value not in (None, 0):
                return True
        elif value is not None:
            return True
    return False


def to_hub(obj: dict[str, Any], *, kind: str) -> dict[str, Any]:
    """A v1 (or v1beta2) ``kind`` in the storage form."""
    return _reshape(obj, kind=kind, claim=_claim_spec_to_hub, slice_spec=_slice_spec_to_hub)


def from_hub(obj: dict[str, Any], *, kind: str, models: ModuleType = resource_v1) -> dict[str, Any]:
    """A stored ``kind`` as v1 (or, with ``models``, v1beta2)."""
    reshaped = _reshape(obj, kind=kind, claim=_claim_spec_from_hub, slice_spec=_slice_spec_from_hub)
    return dict(project(reshaped, getattr(models, kind)))


def _reshape(
    obj: dict[str, Any],
    *,
    kind: str,
    claim: Callable[[dict[str, Any]], dict[str, Any]],
    slice_spec: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return obj
    if kind == "ResourceClaim":
        return {**obj, "spec": claim(spec)}
    if kind == "ResourceClaimTemplate" and isinstance(spec.get("spec"), dict):
        return {**obj, "spec": {**spec, "spec": claim(spec["spec"])}}
    if kind == "ResourceSlice":
        return {**obj, "spec": slice_spec(spec)}
    return obj


def _map_requests(spec: dict[str, Any], fn: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    devices = spec.get("devices")
    if not isinstance(devices, dict) or not isinstance(devices.get("requests"), list):
        return spec
    requests = [fn(r) if isinstance(r, dict) else r for r in devices["requests"]]
    return {**spec, "devices": {**devices, "requests": requests}}


def _claim_spec_to_hub(spec: dict[str, Any]) -> dict[str, Any]:
    def flatten(request: dict[str, Any]) -> dict[str, Any]:
        exactly = request.get("exactly")
        out = {k: v for k, v in request.items() if k != "exactly"}
        if isinstance(exactly, dict):
            out.update(exactly)
        return out

    return _map_requests(spec, flatten)


def _claim_spec_from_hub(spec: dict[str, Any]) -> dict[str, Any]:
    def nest(request: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in request.items() if k not in EXACT_FIELDS}
        if has_exact_fields(request):
            out["exactly"] = {k: request[k] for k in EXACT_FIELDS if k in request}
        return out

    return _map_requests(spec, nest)


def _slice_spec_to_hub(spec: dict[str, Any]) -> dict[str, Any]:
    out = _plain_node_fields(spec)
    devices = out.get("devices")
    if isinstance(devices, list):
        out["devices"] = [
            {"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
            if isinstance(d, dict) and "name" in d
            else {"basic": dict(d)}
            if isinstance(d, dict)
            else d
            for d in devices
        ]
    return out


def _slice_spec_from_hub(spec: dict[str, Any]) -> dict[str, Any]:
    out = _plain_node_fields(spec)
    devices = out.get("devices")
    if isinstance(devices, list):
        out["devices"] = [_unwrap_basic(d) if isinstance(d, dict) else d for d in devices]
    return out


def _unwrap_basic(device: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in device.items() if k != "basic"}
    basic = device.get("basic")
    if isinstance(basic, dict):
        out.update(basic)
    return out


def _plain_node_fields(spec: dict[str, Any]) -> dict[str, Any]:
    """Pointer ↔ value for ``nodeName``/``allNodes``: an empty string or false is absent either way."""
    out = dict(spec)
    if "nodeName" in out and not out["nodeName"]:
        del out["nodeName"]
    if "allNodes" in out and not out["allNodes"]:
        del out["allNodes"]
    return out
