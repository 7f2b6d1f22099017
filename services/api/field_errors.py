"""Field errors with Kubernetes' wording (k8s.io/apimachinery/pkg/util/validation/field).

A `FieldError` renders exactly as Kubernetes renders ``field.Error``:
``spec.devices.requests[0].name: Required value`` or
``metadata.name: Invalid value: "Foo": a lowercase RFC 1123 subdomain ...``.
"""

from __future__ import annotations

from dataclasses import dataclass
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


_OMIT = object()
_BODY_ONLY = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}


@dataclass(frozen=True, slots=True)
class FieldError:
    type: ErrorType
    field: str
    bad_value: Any = _OMIT
    detail: str = ""

    def body(self) -> str:
        """The message without the field path, as used in Status causes."""
        if self.type in _BODY_ONLY or self.bad_value is _OMIT:
            text = self.type.text
        else:
            text = f"{self.type.text}: {format_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()

    def cause(self) -> dict[str, str]:
        return {"reason": self.type.reason, "message": self.body(), "field": self.field}


def format_value(value: Any) -> str:
    """Render a bad value like Go's ``%q`` for strings and ``%#v``-ish otherwise."""
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return "[]string{" + ", ".join(format_value(v) for v in value) + "}"
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, field, detail=detail)


def invalid(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(ErrorType.INVALID, field, value, detail)


def not_supported(field: str, value: Any, valid: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(orjson.dumps(v).decode() for v in valid) if valid else ""
    return FieldError(ErrorType.NOT_SUPPORTED, field, value, detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, field, value)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, field, detail=detail)


def too_long(field: str, value: Any, max_length: int) -> FieldError:
    return FieldError(ErrorType.TOO_LONG, field, value, f"may not be more than {max_length} bytes")


def too_many(field: str, actual: int, max_items: int) -> FieldError:
    return FieldError(ErrorType.TOO_MANY, field, actual, f"must have at most {max_items} items")


def not_found(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, field, value)


def internal(field: str, detail: str) -> FieldError:
    return FieldError(ErrorType.INTERNAL, field, detail=detail)
