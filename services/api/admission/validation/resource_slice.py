"""ResourceSlice validation: driver, pool, node selection and up to 128 devices.

A slice publishes one pool's devices (or part of them) for exactly one of a
node (``nodeName``), a set of nodes (``nodeSelector`` with exactly one
term) or ``allNodes``. Driver, pool name and node name are immutable. Each
device has a unique DNS-label name and, in 1.31, a ``basic`` body with at
most 32 attributes and capacities together; an attribute holds exactly one
of ``int``, ``bool``, ``string`` (at most 64 bytes) or ``version`` (semver
2.0.0, at most 64 bytes).
"""

from __future__ import annotations

import re
from typing import Any

from services.api.admission.validation.access import Obj, integer, items, mapping, text
from services.api.admission.validation.dra_names import (
    is_valid_qualified_name,
    validate_device_name,
    validate_driver_name,
    validate_node_name,
    validate_pool_name,
    validate_qualified_name,
)
from services.api.admission.validation.lists import validate_set
from services.api.admission.validation.names import byte_len, name_is_dns_subdomain
from services.api.admission.validation.node_selector import validate_node_selector
from services.api.admission.validation.object_meta import (
    FIELD_IMMUTABLE,
    validate_object_meta,
    validate_object_meta_update,
)
from services.api.machinery.field_errors import FieldError, Verbatim, invalid, required, too_long_max_length
from services.kube.quantity import FORMAT_WRONG, wire_quantity

RESOURCE_SLICE_MAX_DEVICES = 128
MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64
NODE_SELECTION_MESSAGE = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required"

_NUMERIC = r"(0|[1-9][0-9]*)"
_PRERELEASE = r"(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
SEMVER_RE = re.compile(
    rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}"
    rf"(-{_PRERELEASE}(\.{_PRERELEASE})*)?"
    rf"(\+{_BUILD}(\.{_BUILD})*)?"
)

validate_slice_name = name_is_dns_subdomain


def _is_simple_valid_attribute(attribute: Any) -> bool:
    """Fast path for the common case: exactly one valid value."""
    if not isinstance(attribute, dict) or len(attribute) != 1:
        return False
    ((kind, value),) = attribute.items()
    if kind in ("int", "bool"):
        return value is not None
    if not isinstance(value, str) or byte_len(value) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        return False
    return kind == "string" or (kind == "version" and SEMVER_RE.fullmatch(value) is not None)


def validate_attribute(attribute: Any, path: str) -> list[FieldError]:
    attr: Obj = attribute if isinstance(attribute, dict) else {}
    errs: list[FieldError] = []
    fields = 0
    if attr.get("bool") is not None:
        fields += 1
    if attr.get("int") is not None:
        fields += 1
    string_value = attr.get("string")
    if string_value is not None:
        if byte_len(str(string_value)) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
            errs.append(too_long_max_length(f"{path}.string", string_value, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))
        fields += 1
    version_value = attr.get("version")
    if version_value is not None:
        fields += 1
        version = str(version_value)
        if SEMVER_RE.fullmatch(version) is None:
            errs.append(invalid(f"{path}.version", version, "must be a string compatible with semver.org spec 2.0.0"))
        if byte_len(version) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
            errs.append(too_long_max_length(f"{path}.version", version, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))
    if fields == 0:
        errs.append(required(path, "exactly one value must be specified"))
    elif fields > 1:
        errs.append(invalid(path, attr, "exactly one field must be specified"))
    return errs


def validate_capacity(quantity: Any, path: str) -> list[FieldError]:
    """Any quantity is valid; a value that is not one would have failed decoding in Kubernetes."""
    if wire_quantity(quantity) is None:
        return [invalid(path, quantity if isinstance(quantity, str) else str(quantity), FORMAT_WRONG)]
    return []


def validate_basic_device(basic: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    attributes = mapping(basic, "attributes")
    capacity = mapping(basic, "capacity")
    for name, value in attributes.items():
        if not is_valid_qualified_name(name):
            errs.extend(validate_qualified_name(name, f"{path}.attributes"))
        if not _is_simple_valid_attribute(value):
            errs.extend(validate_attribute(value, f"{path}.attributes[{name}]"))
    for name, value in capacity.items():
        if not is_valid_qualified_name(name):
            errs.extend(validate_qualified_name(name, f"{path}.capacity"))
        if wire_quantity(value) is None:
            errs.extend(validate_capacity(value, f"{path}.capacity[{name}]"))
    combined = len(attributes) + len(capacity)
    if combined > MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        errs.append(
            invalid(
                path,
                combined,
                "the total number of attributes and capacities must not exceed "
                f"{MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}",
            )
        )
    return errs


def validate_device(device: Any, path: str) -> list[FieldError]:
    entry: Obj = device if isinstance(device, dict) else {}
    errs = validate_device_name(text(entry, "name"), f"{path}.name")
    basic = entry.get("basic")
    if not isinstance(basic, dict):
        errs.append(required(f"{path}.basic"))
    else:
        errs.extend(validate_basic_device(basic, f"{path}.basic"))
    return errs


def _validate_pool(pool: Obj) -> list[FieldError]:
    errs = validate_pool_name(text(pool, "name"), "spec.pool.name")
    count = integer(pool, "resourceSliceCount")
    if count <= 0:
        errs.append(invalid("spec.pool.resourceSliceCount", count, "must be greater than zero"))
    generation = integer(pool, "generation")
    if generation < 0:
        errs.append(invalid("spec.pool.generation", generation, "must be greater than or equal to zero"))
    return errs


def _immutable(new: str, old: str, path: str) -> list[FieldError]:
    return [] if new == old else [invalid(path, new, FIELD_IMMUTABLE)]


def validate_resource_slice_spec(spec: Obj, old_spec: Obj | None) -> list[FieldError]:
    errs = validate_driver_name(text(spec, "driver"), "spec.driver")
    pool = mapping(spec, "pool")
    errs.extend(_validate_pool(pool))
    node_name = text(spec, "nodeName")
    if old_spec is not None:
        errs.extend(_immutable(text(pool, "name"), text(mapping(old_spec, "pool"), "name"), "spec.pool.name"))
        errs.extend(_immutable(text(spec, "driver"), text(old_spec, "driver"), "spec.driver"))
        errs.extend(_immutable(node_name, text(old_spec, "nodeName"), "spec.nodeName"))
    selections = 0
    if node_name:
        selections += 1
        errs.extend(validate_node_name(node_name, "spec.nodeName"))
    node_selector = spec.get("nodeSelector")
    if isinstance(node_selector, dict):
        selections += 1
        errs.extend(validate_node_selector(node_selector, "spec.nodeSelector"))
        terms = items(node_selector, "nodeSelectorTerms")
        if len(terms) != 1:
            # One term keeps merging selectors simple when devices come from several slices.
            shown = terms if terms else Verbatim("[]core.NodeSelectorTerm(nil)")
            errs.append(invalid("spec.nodeSelector.nodeSelectorTerms", shown, "must have exactly one selector term"))
    if spec.get("allNodes") is True:
        selections += 1
    if selections == 0:
        errs.append(required("spec", NODE_SELECTION_MESSAGE))
    elif selections > 1:
        errs.append(invalid("spec", spec, NODE_SELECTION_MESSAGE))
    errs.extend(
        validate_set(
            items(spec, "devices"),
            RESOURCE_SLICE_MAX_DEVICES,
            validate_device,
            "spec.devices",
            key=lambda d: text(d, "name") if isinstance(d, dict) else "",
            key_field="name",
        )
    )
    return errs


def validate_resource_slice(resource_slice: Obj) -> list[FieldError]:
    errs = validate_object_meta(mapping(resource_slice, "metadata"), namespaced=False, name_fn=validate_slice_name)
    errs.extend(validate_resource_slice_spec(mapping(resource_slice, "spec"), None))
    return errs


def validate_resource_slice_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    errs.extend(validate_resource_slice_spec(mapping(new, "spec"), mapping(old, "spec")))
    return errs
