"""Field errors with Kubernetes' wording (k8s.io/apimachinery/pkg/util/validation/field, 1.31).

A `FieldError` renders exactly as Kubernetes renders ``field.Error``:
``spec.devices.requests[0].name: Required value`` or
``metadata.name: Invalid value: "Foo": a lowercase RFC 1123 subdomain ...``.

Bad values are printed the way Go's ``ErrorBody`` prints them: strings with
``%q`` (Go quoting, not JSON quoting), integers and booleans bare, ``null``
for nil, and string slices as ``[]string{"a", "b"}``. Go prints other
structured values with ``%#v`` (type names and pointer addresses), which has
no faithful equivalent for wire-form dicts; those are rendered as JSON.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any

import orjson


class ErrorType(Enum):
    NOT_FOUND = ("Not found", "FieldValueNotFound")
    REQUIRED = ("Required value", "FieldValueRequired")
    DUPLICATE = ("Duplicate value", "FieldValueDuplicate")
    INVALID = ("Invalid value", "FieldValueInvalid")
    NOT_SUPPORTED = ("Unsupported value", "FieldValueNotSupported")
    FORBIDDEN = ("Forbidden", "FieldValueForbidden")
    TOO_LONG = ("Too long", "FieldValueTooLong")
    TOO_MANY = ("Too many", "FieldValueTooMany")
    INTERNAL = ("Internal error", "InternalError")
    TYPE_INVALID = ("Invalid value", "FieldValueTypeInvalid")

    @property
    def text(self) -> str:
        return self.value[0]

    @property
    def reason(self) -> str:
        return self.value[1]


class Verbatim(str):
    """A bad value printed as-is, like a Go value whose type implements ``fmt.Stringer``.

    Example: a ``metav1.Time`` prints as ``2024-01-02 03:04:05 +0000 UTC``
    without quotes.
    """

    __slots__ = ()


class _Omit:
    """Marker for "no bad value" (Go's ``omitValue``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<omitted>"


OMIT: Any = _Omit()
_BODY_ONLY = frozenset({ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL})


@dataclass(frozen=True, slots=True)
class FieldError:
    type: ErrorType
    field: str
    bad_value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """The message without the field path, as used in Status causes (Go's ``ErrorBody``)."""
        if self.type in _BODY_ONLY or self.bad_value is OMIT:
            text = self.type.text
        else:
            text = f"{self.type.text}: {format_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict[str, str]:
        return {"reason": self.type.reason, "message": self.body(), "field": self.field}


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(text: str) -> str:
    """Quote like Go's ``strconv.Quote`` (``%q``): printable Unicode stays, the rest is escaped."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        esc = _GO_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(ch)
        else:
            code = ord(ch)
            if 0xD800 <= code <= 0xDFFF:
                out.append("\\ufffd")  # Go sees an invalid UTF-8 sequence
            elif code < 0x20 or code == 0x7F:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_float(value: float) -> str:
    """Format like Go's ``%v`` for a float64: shortest digits, exponent form when exp < -4 or >= 6."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    all_digits = "".join(map(str, digit_tuple))
    point = len(all_digits) + exponent  # decimal point position relative to the digits
    digits = all_digits.lstrip("0")
    point -= len(all_digits) - len(digits)
    digits = digits.rstrip("0")
    exp10 = point - 1
    prefix = "-" if sign else ""
    if exp10 < -4 or exp10 >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'+' if exp10 >= 0 else '-'}{abs(exp10):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{prefix}{digits}{'0' * (point - len(digits))}"
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def format_value(value: Any) -> str:
    """Render a bad value the way Go's ``field.Error.ErrorBody`` does."""
    if isinstance(value, Verbatim):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, field, detail=detail)


def invalid(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(ErrorType.INVALID, field, value, detail)


def type_invalid(field: str, value: Any, detail: str = "") -> FieldError:
    """Rendered like `invalid` but with reason ``FieldValueTypeInvalid``."""
    return FieldError(ErrorType.TYPE_INVALID, field, value, detail)


def not_supported(field: str, value: Any, valid: list[str]) -> FieldError:
    """``Unsupported value: "x": supported values: "a", "b"`` (values in the order given)."""
    detail = "supported values: " + ", ".join(go_quote(str(v)) for v in valid) if valid else ""
    return FieldError(ErrorType.NOT_SUPPORTED, field, value, detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, field, value)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, field, detail=detail)


def too_long(field: str, value: Any, max_length: int) -> FieldError:
    """Go's ``field.TooLong``: ``Too long: must have at most N bytes`` (the value is never shown)."""
    return FieldError(ErrorType.TOO_LONG, field, value, f"must have at most {max_length} bytes")


def too_long_bytes(field: str, max_length: int) -> FieldError:
    """apimachinery 0.37's ``field.TooLong``: ``Too long: may not be more than N bytes`` (1.31's is `too_long`)."""
    if max_length < 0:
        return FieldError(ErrorType.TOO_LONG, field, "", "value is too long")
    unit = "byte" if max_length == 1 else "bytes"
    return FieldError(ErrorType.TOO_LONG, field, "", f"may not be more than {max_length} {unit}")


def too_long_max_length(field: str, value: Any, max_length: int) -> FieldError:
    """Go's ``field.TooLongMaxLength``: ``Too long: may not be longer than N``."""
    detail = f"may not be longer than {max_length}" if max_length >= 0 else "value is too long"
    return FieldError(ErrorType.TOO_LONG, field, value, detail)


def too_many(field: str, actual: int, max_items: int) -> FieldError:
    """Go's ``field.TooMany``: ``Too many: 5: must have at most 4 items``."""
    detail = f"must have at most {max_items} items" if max_items >= 0 else "has too many items"
    return FieldError(ErrorType.TOO_MANY, field, actual if actual >= 0 else OMIT, detail)


def not_found(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, field, value, detail)


def internal(field: str, detail: str) -> FieldError:
    return FieldError(ErrorType.INTERNAL, field, None, detail)
