"""Label requirements (k8s.io/apimachinery/pkg/labels, 1.31): how one requirement matches a label set.

The one matcher behind list ``labelSelector`` queries (`services.api.machinery.selectors`)
and node selectors' ``matchExpressions`` (`services.kube.node_selectors`).
Operators use ``selection.Operator``'s spelling: ``in``, ``notin``, ``=``,
``==``, ``!=``, ``exists``, ``!`` (does not exist), ``gt``, ``lt``.

``gt``/``lt`` parse the label with Go's ``strconv.ParseInt``
(`services.kube.strconv`); settled with Go: ``labels.Parse("n>5")`` matches
``n=7`` and ``n=+10`` but not ``n=1_0``, and ``n>1_0`` does not parse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from services.kube.strconv import parse_int64

GT_LT_NOT_AN_INTEGER = "for 'Gt', 'Lt' operators, the value must be an integer"


@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement; ``bound`` is the parsed value of ``gt``/``lt``."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()
    bound: int = 0

    def matches(self, labels: Mapping[str, str]) -> bool:
        """``Requirement.Matches``."""
        op = self.operator
        if op in ("in", "=", "=="):
            return self.key in labels and labels[self.key] in self.values
        if op in ("notin", "!="):
            return self.key not in labels or labels[self.key] not in self.values
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        if op in ("gt", "lt"):
            value = labels.get(self.key)
            number = None if value is None else parse_int64(value)
            if number is None:
                return False
            return number > self.bound if op == "gt" else number < self.bound
        return False


def gt_lt_bound(values: list[str]) -> tuple[int, list[tuple[int, str]]]:
    """The bound of ``gt``/``lt`` and the (index, value) of each value ``ParseInt`` refuses."""
    bound, refused = 0, []
    for i, value in enumerate(values):
        number = parse_int64(value)
        if number is None:
            refused.append((i, value))
        else:
            bound = number
    return bound, refused


def format_labels(labels: Mapping[str, str]) -> str:
    """``labels.FormatLabels``: ``k=v`` pairs sorted by key, comma-separated; ``<none>`` when empty."""
    text = ",".join(f"{key}={labels[key]}" for key in sorted(labels))
    return text or "<none>"


_SELECTOR_OPERATORS = {"In": "in", "NotIn": "notin"}


def format_label_selector(selector: object) -> str:
    """``metav1.FormatLabelSelector`` of a wire LabelSelector: requirements sorted by key; ``<none>`` when empty.

    ``matchLabels`` print as ``k=v``, ``In``/``NotIn`` as ``k in (a,b)`` with sorted
    values, ``Exists`` as ``k``, ``DoesNotExist`` as ``!k``; an operator Kubernetes
    would refuse prints ``<error>``.
    """
    if not isinstance(selector, Mapping):
        return "<none>"
    terms: list[tuple[str, str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        terms.append((str(key), f"{key}={value}"))
    for expr in selector.get("matchExpressions") or []:
        key, op = str(expr.get("key") or ""), expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        if op in _SELECTOR_OPERATORS:
            terms.append((key, f"{key} {_SELECTOR_OPERATORS[op]} ({values})"))
        elif op == "Exists":
            terms.append((key, key))
        elif op == "DoesNotExist":
            terms.append((key, f"!{key}"))
        else:
            return "<error>"
    text = ",".join(term for _, term in sorted(terms, key=lambda t: t[0]))
    return text or "<none>"
