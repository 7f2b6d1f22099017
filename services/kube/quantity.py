"""``resource.Quantity`` (k8s.io/apimachinery/pkg/api/resource, 1.31): parse, compare, print.

The one parser of quantities (``100m``, ``1Gi``, ``2e3``) in draplane; the
scheduler, CEL, validation, the strict JSON decoder and the driver all use it.
Values are ``fractions.Fraction`` so no float rounding can change a decision.

Two entry points, because Go has two:

- `parse_quantity` is ``ParseQuantity``: the text exactly as given, no
  whitespace allowed (CEL's ``quantity()`` and ``isQuantity()`` call it).
- `parse_wire_quantity` is ``Quantity.UnmarshalJSON``: a JSON string or number
  whose text is trimmed with ``strings.TrimSpace`` first, so ``" 1Gi"`` is
  accepted on the wire (validation, the decoder, the scheduler and every
  component reading stored objects).

Like Go, a non-zero value finer than a nano unit is rounded up (away from
zero) to the next nano unit (``1.5n`` is ``2n``), a binary-SI value is capped at
2^63-1, and a decimal exponent is truncated to int32. The one deliberate
difference: a decimal exponent beyond `MAX_EXPONENT` is refused with Go's
numeric error instead of building a number with that many digits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from services.kube.strconv import INT64_MAX, INT64_MIN, parse_int64

FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
"""``ErrFormatWrong``."""
NUMERIC = "unable to parse numeric part of quantity"
"""``ErrNumeric``."""
SUFFIX = "unable to parse quantity's suffix"
"""``ErrSuffix``."""

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

MAX_EXPONENT = 1000
"""Largest decimal exponent draplane builds (Go has no bound below int32)."""

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = {0: "", **{v // 10: k for k, v in _BINARY_SUFFIXES.items()}}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_NANO = Fraction(1, 10**9)
_MAX_BINARY = Fraction(2**63 - 1)
# What strings.TrimSpace removes from the raw JSON text: unicode.IsSpace less the ASCII
# controls, which a JSON string carries only escaped (Go trims before unescaping, so
# "\\t1" stays invalid). str.strip would also remove U+001C..U+001F.
_WIRE_SPACE = (
    " \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_WIRE_SPACE_CLASS = "[" + _WIRE_SPACE + "]"
WIRE_PATTERN = (
    rf"^{_WIRE_SPACE_CLASS}*(?=[^{_WIRE_SPACE}])[+-]?[0-9]*(?:\.[0-9]*)?"
    rf"(?:[eE](?:-0*[0-9]{{1,18}}|\+?0*[0-9]{{1,3}})|[KMGTPE]i|[numkMGTPE])?{_WIRE_SPACE_CLASS}*\Z"
)
"""A regular expression for the fast path of JSON decoding: every match is a wire quantity.

It accepts what `parse_wire_quantity` accepts, except decimal exponents of
more than three digits (beyond leading zeros), which the fast path leaves to
the exact parser. As in Go, a bare sign, "." or a bare suffix ("Ki") is zero.
"""


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity; ``str()`` is Go's error text."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A parsed quantity: its exact value and the format it prints in."""

    value: Fraction
    format: str
    text: str | None = field(default=None, compare=False)
    """The parsed text when Go keeps it as the string form (it was already canonical enough)."""

    def __str__(self) -> str:
        return self.text if self.text is not None else canonical(self.value, fmt=self.format)

    @property
    def milli_value(self) -> int:
        """``MilliValue``: rounded up (away from zero) to a whole milli-unit."""
        return _away_from_zero(self.value * 1000)

    @property
    def int_value(self) -> int:
        """``Value``: rounded up (away from zero) to a whole unit."""
        return _away_from_zero(self.value)


def _away_from_zero(value: Fraction) -> int:
    return math.ceil(value) if value >= 0 else math.floor(value)


def _split(text: str) -> tuple[bool, str, str, str]:
    """``parseQuantityString``: sign, numerator digits, fraction digits, suffix."""
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
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """``quantitySuffixer.interpret``: (base, exponent, format)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        parsed = parse_int64(suffix[1:])
        if parsed is not None:
            exponent = (parsed + 2**31) % 2**32 - 2**31  # Go's int32(parsed)
            return 10, exponent, DECIMAL_EXPONENT
    raise QuantityError(SUFFIX)


@lru_cache(maxsize=8192)
def parse_quantity(text: str) -> Quantity:
    """``resource.ParseQuantity``: the quantity, or `QuantityError` with Go's message."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Quantity(Fraction(0), DECIMAL_SI)
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    mantissa = int(num + denom)
    if mantissa == 0:
        return Quantity(Fraction(0), fmt)
    kept = text if _keeps_text(num, denom, base=base, exponent=exponent) else None
    if base == 2:
        value = Fraction(mantissa, 10 ** len(denom)) * 2**exponent
    else:
        exponent -= len(denom)
        if exponent > MAX_EXPONENT:
            raise QuantityError(NUMERIC)
        if exponent < -9 and -exponent > len(str(mantissa)) + 9:
            value = _NANO  # far below a nano unit: rounds up to one
        else:
            value = mantissa * Fraction(10) ** exponent
    scaled = value / _NANO
    if scaled.denominator != 1:
        value = math.ceil(scaled) * _NANO
    if fmt == BINARY_SI:
        value = min(value, _MAX_BINARY)
        if value < 1:
            fmt = DECIMAL_SI
    return Quantity(value if positive else -value, fmt, kept)


def _keeps_text(num: str, denom: str, *, base: int, exponent: int) -> bool:
    """Whether ``ParseQuantity``'s int64 fast path keeps the text as the string form."""
    if base == 2:
        # Few enough digits for int64, no fraction, and not a multiple of 8 (so not re-scalable).
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        return not denom and precision >= 0 and int(num) & 0x07 != 0
    if len(num) + len(denom) > 18:
        return False
    scale = exponent - len(denom)
    shifted = num + denom
    return scale >= -9 and scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def parse_wire_quantity(raw: object) -> Quantity:
    """``Quantity.UnmarshalJSON``: a JSON string (trimmed as ``strings.TrimSpace``) or number.

    A JSON number arrives as ``int`` or ``float``; Go parses its literal text,
    which for a float is Python's shortest ``repr``. Go trims the raw JSON
    text, before unescaping: a decoded string cannot tell an escaped
    ``\u00a0`` from a raw one, so both are trimmed here (an escaped tab or
    newline, the only way JSON carries those, is not).
    """
    if isinstance(raw, str):
        return parse_quantity(raw.strip(_WIRE_SPACE))
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise QuantityError(FORMAT_WRONG)
    if isinstance(raw, float) and not math.isfinite(raw):
        raise QuantityError(FORMAT_WRONG)
    return parse_quantity(repr(raw) if isinstance(raw, float) else str(raw))


def wire_quantity(raw: object) -> Quantity | None:
    """`parse_wire_quantity`, or None when ``raw`` is not a quantity."""
    try:
        return parse_wire_quantity(raw)
    except QuantityError:
        return None


def is_quantity(text: str) -> bool:
    """Whether ``ParseQuantity`` accepts ``text`` (CEL's ``isQuantity``)."""
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def quantity_error(raw: object) -> str | None:
    """Go's error for a wire quantity (`parse_wire_quantity`), or None when it is one."""
    try:
        parse_wire_quantity(raw)
    except QuantityError as err:
        return str(err)
    return None


Amount = str | int | float | Fraction
"""A quantity as a component meets it: wire text, a JSON number, or an exact sum."""


@lru_cache(maxsize=8192, typed=True)
def amount_value(amount: Amount) -> Fraction:
    """The exact value of a wire quantity or an already exact `Fraction`."""
    if isinstance(amount, Fraction):
        return amount
    return parse_wire_quantity(amount).value


@lru_cache(maxsize=8192, typed=True)
def milli_value(amount: Amount) -> int:
    """``MilliValue`` of a wire quantity or exact value: millis, rounded up."""
    return _away_from_zero(amount_value(amount) * 1000)


@lru_cache(maxsize=8192, typed=True)
def value(amount: Amount) -> int:
    """``Value`` of a wire quantity or exact value: whole units, rounded up."""
    return _away_from_zero(amount_value(amount))


def compare(a: Fraction, b: Fraction) -> int:
    """``Quantity.Cmp``: -1, 0 or 1."""
    return (a > b) - (a < b)


def sign(v: Fraction) -> int:
    """``Quantity.Sign``."""
    return (v > 0) - (v < 0)


def as_int64(v: Fraction) -> int | None:
    """``AsInt64``: the value as int64, None when it is not an integer or overflows."""
    if v.denominator != 1 or not INT64_MIN <= v.numerator <= INT64_MAX:
        return None
    return v.numerator


def canonical(v: Fraction, *, fmt: str) -> str:
    """``Quantity.String()`` of a value in a format (``CanonicalizeBytes``)."""
    if v == 0:
        return "0"
    if fmt == BINARY_SI and (-1024 < v < 1024 or v.denominator != 1):
        fmt = DECIMAL_SI
    sign_text = "-" if v < 0 else ""
    magnitude = abs(v)
    if fmt == BINARY_SI:
        number, power = magnitude.numerator, 0
        while number % 1024 == 0 and power < 6:
            number //= 1024
            power += 1
        return f"{sign_text}{number}{_BINARY_BY_POWER[power]}"
    # Decimal: an integer mantissa without trailing zeros, the exponent a multiple of three.
    exponent = 0
    while magnitude.denominator != 1:
        magnitude *= 10
        exponent -= 1
    number = magnitude.numerator
    while number % 10 == 0:
        number //= 10
        exponent += 1
    shift = exponent % 3
    number *= 10**shift
    exponent -= shift
    if fmt == DECIMAL_EXPONENT:
        return f"{sign_text}{number}" + (f"e{exponent}" if exponent else "")
    # Go has no suffix beyond E (10^18) and prints none: 1000E is "1" (settled with Go, apimachinery 0.31.3).
    return f"{sign_text}{number}{_DECIMAL_BY_EXPONENT.get(exponent, '')}"
