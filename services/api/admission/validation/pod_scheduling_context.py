"""PodSchedulingContext validation (classic DRA's scheduler/driver negotiation object).

The scheduler writes ``spec.potentialNodes`` (at most 128 unique node
names) and ``spec.selectedNode``; drivers answer per claim in
``status.resourceClaims`` with at most 128 unique ``unsuitableNodes``.
Kubernetes 1.31 reports status errors under ``status.claims`` (not the JSON
name ``resourceClaims``); that path is reproduced.
"""

from __future__ import annotations

from typing import Any

from services.api.admission.validation.access import Obj, items, mapping, strings, text
from services.api.admission.validation.dra_names import validate_node_name
from services.api.admission.validation.lists import same, validate_set
from services.api.admission.validation.names import name_is_dns_subdomain
from services.api.admission.validation.object_meta import validate_object_meta, validate_object_meta_update
from services.api.machinery.field_errors import FieldError, duplicate
from services.kube.resource_limits import POD_SCHEDULING_NODE_LIST_MAX_SIZE

validate_context_name = name_is_dns_subdomain  # it is named after its pod


def _node_list(names: list[str], path: str) -> list[FieldError]:
    return validate_set(names, POD_SCHEDULING_NODE_LIST_MAX_SIZE, validate_node_name, path, key=same)


def validate_pod_scheduling_context(ctx: Obj) -> list[FieldError]:
    errs = validate_object_meta(mapping(ctx, "metadata"), namespaced=True, name_fn=validate_context_name)
    errs.extend(_node_list(strings(mapping(ctx, "spec"), "potentialNodes"), "spec.potentialNodes"))
    return errs


def validate_pod_scheduling_context_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    errs.extend(validate_pod_scheduling_context(new))
    return errs


def _claim_status(status: Any, path: str) -> list[FieldError]:
    entry: Obj = status if isinstance(status, dict) else {}
    return _node_list(strings(entry, "unsuitableNodes"), f"{path}.unsuitableNodes")


def validate_pod_scheduling_context_status_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    seen: set[str] = set()
    for i, status in enumerate(items(mapping(new, "status"), "resourceClaims")):
        path = f"status.claims[{i}]"
        errs.extend(_claim_status(status, path))
        name = text(status, "name") if isinstance(status, dict) else ""
        if name in seen:
            errs.append(duplicate(path, name))
        else:
            seen.add(name)
    return errs
