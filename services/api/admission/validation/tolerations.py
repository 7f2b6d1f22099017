"""Pod tolerations: keys, operators, values and effects, and the update rule (only additions).

The scheduler matches tolerations against node taints; Kubernetes rejects
malformed ones at admission so that matching never has to guess. The
device taints and tolerations of resource.k8s.io (1.37) live here too, with
their own effects and operator rules.
"""

from __future__ import annotations

from typing import Any

from services.api.admission.validation.access import Obj, text
from services.api.admission.validation.equality import semantic_equal
from services.api.admission.validation.names import is_valid_label_value, qualified_name_errors
from services.api.machinery.field_errors import FieldError, forbidden, invalid, not_supported, required

TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def validate_taint_effect(effect: str, path: str, *, allow_empty: bool) -> list[FieldError]:
    if not allow_empty and not effect:
        return [required(path)]
    if effect not in TAINT_EFFECTS:
        return [not_supported(path, effect, TAINT_EFFECTS)]
    return []


def validate_tolerations(tolerations: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, value in enumerate(tolerations):
        tol: Obj = value if isinstance(value, dict) else {}
        p = f"{path}[{i}]"
        key, operator, effect = text(tol, "key"), text(tol, "operator"), text(tol, "effect")
        if key:
            errs.extend(qualified_name_errors(key, f"{p}.key"))
        if not key and operator != "Exists":
            errs.append(
                invalid(
                    f"{p}.operator",
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(invalid(f"{p}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        tol_value = text(tol, "value")
        if operator in ("Equal", ""):
            messages = is_valid_label_value(tol_value)
            if messages:
                errs.append(invalid(f"{p}.operator", tol_value, ";".join(messages)))
        elif operator == "Exists":
            if tol_value:
                errs.append(invalid(f"{p}.operator", tol, "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{p}.operator", operator, ["Equal", "Exists"]))
        if effect:
            errs.extend(validate_taint_effect(effect, f"{p}.effect", allow_empty=True))
    return errs


def validate_only_added_tolerations(new: list[Any], old: list[Any], path: str) -> list[FieldError]:
    """Existing tolerations stay (only ``tolerationSeconds`` may change); new ones may be added."""
    for old_tol in old:
        if not isinstance(old_tol, dict):
            continue
        if not any(
            isinstance(n, dict) and semantic_equal({**old_tol, "tolerationSeconds": n.get("tolerationSeconds")}, n)
            for n in new
        ):
            return [forbidden(path, "existing toleration can not be modified except its tolerationSeconds")]
    return validate_tolerations(new, path)


# Device taints and tolerations (resource.k8s.io, Kubernetes 1.37). They share
# the words with pod tolerations but not the rules: a device taint's effect is
# None, NoSchedule or NoExecute; a device toleration names its operator.
DEVICE_TAINT_EFFECTS = ["NoExecute", "NoSchedule", "None"]  # Go's sets.List order (sorted)
DEVICE_TOLERATION_OPERATORS = ["Equal", "Exists"]


def _label_value_errors(value: str, path: str) -> list[FieldError]:
    return [invalid(path, value, message) for message in is_valid_label_value(value)]


def validate_device_toleration(toleration: Any, path: str) -> list[FieldError]:
    """One entry of a request's (or subrequest's) ``tolerations``."""
    tol: Obj = toleration if isinstance(toleration, dict) else {}
    key, operator, effect, value = text(tol, "key"), text(tol, "operator"), text(tol, "effect"), text(tol, "value")
    errs: list[FieldError] = []
    if key:
        errs.extend(qualified_name_errors(key, f"{path}.key"))
    if operator == "Exists":
        if value:
            errs.append(invalid(f"{path}.value", value, "must be empty for operator `Exists`"))
    elif operator == "Equal":
        errs.extend(_label_value_errors(value, f"{path}.value"))
    elif not operator:
        errs.append(required(f"{path}.operator"))
    else:
        errs.append(not_supported(f"{path}.operator", operator, DEVICE_TOLERATION_OPERATORS))
    if effect and effect not in DEVICE_TAINT_EFFECTS:
        errs.append(not_supported(f"{path}.effect", effect, DEVICE_TAINT_EFFECTS))
    return errs


def validate_device_tolerations(tolerations: list[Any], path: str) -> list[FieldError]:
    """A request's ``tolerations``: each entry; 1.37 declares at most 16 but checks no size."""
    errs: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        errs.extend(validate_device_toleration(toleration, f"{path}[{i}]"))
    return errs


def validate_device_taint(taint: Any, path: str) -> list[FieldError]:
    """One entry of a device's ``taints``: a label key, an optional label value and a required effect."""
    entry: Obj = taint if isinstance(taint, dict) else {}
    key, value, effect = text(entry, "key"), text(entry, "value"), text(entry, "effect")
    errs = qualified_name_errors(key, f"{path}.key")
    if value:
        errs.extend(_label_value_errors(value, f"{path}.value"))
    if not effect:
        errs.append(required(f"{path}.effect"))
    elif effect not in DEVICE_TAINT_EFFECTS:
        errs.append(not_supported(f"{path}.effect", effect, DEVICE_TAINT_EFFECTS))
    return errs
