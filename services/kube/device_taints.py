"""Device taints and tolerations (``k8s.io/dynamic-resource-allocation/resourceclaim``, 1.37).

Why this module exists: the allocator (a taint keeps a device out of new
allocations) and the device-taint-eviction controller (a NoExecute taint
evicts the pods of allocated claims) must agree on when a toleration in a
claim's request tolerates a device's taint. Taints come from the
ResourceSlice (``device.taints``) and from DeviceTaintRules; callers merge
both before asking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

NONE = "None"
NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
"""``DeviceTaintEffect`` values; ``None`` only informs."""


def tolerates_taint(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``ToleratesTaint``: effect (empty matches all), key (empty matches all), then the operator.

    ``Equal`` (the default) needs the same value, ``Exists`` any value; an
    unknown operator tolerates nothing.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def taint_prevents_allocation(taints: Iterable[Mapping[str, Any]], tolerations: Iterable[Mapping[str, Any]]) -> bool:
    """A NoSchedule or NoExecute taint that no toleration tolerates keeps the device out of allocation."""
    tolerations = list(tolerations)
    for taint in taints:
        if taint.get("effect") not in (NO_SCHEDULE, NO_EXECUTE):
            continue
        if not any(tolerates_taint(t, taint) for t in tolerations):
            return True
    return False


DeviceID = tuple[str, str, str]  # (driver, pool, device)


def rule_selects(rule: Mapping[str, Any], device: DeviceID) -> bool:
    """Whether a DeviceTaintRule's ``deviceSelector`` picks the device; an empty field matches every value."""
    selector = (rule.get("spec") or {}).get("deviceSelector") or {}
    for field, value in zip(("driver", "pool", "device"), device, strict=True):
        wanted = selector.get(field)
        if wanted and wanted != value:
            return False
    return True


def rule_taint(rule: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return (rule.get("spec") or {}).get("taint") or None


def rules_taints(
    rules: Iterable[Mapping[str, Any]], devices: Iterable[DeviceID]
) -> dict[DeviceID, list[Mapping[str, Any]]]:
    """The taints DeviceTaintRules add, per device they select among ``devices`` (devices without any left out)."""
    rules = [r for r in rules if rule_taint(r) is not None]
    out: dict[DeviceID, list[Mapping[str, Any]]] = {}
    if not rules:
        return out
    for device in devices:
        for rule in rules:
            if rule_selects(rule, device):
                taint = rule_taint(rule)
                assert taint is not None
                out.setdefault(device, []).append(taint)
    return out


def slice_devices(slices: Iterable[Mapping[str, Any]]) -> list[DeviceID]:
    """Every (driver, pool, device) the ResourceSlices publish."""
    out: list[DeviceID] = []
    for slice_ in slices:
        spec = slice_.get("spec") or {}
        driver = str(spec.get("driver", ""))
        pool = str((spec.get("pool") or {}).get("name", ""))
        out.extend((driver, pool, str(d.get("name", ""))) for d in spec.get("devices") or ())
    return out
