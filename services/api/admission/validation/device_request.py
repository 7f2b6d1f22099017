"""A claim's device requirements (``spec.devices``): requests, constraints and config.

Shared by ResourceClaims and ResourceClaimTemplates. At most 32 requests
with unique DNS-label names, each naming a DeviceClass, with CEL selectors
and an allocation mode (``ExactCount`` with a positive count, or ``All``
without one). Constraints and configs may only name requests of the claim.
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
from services.api.machinery.field_errors import FieldError, invalid, not_supported, required
from services.kube.resource_limits import DEVICE_CONSTRAINTS_MAX_SIZE, DEVICE_REQUESTS_MAX_SIZE

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"


def request_names(devices: Obj) -> frozenset[str]:
    return frozenset(text(r, "name") for r in items(devices, "requests") if isinstance(r, dict))


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


def validate_device_request(request: Any, path: str, *, stored: bool) -> list[FieldError]:
    req: Obj = request if isinstance(request, dict) else {}
    errs = validate_request_name(text(req, "name"), f"{path}.name")
    class_name = text(req, "deviceClassName")
    if not class_name:
        errs.append(required(f"{path}.deviceClassName"))
    else:
        errs.extend(validate_device_class_name(class_name, f"{path}.deviceClassName"))
    errs.extend(validate_selectors(items(req, "selectors"), f"{path}.selectors", stored=stored))
    mode, count = allocation_mode_and_count(req)
    if mode == ALLOCATION_MODE_ALL:
        if count != 0:
            errs.append(invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'"))
    elif mode == ALLOCATION_MODE_EXACT_COUNT:
        if count <= 0:
            errs.append(invalid(f"{path}.count", count, "must be greater than zero"))
    else:
        errs.append(not_supported(f"{path}.allocationMode", mode, [ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT]))
    return errs


def validate_constraint(constraint: Any, path: str, names: Set[str]) -> list[FieldError]:
    entry: Obj = constraint if isinstance(constraint, dict) else {}
    errs = validate_request_refs(entry, path, names)
    match_attribute = entry.get("matchAttribute")
    if match_attribute is None:
        errs.append(required(f"{path}.matchAttribute"))
    else:
        errs.extend(validate_fully_qualified_name(str(match_attribute), f"{path}.matchAttribute"))
    return errs


def validate_device_claim(devices: Obj, path: str, *, stored: bool) -> list[FieldError]:
    names = request_names(devices)
    errs = validate_set(
        items(devices, "requests"),
        DEVICE_REQUESTS_MAX_SIZE,
        lambda r, p: validate_device_request(r, p, stored=stored),
        f"{path}.requests",
        key=lambda r: text(r, "name") if isinstance(r, dict) else "",
        key_field="name",
    )
    errs.extend(
        validate_slice(
            items(devices, "constraints"),
            DEVICE_CONSTRAINTS_MAX_SIZE,
            lambda c, p: validate_constraint(c, p, names),
            f"{path}.constraints",
        )
    )
    errs.extend(validate_claim_configs(items(devices, "config"), f"{path}.config", names))
    return errs
