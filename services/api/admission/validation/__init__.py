"""Kubernetes 1.31 validation of wire-form objects: what a write must satisfy before it commits.

Entry points (pure functions over ``dict`` objects in JSON wire form):

* `validate_create` — a new object (Kubernetes' ``strategy.Validate`` plus
  the REST layer's generic metadata checks);
* `validate_update` — a replacement of an object's spec and metadata;
* `validate_status_update` — a write to the ``status`` subresource;
* `validate_pod_binding` — a ``pods/binding`` body.

Each returns the list of `FieldError`s in Kubernetes' order and wording
(empty when the object is valid); `services.api.machinery.status.invalid` turns a
non-empty list into the 422 response.

Validation judges an object as Kubernetes would after defaulting and after
the REST layer's rewrites (generated name, copied uid, timestamps and
generation); absent fields that Kubernetes always defaults are accepted as
defaulted. It does not mutate its inputs.

The resource.k8s.io validators also judge a storage (hub) form object as
Kubernetes 1.37 does when given ``limits=LIMITS_1_37``
(`services.kube.resource_limits`); the entry points pass ``limits`` on to
them (1.31's by default; the Validation admission plugin picks 1.37's for
writes through v1, v1beta2, v1beta1 and the hub form). DeviceTaintRule
(1.37 only) is registered here with its status subresource
(`device_taint_rule`).

Modules, by concept: `names` (formats and messages), `object_meta`,
`node_selector`, `quantity`, `equality`, `lists` (size and uniqueness),
`dra_names`, `selectors` (CEL), `config`, `conditions`,
`device_taint_rule`, `device_status`, `device_request`, `allocation`,
`resource_claim`, `resource_claim_template`, `device_class`,
`resource_slice`, `pod_scheduling_context`, `pod_claims`, `resources`,
`containers`, `tolerations`, `pod`, `pod_update`, `node`, `namespace`,
`event`, `lease` (coordination.k8s.io, as 1.37).
"""

from __future__ import annotations

from collections.abc import Callable

from services.api.admission.validation.access import Obj, mapping
from services.api.admission.validation.device_class import validate_device_class, validate_device_class_update
from services.api.admission.validation.device_taint_rule import (
    validate_device_taint_rule,
    validate_device_taint_rule_status_update,
    validate_device_taint_rule_update,
)
from services.api.admission.validation.event import validate_event, validate_event_update
from services.api.admission.validation.lease import validate_lease, validate_lease_update
from services.api.admission.validation.names import path_segment_name
from services.api.admission.validation.namespace import (
    validate_namespace,
    validate_namespace_status_update,
    validate_namespace_update,
)
from services.api.admission.validation.node import validate_node, validate_node_update
from services.api.admission.validation.object_meta import (
    validate_object_meta_accessor,
    validate_object_meta_accessor_update,
)
from services.api.admission.validation.pod import validate_pod_binding, validate_pod_create, validate_pod_status_update
from services.api.admission.validation.pod_scheduling_context import (
    validate_pod_scheduling_context,
    validate_pod_scheduling_context_status_update,
    validate_pod_scheduling_context_update,
)
from services.api.admission.validation.pod_update import validate_pod_update
from services.api.admission.validation.resource_claim import (
    validate_resource_claim,
    validate_resource_claim_status_update,
    validate_resource_claim_update,
)
from services.api.admission.validation.resource_claim_template import (
    validate_resource_claim_template,
    validate_resource_claim_template_update,
)
from services.api.admission.validation.resource_slice import validate_resource_slice, validate_resource_slice_update
from services.api.machinery.field_errors import FieldError
from services.api.types.registry import COORDINATION_GROUP, CORE, RESOURCE_GROUP, ResourceType
from services.kube.resource_limits import LIMITS_1_31, ResourceLimits

__all__ = ["validate_create", "validate_pod_binding", "validate_status_update", "validate_update"]

Create = Callable[[Obj], list[FieldError]]
Update = Callable[[Obj, Obj], list[FieldError]]


_CREATE: dict[tuple[str, str], Create] = {
    (CORE, "Pod"): validate_pod_create,
    (CORE, "Node"): validate_node,
    (CORE, "Namespace"): validate_namespace,
    (CORE, "Event"): validate_event,
    (RESOURCE_GROUP, "DeviceClass"): validate_device_class,
    (RESOURCE_GROUP, "ResourceClaim"): validate_resource_claim,
    (RESOURCE_GROUP, "ResourceClaimTemplate"): validate_resource_claim_template,
    (RESOURCE_GROUP, "ResourceSlice"): validate_resource_slice,
    (RESOURCE_GROUP, "PodSchedulingContext"): validate_pod_scheduling_context,
    (RESOURCE_GROUP, "DeviceTaintRule"): validate_device_taint_rule,
    (COORDINATION_GROUP, "Lease"): validate_lease,
}

_UPDATE: dict[tuple[str, str], Update] = {
    (CORE, "Pod"): validate_pod_update,
    (CORE, "Node"): validate_node_update,
    (CORE, "Namespace"): validate_namespace_update,
    (CORE, "Event"): validate_event_update,
    (RESOURCE_GROUP, "DeviceClass"): validate_device_class_update,
    (RESOURCE_GROUP, "ResourceClaim"): validate_resource_claim_update,
    (RESOURCE_GROUP, "ResourceClaimTemplate"): validate_resource_claim_template_update,
    (RESOURCE_GROUP, "ResourceSlice"): validate_resource_slice_update,
    (RESOURCE_GROUP, "PodSchedulingContext"): validate_pod_scheduling_context_update,
    (RESOURCE_GROUP, "DeviceTaintRule"): validate_device_taint_rule_update,
    (COORDINATION_GROUP, "Lease"): validate_lease_update,
}

_STATUS_UPDATE: dict[tuple[str, str], Update] = {
    (CORE, "Pod"): validate_pod_status_update,
    (CORE, "Node"): validate_node_update,
    (CORE, "Namespace"): validate_namespace_status_update,
    (RESOURCE_GROUP, "ResourceClaim"): validate_resource_claim_status_update,
    (RESOURCE_GROUP, "PodSchedulingContext"): validate_pod_scheduling_context_status_update,
    (RESOURCE_GROUP, "DeviceTaintRule"): validate_device_taint_rule_status_update,
}

# Kinds whose own rules already validate all metadata with a name format at
# least as strict as "one URL path segment"; for them the REST layer's
# generic metadata check cannot add anything on create.
_META_VALIDATED_ON_CREATE = frozenset(_CREATE) - {(CORE, "Event")}
# Kinds whose validators take ``request_version`` (the rules differ by the group written through).
_BY_REQUEST_VERSION = frozenset({(CORE, "Event")})
# Kinds whose validators take ``limits`` (the release's resource.k8s.io limits).
_TAKES_LIMITS = frozenset(
    (RESOURCE_GROUP, kind) for kind in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")
)


def _generic_meta(rt: ResourceType, obj: Obj) -> list[FieldError]:
    """The REST layer's metadata check for every kind on create (rest.BeforeCreate)."""
    return validate_object_meta_accessor(mapping(obj, "metadata"), namespaced=rt.namespaced, name_fn=path_segment_name)


def _common_fields(rt: ResourceType, new: Obj, old: Obj) -> list[FieldError]:
    """The REST layer's metadata checks for every kind on update (validateCommonFields)."""
    errs = _generic_meta(rt, new)
    errs.extend(validate_object_meta_accessor_update(mapping(new, "metadata"), mapping(old, "metadata")))
    return errs


def _dedupe(errs: list[FieldError]) -> list[FieldError]:
    """Drop repeated errors (Kubernetes' aggregate drops repeated messages)."""
    if len(errs) < 2:
        return errs
    seen: set[str] = set()
    out: list[FieldError] = []
    for err in errs:
        key = f"{err.type.reason}\x00{err}"
        if key not in seen:
            seen.add(key)
            out.append(err)
    return out


def validate_create(
    rt: ResourceType, obj: Obj, *, limits: ResourceLimits = LIMITS_1_31, request_version: str = ""
) -> list[FieldError]:
    """Errors for creating ``obj`` as a ``rt``; empty when it may be created.

    ``request_version`` is the version the client wrote with (qualified for a
    view: ``events.k8s.io/v1``); only Events' rules depend on it.
    """
    key = (rt.group, rt.kind)
    validate = _CREATE.get(key)
    if validate is None:
        errs: list[FieldError] = []
    elif key in _BY_REQUEST_VERSION:
        errs = validate(obj, request_version=request_version)  # type: ignore[call-arg]
    elif key in _TAKES_LIMITS and limits is not LIMITS_1_31:
        errs = validate(obj, limits=limits)  # type: ignore[call-arg]
    else:
        errs = validate(obj)
    if not errs and key not in _META_VALIDATED_ON_CREATE:
        # Kubernetes runs this only once the kind's own rules passed.
        errs = _generic_meta(rt, obj)
    return errs


def validate_update(
    rt: ResourceType, new: Obj, old: Obj, *, limits: ResourceLimits = LIMITS_1_31, request_version: str = ""
) -> list[FieldError]:
    """Errors for replacing ``old`` with ``new`` (main resource, not status)."""
    key = (rt.group, rt.kind)
    validate = _UPDATE.get(key)
    errs = _common_fields(rt, new, old)
    if validate is not None and key in _BY_REQUEST_VERSION:
        errs.extend(validate(new, old, request_version=request_version))  # type: ignore[call-arg]
    elif validate is not None and key in _TAKES_LIMITS and limits is not LIMITS_1_31:
        errs.extend(validate(new, old, limits=limits))  # type: ignore[call-arg]
    elif validate is not None:
        errs.extend(validate(new, old))
    return _dedupe(errs)


def validate_status_update(
    rt: ResourceType, new: Obj, old: Obj, *, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    """Errors for writing ``new`` through the status subresource over ``old``.

    The caller is expected to have applied the status strategy first (spec
    and most metadata copied from ``old``), as Kubernetes does.
    """
    key = (rt.group, rt.kind)
    validate = _STATUS_UPDATE.get(key)
    if validate is None:
        return validate_update(rt, new, old, limits=limits)
    errs = _common_fields(rt, new, old)
    if key in _TAKES_LIMITS and limits is not LIMITS_1_31:
        errs.extend(validate(new, old, limits=limits))  # type: ignore[call-arg]
    else:
        errs.extend(validate(new, old))
    return _dedupe(errs)
