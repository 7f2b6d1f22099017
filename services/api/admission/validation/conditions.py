"""metav1.Condition lists (``status.conditions``): type, status, reason, message, times.

Why this module exists: 1.37's resource.k8s.io status fields (DeviceTaintRule
``status.conditions``) hold standard conditions, which Kubernetes validates
with apimachinery's ``ValidateConditions`` (pkg/apis/meta/v1/validation,
v0.37.2): a duplicate type at the entry, then per entry a required qualified
``type``, a ``status`` of True/False/Unknown, a non-negative
``observedGeneration``, a required ``lastTransitionTime``, a required
``reason`` of at most 1024 bytes matching its pattern, and a ``message`` of at
most 32Ki bytes.
"""

from __future__ import annotations

import re
from typing import Any

from services.api.admission.validation.access import Obj, text
from services.api.admission.validation.names import qualified_name_errors
from services.api.machinery.field_errors import (
    FieldError,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long_bytes,
)

CONDITION_STATUSES = ["False", "True", "Unknown"]  # sets.NewString(...).List(): sorted
MAX_REASON_LENGTH = 1024
MAX_MESSAGE_LENGTH = 32 * 1024
_REASON_FORMAT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON = re.compile(f"^{_REASON_FORMAT}$")
_REASON_MESSAGE = (
    "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric "
    "characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  "
    "or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is "
    f"'{_REASON_FORMAT}')"
)


def validate_condition(condition: Any, path: str) -> list[FieldError]:
    entry: Obj = condition if isinstance(condition, dict) else {}
    errs: list[FieldError] = []
    kind = text(entry, "type")
    if not kind:
        errs.append(required(f"{path}.type", "is required"))
    else:
        errs.extend(qualified_name_errors(kind, f"{path}.type"))
    status = text(entry, "status")
    if not status:
        errs.append(required(f"{path}.status"))
    elif status not in CONDITION_STATUSES:
        errs.append(not_supported(f"{path}.status", status, CONDITION_STATUSES))
    generation = entry.get("observedGeneration")
    if isinstance(generation, int) and generation < 0:
        errs.append(invalid(f"{path}.observedGeneration", generation, "must be greater than or equal to zero"))
    if not entry.get("lastTransitionTime"):
        errs.append(required(f"{path}.lastTransitionTime"))
    reason = text(entry, "reason")
    if not reason:
        errs.append(required(f"{path}.reason"))
    else:
        if not _REASON.match(reason):
            errs.append(invalid(f"{path}.reason", reason, _REASON_MESSAGE))
        if len(reason.encode()) > MAX_REASON_LENGTH:
            errs.append(too_long_bytes(f"{path}.reason", MAX_REASON_LENGTH))
    if len(text(entry, "message").encode()) > MAX_MESSAGE_LENGTH:
        errs.append(too_long_bytes(f"{path}.message", MAX_MESSAGE_LENGTH))
    return errs


def validate_conditions(conditions: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        kind = text(condition, "type") if isinstance(condition, dict) else ""
        if kind in seen:
            errs.append(duplicate(f"{path}[{i}]", kind))
        seen.add(kind)
        errs.extend(validate_condition(condition, f"{path}[{i}]"))
    return errs
