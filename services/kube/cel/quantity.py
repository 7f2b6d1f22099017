"""Kubernetes resource quantities (``resource.Quantity``) as exact numbers.

The CEL selector library compares device capacities (``80Gi``) with literals
(``quantity("40Gi")``). Kubernetes parses quantities with
``k8s.io/apimachinery/pkg/api/resource.ParseQuantity``: a decimal number, an
optional SI / binary-SI suffix or a decimal exponent, rounded up to nano
precision. This module reproduces that parser, its error messages and the
arithmetic the CEL quantity library offers, on ``fractions.Fraction`` so that
comparisons are exact.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
NUMERIC = "unable to parse numeric part of quantity"
SUFFIX = "unable to parse quantity's suffix"

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_NANO = Fraction(1, 10**9)
_MAX_BINARY = Fraction(2**63 - 1)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# Beyond this decimal exponent a value is not representable in any useful way;
# Kubernetes truncates the exponent to int32, we refuse it instead of
# building astronomically large integers.
_MAX_EXPONENT = 1000


class QuantityError(ValueError):
    """A string is not a valid Kubernetes quantity."""


def _split(text: str) -> tuple[bool, str, str, str]:
    """Split like ``parseQuantityString``: sign, numerator, denominator, suffix."""
    end = len(text)
    pos = 0
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:end]


def _interpret(suffix: str) -> tuple[int, int]:
    """Return (base, exponent) for a suffix, as ``quantitySuffixer.interpret``."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix]
    if len(suffix) > 1 and suffix[0] in "eE":
        rest = suffix[1:]
        digits = rest[1:] if rest[0] in "+-" else rest
        if digits and all(c in _DIGITS for c in digits):
            exponent = int(rest)
            if abs(exponent) > _MAX_EXPONENT:
                raise QuantityError(NUMERIC)
            return 10, exponent
    raise QuantityError(SUFFIX)


@lru_cache(maxsize=8192)
def parse_quantity(text: str) -> Fraction:
    """The exact value of a quantity string, or `QuantityError` with Kubernetes' message."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Fraction(0)
    positive, num, denom, suffix = _split(text)
    base, exponent = _interpret(suffix)
    value = Fraction(int(num + denom), 10 ** len(denom)) if denom else Fraction(int(num))
    value = value * (Fraction(10) ** exponent if base == 10 else 2**exponent)
    if value:
        # Non-zero values are rounded up (away from zero) to nano precision.
        scaled = value / _NANO
        if scaled.denominator != 1:
            value = Fraction(-(-scaled.numerator // scaled.denominator)) * _NANO
    if base == 2 and value > _MAX_BINARY:
        value = _MAX_BINARY
    return value if positive else -value


def is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def compare(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def sign(value: Fraction) -> int:
    return (value > 0) - (value < 0)


def as_int64(value: Fraction) -> int | None:
    """The value as int64, None when it is not an integer or overflows (``AsInt64``)."""
    if value.denominator != 1 or not _INT64_MIN <= value.numerator <= _INT64_MAX:
        return None
    return value.numerator


def to_approximate_float(value: Fraction) -> float:
    return float(value)
