"""Name formats as validation uses them (the formats themselves are in `services.kube.names`).

Every object name, label, annotation key, finalizer, request name and
attribute name in the API is one of a handful of formats. The ``is_*``
functions return Kubernetes' error strings (empty when valid); the
``*_errors`` helpers wrap them into `FieldError`s the way core validation
does (``field.Invalid(path, value, msg)`` for each message).

Go measures string length in bytes, so lengths here are UTF-8 byte counts.
"""

from __future__ import annotations

from collections.abc import Callable

from services.api.machinery.field_errors import FieldError, invalid
from services.kube.names import (  # noqa: F401  (re-exported for validation)
    DNS1123_LABEL_MAX_LENGTH,
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    EMPTY_ERROR,
    LABEL_VALUE_MAX_LENGTH,
    QUALIFIED_NAME_MAX_LENGTH,
    byte_len,
    is_c_identifier,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    max_len_error,
    regex_error,
)

NameFn = Callable[[str, bool], list[str]]

# --- object name functions (apimachinery/pkg/api/validation) --------------------


def _mask_trailing_dash(name: str) -> str:
    """A generateName prefix may end in '-'; validate it as if a letter followed."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def path_segment_name(name: str, prefix: bool) -> list[str]:
    """The REST layer's check for every kind: a name must be usable as one URL path segment."""
    if not prefix:
        for illegal in (".", ".."):
            if name == illegal:
                return [f"may not be '{illegal}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


# --- FieldError helpers (pkg/apis/core/validation) -----------------------------


def _each(path: str, value: str, messages: list[str]) -> list[FieldError]:
    return [invalid(path, value, m) for m in messages]


def dns1123_label_errors(value: str, path: str) -> list[FieldError]:
    return _each(path, value, is_dns1123_label(value))


def dns1123_subdomain_errors(value: str, path: str) -> list[FieldError]:
    return _each(path, value, is_dns1123_subdomain(value))


def qualified_name_errors(value: str, path: str) -> list[FieldError]:
    return _each(path, value, is_qualified_name(value))


def label_value_errors(value: str, path: str) -> list[FieldError]:
    return _each(path, value, is_valid_label_value(value))
