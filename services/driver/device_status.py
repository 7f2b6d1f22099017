"""What a driver reports in a claim's ``status.devices``: Ready after prepare, binding conditions, data, network data.

Why this module exists: since 1.37 (DRAResourceClaimDeviceStatus GA) a driver
writes one ``status.devices`` entry per allocated device of its own
(driver, pool, device, shareID): standard conditions, opaque ``data`` and, for
network devices, ``networkData``. dra-example-driver puts the device's
``uuid``, ``model`` and ``driverVersion`` into ``data`` after it prepared the
claim; its controller sets the device's binding condition True once the
device is ready, which releases the scheduler's PreBind wait
(DRADeviceBindingConditions). These functions compute the new list from the
old one — entries of other drivers and conditions of other types are kept —
and return None when nothing would change, so callers write only real
changes. Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Obj = dict[str, Any]
DeviceId = tuple[str, str, str, str]  # driver, pool, device, shareID

READY = "Ready"
PREPARED_REASON = "DevicePrepared"
BINDING_READY_REASON = "DeviceReady"
DATA_ATTRIBUTES = ("uuid", "model", "driverVersion")


def device_id(entry: Mapping[str, Any]) -> DeviceId:
    return (
        str(entry.get("driver") or ""),
        str(entry.get("pool") or ""),
        str(entry.get("device") or ""),
        str(entry.get("shareID") or ""),
    )


def condition(type_: str, *, reason: str, message: str, now: str, generation: int | None) -> Obj:
    """A metav1.Condition with status True."""
    out: Obj = {"type": type_, "status": "True", "lastTransitionTime": now, "reason": reason, "message": message}
    if generation:
        out["observedGeneration"] = generation
    return out


def set_condition(conditions: Sequence[Mapping[str, Any]], new: Obj) -> list[Obj]:
    """``meta.SetStatusCondition``: replace the condition of ``new``'s type; keep its time if the status is the same."""
    result: list[Obj] = []
    found = False
    for old in conditions:
        if old.get("type") == new["type"]:
            found = True
            merged = dict(new)
            if old.get("status") == new["status"] and old.get("lastTransitionTime"):
                merged["lastTransitionTime"] = old["lastTransitionTime"]
            result.append(merged)
        else:
            result.append(dict(old))
    if not found:
        result.append(dict(new))
    return result


def _same(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> bool:
    return [dict(x) for x in a] == [dict(x) for x in b]


def device_data(basic: Mapping[str, Any] | None) -> Obj:
    """The example driver's ``data``: the device's uuid, model and driverVersion attributes."""
    attributes = (basic or {}).get("attributes") or {}
    return {name: dict(attributes[name]) for name in DATA_ATTRIBUTES if name in attributes}


def _results(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or ())


def _generation(claim: Mapping[str, Any]) -> int | None:
    value = (claim.get("metadata") or {}).get("generation")
    return int(value) if isinstance(value, int) else None


def prepared_statuses(
    claim: Mapping[str, Any],
    *,
    driver: str,
    pool: str,
    now: str,
    device_info: Callable[[str], Mapping[str, Any] | None],
    network_data: Callable[[str, int], Obj | None] = lambda device, share: None,
) -> list[Obj] | None:
    """``status.devices`` once this driver prepared ``claim`` on ``pool``, or None when it already says so.

    Each of the driver's allocated devices in the pool gets the condition
    ``Ready`` True, ``data`` from ``device_info(device)`` (the device as
    published) and ``networkData`` from ``network_data(device, n)`` (``n``
    counts the shares of that device in this claim).
    """
    status = claim.get("status") or {}
    old = [dict(e) for e in status.get("devices") or ()]
    by_id = {device_id(e): i for i, e in enumerate(old)}
    new = [dict(e) for e in old]
    generation = _generation(claim)
    shares: dict[str, int] = {}
    for result in _results(claim):
        if result.get("driver") != driver or result.get("pool") != pool:
            continue
        key = device_id(result)
        name = key[2]
        n = shares.get(name, 0)
        shares[name] = n + 1
        entry: Obj
        if key in by_id:
            entry = new[by_id[key]]
        else:
            entry = {"driver": key[0], "pool": key[1], "device": name}
            if key[3]:
                entry["shareID"] = key[3]
            by_id[key] = len(new)
            new.append(entry)
        ready = condition(
            READY, reason=PREPARED_REASON, message="the device is prepared on the node", now=now, generation=generation
        )
        entry["conditions"] = set_condition(entry.get("conditions") or (), ready)
        data = device_data(device_info(name))
        if data:
            entry["data"] = data
        network = network_data(name, n)
        if network:
            entry["networkData"] = network
    return None if _same(old, new) else new


def binding_conditions_met(
    claim: Mapping[str, Any],
    *,
    driver: str,
    pools: Iterable[str] | None,
    now: str,
) -> list[Obj] | None:
    """``status.devices`` with every binding condition of this driver's allocated devices True, or None if already so.

    ``pools``: the pools this driver serves (None: any). A device whose
    binding failure condition is already True is left alone.
    """
    wanted = None if pools is None else set(pools)
    status = claim.get("status") or {}
    old = [dict(e) for e in status.get("devices") or ()]
    new = [dict(e) for e in old]
    by_id = {device_id(e): i for i, e in enumerate(new)}
    generation = _generation(claim)
    for result in _results(claim):
        conditions = list(result.get("bindingConditions") or ())
        if result.get("driver") != driver or not conditions:
            continue
        if wanted is not None and result.get("pool") not in wanted:
            continue
        key = device_id(result)
        if key not in by_id:
            entry: Obj = {"driver": key[0], "pool": key[1], "device": key[2]}
            if key[3]:
                entry["shareID"] = key[3]
            by_id[key] = len(new)
            new.append(entry)
        entry = new[by_id[key]]
        current = {c.get("type"): c.get("status") for c in entry.get("conditions") or ()}
        if any(current.get(f) == "True" for f in result.get("bindingFailureConditions") or ()):
            continue
        for type_ in conditions:
            entry["conditions"] = set_condition(
                entry.get("conditions") or (),
                condition(
                    type_,
                    reason=BINDING_READY_REASON,
                    message="the device is attached and ready for the pod",
                    now=now,
                    generation=generation,
                ),
            )
    return None if _same(old, new) else new
