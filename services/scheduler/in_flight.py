"""Pods being scheduled right now, and the cluster events seen while they are.

kube-scheduler keeps one list holding, in arrival order, a marker per popped
pod and every interesting cluster event. When an attempt fails, exactly the
events after that pod's marker are replayed against its rejectors; when an
attempt ends, events no remaining in-flight pod can need are dropped from the
front, so the list stays short. Events are only recorded while some pod is in
flight.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from services.scheduler.cluster_events import ClusterEvent
from services.scheduler.framework import Obj


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    event: ClusterEvent
    old: Obj | None
    new: Obj | None


class InFlight:
    def __init__(self) -> None:
        # Entries are a pod uid (str, the pod's marker), a RecordedEvent, or None for a finished pod.
        self._entries: list[str | RecordedEvent | None] = []
        self._base = 0  # absolute index of _entries[0]
        self._pods: dict[str, int] = {}  # uid -> absolute index of its marker
        self._gone: set[str] = set()  # in flight, but deleted meanwhile

    def start(self, uid: str) -> None:
        self._pods[uid] = self._base + len(self._entries)
        self._entries.append(uid)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __bool__(self) -> bool:
        return bool(self._pods)

    def pod_count(self) -> int:
        return len(self._pods)

    def event_count(self) -> int:
        return sum(1 for e in self._entries if isinstance(e, RecordedEvent))

    def record(self, event: ClusterEvent, old: Obj | None, new: Obj | None) -> None:
        """Remember an event if any pod is in flight (kube's addEventIfAnyInFlight)."""
        if self._pods:
            self._entries.append(RecordedEvent(event, old, new))

    def record_for_pod(self, event: ClusterEvent, old: Obj | None, new: Obj | None) -> None:
        """Remember an update of an in-flight pod itself."""
        self._entries.append(RecordedEvent(event, old, new))

    def events_since(self, uid: str) -> Iterator[RecordedEvent] | None:
        """Events received after ``uid`` was popped; None if it is not in flight."""
        position = self._pods.get(uid)
        if position is None:
            return None
        return (e for e in self._entries[position - self._base + 1 :] if isinstance(e, RecordedEvent))

    def mark_gone(self, uid: str) -> None:
        if uid in self._pods:
            self._gone.add(uid)

    def is_gone(self, uid: str) -> bool:
        return uid in self._gone

    def done(self, uid: str) -> None:
        self._gone.discard(uid)
        position = self._pods.pop(uid, None)
        if position is None:
            return
        self._entries[position - self._base] = None
        drop = 0
        for entry in self._entries:
            if isinstance(entry, str):
                break
            drop += 1
        if drop:
            del self._entries[:drop]
            self._base += drop
