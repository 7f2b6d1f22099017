"""Cells every server-side table shares: the Name and Age columns, time and name helpers.

Why this module exists: the printers of `services.apiserver.tables` and of
`services.apiserver.tables_stored` (the kinds draplane only stores) both need
them; they follow ``pkg/printers/internalversion/printers.go`` and
``k8s.io/apimachinery/pkg/util/duration``. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from services.kube.times import parse_time as parse_wire_time

Cell = str | int | float | bool | None
Row = list[Cell]
Printer = Callable[[dict[str, Any], float], Row]

NAME_DESC = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. "
    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_AGE_DESC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
    "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the "
    "system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


def col(name: str, desc: str = "", *, priority: int = 0, fmt: str = "", type_: str = "string") -> dict[str, Any]:
    return {"name": name, "type": type_, "format": fmt, "description": desc, "priority": priority}


NAME = col("Name", NAME_DESC, fmt="name")
AGE = col("Age", _AGE_DESC)


# ------------------------------------------------------------------ time helpers


def parse_time(value: Any) -> float | None:
    """RFC 3339 (``2024-05-01T10:00:00Z``, micro-time too) to epoch seconds."""
    if not isinstance(value, str) or not value:
        return None
    return _parse_time(value)


@lru_cache(maxsize=8192)
def _parse_time(value: str) -> float | None:
    """Cached: a table of many objects repeats few distinct timestamps."""
    moment = parse_wire_time(value)
    return None if moment is None else moment.timestamp()


def human_duration(seconds: float) -> str:
    """``k8s.io/apimachinery/pkg/util/duration.HumanDuration``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rem = s % 60
        return f"{minutes}m" if rem == 0 else f"{minutes}m{rem}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(value: Any, now: float) -> str:
    ts = parse_time(value)
    return "<unknown>" if ts is None else human_duration(now - ts)


def meta_of(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def age(obj: dict[str, Any], now: float) -> str:
    return since(meta_of(obj).get("creationTimestamp"), now)


def name(obj: dict[str, Any]) -> str:
    return str(meta_of(obj).get("name", ""))
