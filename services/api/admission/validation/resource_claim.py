"""ResourceClaim validation: the spec on create, immutability on update, and the status rules.

The status is where the scheduler and controllers coordinate, so its rules
carry the allocation protocol: an allocation is immutable once set (it may
only be removed), ``reservedFor`` needs an allocation, holds at most 32
consumers with unique uids, and gains no new consumers while the claim is
being deleted or deallocated; ``deallocationRequested`` (classic DRA) needs
an allocation, cannot be set while the claim is reserved and cannot be
cleared while the allocation stays.

``limits`` picks the release: 1.31's by default (what is served today);
`LIMITS_1_37` validates a hub-form object as Kubernetes 1.37 does
(reservedFor up to 256, 1.37's request shapes and list wording).
"""

from __future__ import annotations

from typing import Any

from services.api.admission.validation.access import Obj, flag, items, mapping, text
from services.api.admission.validation.allocation import validate_allocation_result
from services.api.admission.validation.device_request import request_names, validate_device_claim
from services.api.admission.validation.device_status import validate_device_statuses
from services.api.admission.validation.dra_names import validate_driver_name
from services.api.admission.validation.equality import semantic_equal
from services.api.admission.validation.lists import validate_set
from services.api.admission.validation.names import name_is_dns_subdomain
from services.api.admission.validation.object_meta import (
    FIELD_IMMUTABLE,
    validate_object_meta,
    validate_object_meta_update,
)
from services.api.machinery.field_errors import FieldError, forbidden, invalid, required
from services.kube.resource_limits import LIMITS_1_31, ResourceLimits

validate_claim_name = name_is_dns_subdomain


def validate_resource_claim_spec(
    spec: Obj, path: str, *, stored: bool, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    errs = validate_device_claim(mapping(spec, "devices"), f"{path}.devices", stored=stored, limits=limits)
    controller = text(spec, "controller")
    if controller:
        errs.extend(validate_driver_name(controller, f"{path}.controller"))
    return errs


def validate_resource_claim(claim: Obj, *, limits: ResourceLimits = LIMITS_1_31) -> list[FieldError]:
    errs = validate_object_meta(mapping(claim, "metadata"), namespaced=True, name_fn=validate_claim_name)
    errs.extend(validate_resource_claim_spec(mapping(claim, "spec"), "spec", stored=False, limits=limits))
    return errs


def validate_immutable_spec(new: Obj, old: Obj) -> tuple[list[FieldError], bool]:
    """The ``spec: field is immutable`` error, and whether the spec is unchanged."""
    new_spec, old_spec = mapping(new, "spec"), mapping(old, "spec")
    if semantic_equal(new_spec, old_spec):
        return [], True
    return [invalid("spec", new_spec, FIELD_IMMUTABLE)], False


def validate_resource_claim_update(new: Obj, old: Obj, *, limits: ResourceLimits = LIMITS_1_31) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    spec_errs, unchanged = validate_immutable_spec(new, old)
    errs.extend(spec_errs)
    # An unchanged spec holds stored CEL expressions, which are not compiled again.
    errs.extend(validate_resource_claim_spec(mapping(new, "spec"), "spec", stored=unchanged, limits=limits))
    return errs


def _consumer_required(ref: Any, path: str) -> list[FieldError]:
    entry: Obj = ref if isinstance(ref, dict) else {}
    return [required(f"{path}.{name}") for name in ("resource", "name", "uid") if not text(entry, name)]


def _consumer_key(ref: Any) -> tuple[str, str, str, str]:
    entry: Obj = ref if isinstance(ref, dict) else {}
    return (text(entry, "apiGroup"), text(entry, "resource"), text(entry, "name"), text(entry, "uid"))


def validate_claim_status(
    status: Obj,
    old_status: Obj,
    *,
    claim_deleted: bool,
    names: frozenset[str],
    limits: ResourceLimits = LIMITS_1_31,
) -> list[FieldError]:
    errs: list[FieldError] = []
    allocation = status.get("allocation")
    old_allocation = old_status.get("allocation")
    has_allocation = isinstance(allocation, dict)
    if isinstance(allocation, dict):
        errs.extend(validate_allocation_result(allocation, "status.allocation", names, limits=limits))
    reserved_for = items(status, "reservedFor")
    errs.extend(
        validate_set(
            reserved_for,
            limits.reserved_for,
            _consumer_required,
            "status.reservedFor",
            key=lambda r: text(r, "uid") if isinstance(r, dict) else "",
            key_field="uid",
            limits=limits,
        )
    )
    if limits.too_many:
        errs.extend(validate_device_statuses(status))
    deallocation_requested = flag(status, "deallocationRequested")
    old_deallocation_requested = flag(old_status, "deallocationRequested")
    if reserved_for:
        if not has_allocation:
            errs.append(forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
        elif claim_deleted or deallocation_requested:
            old_consumers = {_consumer_key(r) for r in items(old_status, "reservedFor")}
            if any(_consumer_key(r) not in old_consumers for r in reserved_for):
                errs.append(
                    forbidden(
                        "status.reservedFor",
                        "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                    )
                )
    if has_allocation and isinstance(old_allocation, dict) and not semantic_equal(allocation, old_allocation):
        errs.append(invalid("status.allocation", allocation, FIELD_IMMUTABLE))
    if not old_deallocation_requested and deallocation_requested and reserved_for:
        errs.append(
            forbidden("status.deallocationRequested", "deallocation cannot be requested while `reservedFor` is set")
        )
    if not has_allocation and deallocation_requested:
        errs.append(forbidden("status", "`allocation` must be set when `deallocationRequested` is set"))
    if old_deallocation_requested and not deallocation_requested and has_allocation:
        errs.append(forbidden("status.deallocationRequested", "may not be cleared when `allocation` is set"))
    return errs


def validate_resource_claim_status_update(
    new: Obj, old: Obj, *, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    new_meta, old_meta = mapping(new, "metadata"), mapping(old, "metadata")
    errs = validate_object_meta_update(new_meta, old_meta)
    errs.extend(
        validate_claim_status(
            mapping(new, "status"),
            mapping(old, "status"),
            claim_deleted=bool(new_meta.get("deletionTimestamp") or old_meta.get("deletionTimestamp")),
            names=request_names(mapping(mapping(new, "spec"), "devices")),
            limits=limits,
        )
    )
    return errs
