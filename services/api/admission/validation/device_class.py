"""DeviceClass validation: selectors, configuration and (classic DRA) suitable nodes.

Selectors are compiled again only when they changed: Kubernetes treats an
update that keeps the selectors exactly as before as holding stored
expressions. Kubernetes 1.31 validates ``suitableNodes`` at the path
``suitableNodes`` (without the ``spec.`` prefix); that is reproduced.
``limits=LIMITS_1_37`` applies 1.37's list wording, CEL limits and its
``extendedResourceName`` format (an extended resource name, as for pods).
"""

from __future__ import annotations

from services.api.admission.validation.access import Obj, items, mapping
from services.api.admission.validation.config import validate_class_configs
from services.api.admission.validation.equality import semantic_equal
from services.api.admission.validation.names import name_is_dns_subdomain
from services.api.admission.validation.node_selector import validate_node_selector
from services.api.admission.validation.object_meta import validate_object_meta, validate_object_meta_update
from services.api.admission.validation.resources import is_extended_resource_name
from services.api.admission.validation.selectors import validate_selectors
from services.api.machinery.field_errors import FieldError, invalid
from services.kube.resource_limits import LIMITS_1_31, ResourceLimits

validate_class_name = name_is_dns_subdomain


def validate_device_class_spec(
    spec: Obj, old_spec: Obj | None, *, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    selectors = items(spec, "selectors")
    stored = old_spec is not None and semantic_equal(selectors, items(old_spec, "selectors"))
    errs = validate_selectors(selectors, "spec.selectors", stored=stored, limits=limits)
    configs = items(spec, "config")
    stored_configs = old_spec is not None and semantic_equal(configs, items(old_spec, "config"))
    errs.extend(validate_class_configs(configs, "spec.config", limits=limits, stored=stored_configs))
    extended = spec.get("extendedResourceName")
    if limits.too_many and extended is not None and not is_extended_resource_name(str(extended)):
        errs.append(invalid("spec.extendedResourceName", extended, "must be a valid extended resource name"))
    suitable_nodes = spec.get("suitableNodes")
    if isinstance(suitable_nodes, dict):
        errs.extend(validate_node_selector(suitable_nodes, "suitableNodes"))
    return errs


def validate_device_class(device_class: Obj, *, limits: ResourceLimits = LIMITS_1_31) -> list[FieldError]:
    errs = validate_object_meta(mapping(device_class, "metadata"), namespaced=False, name_fn=validate_class_name)
    errs.extend(validate_device_class_spec(mapping(device_class, "spec"), None, limits=limits))
    return errs


def validate_device_class_update(new: Obj, old: Obj, *, limits: ResourceLimits = LIMITS_1_31) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    errs.extend(validate_device_class_spec(mapping(new, "spec"), mapping(old, "spec"), limits=limits))
    return errs
