"""ResourceClaimTemplate validation: embedded claim metadata and spec, immutable spec.

The template's ``spec.metadata`` becomes the generated claim's metadata, so
only labels and annotations may be set there; ``spec.spec`` is a claim spec.
"""

from __future__ import annotations

from services.api.admission.validation.access import Obj, mapping
from services.api.admission.validation.names import name_is_dns_subdomain
from services.api.admission.validation.object_meta import (
    validate_object_meta,
    validate_object_meta_update,
    validate_template_object_meta,
)
from services.api.admission.validation.resource_claim import validate_immutable_spec, validate_resource_claim_spec
from services.api.machinery.field_errors import FieldError
from services.kube.resource_limits import LIMITS_1_31, ResourceLimits

validate_template_name = name_is_dns_subdomain


def validate_template_spec(
    spec: Obj, path: str, *, stored: bool, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    errs = validate_template_object_meta(mapping(spec, "metadata"), f"{path}.metadata")
    errs.extend(validate_resource_claim_spec(mapping(spec, "spec"), f"{path}.spec", stored=stored, limits=limits))
    return errs


def validate_resource_claim_template(template: Obj, *, limits: ResourceLimits = LIMITS_1_31) -> list[FieldError]:
    errs = validate_object_meta(mapping(template, "metadata"), namespaced=True, name_fn=validate_template_name)
    errs.extend(validate_template_spec(mapping(template, "spec"), "spec", stored=False, limits=limits))
    return errs


def validate_resource_claim_template_update(
    new: Obj, old: Obj, *, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    spec_errs, unchanged = validate_immutable_spec(new, old)
    errs.extend(spec_errs)
    errs.extend(validate_template_spec(mapping(new, "spec"), "spec", stored=unchanged, limits=limits))
    return errs
