"""A mutation cache over an informer store: a controller sees its own writes before the informer does.

Why this module exists: the resourceclaim controller creates a claim and then
records it in the pod status. If that second write fails and the retry runs
before the informer has applied the create — a lagging informer, e.g. in
another process than the client that wrote — the retry would not find the
claim and would create a second one. client-go's ``MutationCache`` closes that
gap; this is the same idea: objects the controller wrote are remembered and
returned in place of older (or missing) store entries until the store holds
the same or a newer resourceVersion, the object is seen deleted, or a TTL
passes.

resourceVersions are log offsets here, so "newer" is an integer comparison.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from services.runtime.informer import Store

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], Iterable[str]]

DEFAULT_TTL = 3600.0
"""Kubernetes keeps mutations for an hour; the informer normally catches up in milliseconds."""


def indexed(store: Store, index: str, value: str) -> list[Obj]:
    """``store.index(index, value)``, typed (``Store.list`` shadows ``list`` in the store's own annotations)."""
    return cast("list[Obj]", store.index(index, value))


def _rv(obj: Mapping[str, Any]) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or -1)
    except (TypeError, ValueError):
        return -1


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


class MutationCache:
    """Reads from ``store``, overlaid with the objects passed to `mutation`."""

    def __init__(
        self,
        store: Store,
        *,
        indexers: Mapping[str, IndexFunc] | None = None,
        ttl: float = DEFAULT_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.indexers = dict(indexers or {})
        self.ttl = ttl
        self.clock = clock
        self._cached: dict[tuple[str, str], tuple[float, Obj]] = {}

    def __len__(self) -> int:
        return len(self._cached)

    def mutation(self, obj: Obj) -> None:
        """Remember an object this process has just written (as the write returned it)."""
        self._cached[_key(obj)] = (self.clock() + self.ttl, obj)

    def observed(self, obj: Mapping[str, Any]) -> None:
        """The informer applied ``obj``: forget a remembered copy that is not newer (keeps the cache small)."""
        key = _key(obj)
        entry = self._cached.get(key)
        if entry is not None and _rv(obj) >= _rv(entry[1]):
            del self._cached[key]

    def deleted(self, obj: Mapping[str, Any]) -> None:
        """Forget a remembered object that the informer has seen deleted (same uid)."""
        key = _key(obj)
        entry = self._cached.get(key)
        uid = (obj.get("metadata") or {}).get("uid")
        if entry is not None and (entry[1].get("metadata") or {}).get("uid") == uid:
            del self._cached[key]

    def _newer(self, key: tuple[str, str], stored: Obj | None) -> Obj | None:
        """The remembered object for ``key`` if it is newer than ``stored``; expires stale entries."""
        entry = self._cached.get(key)
        if entry is None:
            return None
        expires, obj = entry
        if self.clock() >= expires or (stored is not None and _rv(stored) >= _rv(obj)):
            del self._cached[key]
            return None
        return obj

    def get(self, namespace: str, name: str) -> Obj | None:
        stored = self.store.get(namespace, name)
        newer = self._newer((namespace, name), stored)
        return newer if newer is not None else stored

    def by_index(self, index: str, value: str) -> list[Obj]:
        """Objects of ``index`` = ``value``: the store's, with remembered ones replacing or adding to them."""
        result: dict[tuple[str, str], Obj] = {}
        for obj in indexed(self.store, index, value):
            key = _key(obj)
            newer = self._newer(key, obj)
            result[key] = newer if newer is not None else obj
        func = self.indexers.get(index)
        if func is not None:
            for key in list(self._cached):
                if key in result:
                    continue
                cached = self._newer(key, self.store.get(*key))
                if cached is not None and value in func(cached):
                    result[key] = cached
        return list(result.values())
