"""Node validation: name, taints and resource quantities (create, update and status).

draplane's node agent registers Nodes and the scheduler reads their taints
and allocatable resources, so those are validated as Kubernetes does. Node
config sources, pod CIDRs and the taint/avoid-pods annotations are not
(see the package docstring). Kubernetes reports taint errors under
``metadata.taints``; that path is reproduced.
"""

from __future__ import annotations

from typing import Any

from services.api.admission.validation.access import Obj, items, mapping, text
from services.api.admission.validation.names import is_valid_label_value, name_is_dns_subdomain, qualified_name_errors
from services.api.admission.validation.object_meta import validate_object_meta, validate_object_meta_update
from services.api.admission.validation.resources import parsed_quantity, validate_resource_quantity_value
from services.api.admission.validation.tolerations import validate_taint_effect
from services.api.machinery.field_errors import ErrorType, FieldError, forbidden, invalid

validate_node_name = name_is_dns_subdomain


def validate_taints(taints: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, value in enumerate(taints):
        taint: Obj = value if isinstance(value, dict) else {}
        p = f"{path}[{i}]"
        key, effect = text(taint, "key"), text(taint, "effect")
        errs.extend(qualified_name_errors(key, f"{p}.key"))
        messages = is_valid_label_value(text(taint, "value"))
        if messages:
            errs.append(invalid(f"{p}.value", text(taint, "value"), ";".join(messages)))
        errs.extend(validate_taint_effect(effect, f"{p}.effect", allow_empty=False))
        if (key, effect) in seen:
            errs.append(FieldError(ErrorType.DUPLICATE, p, taint, "taints must be unique by key and effect pair"))
            continue
        seen.add((key, effect))
    return errs


def validate_node_resources(node: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    status = mapping(node, "status")
    for field in ("capacity", "allocatable"):
        for name, raw in mapping(status, field).items():
            path = f"status.{field}.{name}"
            quantity = parsed_quantity(raw, path, errs)
            if quantity is not None:
                errs.extend(validate_resource_quantity_value(name, quantity, path))
    return errs


def validate_node(node: Obj) -> list[FieldError]:
    errs = validate_object_meta(mapping(node, "metadata"), namespaced=False, name_fn=validate_node_name)
    taints = items(mapping(node, "spec"), "taints")
    if taints:
        errs.extend(validate_taints(taints, "metadata.taints"))
    errs.extend(validate_node_resources(node))
    return errs


def validate_node_update(new: Obj, old: Obj) -> list[FieldError]:
    """Used for both spec and status updates, as Kubernetes does."""
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    errs.extend(validate_node_resources(new))
    seen: list[Any] = []
    for i, address in enumerate(items(mapping(new, "status"), "addresses")):
        if address in seen:
            errs.append(FieldError(ErrorType.DUPLICATE, f"status.addresses[{i}]", address))
        seen.append(address)
    new_spec, old_spec = mapping(new, "spec"), mapping(old, "spec")
    old_cidrs = items(old_spec, "podCIDRs")
    if old_cidrs:
        new_cidrs = items(new_spec, "podCIDRs")
        message = 'node updates may not change podCIDR except from "" to valid'
        if len(old_cidrs) != len(new_cidrs):
            errs.append(forbidden("spec.podCIDRs", message))
        else:
            errs.extend(
                forbidden("spec.podCIDRs", message) for a, b in zip(old_cidrs, new_cidrs, strict=True) if a != b
            )
    old_provider = text(old_spec, "providerID")
    if old_provider and old_provider != text(new_spec, "providerID"):
        errs.append(forbidden("spec.providerID", 'node updates may not change providerID except from "" to valid'))
    taints = items(new_spec, "taints")
    if taints:
        errs.extend(validate_taints(taints, "metadata.taints"))
    if text(new_spec, "externalID") != text(old_spec, "externalID"):
        errs.append(forbidden("spec.externalID", "may not be updated"))
    return errs
