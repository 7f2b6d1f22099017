"""The apiserver's watch cache: a window of recent changes, fanned out to watchers.

Every change the apiserver's informer applies is kept here (up to a capacity)
and pushed to the open watches of its resource. A watch that resumes from a
resourceVersion replays the cached changes after it; one older than the window
gets 410 Gone, exactly as kube-apiserver's watch cache answers "too old
resource version". Selector semantics follow Kubernetes: an object that stops
matching is sent as DELETED, one that starts matching as ADDED.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from services.api.machinery import status as st
from services.runtime.informer import Change, Informer

Obj = dict[str, Any]
Match = Callable[[Obj], bool]


@dataclass(eq=False)
class Watcher:
    group: str
    resource: str
    namespace: str | None
    match: Match | None
    queue: asyncio.Queue[Change] = field(default_factory=lambda: asyncio.Queue(maxsize=50_000))
    overflowed: bool = False

    def wants(self, change: Change) -> bool:
        if change.group != self.group or change.resource != self.resource:
            return False
        return self.namespace is None or change.namespace == self.namespace

    def translate(self, change: Change) -> tuple[str, Obj] | None:
        """The event this watcher sees for a change, after selectors; None when none."""
        if self.match is None:
            return change.type, change.object
        if change.type == "DELETED":
            return ("DELETED", change.object) if self.match(change.object) else None
        now = self.match(change.object)
        before = change.old is not None and self.match(change.old)
        if now and before:
            return "MODIFIED", change.object
        if now:
            return "ADDED", change.object
        if before:
            return "DELETED", leaving(change)
        return None


def leaving(change: Change) -> Obj:
    """The DELETED event's object when a change takes an object out of a selection.

    kube-apiserver's cacheWatcher sends the object as it was before the
    change, with the change's resourceVersion (k8s.io/apiserver/pkg/storage/
    cacher/cache_watcher.go, ``convertToWatchEvent``): the watcher sees what
    it last selected, and can resume after the change.
    """
    assert change.old is not None
    old = dict(change.old)
    meta = dict(old.get("metadata") or {})
    rv = (change.object.get("metadata") or {}).get("resourceVersion")
    if rv is not None:
        meta["resourceVersion"] = rv
    old["metadata"] = meta
    return old


class WatchCache:
    def __init__(self, informer: Informer, *, capacity: int = 100_000) -> None:
        self.informer = informer
        self.capacity = capacity
        self._events: deque[Change] = deque()
        self._watchers: set[Watcher] = set()
        self._floor: int | None = None
        informer.add_listener(self._on_change)

    @property
    def floor(self) -> int:
        """Every change with an offset above this is in the cache."""
        if self._floor is None:
            self._floor = self.informer.start_offset - 1
        return self._floor

    def _on_change(self, change: Change) -> None:
        _ = self.floor
        self._events.append(change)
        if len(self._events) > self.capacity:
            self._floor = self._events.popleft().offset
        for watcher in tuple(self._watchers):
            if watcher.wants(change):
                try:
                    watcher.queue.put_nowait(change)
                except asyncio.QueueFull:
                    # A watcher that cannot keep up is closed; its client re-watches from its last version.
                    watcher.overflowed = True
                    self._watchers.discard(watcher)

    def register(self, group: str, resource: str, namespace: str | None, match: Match | None) -> Watcher:
        watcher = Watcher(group, resource, namespace, match)
        self._watchers.add(watcher)
        return watcher

    def unregister(self, watcher: Watcher) -> None:
        self._watchers.discard(watcher)

    def since(self, watcher: Watcher, resource_version: int) -> list[Change]:
        """Cached changes for a watcher after a resourceVersion; 410 when it is too old."""
        if resource_version < self.floor:
            raise st.too_old_resource_version(str(resource_version), str(self.floor + 1))
        return [c for c in self._events if c.offset > resource_version and watcher.wants(c)]

    @property
    def watcher_count(self) -> int:
        return len(self._watchers)
