"""Opaque device configuration, in claims, classes and allocation results.

Every configuration entry must carry exactly the ``opaque`` variant in
1.31: a driver name and a ``parameters`` value that is a JSON object
(Kubernetes stores it as a RawExtension). Claim and allocation entries may
name the requests they apply to; those names must exist in the claim.

1.37 (``limits=LIMITS_1_37``) also limits the raw parameters to 10Ki bytes
(``Too long: may not be more than 10240 bytes``) unless they are stored
(unchanged on update), and words a non-object ``must be a valid JSON
object``. Kubernetes measures the bytes the client sent; draplane holds the
decoded value and measures its compact JSON encoding, which is what kubectl
and the Python client send.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

import orjson

from services.api.admission.validation.access import Obj, strings, text
from services.api.admission.validation.dra_names import validate_driver_name, validate_request_name
from services.api.admission.validation.lists import same, validate_set, validate_slice
from services.api.machinery.field_errors import FieldError, invalid, not_supported, required, too_long_bytes
from services.kube.resource_limits import (
    DEVICE_CONFIG_MAX_SIZE,
    DEVICE_REQUESTS_MAX_SIZE,
    LIMITS_1_31,
    OPAQUE_PARAMETERS_MAX_LENGTH,
    ResourceLimits,
)

ALLOCATION_CONFIG_SOURCES = ("FromClaim", "FromClass")  # the order Kubernetes lists them


def validate_request_name_ref(name: str, path: str, request_names: Set[str]) -> list[FieldError]:
    if "/" in name and name in request_names:
        # A subrequest of a prioritized list (1.33+): each segment is a request name.
        return [err for segment in name.split("/") for err in validate_request_name(segment, path)]
    errs = validate_request_name(name, path)
    if name not in request_names:
        errs.append(invalid(path, name, "must be the name of a request in the claim"))
    return errs


def validate_request_refs(entry: Obj, path: str, request_names: Set[str]) -> list[FieldError]:
    """A ``requests`` list: each a request of the claim, at most 32, no duplicates."""
    return validate_set(
        strings(entry, "requests"),
        DEVICE_REQUESTS_MAX_SIZE,
        lambda name, p: validate_request_name_ref(name, p, request_names),
        f"{path}.requests",
        key=same,
    )


def _raw_length(parameters: Any) -> int:
    try:
        return len(orjson.dumps(parameters))
    except TypeError:
        return 0


def validate_opaque(
    opaque: Obj, path: str, *, limits: ResourceLimits = LIMITS_1_31, stored: bool = False
) -> list[FieldError]:
    errs = validate_driver_name(text(opaque, "driver"), f"{path}.driver")
    parameters = opaque.get("parameters")
    if parameters is None:
        errs.append(required(f"{path}.parameters"))
    elif limits.too_many and not stored and _raw_length(parameters) > OPAQUE_PARAMETERS_MAX_LENGTH:
        errs.append(too_long_bytes(f"{path}.parameters", OPAQUE_PARAMETERS_MAX_LENGTH))
    elif not isinstance(parameters, dict):
        detail = "must be a valid JSON object" if limits.too_many else "parameters must be a valid JSON object"
        errs.append(invalid(f"{path}.parameters", "<value omitted>", detail))
    return errs


def validate_device_configuration(
    config: Obj, path: str, *, limits: ResourceLimits = LIMITS_1_31, stored: bool = False
) -> list[FieldError]:
    opaque = config.get("opaque")
    if not isinstance(opaque, dict):
        return [required(f"{path}.opaque")]
    return validate_opaque(opaque, f"{path}.opaque", limits=limits, stored=stored)


def validate_claim_configs(
    configs: list[Any],
    path: str,
    request_names: Set[str],
    *,
    limits: ResourceLimits = LIMITS_1_31,
    stored: bool = False,
) -> list[FieldError]:
    """``spec.devices.config`` of a claim (at most 32 entries)."""

    def one(config: Any, p: str) -> list[FieldError]:
        entry = config if isinstance(config, dict) else {}
        configuration = validate_device_configuration(entry, p, limits=limits, stored=stored)
        return validate_request_refs(entry, p, request_names) + configuration

    return validate_slice(configs, DEVICE_CONFIG_MAX_SIZE, one, path, limits=limits)


def validate_class_configs(
    configs: list[Any], path: str, *, limits: ResourceLimits = LIMITS_1_31, stored: bool = False
) -> list[FieldError]:
    """``spec.config`` of a DeviceClass (at most 32 entries)."""
    return validate_slice(
        configs,
        DEVICE_CONFIG_MAX_SIZE,
        lambda c, p: validate_device_configuration(c if isinstance(c, dict) else {}, p, limits=limits, stored=stored),
        path,
        limits=limits,
    )


def validate_allocation_configs(
    configs: list[Any], path: str, request_names: Set[str], *, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    """``status.allocation.devices.config``: class and claim configs together, at most 64."""

    def one(config: Any, p: str) -> list[FieldError]:
        entry = config if isinstance(config, dict) else {}
        errs: list[FieldError] = []
        source = text(entry, "source")
        if not source:
            errs.append(required(f"{p}.source"))
        elif source not in ALLOCATION_CONFIG_SOURCES:
            errs.append(not_supported(f"{p}.source", source, list(ALLOCATION_CONFIG_SOURCES)))
        errs.extend(validate_request_refs(entry, p, request_names))
        errs.extend(validate_device_configuration(entry, p, limits=limits))
        return errs

    return validate_slice(configs, 2 * DEVICE_CONFIG_MAX_SIZE, one, path, limits=limits)
