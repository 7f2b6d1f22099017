"""A minimal dict-backed Lister, fed from informer changes (for wiring and tests).

``version`` counts changes, so a consumer can keep something derived from the
whole store (the DynamicResources plugin keeps its ResourceSlice index) until
the store changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class ObjectStore:
    """Latest object per (namespace, name); implements ``client.Lister``."""

    def __init__(self, objects: Iterable[Mapping[str, Any]] = ()) -> None:
        self._objects: dict[tuple[str, str], Mapping[str, Any]] = {}
        self.version = 0
        for obj in objects:
            self.put(obj)

    @staticmethod
    def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
        meta = obj.get("metadata") or {}
        return str(meta.get("namespace") or ""), str(meta.get("name") or "")

    def put(self, obj: Mapping[str, Any]) -> None:
        self._objects[self._key(obj)] = obj
        self.version += 1

    def remove(self, obj: Mapping[str, Any]) -> None:
        self._objects.pop(self._key(obj), None)
        self.version += 1

    def observe(self, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if new is None:
            if old is not None:
                self.remove(old)
        else:
            self.put(new)

    def get(self, name: str, namespace: str = "") -> Mapping[str, Any] | None:
        return self._objects.get((namespace or "", name))

    def list(self) -> list[Mapping[str, Any]]:
        return list(self._objects.values())
