"""Node selectors and node affinity, matched as ``component-helpers/scheduling/corev1/nodeaffinity``.

Used by NodeAffinity (``spec.nodeSelector`` plus required and preferred node
affinity) and by DynamicResources (the ``nodeSelector`` of an allocated claim
and of a classic DeviceClass). Terms are ORed, requirements inside a term are
ANDed; an empty term matches nothing. Node affinity tolerates unparsable terms
by skipping them (kube's "lazy error" selector), while ``NodeSelector.parse``
is strict, as ``nodeaffinity.NewNodeSelector`` is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OBJECT_NAME_FIELD = "metadata.name"


class SelectorParseError(ValueError):
    """A node selector requirement is malformed."""


_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_NAME_PART_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _validate_key(key: str) -> None:
    """A label key is a qualified name: ``[prefix/]name`` (labels.NewRequirement validates it)."""
    prefix, _, name = key.rpartition("/")
    if not name or len(name) > 63 or not _NAME_PART_RE.match(name):
        raise SelectorParseError(f"key: Invalid value: {key!r}: name part must be a valid label name")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix)):
        raise SelectorParseError(f"key: Invalid value: {key!r}: prefix part must be a DNS-1123 subdomain")


def _validate_value(value: str) -> None:
    if len(value) > 63 or not _LABEL_VALUE_RE.match(value):
        raise SelectorParseError(f"values: Invalid value: {value!r}: a valid label must be an empty string or "
                                 "consist of alphanumeric characters, '-', '_' or '.'")


def _int64(text: str) -> int | None:
    try:
        return int(text, 10)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class _Requirement:
    key: str
    operator: str
    values: tuple[str, ...]
    bound: int | None = None

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        present = self.key in labels
        if op == "In":
            return present and labels[self.key] in self.values
        if op == "NotIn":
            return not present or labels[self.key] not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if not present or self.bound is None:
            return False
        actual = _int64(labels[self.key])
        if actual is None:
            return False
        return actual > self.bound if op == "Gt" else actual < self.bound


def _parse_expression(expr: Mapping[str, Any]) -> _Requirement:
    key = str(expr.get("key", ""))
    op = str(expr.get("operator", ""))
    values = tuple(str(v) for v in expr.get("values") or ())
    _validate_key(key)
    if op in ("In", "NotIn"):
        if not values:
            raise SelectorParseError(
                "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
            )
        for v in values:
            _validate_value(v)
        return _Requirement(key, op, values)
    if op in ("Exists", "DoesNotExist"):
        if values:
            raise SelectorParseError("values: Invalid value: values set must be empty for exists and does not exist")
        return _Requirement(key, op, ())
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise SelectorParseError("values: Invalid value: for 'Gt', 'Lt' operators, exactly one value is required")
        bound = _int64(values[0])
        if bound is None:
            raise SelectorParseError("values[0]: Invalid value: for 'Gt', 'Lt' operators, the value must be an integer")
        return _Requirement(key, op, values, bound)
    raise SelectorParseError(f"operator: Invalid value: {op!r}: not a valid selector operator")


def _parse_field(expr: Mapping[str, Any]) -> _Requirement:
    key = str(expr.get("key", ""))
    op = str(expr.get("operator", ""))
    values = tuple(str(v) for v in expr.get("values") or ())
    if key != OBJECT_NAME_FIELD:
        raise SelectorParseError(f"key: Invalid value: {key!r}: not a valid field selector key")
    if len(values) != 1:
        raise SelectorParseError("values: Invalid value: must have one element")
    if op not in ("In", "NotIn"):
        raise SelectorParseError(f"operator: Invalid value: {op!r}: not a valid selector operator")
    return _Requirement(key, op, values)


@dataclass(frozen=True, slots=True)
class _Term:
    expressions: tuple[_Requirement, ...]
    fields: tuple[_Requirement, ...]

    def matches(self, labels: Mapping[str, str], fields: Mapping[str, str]) -> bool:
        if not self.expressions and not self.fields:
            return False
        if not all(r.matches(labels) for r in self.expressions):
            return False
        return all(r.matches(fields) for r in self.fields)


def _parse_term(term: Mapping[str, Any]) -> _Term | None:
    exprs = term.get("matchExpressions") or ()
    flds = term.get("matchFields") or ()
    if not exprs and not flds:
        return None
    return _Term(tuple(_parse_expression(e) for e in exprs), tuple(_parse_field(f) for f in flds))


def node_labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def node_fields(node: Mapping[str, Any]) -> Mapping[str, str]:
    return {OBJECT_NAME_FIELD: str((node.get("metadata") or {}).get("name", ""))}


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """A parsed ``v1.NodeSelector`` (ORed terms)."""

    terms: tuple[_Term, ...]
    errors: tuple[str, ...] = ()

    @classmethod
    def parse(cls, selector: Mapping[str, Any]) -> NodeSelector:
        """Strict parse: any malformed term is an error."""
        terms = []
        for term in selector.get("nodeSelectorTerms") or ():
            parsed = _parse_term(term)
            if parsed is not None:
                terms.append(parsed)
        return cls(tuple(terms))

    @classmethod
    def parse_lazy(cls, selector: Mapping[str, Any]) -> NodeSelector:
        """Lenient parse: malformed terms are dropped and their errors kept."""
        terms: list[_Term] = []
        errors: list[str] = []
        for term in selector.get("nodeSelectorTerms") or ():
            try:
                parsed = _parse_term(term)
            except SelectorParseError as err:
                errors.append(str(err))
                continue
            if parsed is not None:
                terms.append(parsed)
        return cls(tuple(terms), tuple(errors))

    def matches(self, node: Mapping[str, Any]) -> bool:
        labels = node_labels(node)
        fields = node_fields(node)
        return any(t.matches(labels, fields) for t in self.terms)


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """``spec.nodeSelector`` AND required node affinity of a pod."""

    label_selector: Mapping[str, str] | None
    node_selector: NodeSelector | None

    @classmethod
    def of_pod(cls, pod: Mapping[str, Any]) -> RequiredNodeAffinity:
        spec = pod.get("spec") or {}
        selector = spec.get("nodeSelector")
        required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                    .get("requiredDuringSchedulingIgnoredDuringExecution"))
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
    terms: tuple[tuple[int, _Term], ...]

    @classmethod
    def parse(cls, terms: Sequence[Mapping[str, Any]]) -> PreferredSchedulingTerms:
        parsed: list[tuple[int, _Term]] = []
        for term in terms:
            weight = int(term.get("weight") or 0)
            if weight == 0:
                continue
            selector_term = _parse_term(term.get("preference") or {})
            if selector_term is not None:
                parsed.append((weight, selector_term))
        return cls(tuple(parsed))

    def score(self, node: Mapping[str, Any]) -> int:
        labels = node_labels(node)
        fields = node_fields(node)
        return sum(weight for weight, term in self.terms if term.matches(labels, fields))
