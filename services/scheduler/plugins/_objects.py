"""Small accessors for wire-form objects shared by the plugins."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def meta(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("metadata") or {}


def spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("spec") or {}


def status(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("status") or {}


def uid(obj: Mapping[str, Any] | None) -> str:
    return str(meta(obj).get("uid") or "")


def name(obj: Mapping[str, Any] | None) -> str:
    return str(meta(obj).get("name") or "")


def namespace(obj: Mapping[str, Any] | None) -> str:
    return str(meta(obj).get("namespace") or "")


def kobj(obj: Mapping[str, Any] | None) -> str:
    """``klog.KObj`` rendering: ``namespace/name`` or ``name``."""
    ns = namespace(obj)
    return f"{ns}/{name(obj)}" if ns else name(obj)


def expect_kind(obj: Mapping[str, Any] | None, kind: str) -> None:
    """Hints receive untyped objects; a wrong kind is a programming error (hint → Queue)."""
    if obj is not None and obj.get("kind") not in (None, kind):
        raise TypeError(f"unexpected object of kind {obj.get('kind')!r}, expected {kind}")
