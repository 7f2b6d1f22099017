"""DeviceTaintRule validation: object metadata only, for now.

Why this module exists: DeviceTaintRule (resource.k8s.io v1 and v1beta2 in
Kubernetes 1.37) is served, so a write must at least carry valid metadata — a
cluster-scoped object named as a DNS subdomain, as 1.37's
``ValidateDeviceTaintRule`` names it. The rule's spec and status rules and its
feature gates (DRADeviceTaintRules) are another step's; until then a spec is
accepted as the schema decodes it.
"""

from __future__ import annotations

from services.api.admission.validation.access import Obj, mapping
from services.api.admission.validation.names import name_is_dns_subdomain
from services.api.admission.validation.object_meta import validate_object_meta, validate_object_meta_update
from services.api.machinery.field_errors import FieldError

__all__ = ["validate_device_taint_rule", "validate_device_taint_rule_update"]


def validate_device_taint_rule(rule: Obj) -> list[FieldError]:
    return validate_object_meta(mapping(rule, "metadata"), namespaced=False, name_fn=name_is_dns_subdomain)


def validate_device_taint_rule_update(new: Obj, old: Obj) -> list[FieldError]:
    return validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
