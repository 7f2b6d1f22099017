"""The pod side of DRA: ``spec.resourceClaims``, containers' ``resources.claims`` and
``status.resourceClaimStatuses`` (pkg/apis/core/validation, 1.31).

A pod names each claim it uses once (a DNS label) and points it at exactly
one of an existing ResourceClaim or a ResourceClaimTemplate. Containers may
only reference those names, each claim (or claim/request pair) once. The
claim controller records generated claim names in the status, one entry per
pod claim. The scheduler records the claim it made for extended resources in
``status.extendedResourceClaimStatus`` (1.37, DRAExtendedResource): at least one
mapping, each naming a container and one of its requested resources.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from services.api.admission.validation.access import Obj, text
from services.api.admission.validation.names import dns1123_label_errors, name_is_dns_subdomain
from services.api.machinery.field_errors import FieldError, duplicate, invalid, not_found, required


def pod_claim_names(claims: list[Any]) -> frozenset[str]:
    """The non-empty names in ``spec.resourceClaims`` (their format is checked elsewhere)."""
    return frozenset(n for c in claims if isinstance(c, dict) and (n := text(c, "name")))


def validate_pod_resource_claims(claims: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        entry: Obj = claim if isinstance(claim, dict) else {}
        p = f"{path}[{i}]"
        name = text(entry, "name")
        if not name:
            errs.append(required(f"{p}.name"))
        elif name in seen:
            errs.append(duplicate(f"{p}.name", name))
        else:
            errs.extend(dns1123_label_errors(name, f"{p}.name"))
            seen.add(name)
        claim_name = entry.get("resourceClaimName")
        template_name = entry.get("resourceClaimTemplateName")
        if claim_name is not None and template_name is not None:
            errs.append(
                invalid(p, entry, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified")
            )
        if claim_name is None and template_name is None:
            errs.append(invalid(p, entry, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
        if claim_name is not None:
            errs.extend(
                invalid(f"{p}.resourceClaimName", str(claim_name), m)
                for m in name_is_dns_subdomain(str(claim_name), False)
            )
        if template_name is not None:
            errs.extend(
                invalid(f"{p}.resourceClaimTemplateName", str(template_name), m)
                for m in name_is_dns_subdomain(str(template_name), False)
            )
    return errs


def validate_container_claims(claims: list[Any], pod_claims: Set[str], path: str) -> list[FieldError]:
    """A container's ``resources.claims``: known pod claims, no entry covered twice."""
    errs: list[FieldError] = []
    keys: list[str] = []  # insertion order, for deterministic messages
    key_set: set[str] = set()
    for i, claim in enumerate(claims):
        entry: Obj = claim if isinstance(claim, dict) else {}
        p = f"{path}[{i}]"
        name = text(entry, "name")
        if not name:
            errs.append(required(p))
            continue
        if name in key_set:
            # Every request of that claim is already referenced.
            errs.append(duplicate(p, name))
        else:
            request = text(entry, "request")
            key = name
            if request:
                errs.extend(dns1123_label_errors(request, f"{p}.request"))
                key = f"{name}/{request}"
            if key in key_set:
                errs.append(duplicate(p, key))
            elif not request:
                # The whole claim overlaps with requests of it referenced earlier.
                errs.extend(duplicate(p, name) for k in keys if "/" in k and k.split("/", 1)[0] == name)
            if key not in key_set:
                key_set.add(key)
                keys.append(key)
        if name not in pod_claims:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            errs.append(not_found(p, name, detail))
    return errs


def validate_pod_resource_claim_statuses(statuses: list[Any], pod_claims: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names = {text(c, "name") for c in pod_claims if isinstance(c, dict)}
    seen: set[str] = set()
    for i, status in enumerate(statuses):
        entry: Obj = status if isinstance(status, dict) else {}
        p = f"{path}[{i}]"
        name = text(entry, "name")
        if name not in names:
            errs.append(invalid(f"{p}.name", name, "must match the name of an entry in `spec.resourceClaims`"))
        if name in seen:
            errs.append(duplicate(f"{p}.name", name))
        else:
            seen.add(name)
        claim_name = entry.get("resourceClaimName")
        if claim_name is not None:
            errs.extend(invalid(f"{p}.name", str(claim_name), m) for m in name_is_dns_subdomain(str(claim_name), False))
    return errs


def validate_pod_extended_resource_claim_status(status: Any, spec: Obj, path: str) -> list[FieldError]:
    """kube 1.37's validatePodExtendedResourceClaimStatus (its requestName path lacks the index, as there)."""
    if not isinstance(status, dict):
        return []
    requested: dict[str, Obj] = {}
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            if isinstance(container, dict):
                resources = container.get("resources")
                reqs = resources.get("requests") if isinstance(resources, dict) else None
                requested[text(container, "name")] = reqs if isinstance(reqs, dict) else {}
    errs: list[FieldError] = []
    mappings_path = f"{path}.requestMappings"
    mappings = status.get("requestMappings")
    if not isinstance(mappings, list) or not mappings:
        errs.append(required(mappings_path, "at least one request mapping is required"))
        mappings = []
    seen: set[tuple[str, str, str]] = set()
    for i, raw in enumerate(mappings):
        entry: Obj = raw if isinstance(raw, dict) else {}
        p = f"{mappings_path}[{i}]"
        container, resource = text(entry, "containerName"), text(entry, "resourceName")
        request = text(entry, "requestName")
        if container in requested:
            if resource not in requested[container]:
                errs.append(
                    invalid(
                        f"{p}.resourceName",
                        resource,
                        "must match the extended resource name of an entry in spec.initContainers.resources.requests "
                        "or spec.containers.resources.requests",
                    )
                )
        else:
            errs.append(
                invalid(
                    f"{p}.containerName",
                    container,
                    "must match the name of an entry in spec.initContainers.name or spec.containers.name",
                )
            )
        errs.extend(dns1123_label_errors(request, f"{path}.requestName"))
        mapping_key = (container, resource, request)
        if mapping_key in seen:
            errs.append(duplicate(f"{p}.containerName", container))
            errs.append(duplicate(f"{p}.resourceName", resource))
            errs.append(duplicate(f"{p}.requestName", request))
        seen.add(mapping_key)
    claim_name = text(status, "resourceClaimName")
    if not claim_name:
        errs.append(required(f"{path}.resourceClaimName"))
    else:
        errs.extend(
            invalid(f"{path}.resourceClaimName", claim_name, m) for m in name_is_dns_subdomain(claim_name, False)
        )
    return errs
