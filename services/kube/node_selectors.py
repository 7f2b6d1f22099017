"""Node selectors and node affinity (k8s.io/component-helpers/scheduling/corev1/nodeaffinity, 1.31).

The one matcher of ``v1.NodeSelector`` in draplane: the scheduler's
NodeAffinity and DynamicResources plugins, the structured allocator (slices
that are not local to one node), and the chaos binding check all use it.

- Terms are ORed, the requirements of a term ANDed; an empty term (no
  ``matchExpressions``, no ``matchFields``) is dropped and so matches nothing.
- ``matchExpressions`` are label requirements (``labels.NewRequirement``): the
  key must be a qualified name, every value a label value; ``In``/``NotIn``
  need values, ``Exists``/``DoesNotExist`` none, ``Gt``/``Lt`` exactly one
  integer. Matching is `services.kube.labels`: ``Gt``/``Lt`` parse both the
  value and the node's label with Go's ``strconv.ParseInt``, so a label
  ``"1_0"`` or ``" 5"`` is no number and matches neither.
- ``matchFields`` compare node fields, of which only ``metadata.name`` has a
  value (any other key reads as ``""``); operators ``In``/``NotIn`` with one value.
- `NodeSelector.parse` is ``NewNodeSelector``: any malformed requirement is an
  error, worded as Go's flattened field errors (with their paths).
  `NodeSelector.parse_lazy` is ``NewLazyErrorNodeSelector``: malformed terms
  never match, the others still do.

Also here, for allocation results: the node selector Kubernetes puts on an
allocation from node-local devices and how requirements are merged into it
(k8s.io/dynamic-resource-allocation/structured).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from services.kube.labels import GT_LT_NOT_AN_INTEGER, Requirement, gt_lt_bound
from services.kube.names import is_qualified_name, is_valid_label_value


# Selectors repeat the same keys and values across pods and slices: remember their checks.
@lru_cache(maxsize=4096)
def _key_problems(key: str) -> tuple[str, ...]:
    return tuple(is_qualified_name(key))


@lru_cache(maxsize=4096)
def _value_problems(value: str) -> tuple[str, ...]:
    return tuple(is_valid_label_value(value))


OBJECT_NAME_FIELD = "metadata.name"
LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")


class NodeSelectorError(ValueError):
    """A node selector Kubernetes refuses to parse; ``str()`` is Go's (flattened) error text."""


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the strings of a selector (printable text; quotes and backslashes escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in escaped) + '"'


def _go_strings(values: Sequence[str] | None) -> str:
    """Go's ``%#v`` of a ``[]string``."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(_go_quote(v) for v in values) + "}"


def _strings(raw: Any) -> list[str] | None:
    return None if raw is None else [str(v) for v in raw]


# NodeSelectorOperator -> selection.Operator, as nodeSelectorRequirementsAsSelector maps them.
_SELECTION = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!", "Gt": "gt", "Lt": "lt"}


def _label_requirement(req: Mapping[str, Any], path: str, errors: list[str]) -> Requirement | None:
    """``nodeSelectorRequirementsAsSelector`` for one requirement (``labels.NewRequirement``)."""
    key, op = str(req.get("key", "")), str(req.get("operator", ""))
    values = _strings(req.get("values"))
    if op not in LABEL_OPERATORS:
        supported = ", ".join(_go_quote(o) for o in LABEL_OPERATORS)
        errors.append(f"{path}.operator: Unsupported value: {_go_quote(op)}: supported values: {supported}")
        return None
    found: list[str] = []
    key_problems = _key_problems(key)
    if key_problems:
        found.append(f"{path}.key: Invalid value: {_go_quote(key)}: {'; '.join(key_problems)}")
    listed = values or []
    bound = 0
    if op in ("In", "NotIn") and not listed:
        found.append(
            f"{path}.values: Invalid value: {_go_strings(values)}: "
            "for 'in', 'notin' operators, values set can't be empty"
        )
    elif op in ("Exists", "DoesNotExist") and listed:
        found.append(
            f"{path}.values: Invalid value: {_go_strings(values)}: "
            "values set must be empty for exists and does not exist"
        )
    elif op in ("Gt", "Lt"):
        if len(listed) != 1:
            found.append(
                f"{path}.values: Invalid value: {_go_strings(values)}: "
                "for 'Gt', 'Lt' operators, exactly one value is required"
            )
        bound, refused = gt_lt_bound(listed)
        for i, value in refused:
            found.append(f"{path}.values[{i}]: Invalid value: {_go_quote(value)}: {GT_LT_NOT_AN_INTEGER}")
    for i, value in enumerate(listed):
        value_problems = _value_problems(value)
        if value_problems:
            found.append(f"{path}.values[{i}][{key}]: Invalid value: {_go_quote(value)}: {'; '.join(value_problems)}")
    if found:
        errors.extend(found)
        return None
    return Requirement(key, _SELECTION[op], frozenset(listed), bound)


def _field_requirement(req: Mapping[str, Any], path: str, errors: list[str]) -> Requirement | None:
    """``nodeSelectorRequirementsAsFieldSelector`` for one requirement (the key is not checked)."""
    key, op = str(req.get("key", "")), str(req.get("operator", ""))
    values = _strings(req.get("values"))
    if op not in FIELD_OPERATORS:
        supported = ", ".join(_go_quote(o) for o in FIELD_OPERATORS)
        errors.append(f"{path}.operator: Unsupported value: {_go_quote(op)}: supported values: {supported}")
        return None
    if values is None or len(values) != 1:
        errors.append(f"{path}.values: Invalid value: {_go_strings(values)}: must have one element")
        return None
    return Requirement(key, _SELECTION[op], frozenset(values))


@dataclass(frozen=True, slots=True)
class _Term:
    labels: tuple[Requirement, ...]
    fields: tuple[Requirement, ...]
    errors: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self.errors:
            return False
        for r in self.labels:
            if not r.matches(labels):
                return False
        for r in self.fields:
            value = node_name if r.key == OBJECT_NAME_FIELD else ""
            if (value in r.values) != (r.operator == "in"):
                return False
        return True


def _is_empty(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def _parse_term(term: Mapping[str, Any], path: str) -> _Term:
    """``newNodeSelectorTerm``: label errors hide field errors, as in Go."""
    errors: list[str] = []
    labels: list[Requirement] = []
    for j, req in enumerate(term.get("matchExpressions") or ()):
        parsed = _label_requirement(req, f"{path}.matchExpressions[{j}]", errors)
        if parsed is not None:
            labels.append(parsed)
    if errors:
        return _Term((), (), tuple(errors))
    fields: list[Requirement] = []
    for j, req in enumerate(term.get("matchFields") or ()):
        parsed = _field_requirement(req, f"{path}.matchFields[{j}]", errors)
        if parsed is not None:
            fields.append(parsed)
    return _Term(tuple(labels), tuple(fields), tuple(errors))


def _flatten(errors: Sequence[str]) -> str:
    """``errors.Flatten(errors.NewAggregate(errs)).Error()``."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def node_labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    labels: Mapping[str, str] = (node.get("metadata") or {}).get("labels") or {}
    return labels


def node_name(node: Mapping[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """A parsed ``v1.NodeSelector`` (ORed terms); ``errors`` are those of the terms a lazy parse kept."""

    terms: tuple[_Term, ...]
    errors: tuple[str, ...] = ()

    @classmethod
    def parse_lazy(cls, selector: Mapping[str, Any]) -> NodeSelector:
        """``NewLazyErrorNodeSelector``: malformed terms never match; their errors are kept."""
        terms = tuple(
            _parse_term(term, f"nodeSelectorTerms[{i}]")
            for i, term in enumerate(selector.get("nodeSelectorTerms") or ())
            if not _is_empty(term)
        )
        return cls(terms, tuple(e for t in terms for e in t.errors))

    @classmethod
    def parse(cls, selector: Mapping[str, Any]) -> NodeSelector:
        """``NewNodeSelector``: raises `NodeSelectorError` with all errors of all terms."""
        parsed = cls.parse_lazy(selector)
        if parsed.errors:
            raise NodeSelectorError(_flatten(parsed.errors))
        return parsed

    def matches(self, node: Mapping[str, Any] | None) -> bool:
        """``Match``: whether some term matches the node (a missing node matches nothing)."""
        if node is None:
            return False
        labels, name = node_labels(node), node_name(node)
        return any(t.matches(labels, name) for t in self.terms)


def node_selector_matches(selector: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """Whether ``node`` satisfies ``selector`` (lazily parsed: a malformed term matches nothing)."""
    return NodeSelector.parse_lazy(selector).matches(node)


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """A pod's ``spec.nodeSelector`` AND its required node affinity (``GetRequiredNodeAffinity``)."""

    label_selector: Mapping[str, str] | None
    node_selector: NodeSelector | None

    @classmethod
    def of_pod(cls, pod: Mapping[str, Any]) -> RequiredNodeAffinity:
        spec = pod.get("spec") or {}
        selector = spec.get("nodeSelector")
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        return cls(
            dict(selector) if selector else None,
            NodeSelector.parse_lazy(required) if required is not None else None,
        )

    def matches(self, node: Mapping[str, Any]) -> bool:
        if self.label_selector:
            labels = node_labels(node)
            if any(labels.get(k) != v for k, v in self.label_selector.items()):
                return False
        if self.node_selector is not None:
            return self.node_selector.matches(node)
        return True


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerms:
    """Weighted preferred terms (``NewPreferredSchedulingTerms``); zero weights and empty terms are dropped."""

    terms: tuple[tuple[int, _Term], ...]

    @classmethod
    def parse(cls, terms: Sequence[Mapping[str, Any]]) -> PreferredSchedulingTerms:
        parsed: list[tuple[int, _Term]] = []
        errors: list[str] = []
        for i, term in enumerate(terms):
            weight = int(term.get("weight") or 0)
            preference = term.get("preference") or {}
            if weight == 0 or _is_empty(preference):
                continue
            selector_term = _parse_term(preference, f"[{i}]")
            errors.extend(selector_term.errors)
            parsed.append((weight, selector_term))
        if errors:
            raise NodeSelectorError(_flatten(errors))
        return cls(tuple(parsed))

    def score(self, node: Mapping[str, Any]) -> int:
        labels, name = node_labels(node), node_name(node)
        return sum(weight for weight, term in self.terms if term.matches(labels, name))


# --------------------------------------------------------------------------
# allocation results (k8s.io/dynamic-resource-allocation/structured)


def node_name_selector(name: str) -> dict[str, Any]:
    """The selector Kubernetes puts on allocations from node-local slices."""
    return {"nodeSelectorTerms": [{"matchFields": [{"key": OBJECT_NAME_FIELD, "operator": "In", "values": [name]}]}]}


def requirement_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same key, operator and set of values (``containsNodeSelectorRequirement``)."""
    return (
        a.get("key") == b.get("key")
        and a.get("operator") == b.get("operator")
        and set(a.get("values") or ()) == set(b.get("values") or ())
    )


def merge_requirements(into: list[dict[str, Any]], new: Sequence[Mapping[str, Any]]) -> None:
    """Append each requirement of ``new`` that ``into`` does not contain yet (as a copy)."""
    for req in new:
        if not any(requirement_equal(existing, req) for existing in into):
            copied: dict[str, Any] = {"key": req.get("key"), "operator": req.get("operator")}
            if req.get("values") is not None:
                copied["values"] = list(req["values"])
            into.append(copied)
