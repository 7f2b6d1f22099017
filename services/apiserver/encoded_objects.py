"""Each object version's encoded bytes, kept so that every watcher, list and get serving it reuses them.

Why this module exists: encoding dominates the cost of serving an object in
protobuf (hundreds of µs for a Pod in Python, against a few for orjson), and
one change is sent to every watcher of its resource. kube-apiserver encodes a
watch-cache event once per serializer and hands the same bytes to every
watcher (``runtime.CacheableObject``); draplane keeps one encoding per
(object version, the form the client asked for, format) and reuses it for
watch events, list items and gets alike.

An object version is named by its stored resource, namespace, name and
resourceVersion — the offset of the record that wrote it, so two different
contents never share one (objects handed out by the informer are read-only).
The form adds the URL's group and version (conversion) and the shape (the
object or its PartialObjectMetadata). Memory is bounded: least recently used
entries are dropped once the bytes held pass ``max_bytes``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["Encoded", "EncodedObjects", "Key"]

# (URL group, URL version, stored group, stored resource, namespace, name, resourceVersion, shape, format)
Key = tuple[str, str, str, str, str, str, str, str, str]


class Encoded(NamedTuple):
    """One object version as encoded for a client: its apiVersion and kind, and its bytes.

    The bytes are orjson's for JSON and the object's own message (no envelope) for protobuf.
    """

    api_version: str
    kind: str
    data: bytes


class EncodedObjects:
    """A least-recently-used map of `Key` → `Encoded`, bounded by the bytes it holds."""

    def __init__(self, *, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[Key, Encoded] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Key, make: Callable[[], Encoded]) -> Encoded:
        """The encoding kept under ``key``, or ``make()``'s, kept when it fits (``make`` may raise; nothing is kept)."""
        entries = self._entries
        found = entries.get(key)
        if found is not None:
            self.hits += 1
            entries.move_to_end(key)
            return found
        self.misses += 1
        made = make()
        size = len(made.data)
        if size <= self.max_bytes:
            entries[key] = made
            self.size += size
            while self.size > self.max_bytes:
                _, dropped = entries.popitem(last=False)
                self.size -= len(dropped.data)
        return made
