"""ResourceSlice validation: driver, pool, node selection and up to 128 devices.

A slice publishes one pool's devices (or part of them) for exactly one of a
node (``nodeName``), a set of nodes (``nodeSelector`` with exactly one
term) or ``allNodes``. Driver, pool name and node name are immutable. Each
device has a unique DNS-label name and, in 1.31, a ``basic`` body with at
most 32 attributes and capacities together; an attribute holds exactly one
of ``int``, ``bool``, ``string`` (at most 64 bytes) or ``version`` (semver
2.0.0, at most 64 bytes).

Kubernetes 1.37 (``limits=LIMITS_1_37``, a hub-form slice): 1.37 validates
its internal, flat device, so errors name ``spec.devices[i].attributes``
(never ``basic``); capacities are DeviceCapacity (``{value}``); a device has
at most 16 taints and 2 ``consumesCounters`` entries of at most 32 counters;
the slice at most 128 devices, or 64 when any device has taints or consumes
counters, and at most 8 ``sharedCounters`` sets of at most 32 counters, never
beside ``devices``.
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
from services.api.admission.validation.lists import validate_set, validate_slice
from services.api.admission.validation.names import (
    byte_len,
    dns1123_label_errors,
    name_is_dns_subdomain,
    qualified_name_errors,
)
from services.api.admission.validation.node_selector import validate_node_selector
from services.api.admission.validation.object_meta import (
    FIELD_IMMUTABLE,
    validate_object_meta,
    validate_object_meta_update,
)
from services.api.admission.validation.tolerations import validate_device_taint
from services.api.machinery.field_errors import (
    FieldError,
    Verbatim,
    duplicate,
    invalid,
    required,
    too_long_bytes,
    too_long_max_length,
    too_many,
)
from services.kube.quantity import FORMAT_WRONG, wire_quantity
from services.kube.resource_limits import (
    BINDING_CONDITIONS_MAX_SIZE,
    BINDING_FAILURE_CONDITIONS_MAX_SIZE,
    DEVICE_TAINTS_MAX_LENGTH,
    LIMITS_1_31,
    RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE,
    RESOURCE_SLICE_MAX_COUNTER_SETS,
    RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET,
    RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION,
    RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE,
    RESOURCE_SLICE_MAX_DEVICES,
    RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES,
    ResourceLimits,
)

MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE
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


def _value_too_long(path: str, value: Any, *, limits: ResourceLimits) -> FieldError:
    if limits.too_many:
        return too_long_bytes(path, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)
    return too_long_max_length(path, value, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)


def validate_attribute(attribute: Any, path: str, *, limits: ResourceLimits = LIMITS_1_31) -> list[FieldError]:
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
            errs.append(_value_too_long(f"{path}.string", string_value, limits=limits))
        fields += 1
    version_value = attr.get("version")
    if version_value is not None:
        fields += 1
        version = str(version_value)
        if SEMVER_RE.fullmatch(version) is None:
            errs.append(invalid(f"{path}.version", version, "must be a string compatible with semver.org spec 2.0.0"))
        if byte_len(version) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
            errs.append(_value_too_long(f"{path}.version", version, limits=limits))
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


def _capacity_quantity(value: Any) -> Any:
    """The quantity of a capacity entry: bare in 1.31, ``{value}`` (DeviceCapacity) in 1.37 and the storage form.

    A v1alpha3 write is judged by 1.31's rules after conversion to the storage
    form, where its bare quantity is wrapped: the quantity is the same.
    """
    if isinstance(value, dict):
        return value.get("value")
    return value


def validate_basic_device(basic: Obj, path: str, *, limits: ResourceLimits = LIMITS_1_31) -> list[FieldError]:
    """A device's attributes and capacity; ``path`` is the device in 1.37 and its ``basic`` in 1.31."""
    errs: list[FieldError] = []
    attributes = mapping(basic, "attributes")
    capacity = mapping(basic, "capacity")
    for name, value in attributes.items():
        if not is_valid_qualified_name(name):
            errs.extend(validate_qualified_name(name, f"{path}.attributes"))
        if not _is_simple_valid_attribute(value):
            errs.extend(validate_attribute(value, f"{path}.attributes[{name}]", limits=limits))
    for name, value in capacity.items():
        if not is_valid_qualified_name(name):
            errs.extend(validate_qualified_name(name, f"{path}.capacity"))
        quantity = _capacity_quantity(value)
        if wire_quantity(quantity) is None:
            suffix = ".value" if limits.too_many and quantity is not value else ""
            errs.extend(validate_capacity(quantity, f"{path}.capacity[{name}]{suffix}"))
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


def _validate_counters(counters: Obj, max_size: int, path: str) -> list[FieldError]:
    """A map of counter name to ``{value}``: at most ``max_size`` DNS-label names (errors at the map's path)."""
    if not counters:
        return [required(path)]
    if len(counters) > max_size:
        return [too_many(path, len(counters), max_size)]
    errs: list[FieldError] = []
    for name in counters:
        errs.extend(dns1123_label_errors(name, path))
    return errs


def _validate_counter_name(name: str, path: str) -> list[FieldError]:
    return dns1123_label_errors(name, path) if name else [required(path)]


def validate_counter_set(counter_set: Any, path: str) -> list[FieldError]:
    """One entry of a slice's ``sharedCounters``."""
    entry: Obj = counter_set if isinstance(counter_set, dict) else {}
    errs = _validate_counter_name(text(entry, "name"), f"{path}.name")
    errs.extend(
        _validate_counters(mapping(entry, "counters"), RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET, f"{path}.counters")
    )
    return errs


def validate_counter_consumption(consumption: Any, path: str) -> list[FieldError]:
    """One entry of a device's ``consumesCounters``."""
    entry: Obj = consumption if isinstance(consumption, dict) else {}
    errs = _validate_counter_name(text(entry, "counterSet"), f"{path}.counterSet")
    errs.extend(
        _validate_counters(
            mapping(entry, "counters"), RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION, f"{path}.counters"
        )
    )
    return errs


PER_DEVICE_NODE_SELECTION_MESSAGE = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required "
    "when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)


def _validate_device_node_selection(basic: Obj, path: str, *, per_device: bool) -> list[FieldError]:
    """A device's nodeName/nodeSelector/allNodes (pointers in the hub): required iff the slice selects per device."""
    node_name, node_selector, all_nodes = basic.get("nodeName"), basic.get("nodeSelector"), basic.get("allNodes")
    if not per_device:
        if node_name is not None or node_selector is not None or all_nodes is not None:
            message = (
                "`nodeName`, `nodeSelector` and `allNodes` can only be set "
                "if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
            )
            return [invalid(path, None, message)]
        return []
    errs: list[FieldError] = []
    set_fields: list[str] = []
    if isinstance(node_name, str):
        if node_name:
            set_fields.append("`nodeName`")
            errs.extend(validate_node_name(node_name, f"{path}.nodeName"))
        else:
            errs.append(invalid(f"{path}.nodeName", node_name, "must not be empty"))
    if isinstance(node_selector, dict):
        set_fields.append("`nodeSelector`")
        errs.extend(validate_node_selector(node_selector, f"{path}.nodeSelector"))
    if all_nodes is True:
        set_fields.append("`allNodes`")
    elif all_nodes is False:
        errs.append(invalid(f"{path}.allNodes", False, "must be either unset or set to true"))
    if not set_fields:
        errs.append(required(path, PER_DEVICE_NODE_SELECTION_MESSAGE))
    elif len(set_fields) > 1:
        errs.append(invalid(path, "{" + ", ".join(set_fields) + "}", PER_DEVICE_NODE_SELECTION_MESSAGE))
    return errs


def _validate_binding_conditions(basic: Obj, path: str, *, limits: ResourceLimits) -> list[FieldError]:
    """bindingConditions and bindingFailureConditions: at most 4 label keys each, unique, disjoint, both or neither."""
    conditions = [c for c in items(basic, "bindingConditions") if isinstance(c, str)]
    failures = [c for c in items(basic, "bindingFailureConditions") if isinstance(c, str)]
    errs = validate_slice(
        conditions, BINDING_CONDITIONS_MAX_SIZE, qualified_name_errors, f"{path}.bindingConditions", limits=limits
    )
    errs.extend(
        validate_slice(
            failures,
            BINDING_FAILURE_CONDITIONS_MAX_SIZE,
            qualified_name_errors,
            f"{path}.bindingFailureConditions",
            limits=limits,
        )
    )
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        if condition in seen:
            errs.append(duplicate(f"{path}.bindingConditions[{i}]", condition))
        seen.add(condition)
    seen_failures: set[str] = set()
    for i, condition in enumerate(failures):
        if condition in seen_failures:
            errs.append(duplicate(f"{path}.bindingFailureConditions[{i}]", condition))
        seen_failures.add(condition)
        if condition in seen:
            errs.append(
                invalid(
                    f"{path}.bindingFailureConditions[{i}]",
                    condition,
                    "bindingFailureConditions must not overlap with bindingConditions",
                )
            )
    if not conditions and failures:
        errs.append(
            invalid(
                f"{path}.bindingConditions",
                None,
                "bindingConditions are required to use bindingFailureConditions",
            )
        )
    if not failures and conditions:
        errs.append(
            invalid(
                f"{path}.bindingFailureConditions",
                None,
                "bindingFailureConditions are required to use bindingConditions",
            )
        )
    return errs


def _validate_device_1_37(entry: Obj, path: str, *, limits: ResourceLimits, per_device: bool) -> list[FieldError]:
    """1.37's device: the hub keeps it under ``basic``, 1.37 validates (and names paths of) the flat device."""
    errs = validate_device_name(text(entry, "name"), f"{path}.name")
    basic = mapping(entry, "basic")
    errs.extend(validate_basic_device(basic, path, limits=limits))
    errs.extend(
        validate_slice(
            items(basic, "taints"), DEVICE_TAINTS_MAX_LENGTH, validate_device_taint, f"{path}.taints", limits=limits
        )
    )
    errs.extend(
        validate_set(
            items(basic, "consumesCounters"),
            RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE,
            validate_counter_consumption,
            f"{path}.consumesCounters",
            key=lambda c: text(c, "counterSet") if isinstance(c, dict) else "",
            limits=limits,
        )
    )
    errs.extend(_validate_device_node_selection(basic, path, per_device=per_device))
    errs.extend(_validate_binding_conditions(basic, path, limits=limits))
    return errs


def validate_device(
    device: Any, path: str, *, limits: ResourceLimits = LIMITS_1_31, per_device: bool = False
) -> list[FieldError]:
    """One device; ``per_device`` is 1.37's slice-level ``perDeviceNodeSelection``."""
    entry: Obj = device if isinstance(device, dict) else {}
    if limits.too_many:
        return _validate_device_1_37(entry, path, limits=limits, per_device=per_device)
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


NODE_SELECTION_MESSAGE_1_37 = (
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
)


def _validate_node_selection_1_37(spec: Obj) -> list[FieldError]:
    """1.37's four ways to say where the devices are; the hub stores unset nodeName/allNodes as ""/false."""
    errs: list[FieldError] = []
    set_fields: list[str] = []
    node_name = text(spec, "nodeName")
    if node_name:
        set_fields.append("`nodeName`")
        errs.extend(validate_node_name(node_name, "spec.nodeName"))
    node_selector = spec.get("nodeSelector")
    if isinstance(node_selector, dict):
        set_fields.append("`nodeSelector`")
        errs.extend(validate_node_selector(node_selector, "spec.nodeSelector"))
        terms = items(node_selector, "nodeSelectorTerms")
        if len(terms) != 1:
            # apimachinery 0.37 prints a bad value as JSON: a nil list is null.
            errs.append(
                invalid(
                    "spec.nodeSelector.nodeSelectorTerms", terms or None, "must have exactly one node selector term"
                )
            )
    if spec.get("allNodes") is True:
        set_fields.append("`allNodes`")
    per_device = spec.get("perDeviceNodeSelection")
    if per_device is True:
        set_fields.append("`perDeviceNodeSelection`")
    elif per_device is False:
        errs.append(invalid("spec.perDeviceNodeSelection", False, "must be either unset or set to true"))
    if not set_fields:
        errs.append(required("spec", NODE_SELECTION_MESSAGE_1_37))
    elif len(set_fields) > 1:
        errs.append(
            invalid(
                "spec",
                "{" + ", ".join(set_fields) + "}",
                NODE_SELECTION_MESSAGE_1_37 + ", but multiple fields are set",
            )
        )
    return errs


def max_devices_per_slice(devices: list[Any]) -> int:
    """1.37: 128 devices, or 64 when any device has taints or consumes counters."""
    for device in devices:
        basic = mapping(device, "basic") if isinstance(device, dict) else {}
        if items(basic, "taints") or items(basic, "consumesCounters"):
            return RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES
    return RESOURCE_SLICE_MAX_DEVICES


def _validate_slice_contents_1_37(spec: Obj, *, limits: ResourceLimits) -> list[FieldError]:
    errs = _validate_node_selection_1_37(spec)
    if isinstance(spec.get("sharedCounters"), list) and isinstance(spec.get("devices"), list):
        errs.append(invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    devices = items(spec, "devices")
    per_device = spec.get("perDeviceNodeSelection") is True
    errs.extend(
        validate_set(
            devices,
            max_devices_per_slice(devices),
            lambda d, p: validate_device(d, p, limits=limits, per_device=per_device),
            "spec.devices",
            key=lambda d: text(d, "name") if isinstance(d, dict) else "",
            limits=limits,
        )
    )
    errs.extend(
        validate_set(
            items(spec, "sharedCounters"),
            RESOURCE_SLICE_MAX_COUNTER_SETS,
            validate_counter_set,
            "spec.sharedCounters",
            key=lambda c: text(c, "name") if isinstance(c, dict) else "",
            limits=limits,
        )
    )
    return errs


def validate_resource_slice_spec(
    spec: Obj, old_spec: Obj | None, *, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    errs = validate_driver_name(text(spec, "driver"), "spec.driver")
    pool = mapping(spec, "pool")
    errs.extend(_validate_pool(pool))
    node_name = text(spec, "nodeName")
    if old_spec is not None:
        errs.extend(_immutable(text(pool, "name"), text(mapping(old_spec, "pool"), "name"), "spec.pool.name"))
        errs.extend(_immutable(text(spec, "driver"), text(old_spec, "driver"), "spec.driver"))
        errs.extend(_immutable(node_name, text(old_spec, "nodeName"), "spec.nodeName"))
    if limits.too_many:
        errs.extend(_validate_slice_contents_1_37(spec, limits=limits))
        return errs
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
            # Go prints a JSON [] as an empty slice and a missing list as nil.
            empty = "{}" if isinstance(node_selector.get("nodeSelectorTerms"), list) else "(nil)"
            shown = terms if terms else Verbatim(f"[]core.NodeSelectorTerm{empty}")
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


def validate_resource_slice(resource_slice: Obj, *, limits: ResourceLimits = LIMITS_1_31) -> list[FieldError]:
    errs = validate_object_meta(mapping(resource_slice, "metadata"), namespaced=False, name_fn=validate_slice_name)
    errs.extend(validate_resource_slice_spec(mapping(resource_slice, "spec"), None, limits=limits))
    return errs


def validate_resource_slice_update(new: Obj, old: Obj, *, limits: ResourceLimits = LIMITS_1_31) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    errs.extend(validate_resource_slice_spec(mapping(new, "spec"), mapping(old, "spec"), limits=limits))
    return errs
