"""Event validation (pkg/apis/core/validation/events.go), judged by the version the client wrote with.

Every Event, whichever group it was written through, is validated in its
stored core/v1 form, as Kubernetes validates the internal type: field paths
name core's fields (``involvedObject``, ``message``, ``count``).

``legacyValidateEvent`` applies to every write; it is all Kubernetes applies to
core/v1 writes (and its metadata is not validated beyond what the REST layer
checks for every kind, see `validate_create`). An event carrying an
``eventTime`` is a new-style event and must name its reporting controller and
instance, action and reason; a legacy one must sit in its involved object's
namespace. Writes through events.k8s.io/v1 get the strict rules on top
(`validate_event` with ``request_version``): ObjectMeta with a DNS-subdomain
name, a series of at least two, ``eventTime`` and a ``Normal``/``Warning``
type required, the deprecated fields unset; on update, the scalar fields
immutable (the struct-valued ones are not checked here).
"""

from __future__ import annotations

from services.api.admission.validation.access import Obj, mapping, text
from services.api.admission.validation.names import (
    byte_len,
    is_dns1123_subdomain,
    name_is_dns_subdomain,
    qualified_name_errors,
)
from services.api.admission.validation.object_meta import (
    FIELD_IMMUTABLE,
    validate_object_meta,
    validate_object_meta_update,
)
from services.api.machinery.field_errors import FieldError, invalid, required

# The versions Kubernetes gives only the legacy rules ("" is the storage version components write).
_LEGACY_VERSIONS = frozenset({"", "v1", "events.k8s.io/v1beta1"})

REPORTING_INSTANCE_LENGTH_LIMIT = 128
ACTION_LENGTH_LIMIT = 128
REASON_LENGTH_LIMIT = 128
NOTE_LENGTH_LIMIT = 1024


def _limit(event: Obj, field: str, limit: int) -> list[FieldError]:
    if byte_len(text(event, field)) > limit:
        return [invalid(field, "", f"can have at most {limit} characters")]
    return []


def validate_event(event: Obj, *, request_version: str = "") -> list[FieldError]:
    """ValidateEventCreate for a write through ``request_version`` (``events.k8s.io/v1`` or core ``v1``)."""
    errs = _legacy(event, request_version)
    if request_version in _LEGACY_VERSIONS:
        return errs
    errs.extend(validate_object_meta(mapping(event, "metadata"), namespaced=True, name_fn=name_is_dns_subdomain))
    errs.extend(_series(event))
    if not event.get("eventTime"):
        errs.append(required("eventTime"))
    if event.get("type") not in ("Normal", "Warning"):
        errs.append(invalid("type", "", f"has invalid value: {text(event, 'type')}"))
    for field in ("firstTimestamp", "lastTimestamp"):
        if event.get(field):
            errs.append(invalid(field, "", "needs to be unset"))
    if event.get("count"):
        errs.append(invalid("count", "", "needs to be unset"))
    source = mapping(event, "source")
    if text(source, "component") or text(source, "host"):
        errs.append(invalid("source", "", "needs to be unset"))
    return errs


def validate_event_update(new: Obj, old: Obj, *, request_version: str = "") -> list[FieldError]:
    """ValidateEventUpdate: core/v1 re-runs the legacy rules only; events.k8s.io/v1 adds immutability."""
    errs = _legacy(new, request_version)
    if request_version in _LEGACY_VERSIONS:
        return errs
    errs.extend(validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata")))
    if new.get("series") != old.get("series"):
        errs.extend(_series(new))
    for field in ("reason", "message", "count", "type", "action", "reportingComponent", "reportingInstance"):
        if (new.get(field) or "") != (old.get(field) or ""):
            path = "reportingController" if field == "reportingComponent" else field
            errs.append(invalid(path, new.get(field) or "", FIELD_IMMUTABLE))
    return errs


def _series(event: Obj) -> list[FieldError]:
    series = event.get("series")
    if not isinstance(series, dict):
        return []
    errs: list[FieldError] = []
    if int(series.get("count") or 0) < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs


def _legacy(event: Obj, request_version: str) -> list[FieldError]:
    """legacyValidateEvent."""
    # Kubernetes names the field as the client's version does: core/v1 says reportingComponent.
    controller_field = "reportingComponent" if request_version in ("", "v1") else "reportingController"
    errs: list[FieldError] = []
    namespace = text(mapping(event, "metadata"), "namespace")
    involved_namespace = text(mapping(event, "involvedObject"), "namespace")
    if not event.get("eventTime"):
        if not involved_namespace:
            if namespace not in ("", "default"):
                errs.append(invalid("involvedObject.namespace", involved_namespace, "does not match event.namespace"))
        elif namespace != involved_namespace:
            errs.append(invalid("involvedObject.namespace", involved_namespace, "does not match event.namespace"))
    else:
        if not involved_namespace and namespace not in ("default", "kube-system"):
            errs.append(invalid("involvedObject.namespace", involved_namespace, "does not match event.namespace"))
        component = text(event, "reportingComponent")
        if not component:
            errs.append(required(controller_field))
        errs.extend(qualified_name_errors(component, controller_field))
        if not text(event, "reportingInstance"):
            errs.append(required("reportingInstance"))
        errs.extend(_limit(event, "reportingInstance", REPORTING_INSTANCE_LENGTH_LIMIT))
        if not text(event, "action"):
            errs.append(required("action"))
        errs.extend(_limit(event, "action", ACTION_LENGTH_LIMIT))
        if not text(event, "reason"):
            errs.append(required("reason"))
        errs.extend(_limit(event, "reason", REASON_LENGTH_LIMIT))
        errs.extend(_limit(event, "message", NOTE_LENGTH_LIMIT))
    errs.extend(invalid("namespace", namespace, m) for m in is_dns1123_subdomain(namespace))
    return errs
