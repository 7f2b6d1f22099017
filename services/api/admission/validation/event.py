"""core/v1 Event validation (``legacyValidateEvent``; the only rules Kubernetes applies to v1).

Kubernetes does not validate a v1 Event's metadata beyond what the REST
layer checks for every kind (see `validate_create`). An event carrying an
``eventTime`` is a new-style event and must name its reporting component
and instance, action and reason; a legacy one must sit in its involved
object's namespace.
"""

from __future__ import annotations

from services.api.admission.validation.access import Obj, mapping, text
from services.api.admission.validation.names import byte_len, is_dns1123_subdomain, qualified_name_errors
from services.api.machinery.field_errors import FieldError, invalid, required

REPORTING_INSTANCE_LENGTH_LIMIT = 128
ACTION_LENGTH_LIMIT = 128
REASON_LENGTH_LIMIT = 128
NOTE_LENGTH_LIMIT = 1024


def _limit(event: Obj, field: str, limit: int) -> list[FieldError]:
    if byte_len(text(event, field)) > limit:
        return [invalid(field, "", f"can have at most {limit} characters")]
    return []


def validate_event(event: Obj) -> list[FieldError]:
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
            errs.append(required("reportingComponent"))
        errs.extend(qualified_name_errors(component, "reportingComponent"))
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
