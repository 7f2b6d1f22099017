"""Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), enough for validation.

Validation compares requests with limits, checks signs and integrality, and
quotes quantities in messages in their canonical form (``1Gi``, ``500m``,
``1500``), so this module parses the wire form exactly as ``ParseQuantity``
accepts it and prints it as ``Quantity.String()`` does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

_NUMBER_RE = re.compile(r"([+-]?)0*([0-9]*)(?:\.([0-9]*))?")
_SUFFIX_RE = re.compile(r"[eEinumkKMGTP]*[-+]?[0-9]*")

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXP = {v // 10: k for k, v in _BINARY_SUFFIXES.items()}
_NANO = Fraction(1, 10**9)
_MAX_VALUE = Fraction(2**63 - 1)
_MAX_DIGITS = 40  # beyond this decimal exponent the cap or the nano rounding decides
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_EXPONENT_RE = re.compile(r"[-+]?[0-9]+")

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"


@dataclass(frozen=True, slots=True)
class Quantity:
    value: Fraction
    format: str

    def __str__(self) -> str:
        return _canonical(self.value, self.format)

    @property
    def milli_value(self) -> int:
        """Go's ``MilliValue``: rounded up (away from zero) to a whole milli-unit."""
        scaled = self.value * 1000
        return math.ceil(scaled) if scaled >= 0 else math.floor(scaled)

    @property
    def int_value(self) -> int:
        """Go's ``Value``: rounded up (away from zero) to a whole unit."""
        return math.ceil(self.value) if self.value >= 0 else math.floor(self.value)


def parse_quantity(raw: Any) -> Quantity | None:
    """The quantity, or None when the wire value is not one (JSON numbers are accepted)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        raw = str(raw)
    elif isinstance(raw, float):
        raw = repr(raw) if math.isfinite(raw) else ""
    if not isinstance(raw, str):
        return None
    return _parse(raw.strip())


@lru_cache(maxsize=4096)
def _parse(text: str) -> Quantity | None:
    if not text:
        return None
    number = _NUMBER_RE.match(text)
    if number is None:  # pragma: no cover - the pattern matches the empty prefix
        return None
    rest = text[number.end() :]
    if _SUFFIX_RE.fullmatch(rest) is None:
        return None
    sign, whole, frac = number.group(1), number.group(2) or "0", number.group(3) or ""
    mantissa = Fraction(int(whole + frac), 10 ** len(frac))
    if rest in _DECIMAL_SUFFIXES:
        exponent, fmt = _DECIMAL_SUFFIXES[rest], DECIMAL_SI
    elif rest in _BINARY_SUFFIXES:
        exponent, fmt = 0, BINARY_SI
        mantissa *= 2 ** _BINARY_SUFFIXES[rest]
    elif rest[:1] in ("e", "E") and _EXPONENT_RE.fullmatch(rest[1:]):
        exponent, fmt = int(rest[1:]), DECIMAL_EXPONENT
        if not _INT32_MIN <= exponent <= _INT32_MAX:
            return None
    else:
        return None
    if mantissa == 0:
        value = Fraction(0)
    elif exponent > _MAX_DIGITS:
        value = _MAX_VALUE
    elif exponent < -_MAX_DIGITS:
        value = _NANO
    else:
        value = mantissa * Fraction(10) ** exponent
    # Values finer than nano units are rounded up to the next nano unit.
    if (value / _NANO).denominator != 1:
        value = math.ceil(value / _NANO) * _NANO
    value = min(value, _MAX_VALUE)  # Kubernetes caps the magnitude at 2^63-1
    if sign == "-":
        value = -value
    if fmt == BINARY_SI and 0 < abs(value) < 1:
        fmt = DECIMAL_SI
    return Quantity(value, fmt)


def _canonical(value: Fraction, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == BINARY_SI and (-1024 < value < 1024 or value.denominator != 1):
        fmt = DECIMAL_SI
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if fmt == BINARY_SI:
        number, exp = magnitude.numerator, 0
        while number % 1024 == 0 and exp < 6:
            number //= 1024
            exp += 1
        return f"{sign}{number}{_BINARY_BY_EXP.get(exp, '')}"
    # Decimal: an integer mantissa without trailing zeros, exponent a multiple of three.
    exp = 0
    while magnitude.denominator != 1:
        magnitude *= 10
        exp -= 1
    number = magnitude.numerator
    while number % 10 == 0:
        number //= 10
        exp += 1
    shift = exp % 3
    number *= 10**shift
    exp -= shift
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{number}" + (f"e{exp}" if exp else "")
    suffix = _DECIMAL_BY_EXP.get(exp)
    if suffix is None:
        return f"{sign}{number}e{exp}"
    return f"{sign}{number}{suffix}"
