"""A claim's ``status.devices`` (Kubernetes 1.37, DRAResourceClaimDeviceStatus): what drivers report per device.

Why this module exists: drivers write conditions, opaque data and network
data for the devices allocated to a claim; 1.37's ``validateDeviceStatus``
(pkg/apis/resource/validation of k8s.io/kubernetes@v1.37.2) bounds and checks
them before they are stored:

- each entry names a driver, pool and device (the usual name rules) and, when
  set, a ``shareID`` that is a normalized RFC 4122 UID;
- the entry must be a device of the claim's allocation (same driver, pool,
  device and shareID), else ``Invalid value: {"Driver":...}: must be an
  allocated device in the claim``; two entries for the same device are a
  ``Duplicate value`` at the second;
- at most 8 ``conditions`` (``Too many``), each a standard condition;
- ``data``, when set, a JSON object of at most 10Ki bytes (measured as compact
  JSON, see `config`);
- ``networkData``: ``interfaceName`` at most 256 and ``hardwareAddress`` at
  most 128 bytes, at most 16 ``ips``, each an address in canonical CIDR form
  (apimachinery's ``IsValidInterfaceAddress``), no duplicates.

The wordings of the invalid device, the UID and the interface address errors
were printed by apimachinery v0.37.2, dynamic-resource-allocation v0.37.2 and
google/uuid (a small Go program); the rules are read from the source.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import orjson

from services.api.admission.validation.access import Obj, items, mapping, text
from services.api.admission.validation.conditions import validate_conditions
from services.api.admission.validation.dra_names import validate_device_name, validate_driver_name, validate_pool_name
from services.api.admission.validation.lists import validate_set
from services.api.machinery.field_errors import (
    FieldError,
    Verbatim,
    duplicate,
    go_quote,
    invalid,
    too_long_bytes,
    too_many,
)
from services.kube.resource_limits import LIMITS_1_37

__all__ = [
    "ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH",
    "ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS",
    "NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH",
    "NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH",
    "NETWORK_DEVICE_DATA_MAX_IPS",
    "interface_address_errors",
    "uid_errors",
    "validate_device_statuses",
]

ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS = 8
ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
NETWORK_DEVICE_DATA_MAX_IPS = 16
NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH = 256
NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH = 128

_NOT_NORMALIZED = (
    "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
    + "with lowercase hexadecimal characters"
)
_NOT_CIDR = "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"
_HEX = frozenset("0123456789abcdefABCDEF")


def _uuid_error(uid: str) -> str | None:
    """google/uuid's ``Validate``: None, or its error text."""
    raw = uid.encode()
    body = uid
    if len(raw) == 36 + 9:
        if raw[:9].lower() != b"urn:uuid:":
            return f"invalid urn prefix: {go_quote(raw[:9].decode(errors='replace'))}"
        body = uid[9:]
    elif len(raw) == 36 + 2:
        if not (uid.startswith("{") and uid.endswith("}")):
            return "invalid bracketed UUID format"
        body = uid[1:-1]
    elif len(raw) == 32:
        return None if all(c in _HEX for c in uid) else "invalid UUID format"
    elif len(raw) != 36:
        return f"invalid UUID length: {len(raw)}"
    if len(body) != 36 or any(body[i] != "-" for i in (8, 13, 18, 23)):
        return "invalid UUID format"
    if not all(c in _HEX for i, c in enumerate(body) if i not in (8, 13, 18, 23)):
        return "invalid UUID format"
    return None


def uid_errors(uid: str, path: str) -> list[FieldError]:
    """1.37's ``validateUID``."""
    error = _uuid_error(uid)
    if error is not None:
        return [invalid(path, uid, f"error validating uid: {error}")]
    if len(uid) != 36 or uid != uid.lower():
        return [invalid(path, uid, _NOT_NORMALIZED)]
    return []


def _parse_ipv4_sloppy(text_ip: str) -> ipaddress.IPv4Address | None:
    """Go's sloppy IPv4 parsing: four decimal octets, leading zeros allowed."""
    parts = text_ip.split(".")
    if len(parts) != 4 or not all(p.isdigit() and p.isascii() and int(p) <= 255 for p in parts):
        return None
    return ipaddress.IPv4Address(".".join(str(int(p)) for p in parts))


def interface_address_errors(value: str, path: str) -> list[FieldError]:
    """apimachinery's ``IsValidInterfaceAddress``: a CIDR address (``ParseCIDRSloppy``) in canonical form."""
    address, sep, prefix = value.partition("/")
    if not sep or not prefix.isdigit() or not prefix.isascii() or "%" in address:
        return [invalid(path, value, _NOT_CIDR)]
    bits = int(prefix)
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None
    if ":" in address:
        try:
            ip = ipaddress.IPv6Address(address)
        except ValueError:
            return [invalid(path, value, _NOT_CIDR)]
        if bits > 128:
            return [invalid(path, value, _NOT_CIDR)]
        mapped = ip.ipv4_mapped
        if mapped is not None:
            ip, bits = mapped, bits - 96 if bits > 32 else bits
    else:
        ip = _parse_ipv4_sloppy(address)
        if ip is None or bits > 32:
            return [invalid(path, value, _NOT_CIDR)]
    canonical = f"{ip.compressed}/{bits}"
    if value != canonical:
        return [invalid(path, value, f"must be in canonical form ({go_quote(canonical)})")]
    return []


def _shared_device_id(entry: Obj) -> tuple[str, str, str, str]:
    return (text(entry, "driver"), text(entry, "pool"), text(entry, "device"), text(entry, "shareID"))


def _render_id(device_id: tuple[str, str, str, str]) -> Verbatim:
    """A ``structured.SharedDeviceID`` as the field error prints it (JSON, Go's field order)."""
    driver, pool, device, share = device_id
    fields = {"Driver": driver, "Pool": pool, "Device": device, "ShareID": share}
    return Verbatim(orjson.dumps(fields).decode())


def _raw_length(value: Any) -> int:
    try:
        return len(orjson.dumps(value))
    except TypeError:
        return 0


def _validate_network_data(network: Any, path: str) -> list[FieldError]:
    if not isinstance(network, dict):
        return []
    errs: list[FieldError] = []
    if len(text(network, "interfaceName").encode()) > NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH:
        errs.append(too_long_bytes(f"{path}.interfaceName", NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH))
    if len(text(network, "hardwareAddress").encode()) > NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH:
        errs.append(too_long_bytes(f"{path}.hardwareAddress", NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH))
    errs.extend(
        validate_set(
            items(network, "ips"),
            NETWORK_DEVICE_DATA_MAX_IPS,
            lambda ip, p: interface_address_errors(ip if isinstance(ip, str) else "", p),
            f"{path}.ips",
            key=lambda ip: ip if isinstance(ip, str) else "",
            limits=LIMITS_1_37,
        )
    )
    return errs


def _validate_device_status(entry: Obj, path: str, allocated: set[tuple[str, str, str, str]]) -> list[FieldError]:
    errs = validate_driver_name(text(entry, "driver"), f"{path}.driver")
    errs.extend(validate_pool_name(text(entry, "pool"), f"{path}.pool"))
    errs.extend(validate_device_name(text(entry, "device"), f"{path}.device"))
    if entry.get("shareID") is not None:
        errs.extend(uid_errors(text(entry, "shareID"), f"{path}.shareID"))
    device_id = _shared_device_id(entry)
    if device_id not in allocated:
        errs.append(invalid(path, _render_id(device_id), "must be an allocated device in the claim"))
    conditions = items(entry, "conditions")
    if len(conditions) > ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS:
        errs.append(too_many(f"{path}.conditions", len(conditions), ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS))
    errs.extend(validate_conditions(conditions, f"{path}.conditions"))
    data = entry.get("data")
    if data is not None:
        if _raw_length(data) > ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH:
            errs.append(too_long_bytes(f"{path}.data", ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH))
        elif not isinstance(data, dict):
            errs.append(invalid(f"{path}.data", "<value omitted>", "must be a valid JSON object"))
    errs.extend(_validate_network_data(entry.get("networkData"), f"{path}.networkData"))
    return errs


def validate_device_statuses(status: Obj, path: str = "status.devices") -> list[FieldError]:
    """``status.devices`` of a hub ResourceClaim against the allocation in the same status."""
    results = items(mapping(mapping(status, "allocation"), "devices"), "results")
    allocated = {_shared_device_id(r) for r in results if isinstance(r, dict)}
    entries: list[Obj] = [d if isinstance(d, dict) else {} for d in items(status, "devices")]
    errs: list[FieldError] = []
    for i, entry in enumerate(entries):
        errs.extend(_validate_device_status(entry, f"{path}[{i}]", allocated))
    # validateSet: every entry first, then the duplicates.
    seen: set[tuple[str, str, str, str]] = set()
    for i, entry in enumerate(entries):
        device_id = _shared_device_id(entry)
        if device_id in seen:
            errs.append(duplicate(f"{path}[{i}]", _render_id(device_id)))
        seen.add(device_id)
    return errs
