"""Go's ``strconv.ParseInt(s, 10, 64)``, the integer parser Kubernetes uses on text.

Label requirements ``Gt``/``Lt`` (k8s.io/apimachinery/pkg/labels) and the
exponent of a quantity parse numbers with it. Python's ``int()`` accepts more
(``"1_0"``, ``" 5"``, ``"5 "``, non-ASCII digits), so a check built on it would
let a label ``"1_0"`` satisfy ``Gt 5`` where Kubernetes does not. Settled with
Go 1.26: ``"+5"``, ``"-5"`` and ``"010"`` parse; ``"1_0"``, ``" 5"``, ``"5 "``,
``"0x10"``, ``"+"`` and ``""`` do not; the range is int64.
"""

from __future__ import annotations

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_DIGITS = frozenset("0123456789")


def parse_int64(text: str) -> int | None:
    """The int64 ``strconv.ParseInt(text, 10, 64)`` returns, or None where it returns an error."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not _DIGITS.issuperset(body):
        return None
    value = int(text)
    return value if INT64_MIN <= value <= INT64_MAX else None
