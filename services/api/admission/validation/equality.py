"""Semantic equality of wire-form values, as ``apiequality.Semantic.DeepEqual`` sees them.

Kubernetes compares decoded Go structs, where an omitted field, ``null`` and
the zero value are the same thing and an empty slice or map equals a nil one.
Two wire dicts that decode to the same struct must therefore compare equal
even when one spells out ``"count": 0`` or ``"config": []`` and the other
omits them. Immutability checks (claim spec, allocation, pod spec) use this.

Known difference: Go compares quantities by value (``1Gi`` equals
``1024Mi``); here they compare as strings.
"""

from __future__ import annotations

from typing import Any


def is_zero(value: Any) -> bool:
    """Whether a wire value decodes to a Go zero value (None, "", 0, false, [], {})."""
    return value is None or value == "" or value is False or value == 0 or value == [] or value == {}


def semantic_equal(a: Any, b: Any) -> bool:
    if a == b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a.keys() | b.keys():
            if not semantic_equal(a.get(key), b.get(key)):
                return False
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(semantic_equal(x, y) for x, y in zip(a, b, strict=True))
    return is_zero(a) and is_zero(b)
