"""core/v1 NodeSelector matching, as ``component-helpers/.../nodeaffinity`` does it.

ResourceSlices that are not local to one node say where their devices can be
used with a ``nodeSelector``. The allocator must decide whether a node is
covered (``NodeSelector.Match``): terms are ORed, requirements inside a term
are ANDed, an empty term matches nothing. ``matchExpressions`` compare node
labels (In, NotIn, Exists, DoesNotExist, Gt, Lt); ``matchFields`` compare node
fields, of which only ``metadata.name`` exists (In, NotIn, one value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class NodeSelectorError(ValueError):
    """A node selector that Kubernetes would refuse to parse."""


def _parse_int64(text: str) -> int | None:
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii():
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class _Requirement:
    key: str
    operator: str
    values: frozenset[str]
    number: int = 0

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        value = labels.get(self.key)
        if value is None:
            return False
        parsed = _parse_int64(value)
        if parsed is None:
            return False
        return parsed > self.number if op == "Gt" else parsed < self.number


def _label_requirement(req: Mapping[str, Any], path: str) -> _Requirement:
    key = str(req.get("key", ""))
    op = str(req.get("operator", ""))
    values = [str(v) for v in req.get("values") or ()]
    if op not in _LABEL_OPERATORS:
        supported = ", ".join(f'"{o}"' for o in _LABEL_OPERATORS)
        raise NodeSelectorError(f'{path}.operator: Unsupported value: "{op}": supported values: {supported}')
    if op in ("In", "NotIn") and not values:
        raise NodeSelectorError(
            f"{path}.values: Required value: for 'in', 'notin' operators, values set can't be empty"
        )
    if op in ("Exists", "DoesNotExist") and values:
        raise NodeSelectorError(
            f"{path}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        )
    number = 0
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise NodeSelectorError(
                f"{path}.values: Required value: for 'Gt', 'Lt' operators, exactly one value is required"
            )
        parsed = _parse_int64(values[0])
        if parsed is None:
            raise NodeSelectorError(
                f'{path}.values[0]: Invalid value: "{values[0]}": '
                "for 'Gt', 'Lt' operators, the value must be an integer"
            )
        number = parsed
    return _Requirement(key, op, frozenset(values), number)


def _field_requirement(req: Mapping[str, Any], path: str) -> _Requirement:
    key = str(req.get("key", ""))
    op = str(req.get("operator", ""))
    values = [str(v) for v in req.get("values") or ()]
    if op not in _FIELD_OPERATORS:
        supported = ", ".join(f'"{o}"' for o in _FIELD_OPERATORS)
        raise NodeSelectorError(f'{path}.operator: Unsupported value: "{op}": supported values: {supported}')
    if len(values) != 1:
        rendered = "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"
        raise NodeSelectorError(f"{path}.values: Invalid value: {rendered}: must have one element")
    return _Requirement(key, op, frozenset(values))


@dataclass(frozen=True, slots=True)
class _Term:
    labels: tuple[_Requirement, ...]
    fields: tuple[_Requirement, ...]

    def matches(self, labels: Mapping[str, str], node_fields: Mapping[str, str]) -> bool:
        if not self.labels and not self.fields:
            return False
        if any(not r.matches(labels) for r in self.labels):
            return False
        # Field requirements compare with the node's fields; unknown fields are "".
        for r in self.fields:
            value = node_fields.get(r.key, "")
            if (value in r.values) != (r.operator == "In"):
                return False
        return True


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """A parsed ``core/v1.NodeSelector``."""

    terms: tuple[_Term, ...]

    @classmethod
    def parse(cls, selector: Mapping[str, Any]) -> NodeSelector:
        terms: list[_Term] = []
        errors: list[str] = []
        for i, term in enumerate(selector.get("nodeSelectorTerms") or ()):
            path = f"nodeSelectorTerms[{i}]"
            labels: list[_Requirement] = []
            node_fields: list[_Requirement] = []
            for j, req in enumerate(term.get("matchExpressions") or ()):
                try:
                    labels.append(_label_requirement(req, f"{path}.matchExpressions[{j}]"))
                except NodeSelectorError as err:
                    errors.append(str(err))
            for j, req in enumerate(term.get("matchFields") or ()):
                try:
                    node_fields.append(_field_requirement(req, f"{path}.matchFields[{j}]"))
                except NodeSelectorError as err:
                    errors.append(str(err))
            terms.append(_Term(tuple(labels), tuple(node_fields)))
        if errors:
            raise NodeSelectorError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
        return cls(tuple(terms))

    def matches(self, node: Mapping[str, Any] | None) -> bool:
        if node is None:
            return False
        metadata = node.get("metadata") or {}
        labels = metadata.get("labels") or {}
        node_fields = {"metadata.name": metadata.get("name", "")}
        return any(term.matches(labels, node_fields) for term in self.terms)


def requirement_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same key, operator and set of values (``containsNodeSelectorRequirement``)."""
    return (
        a.get("key") == b.get("key")
        and a.get("operator") == b.get("operator")
        and set(a.get("values") or ()) == set(b.get("values") or ())
    )


def node_name_selector(node_name: str) -> dict[str, Any]:
    """The selector Kubernetes puts on allocations from node-local slices."""
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def merge_requirements(into: list[dict[str, Any]], new: Sequence[Mapping[str, Any]]) -> None:
    for req in new:
        if not any(requirement_equal(existing, req) for existing in into):
            copied: dict[str, Any] = {"key": req.get("key"), "operator": req.get("operator")}
            if req.get("values") is not None:
                copied["values"] = list(req["values"])
            into.append(copied)
