"""A claim's allocation result (``status.allocation``).

Kubernetes 1.31 checks every result entry (request of the claim, driver,
pool and device names), at most 32 results and 64 configs (class plus claim
configs), the node selector and the classic-DRA controller name. It does not
reject two results naming the same device; later releases added that.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from services.api.admission.validation.access import Obj, items, mapping, text
from services.api.admission.validation.config import validate_allocation_configs, validate_request_name_ref
from services.api.admission.validation.dra_names import validate_device_name, validate_driver_name, validate_pool_name
from services.api.admission.validation.lists import validate_slice
from services.api.admission.validation.node_selector import validate_node_selector
from services.api.machinery.field_errors import FieldError
from services.kube.resource_limits import LIMITS_1_31, ResourceLimits


def validate_result(result: Any, path: str, request_names: Set[str]) -> list[FieldError]:
    entry: Obj = result if isinstance(result, dict) else {}
    errs = validate_request_name_ref(text(entry, "request"), f"{path}.request", request_names)
    errs.extend(validate_driver_name(text(entry, "driver"), f"{path}.driver"))
    errs.extend(validate_pool_name(text(entry, "pool"), f"{path}.pool"))
    errs.extend(validate_device_name(text(entry, "device"), f"{path}.device"))
    return errs


def validate_allocation_result(
    allocation: Obj, path: str, request_names: Set[str], *, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    devices = mapping(allocation, "devices")
    errs = validate_slice(
        items(devices, "results"),
        limits.allocation_results,
        lambda r, p: validate_result(r, p, request_names),
        f"{path}.devices.results",
        limits=limits,
    )
    errs.extend(
        validate_allocation_configs(items(devices, "config"), f"{path}.devices.config", request_names, limits=limits)
    )
    node_selector = allocation.get("nodeSelector")
    if isinstance(node_selector, dict):
        errs.extend(validate_node_selector(node_selector, f"{path}.nodeSelector"))
    controller = text(allocation, "controller")
    if controller:
        errs.extend(validate_driver_name(controller, f"{path}.controller"))
    return errs
