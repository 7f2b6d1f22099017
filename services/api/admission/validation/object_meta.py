"""ObjectMeta rules shared by every kind (apimachinery/pkg/api/validation/objectmeta.go).

Creates check name/generateName with the kind's name function, the
namespace, labels, annotations (256 KiB in total), owner references,
finalizers and managed fields. Updates additionally keep name, namespace,
uid and timestamps immutable and forbid new finalizers once deletion began.

Kubernetes' REST layer rewrites a few fields before validation (it generates
the name from generateName, copies generation, uid, creationTimestamp and
deletionTimestamp from the stored object, fills an empty resourceVersion).
Validation here judges the object as it will be after those rewrites, so a
client that omits them is not rejected; the committer performs the rewrites.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.api.admission.validation.access import Obj, integer, items, mapping, strings, text
from services.api.admission.validation.equality import semantic_equal
from services.api.admission.validation.names import (
    NameFn,
    byte_len,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
    qualified_name_errors,
)
from services.api.machinery.field_errors import (
    FieldError,
    Verbatim,
    forbidden,
    format_value,
    invalid,
    required,
    too_long,
)
from services.kube.schema import parse_group_version
from services.kube.times import parse_time

FIELD_IMMUTABLE = "field is immutable"
IS_NEGATIVE = "must be greater than or equal to 0"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256
FINALIZER_ORPHAN = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"
STANDARD_FINALIZERS = frozenset({"kubernetes", FINALIZER_ORPHAN, FINALIZER_DELETE_DEPENDENTS})

# Name generation (apiserver SimpleNameGenerator): base truncated to 58 bytes plus
# five characters from "bcdfghjklmnpqrstvwxz2456789". Any such suffix validates alike.
_MAX_GENERATED_BASE = 58
_GENERATED_SUFFIX = "x2b4d"

# Go field order of ObjectMeta, with the name validateFieldAllowList reports
# (the Go field name with its first letter lowered: UID becomes "uID").
_TEMPLATE_FORBIDDEN_FIELDS = (
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
)


def go_time(value: Any) -> Any:
    """A metav1.Time as Go prints it in an error (``time.Time.String()``, in UTC)."""
    parsed = parse_time(value)
    if parsed is None:
        return value
    rendered = parsed.strftime("%Y-%m-%d %H:%M:%S")
    if parsed.microsecond:
        rendered += f".{parsed.microsecond:06d}".rstrip("0")
    return Verbatim(rendered + " +0000 UTC")


# --- labels, annotations, finalizers, owners, managed fields -------------------


def validate_labels(labels: Mapping[str, Any], path: str) -> list[FieldError]:
    """Keys are qualified names, values label values; both reported at the map's path."""
    errs: list[FieldError] = []
    for key, value in labels.items():
        errs.extend(qualified_name_errors(key, path))
        val = value if isinstance(value, str) else ""
        errs.extend(invalid(path, val, m) for m in is_valid_label_value(val))
    return errs


def validate_annotations(annotations: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    total = 0
    for key, value in annotations.items():
        errs.extend(invalid(path, key, m) for m in is_qualified_name(key.lower()))
        total += byte_len(key) + byte_len(value if isinstance(value, str) else "")
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def validate_finalizers(finalizers: list[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for finalizer in finalizers:
        errs.extend(qualified_name_errors(finalizer, path))
    if FINALIZER_ORPHAN in finalizers and FINALIZER_DELETE_DEPENDENTS in finalizers:
        errs.append(
            invalid(
                path,
                finalizers,
                f"finalizer {FINALIZER_ORPHAN} and {FINALIZER_DELETE_DEPENDENTS} cannot be both set",
            )
        )
    return errs


def kube_finalizer_name_errors(finalizer: str, path: str) -> list[FieldError]:
    """Core's extra rule: a finalizer without a domain must be one of the standard ones."""
    if "/" not in finalizer and finalizer not in STANDARD_FINALIZERS:
        return [invalid(path, finalizer, "name is neither a standard finalizer name nor is it fully qualified")]
    return []


def validate_kube_finalizer_names(finalizers: list[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, finalizer in enumerate(finalizers):
        errs.extend(kube_finalizer_name_errors(finalizer, f"{path}[{i}]"))
    return errs


def validate_owner_references(refs: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    first_controller = ""
    for ref in refs:
        if not isinstance(ref, dict):
            continue
        api_version, kind = text(ref, "apiVersion"), text(ref, "kind")
        gv = parse_group_version(api_version)
        group, version = gv if gv is not None else ("", "")
        if not version:
            errs.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        if not kind:
            errs.append(invalid(f"{path}.kind", kind, "kind must not be empty"))
        if not text(ref, "name"):
            errs.append(invalid(f"{path}.name", "", "name must not be empty"))
        if not text(ref, "uid"):
            errs.append(invalid(f"{path}.uid", "", "uid must not be empty"))
        if gv is not None and (group, version, kind) == ("", "v1", "Event"):
            errs.append(invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller") is True:
            current = f"{kind}/{text(ref, 'name')}"
            if first_controller:
                errs.append(
                    invalid(
                        path,
                        refs,
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return errs


def _field_manager_errors(manager: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if byte_len(manager) > FIELD_MANAGER_MAX_LENGTH:
        errs.append(too_long(path, manager, FIELD_MANAGER_MAX_LENGTH))
    position = 0
    for ch in manager:
        if not ch.isprintable():
            errs.append(invalid(path, manager, f"invalid character U+{ord(ch):04X} (at position {position})"))
        position += len(ch.encode("utf-8", "surrogatepass"))
    return errs


def validate_managed_fields(entries: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        p = f"{path}[{i}]"
        operation = text(entry, "operation")
        if operation not in ("Apply", "Update"):
            errs.append(invalid(f"{p}.operation", operation, "must be `Apply` or `Update`"))
        fields_type = text(entry, "fieldsType")
        if fields_type and fields_type != "FieldsV1":
            errs.append(invalid(f"{p}.fieldsType", fields_type, "must be `FieldsV1`"))
        errs.extend(_field_manager_errors(text(entry, "manager"), f"{p}.manager"))
        subresource = text(entry, "subresource")
        if byte_len(subresource) > MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(too_long(f"{p}.subresource", subresource, MAX_SUBRESOURCE_NAME_LENGTH))
    return errs


# --- create ---------------------------------------------------------------------


def effective_name(meta: Obj) -> str:
    """The name the object will have: its own, or one generated from generateName."""
    name = text(meta, "name")
    if name:
        return name
    generate_name = text(meta, "generateName")
    if not generate_name:
        return ""
    return generate_name.encode()[:_MAX_GENERATED_BASE].decode(errors="ignore") + _GENERATED_SUFFIX


def validate_object_meta_accessor(
    meta: Obj, *, namespaced: bool, name_fn: NameFn, path: str = "metadata"
) -> list[FieldError]:
    """apimachinery's ValidateObjectMetaAccessor (no kube finalizer-name rule)."""
    errs: list[FieldError] = []
    generate_name = text(meta, "generateName")
    if generate_name:
        errs.extend(invalid(f"{path}.generateName", generate_name, m) for m in name_fn(generate_name, True))
    name = effective_name(meta)
    if not name:
        errs.append(required(f"{path}.name", "name or generateName is required"))
    else:
        errs.extend(invalid(f"{path}.name", name, m) for m in name_fn(name, False))
    namespace = text(meta, "namespace")
    if namespaced:
        if not namespace:
            errs.append(required(f"{path}.namespace"))
        else:
            errs.extend(invalid(f"{path}.namespace", namespace, m) for m in name_is_dns_label(namespace, False))
    elif namespace:
        errs.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    generation = integer(meta, "generation")
    if generation < 0:
        errs.append(invalid(f"{path}.generation", generation, IS_NEGATIVE))
    errs.extend(validate_labels(mapping(meta, "labels"), f"{path}.labels"))
    errs.extend(validate_annotations(mapping(meta, "annotations"), f"{path}.annotations"))
    errs.extend(validate_owner_references(items(meta, "ownerReferences"), f"{path}.ownerReferences"))
    errs.extend(validate_finalizers(strings(meta, "finalizers"), f"{path}.finalizers"))
    errs.extend(validate_managed_fields(items(meta, "managedFields"), f"{path}.managedFields"))
    return errs


def validate_object_meta(meta: Obj, *, namespaced: bool, name_fn: NameFn, path: str = "metadata") -> list[FieldError]:
    """Core's ValidateObjectMeta: apimachinery's rules plus kube finalizer names."""
    errs = validate_object_meta_accessor(meta, namespaced=namespaced, name_fn=name_fn, path=path)
    errs.extend(validate_kube_finalizer_names(strings(meta, "finalizers"), f"{path}.finalizers"))
    return errs


# --- update ---------------------------------------------------------------------


def _immutable(new: Any, old: Any, path: str, *, render: Any = None) -> list[FieldError]:
    if semantic_equal(new, old):
        return []
    return [invalid(path, new if render is None else render, FIELD_IMMUTABLE)]


def validate_object_meta_accessor_update(new: Obj, old: Obj, path: str = "metadata") -> list[FieldError]:
    """apimachinery's ValidateObjectMetaAccessorUpdate, after the REST layer's rewrites."""
    errs: list[FieldError] = []
    new_finalizers = strings(new, "finalizers")
    if old.get("deletionTimestamp"):
        extra = sorted(set(new_finalizers) - set(strings(old, "finalizers")))
        if extra:
            rendered = format_value(extra)  # Go's %#v of a []string
            errs.append(
                forbidden(
                    f"{path}.finalizers",
                    f"no new finalizers can be added if the object is being deleted, found new finalizers {rendered}",
                )
            )
    errs.extend(_immutable(text(new, "name"), text(old, "name"), f"{path}.name"))
    errs.extend(_immutable(text(new, "namespace"), text(old, "namespace"), f"{path}.namespace"))
    old_uid = text(old, "uid")
    new_uid = text(new, "uid") or old_uid  # an omitted uid is taken from the stored object
    errs.extend(_immutable(new_uid, old_uid, f"{path}.uid"))
    if not old.get("creationTimestamp"):  # otherwise the stored value is kept
        new_created = new.get("creationTimestamp")
        errs.extend(_immutable(new_created, None, f"{path}.creationTimestamp", render=go_time(new_created)))
    if not old.get("deletionTimestamp"):  # otherwise the stored value is kept
        new_deleted = new.get("deletionTimestamp")
        errs.extend(_immutable(new_deleted, None, f"{path}.deletionTimestamp", render=go_time(new_deleted)))
    old_grace = old.get("deletionGracePeriodSeconds")
    new_grace = new.get("deletionGracePeriodSeconds")
    if new_grace is None:
        new_grace = old_grace
    if new_grace != old_grace:
        errs.append(invalid(f"{path}.deletionGracePeriodSeconds", new_grace, FIELD_IMMUTABLE))
    errs.extend(validate_labels(mapping(new, "labels"), f"{path}.labels"))
    errs.extend(validate_annotations(mapping(new, "annotations"), f"{path}.annotations"))
    errs.extend(validate_owner_references(items(new, "ownerReferences"), f"{path}.ownerReferences"))
    errs.extend(validate_managed_fields(items(new, "managedFields"), f"{path}.managedFields"))
    return errs


def validate_object_meta_update(new: Obj, old: Obj, path: str = "metadata") -> list[FieldError]:
    """Core's ValidateObjectMetaUpdate: apimachinery's rules plus kube finalizer names."""
    errs = validate_object_meta_accessor_update(new, old, path)
    errs.extend(validate_kube_finalizer_names(strings(new, "finalizers"), f"{path}.finalizers"))
    return errs


# --- templates ------------------------------------------------------------------


def validate_template_object_meta(meta: Obj, path: str) -> list[FieldError]:
    """Embedded template metadata: only labels and annotations may be set."""
    errs = validate_annotations(mapping(meta, "annotations"), f"{path}.annotations")
    errs.extend(validate_labels(mapping(meta, "labels"), f"{path}.labels"))
    for wire, go_name in _TEMPLATE_FORBIDDEN_FIELDS:
        value = meta.get(wire)
        if value is not None and value not in ("", 0, [], {}):
            errs.append(forbidden(f"{path}.{go_name}", "cannot be set"))
    return errs
