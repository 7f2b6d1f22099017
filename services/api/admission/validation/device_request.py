"""A claim's device requirements (``spec.devices``): requests, constraints and config.

Shared by ResourceClaims and ResourceClaimTemplates. At most 32 requests
with unique DNS-label names, each naming a DeviceClass, with CEL selectors
and an allocation mode (``ExactCount`` with a positive count, or ``All``
without one). Constraints and configs may only name requests of the claim.

Kubernetes 1.37 (``limits=LIMITS_1_37``, a hub-form object): a request holds
exactly one of its flat fields (1.37 validates them as ``exactly``, and prints
that path) or ``firstAvailable`` (at most 8 subrequests with unique names,
each validated like a request), and may carry device tolerations.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from services.api.admission.validation.access import Obj, integer, items, text
from services.api.admission.validation.config import validate_claim_configs, validate_request_refs
from services.api.admission.validation.dra_names import (
    validate_device_class_name,
    validate_fully_qualified_name,
    validate_request_name,
)
from services.api.admission.validation.lists import validate_set, validate_slice
from services.api.admission.validation.selectors import validate_selectors
from services.api.admission.validation.tolerations import validate_device_tolerations
from services.api.machinery.field_errors import FieldError, invalid, not_supported, required
from services.kube.resource_limits import (
    DEVICE_CONSTRAINTS_MAX_SIZE,
    DEVICE_REQUESTS_MAX_SIZE,
    FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
    LIMITS_1_31,
    ResourceLimits,
)

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"


def request_names(devices: Obj) -> frozenset[str]:
    """The names results, constraints and config may refer to: each request, and ``<request>/<subrequest>``."""
    names: set[str] = set()
    for r in items(devices, "requests"):
        if not isinstance(r, dict):
            continue
        names.add(text(r, "name"))
        names.update(
            f"{text(r, 'name')}/{text(sub, 'name')}" for sub in items(r, "firstAvailable") if isinstance(sub, dict)
        )
    return frozenset(names)


def allocation_mode_and_count(request: Obj) -> tuple[str, int]:
    """The mode and count as Kubernetes sees them after defaulting.

    An empty mode defaults to ExactCount and an ExactCount request with a
    zero (omitted) count to 1, so only explicit bad values can be rejected.
    """
    mode = text(request, "allocationMode") or ALLOCATION_MODE_EXACT_COUNT
    count = integer(request, "count")
    if mode == ALLOCATION_MODE_EXACT_COUNT and count == 0:
        count = 1
    return mode, count


def _validate_class_name(req: Obj, path: str) -> list[FieldError]:
    class_name = text(req, "deviceClassName")
    if not class_name:
        return [required(path)]
    return validate_device_class_name(class_name, path)


def _validate_allocation_mode(req: Obj, path: str) -> list[FieldError]:
    mode, count = allocation_mode_and_count(req)
    if mode == ALLOCATION_MODE_ALL:
        if count != 0:
            return [invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")]
    elif mode == ALLOCATION_MODE_EXACT_COUNT:
        if count <= 0:
            return [invalid(f"{path}.count", count, "must be greater than zero")]
    else:
        return [not_supported(f"{path}.allocationMode", mode, [ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT])]
    return []


# The flat fields v1beta1 converts into ``exactly`` when any of them is set.
_EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")


def _has_exact_fields(req: Obj) -> bool:
    return any(req.get(name) not in (None, "", 0) for name in _EXACT_FIELDS)


def _validate_exact(req: Obj, path: str, *, stored: bool, limits: ResourceLimits) -> list[FieldError]:
    """A request's own device fields (1.37's ExactDeviceRequest, or the body of a subrequest)."""
    errs = _validate_class_name(req, f"{path}.deviceClassName")
    errs.extend(validate_selectors(items(req, "selectors"), f"{path}.selectors", stored=stored, limits=limits))
    errs.extend(_validate_allocation_mode(req, path))
    errs.extend(validate_device_tolerations(items(req, "tolerations"), f"{path}.tolerations"))
    return errs


def _validate_subrequest(sub: Any, path: str, *, stored: bool, limits: ResourceLimits) -> list[FieldError]:
    entry: Obj = sub if isinstance(sub, dict) else {}
    errs = validate_request_name(text(entry, "name"), f"{path}.name")
    errs.extend(_validate_exact(entry, path, stored=stored, limits=limits))
    return errs


def _validate_device_request_1_37(req: Obj, path: str, *, stored: bool, limits: ResourceLimits) -> list[FieldError]:
    errs = validate_request_name(text(req, "name"), f"{path}.name")
    first_available = items(req, "firstAvailable")
    has_exact = _has_exact_fields(req)
    if not first_available and not has_exact:
        errs.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif first_available and has_exact:
        errs.append(
            invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set")
        )
    elif first_available:
        errs.extend(
            validate_set(
                first_available,
                FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
                lambda sub, p: _validate_subrequest(sub, p, stored=stored, limits=limits),
                f"{path}.firstAvailable",
                key=lambda sub: text(sub, "name") if isinstance(sub, dict) else "",
                limits=limits,
            )
        )
    else:
        errs.extend(_validate_exact(req, f"{path}.exactly", stored=stored, limits=limits))
    return errs


def validate_device_request(
    request: Any, path: str, *, stored: bool, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    req: Obj = request if isinstance(request, dict) else {}
    if limits.too_many:
        return _validate_device_request_1_37(req, path, stored=stored, limits=limits)
    errs = validate_request_name(text(req, "name"), f"{path}.name")
    errs.extend(_validate_class_name(req, f"{path}.deviceClassName"))
    errs.extend(validate_selectors(items(req, "selectors"), f"{path}.selectors", stored=stored))
    errs.extend(_validate_allocation_mode(req, path))
    return errs


def validate_constraint(
    constraint: Any, path: str, names: Set[str], *, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    """One of ``matchAttribute`` or (1.34+, DRAConsumableCapacity) ``distinctAttribute``, as 1.37.2's
    ``validateDeviceConstraint``; a field the gate disables was dropped before validation."""
    entry: Obj = constraint if isinstance(constraint, dict) else {}
    errs = validate_request_refs(entry, path, names)
    match_attribute = entry.get("matchAttribute")
    distinct_attribute = entry.get("distinctAttribute")
    if match_attribute is not None:
        errs.extend(validate_fully_qualified_name(str(match_attribute), f"{path}.matchAttribute"))
    elif distinct_attribute is not None:
        errs.extend(validate_fully_qualified_name(str(distinct_attribute), f"{path}.distinctAttribute"))
    elif limits.too_many:  # release 1.37, where DRAConsumableCapacity is on by default
        errs.append(
            required(
                path, 'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set'
            )
        )
    else:
        errs.append(required(f"{path}.matchAttribute"))
    return errs


def validate_device_claim(
    devices: Obj, path: str, *, stored: bool, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    names = request_names(devices)
    errs = validate_set(
        items(devices, "requests"),
        DEVICE_REQUESTS_MAX_SIZE,
        lambda r, p: validate_device_request(r, p, stored=stored, limits=limits),
        f"{path}.requests",
        key=lambda r: text(r, "name") if isinstance(r, dict) else "",
        key_field="name",
        limits=limits,
    )
    errs.extend(
        validate_slice(
            items(devices, "constraints"),
            DEVICE_CONSTRAINTS_MAX_SIZE,
            lambda c, p: validate_constraint(c, p, names, limits=limits),
            f"{path}.constraints",
            limits=limits,
        )
    )
    errs.extend(validate_claim_configs(items(devices, "config"), f"{path}.config", names, limits=limits, stored=stored))
    return errs
