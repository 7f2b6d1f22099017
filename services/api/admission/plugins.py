"""The mutating and validating admission plugins built from the API machinery.

`Defaulting` applies Kubernetes' defaults, `DropDisabledFields` removes fields
whose feature gate is off (keeping them on update when the old object already
used them), and `Validation` runs Kubernetes' validation for the operation and
subresource, answering 422 Invalid with every field error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.api.admission.admin_access import admin_access_errors, checks_admin_namespace
from services.api.admission.chain import Attributes, View
from services.api.admission.defaults import apply_defaults
from services.api.admission.defaults_stored import apply_stored_defaults
from services.api.admission.gated_fields import drop_deallocated_status_devices, drop_disabled_fields
from services.api.admission.validation import (
    validate_create,
    validate_pod_binding,
    validate_status_update,
    validate_update,
)
from services.api.machinery import status as st
from services.api.types.registry import RESOURCE_GROUP, V1ALPHA3
from services.kube.feature_gates import DEFAULT_RELEASE, FeatureGates
from services.kube.resource_limits import LIMITS_1_31, LIMITS_1_37

CLAIM = (RESOURCE_GROUP, "ResourceClaim")


@dataclass
class Defaulting:
    name: str = "Defaulting"

    def admit(self, attrs: Attributes, view: View) -> None:
        if attrs.new is not None and attrs.subresource in ("", "status"):
            apply_defaults(attrs.resource, attrs.new)
            apply_stored_defaults(attrs.resource, attrs.new)


@dataclass
class DropDisabledFields:
    gates: FeatureGates
    name: str = "DropDisabledFields"

    def admit(self, attrs: Attributes, view: View) -> None:
        if attrs.new is not None and attrs.subresource in ("", "status"):
            drop_disabled_fields(attrs.resource, attrs.new, attrs.old, self.gates)
        rt = attrs.resource
        if attrs.new is not None and attrs.subresource == "status" and (rt.group, rt.kind) == CLAIM:
            drop_deallocated_status_devices(attrs.new, attrs.old, self.gates)


@dataclass
class Validation:
    """Kubernetes' validation; at ``release`` 1.37 also the strategies' admin-access namespace check."""

    release: str = DEFAULT_RELEASE
    name: str = "Validation"

    def admit(self, attrs: Attributes, view: View) -> None:
        new, old, rt = attrs.new, attrs.old, attrs.resource
        if new is None or attrs.operation == "DELETE":
            return
        # v1alpha3 writes are judged by 1.31's rules; v1, v1beta2, v1beta1 and the hub form's
        # (components write that) by 1.37's (docs/decisions/api-versions.md).
        limits = LIMITS_1_31 if attrs.version == V1ALPHA3 or rt.group != RESOURCE_GROUP else LIMITS_1_37
        if attrs.subresource == "binding":
            errors = validate_pod_binding(new)
            kind = "Binding"
        elif attrs.operation == "CREATE":
            errors = validate_create(rt, new, limits=limits)
            kind = rt.kind
        elif attrs.subresource == "status" and old is not None:
            errors = validate_status_update(rt, new, old, limits=limits)
            kind = rt.kind
        elif old is not None:
            errors = validate_update(rt, new, old, limits=limits)
            kind = rt.kind
        else:
            return
        if checks_admin_namespace(self.release) and attrs.subresource in ("", "status"):
            # The strategies' Validate: the admin-access errors come first.
            def namespace() -> dict[str, Any] | None:
                return view.get("", "namespaces", "", attrs.namespace) if attrs.namespace else None

            errors = [
                *admin_access_errors(rt, new=new, old=old, subresource=attrs.subresource, namespace=namespace),
                *errors,
            ]
        if errors:
            name = (new.get("metadata") or {}).get("name") or attrs.name
            raise st.invalid(rt.group, kind, name, errors)
