"""Container resource requirements: resource names, quantities, requests versus limits, claims.

Requests and limits must name standard container resources (cpu, memory,
ephemeral-storage, hugepages-<size>) or domain-qualified extended resources,
hold non-negative quantities (whole numbers for extended resources), and a
request may not exceed its limit (it must equal it for resources that cannot
be overcommitted). ``claims`` is the DRA part, see `pod_claims`.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from services.api.admission.validation.access import Obj, items, mapping
from services.api.admission.validation.names import is_qualified_name
from services.api.admission.validation.pod_claims import validate_container_claims
from services.api.machinery.field_errors import FieldError, forbidden, invalid, required
from services.kube.extended_resources import is_extended_resource_name
from services.kube.quantity import FORMAT_WRONG, Quantity, QuantityError, parse_quantity, wire_quantity

IS_NEGATIVE = "must be greater than or equal to 0"
HUGE_PAGES_PREFIX = "hugepages-"
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_huge_pages(name: str) -> bool:
    return name.startswith(HUGE_PAGES_PREFIX)


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_huge_pages(name)


def validate_resource_name(name: str, path: str) -> list[FieldError]:
    errs = [invalid(path, name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and not (name in _STANDARD_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))):
        errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    return errs


def validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    errs = validate_resource_name(name, path)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or _is_huge_pages(name)):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not is_extended_resource_name(name):
        errs.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def parsed_quantity(raw: Any, path: str, errs: list[FieldError]) -> Quantity | None:
    quantity = wire_quantity(raw)
    if quantity is None:
        errs.append(invalid(path, raw if isinstance(raw, str) else str(raw), FORMAT_WRONG))
    return quantity


def validate_resource_quantity_value(name: str, quantity: Quantity, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if quantity.value < 0:
        errs.append(invalid(path, str(quantity), IS_NEGATIVE))
    if (name in _INTEGER_RESOURCES or is_extended_resource_name(name)) and quantity.milli_value % 1000 != 0:
        errs.append(invalid(path, str(quantity), "must be an integer"))
    return errs


def _huge_page_error(name: str, quantity: Quantity) -> str | None:
    try:
        page_size = parse_quantity(name[len(HUGE_PAGES_PREFIX) :])
    except QuantityError:
        return f"{quantity} is not positive integer multiple of {name}"
    divisible = (
        page_size.value > 0
        and page_size.milli_value % 1000 == 0
        and quantity.int_value % page_size.int_value == 0
    )
    return None if divisible else f"{quantity} is not positive integer multiple of {name}"


def validate_resource_requirements(resources: Obj, pod_claims: Set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    limits: dict[str, Quantity] = {}
    has_cpu_or_memory = False
    has_huge_pages = False
    for name, raw in mapping(resources, "limits").items():
        p = f"{lim_path}[{name}]"
        errs.extend(validate_container_resource_name(name, p))
        quantity = parsed_quantity(raw, p, errs)
        if quantity is None:
            continue
        limits[name] = quantity
        errs.extend(validate_resource_quantity_value(name, quantity, p))
        if _is_huge_pages(name):
            has_huge_pages = True
            if (message := _huge_page_error(name, quantity)) is not None:
                errs.append(invalid(p, str(quantity), message))
        if name in ("cpu", "memory"):
            has_cpu_or_memory = True
    raw_limits = mapping(resources, "limits")
    for name, raw in mapping(resources, "requests").items():
        p = f"{req_path}[{name}]"
        errs.extend(validate_container_resource_name(name, p))
        quantity = parsed_quantity(raw, p, errs)
        if quantity is None:
            continue
        errs.extend(validate_resource_quantity_value(name, quantity, p))
        limit = limits.get(name)
        if limit is not None:
            if quantity.value != limit.value and not _overcommit_allowed(name):
                errs.append(invalid(req_path, str(quantity), f"must be equal to {name} limit of {limit}"))
            elif quantity.value > limit.value:
                errs.append(invalid(req_path, str(quantity), f"must be less than or equal to {name} limit of {limit}"))
        elif name not in raw_limits and not _overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        if _is_huge_pages(name):
            has_huge_pages = True
            if (message := _huge_page_error(name, quantity)) is not None:
                errs.append(invalid(p, str(quantity), message))
        if name in ("cpu", "memory"):
            has_cpu_or_memory = True
    if has_huge_pages and not has_cpu_or_memory:
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    errs.extend(validate_container_claims(items(resources, "claims"), pod_claims, f"{path}.claims"))
    return errs
