"""Node selectors (core ``NodeSelector``), used by DRA slices, classes and allocations and by pods.

A ResourceSlice's ``nodeSelector``, a DeviceClass's ``suitableNodes``, an
allocation's ``nodeSelector`` and a pod's required node affinity all share
core's ValidateNodeSelector: at least one term, label-expression operators
with their value-count rules, and ``matchFields`` limited to
``metadata.name``.
"""

from __future__ import annotations

from typing import Any

from services.api.admission.validation.access import Obj, integer, items, mapping, strings, text
from services.api.admission.validation.names import name_is_dns_subdomain, qualified_name_errors
from services.api.machinery.field_errors import FieldError, forbidden, invalid, required

_NODE_FIELD_SELECTOR_KEYS = {"metadata.name": name_is_dns_subdomain}


def validate_node_selector_requirement(req: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    operator = text(req, "operator")
    values = items(req, "values")
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    errs.extend(qualified_name_errors(text(req, "key"), f"{path}.key"))
    return errs


def validate_node_field_selector_requirement(req: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    operator = text(req, "operator")
    values = strings(req, "values")
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(
                required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = text(req, "key")
    name_fn = _NODE_FIELD_SELECTOR_KEYS.get(key)
    if name_fn is None:
        errs.append(invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errs.extend(invalid(f"{path}.values[{i}]", value, m) for m in name_fn(value, False))
    return errs


def validate_node_selector_term(term: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, req in enumerate(items(term, "matchExpressions")):
        errs.extend(validate_node_selector_requirement(_obj(req), f"{path}.matchExpressions[{j}]"))
    for j, req in enumerate(items(term, "matchFields")):
        errs.extend(validate_node_field_selector_requirement(_obj(req), f"{path}.matchFields[{j}]"))
    return errs


def validate_node_selector(selector: Obj, path: str) -> list[FieldError]:
    terms_path = f"{path}.nodeSelectorTerms"
    terms = items(selector, "nodeSelectorTerms")
    if not terms:
        return [required(terms_path, "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        errs.extend(validate_node_selector_term(_obj(term), f"{terms_path}[{i}]"))
    return errs


def validate_preferred_scheduling_terms(terms: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        term = _obj(term)
        weight = integer(term, "weight")
        if weight <= 0 or weight > 100:
            errs.append(invalid(f"{path}[{i}].weight", weight, "must be in the range 1-100"))
        errs.extend(validate_node_selector_term(mapping(term, "preference"), f"{path}[{i}].preference"))
    return errs


def validate_node_affinity(affinity: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    req = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, dict):
        errs.extend(validate_node_selector(req, f"{path}.requiredDuringSchedulingIgnoredDuringExecution"))
    preferred = items(affinity, "preferredDuringSchedulingIgnoredDuringExecution")
    if preferred:
        errs.extend(
            validate_preferred_scheduling_terms(preferred, f"{path}.preferredDuringSchedulingIgnoredDuringExecution")
        )
    return errs


def _obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}
