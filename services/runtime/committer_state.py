"""The committer's in-memory index and the per-batch overlay on top of it.

The `Index` is the committed state: key → (offset, object), plus the ids of
recently committed requests (so retries are idempotent). A `Staged` overlay
holds one batch's pending writes, so later requests of the same batch see the
effect of earlier ones before any offset is known. Pure: no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from topics.envelope import object_key, split_key

Obj = dict[str, Any]
PENDING = -1  # offset of a write that is staged but not yet appended


class Index:
    """Committed state at the committer's position in `objects`."""

    def __init__(self, *, request_id_window: int = 200_000) -> None:
        self.entries: dict[str, tuple[int, Obj]] = {}
        self._by_type: dict[tuple[str, str], set[str]] = {}
        self.request_ids: OrderedDict[str, str] = OrderedDict()
        self._window = request_id_window
        self.position = 0  # next offset of `objects` to read

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: str) -> tuple[int, Obj] | None:
        return self.entries.get(key)

    def keys_of(self, group: str, resource: str) -> set[str]:
        return self._by_type.get((group, resource), set())

    def put(self, key: str, offset: int, obj: Obj) -> None:
        if key not in self.entries:
            group, resource, _, _ = split_key(key)
            self._by_type.setdefault((group, resource), set()).add(key)
        self.entries[key] = (offset, obj)

    def delete(self, key: str) -> None:
        if self.entries.pop(key, None) is not None:
            group, resource, _, _ = split_key(key)
            self._by_type.get((group, resource), set()).discard(key)

    def remember_request(self, request_id: str, key: str) -> None:
        self.request_ids[request_id] = key
        self.request_ids.move_to_end(request_id)
        while len(self.request_ids) > self._window:
            self.request_ids.popitem(last=False)


class Staged:
    """One batch's view: the index plus the batch's pending writes (an `admission.View`)."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.pending: dict[str, Obj | None] = {}  # None: deleted in this batch
        self.request_ids: dict[str, str] = {}  # request id -> key, for this batch's writes

    def entry(self, key: str) -> tuple[int, Obj] | None:
        if key in self.pending:
            obj = self.pending[key]
            return None if obj is None else (PENDING, obj)
        return self.index.get(key)

    def stage(self, key: str, obj: Obj | None) -> None:
        self.pending[key] = obj

    def get(self, group: str, resource: str, namespace: str, name: str) -> Obj | None:
        entry = self.entry(object_key(group, resource, namespace, name))
        return None if entry is None else entry[1]

    def list(self, group: str, resource: str, namespace: str | None = None) -> Iterator[Obj]:
        prefix = object_key(group, resource, namespace, "") if namespace is not None else None
        keys = set(self.index.keys_of(group, resource))
        keys.update(k for k in self.pending if k.startswith(object_key(group, resource, "", "")[:-1]))
        for key in sorted(keys):
            if prefix is not None and not key.startswith(prefix):
                continue
            entry = self.entry(key)
            if entry is not None and _same_type(key, group, resource):
                yield entry[1]

    def seen_request(self, request_id: str) -> str | None:
        """The key a request already wrote (in this batch or committed), or None."""
        key = self.request_ids.get(request_id)
        return key if key is not None else self.index.request_ids.get(request_id)


def _same_type(key: str, group: str, resource: str) -> bool:
    g, r, _, _ = split_key(key)
    return g == group and r == resource
