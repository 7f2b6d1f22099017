"""Typed reads from wire-form dicts that never raise.

Validation runs after structural decoding, so types are right; optional
fields may still be absent or null. These helpers return the Go zero value
in that case (and also for a value of the wrong type), which is exactly what
Kubernetes' validation sees for an omitted field.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

_EMPTY: Obj = {}


def mapping(obj: Obj, key: str) -> Obj:
    """A nested object, or an empty (shared, never to be mutated) dict."""
    value = obj.get(key)
    return value if isinstance(value, dict) else _EMPTY


def items(obj: Obj, key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def text(obj: Obj, key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def integer(obj: Obj, key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def flag(obj: Obj, key: str) -> bool:
    return obj.get(key) is True


def strings(obj: Obj, key: str) -> list[str]:
    """A list of strings (non-string entries are read as "")."""
    return [v if isinstance(v, str) else "" for v in items(obj, key)]
