"""DeviceTaintRule validation (resource.k8s.io v1 and v1beta2, Kubernetes 1.37).

Why this module exists: a DeviceTaintRule taints every device its selector
matches, so a malformed selector or taint must be refused at admission. The
rules are 1.37's ``ValidateDeviceTaintRule``, ``ValidateDeviceTaintRuleUpdate``
and ``ValidateDeviceTaintRuleStatusUpdate`` (pkg/apis/resource/validation of
k8s.io/kubernetes@v1.37.2):

- metadata of a cluster-scoped object named as a DNS subdomain;
- ``spec.deviceSelector`` is optional; each of its ``driver``, ``pool`` and
  ``device`` that is set must be a valid driver, pool and device name;
- ``spec.taint``: ``key`` a label key (required), ``value`` a label value if
  set, ``effect`` required and one of None, NoSchedule, NoExecute — on update
  the effect is checked only when it changed;
- the status subresource: metadata update rules, ``status.conditions`` as
  standard conditions (`conditions`), at most 8 of them (``Too many``).
"""

from __future__ import annotations

from services.api.admission.validation.access import Obj, items, mapping, text
from services.api.admission.validation.conditions import validate_conditions
from services.api.admission.validation.dra_names import validate_device_name, validate_driver_name, validate_pool_name
from services.api.admission.validation.names import label_value_errors, name_is_dns_subdomain, qualified_name_errors
from services.api.admission.validation.object_meta import validate_object_meta, validate_object_meta_update
from services.api.admission.validation.tolerations import DEVICE_TAINT_EFFECTS
from services.api.machinery.field_errors import FieldError, not_supported, required, too_many

__all__ = [
    "DEVICE_TAINT_RULE_STATUS_MAX_CONDITIONS",
    "validate_device_taint_rule",
    "validate_device_taint_rule_status_update",
    "validate_device_taint_rule_update",
]

DEVICE_TAINT_RULE_STATUS_MAX_CONDITIONS = 8
"""``DeviceTaintRuleStatusMaxConditions``."""


def _validate_selector(selector: object, path: str) -> list[FieldError]:
    if not isinstance(selector, dict):
        return []
    errs: list[FieldError] = []
    for key, check in (
        ("driver", validate_driver_name),
        ("pool", validate_pool_name),
        ("device", validate_device_name),
    ):
        value = selector.get(key)
        if value is not None:
            errs.extend(check(value if isinstance(value, str) else "", f"{path}.{key}"))
    return errs


def _validate_taint(taint: Obj, old_taint: Obj | None, path: str) -> list[FieldError]:
    errs = qualified_name_errors(text(taint, "key"), f"{path}.key")
    value = text(taint, "value")
    if value:
        errs.extend(label_value_errors(value, f"{path}.value"))
    effect = text(taint, "effect")
    if old_taint is None or text(old_taint, "effect") != effect:
        if not effect:
            errs.append(required(f"{path}.effect"))
        elif effect not in DEVICE_TAINT_EFFECTS:
            errs.append(not_supported(f"{path}.effect", effect, DEVICE_TAINT_EFFECTS))
    return errs


def _validate_spec(spec: Obj, old_spec: Obj | None) -> list[FieldError]:
    errs = _validate_selector(spec.get("deviceSelector"), "spec.deviceSelector")
    old_taint = mapping(old_spec, "taint") if old_spec is not None else None
    errs.extend(_validate_taint(mapping(spec, "taint"), old_taint, "spec.taint"))
    return errs


def validate_device_taint_rule(rule: Obj) -> list[FieldError]:
    """Errors for creating ``rule``."""
    errs = validate_object_meta(mapping(rule, "metadata"), namespaced=False, name_fn=name_is_dns_subdomain)
    errs.extend(_validate_spec(mapping(rule, "spec"), None))
    return errs


def validate_device_taint_rule_update(new: Obj, old: Obj) -> list[FieldError]:
    """Errors for replacing ``old`` with ``new`` (spec and metadata)."""
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    errs.extend(_validate_spec(mapping(new, "spec"), mapping(old, "spec")))
    return errs


def validate_device_taint_rule_status_update(new: Obj, old: Obj) -> list[FieldError]:
    """Errors for writing ``new`` through ``devicetaintrules/status``."""
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    conditions = items(mapping(new, "status"), "conditions")
    errs.extend(validate_conditions(conditions, "status.conditions"))
    if len(conditions) > DEVICE_TAINT_RULE_STATUS_MAX_CONDITIONS:
        errs.append(too_many("status.conditions", len(conditions), DEVICE_TAINT_RULE_STATUS_MAX_CONDITIONS))
    return errs
