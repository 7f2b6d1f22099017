"""Kubernetes resource quantities (``100m``, ``1Gi``, ``2e3``) as exact numbers.

The scheduler compares cpu in millicores and everything else in whole units,
rounding up exactly as ``resource.Quantity.MilliValue()``/``Value()`` do, so
that a pod requesting ``1m`` never fits into zero free cpu. Parsing uses
``Fraction`` so no float rounding can change a fit decision.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY_RE = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")
_EXPONENT_RE = re.compile(r"^[eE]([+-]?[0-9]+)$")


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


Quantity = str | int | float | Fraction


@lru_cache(maxsize=4096)
def parse_quantity(text: Quantity) -> Fraction:
    """The exact value of a quantity; numbers are accepted as they are."""
    if isinstance(text, Fraction):
        return text
    if isinstance(text, bool):
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(text)
    value = text.strip()
    match = _QUANTITY_RE.match(value)
    if not match:
        raise QuantityError(
            f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}"
        )
    number, suffix = match.group(1), match.group(2)
    base = Fraction(number)
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    if suffix in _DECIMAL:
        return base * _DECIMAL[suffix]
    exponent = _EXPONENT_RE.match(suffix)
    if exponent:
        return base * Fraction(10) ** int(exponent.group(1))
    raise QuantityError(f"unable to parse quantity's suffix: {text!r}")


def milli_value(text: Quantity) -> int:
    """Millis, rounded up (``Quantity.MilliValue``)."""
    return math.ceil(parse_quantity(text) * 1000)


def value(text: Quantity) -> int:
    """Whole units, rounded up (``Quantity.Value``)."""
    return math.ceil(parse_quantity(text))
