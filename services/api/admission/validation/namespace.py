"""Namespace validation: a DNS-label name, finalizer names, and the status phase rule."""

from __future__ import annotations

from services.api.admission.validation.access import Obj, mapping, strings, text
from services.api.admission.validation.names import name_is_dns_label, qualified_name_errors
from services.api.admission.validation.object_meta import (
    kube_finalizer_name_errors,
    validate_object_meta,
    validate_object_meta_update,
)
from services.api.machinery.field_errors import FieldError, invalid

validate_namespace_name = name_is_dns_label


def validate_namespace(namespace: Obj) -> list[FieldError]:
    errs = validate_object_meta(mapping(namespace, "metadata"), namespaced=False, name_fn=validate_namespace_name)
    for finalizer in strings(mapping(namespace, "spec"), "finalizers"):
        # Kubernetes reports these at spec.finalizers, without an index.
        errs.extend(qualified_name_errors(finalizer, "spec.finalizers"))
        errs.extend(kube_finalizer_name_errors(finalizer, "spec.finalizers"))
    return errs


def validate_namespace_update(new: Obj, old: Obj) -> list[FieldError]:
    return validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))


def validate_namespace_status_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    phase = text(mapping(new, "status"), "phase") or "Active"  # an empty phase defaults to Active
    deleting = bool(
        mapping(new, "metadata").get("deletionTimestamp") or mapping(old, "metadata").get("deletionTimestamp")
    )
    if not deleting and phase != "Active":
        errs.append(invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"))
    elif deleting and phase != "Terminating":
        errs.append(invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
    return errs
