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
