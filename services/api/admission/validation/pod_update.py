"""Pod update rules: a pod's spec is immutable except for a few fields.

Images, ``activeDeadlineSeconds`` (set or lowered), tolerations (additions,
and ``tolerationSeconds``), scheduling gates (removals only) and, while the
pod is still gated, additions to its node selector and required node
affinity may change. Everything else, in particular ``spec.resourceClaims``
and containers' ``resources`` (in-place resize is an alpha feature, off in
1.31), is rejected with one ``spec: Forbidden: pod updates may not change
fields other than ...`` error followed by a diff.

Kubernetes appends a ``cmp.Diff`` of the Go structs; draplane appends one
``-``/``+`` line pair per changed field path instead.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from services.api.admission.validation.access import Obj, items, mapping, text
from services.api.admission.validation.equality import is_zero, semantic_equal
from services.api.admission.validation.object_meta import validate_object_meta_update
from services.api.admission.validation.pod import MAX_INT32, validate_pod_metadata_and_spec
from services.api.admission.validation.tolerations import validate_only_added_tolerations
from services.api.machinery.field_errors import FieldError, forbidden, invalid, required

UPDATABLE_POD_SPEC_FIELDS = ",".join(
    (
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
    )
)


def _container_updates(new: list[Any], old: list[Any], path: str) -> tuple[list[FieldError], bool]:
    if len(new) != len(old):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    errs: list[FieldError] = []
    for i, ctr in enumerate(new):
        image = text(ctr, "image") if isinstance(ctr, dict) else ""
        if not image:
            errs.append(required(f"{path}[{i}].image"))
        if image != image.strip():
            errs.append(invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace"))
    return errs, False


def _only_deleted_gates(new: list[Any], old: list[Any], path: str) -> list[FieldError]:
    old_names = {text(g, "name") for g in old if isinstance(g, dict)}
    added: dict[str, int] = {}
    for i, gate in enumerate(new):
        name = text(gate, "name") if isinstance(gate, dict) else ""
        added[name] = i
    return [
        forbidden(f"{path}[{i}].name", f"only deletion is allowed, but found new scheduling gate '{name}'")
        for name, i in added.items()
        if name not in old_names
    ]


def _node_selector_mutation(new: Obj, old: Obj, path: str) -> list[FieldError]:
    for key, value in old.items():
        if key not in new or new[key] != value:
            return [invalid(path, new, "only additions to spec.nodeSelector are allowed (no mutations or deletions)")]
    return []


def _term_has_only_additions(new: Obj, old: Obj) -> bool:
    old_exprs, old_fields = items(old, "matchExpressions"), items(old, "matchFields")
    new_exprs, new_fields = items(new, "matchExpressions"), items(new, "matchFields")
    if not old_exprs and not old_fields and (new_exprs or new_fields):
        return False
    for old_list, new_list in ((old_exprs, new_exprs), (old_fields, new_fields)):
        if old_list and (len(new_list) < len(old_list) or not semantic_equal(new_list[: len(old_list)], old_list)):
            return False
    return True


def _node_affinity_mutation(new: Obj | None, old: Obj | None, path: str) -> list[FieldError]:
    old_required = (old or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(old_required, dict):
        return []
    old_terms = items(old_required, "nodeSelectorTerms")
    new_required = (new or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    new_terms = items(new_required, "nodeSelectorTerms") if isinstance(new_required, dict) else []
    terms_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    if old_terms and len(old_terms) != len(new_terms):
        return [
            invalid(terms_path, new_terms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")
        ]
    errs: list[FieldError] = []
    for i, old_term in enumerate(old_terms):
        new_term = new_terms[i] if isinstance(new_terms[i], dict) else {}
        if not _term_has_only_additions(new_term, old_term if isinstance(old_term, dict) else {}):
            errs.append(
                invalid(f"{terms_path}[{i}]", new_term, "only additions are allowed (no mutations or deletions)")
            )
    return errs


def _diff(old: Any, new: Any, path: str, out: list[str]) -> None:
    if semantic_equal(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            _diff(old.get(key), new.get(key), f"{path}.{key}", out)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, f"{path}[{i}]", out)
        return
    if not is_zero(old):
        out.append(f"- \t{path}: {orjson.dumps(old, option=orjson.OPT_SORT_KEYS).decode()}")
    if not is_zero(new):
        out.append(f"+ \t{path}: {orjson.dumps(new, option=orjson.OPT_SORT_KEYS).decode()}")


def spec_diff(old: Obj, new: Obj) -> str:
    lines: list[str] = []
    _diff(old, new, "spec", lines)
    return "\n".join(lines)


def _munged_spec(new_spec: Obj, old_spec: Obj, errs: list[FieldError]) -> Obj:
    """The new spec with every field that may change copied from the old one."""
    munged = copy.copy(new_spec)
    for key in ("containers", "initContainers"):
        new_list, old_list = items(new_spec, key), items(old_spec, key)
        munged[key] = [
            {**ctr, "image": old_list[i].get("image")}
            if isinstance(ctr, dict) and isinstance(old_list[i], dict)
            else ctr
            for i, ctr in enumerate(new_list)
        ]
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged[key] = old_spec.get(key)
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if items(old_spec, "schedulingGates"):
        # A gated pod may still gain node selector entries and node affinity requirements.
        old_selector, new_selector = mapping(old_spec, "nodeSelector"), mapping(munged, "nodeSelector")
        if not semantic_equal(new_selector, old_selector):
            errs.extend(_node_selector_mutation(new_selector, old_selector, "spec.nodeSelector"))
            munged["nodeSelector"] = old_spec.get("nodeSelector")
        old_affinity, new_affinity = old_spec.get("affinity"), munged.get("affinity")
        old_node_affinity = old_affinity.get("nodeAffinity") if isinstance(old_affinity, dict) else None
        new_node_affinity = new_affinity.get("nodeAffinity") if isinstance(new_affinity, dict) else None
        if not semantic_equal(old_node_affinity, new_node_affinity):
            errs.extend(_node_affinity_mutation(new_node_affinity, old_node_affinity, "spec.affinity.nodeAffinity"))
            if not isinstance(new_affinity, dict):
                if old_node_affinity is not None:
                    munged["affinity"] = {"nodeAffinity": old_node_affinity}
            elif (
                old_affinity is None
                and new_affinity.get("podAffinity") is None
                and (new_affinity.get("podAntiAffinity") is None)
            ):
                munged["affinity"] = None
            else:
                munged["affinity"] = {**new_affinity, "nodeAffinity": old_node_affinity}
    return munged


def validate_pod_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    errs.extend(validate_pod_metadata_and_spec(new))
    new_spec, old_spec = mapping(new, "spec"), mapping(old, "spec")
    for key in ("containers", "initContainers"):
        container_errs, stop = _container_updates(items(new_spec, key), items(old_spec, key), f"spec.{key}")
        errs.extend(container_errs)
        if stop:
            return errs
    new_deadline, old_deadline = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if new_deadline is not None:
        if not isinstance(new_deadline, int) or not 0 <= new_deadline <= MAX_INT32:
            errs.append(
                invalid("spec.activeDeadlineSeconds", new_deadline, f"must be between 0 and {MAX_INT32}, inclusive")
            )
            return errs
        if isinstance(old_deadline, int) and old_deadline < new_deadline:
            errs.append(
                invalid("spec.activeDeadlineSeconds", new_deadline, "must be less than or equal to previous value")
            )
            return errs
    elif old_deadline is not None:
        errs.append(invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"))
    errs.extend(
        validate_only_added_tolerations(
            items(new_spec, "tolerations"), items(old_spec, "tolerations"), "spec.tolerations"
        )
    )
    errs.extend(
        _only_deleted_gates(
            items(new_spec, "schedulingGates"), items(old_spec, "schedulingGates"), "spec.schedulingGates"
        )
    )
    if semantic_equal(new_spec, old_spec):
        return errs
    munged = _munged_spec(new_spec, old_spec, errs)
    if not semantic_equal(munged, old_spec):
        errs.append(
            forbidden(
                "spec",
                f"pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS}\n"
                + spec_diff(old_spec, munged),
            )
        )
    return errs
