"""Writes of core/v1 Events: admitted by the apiserver, appended straight to `events`.

Events do not go through the committer (they are best-effort and live on
their own time-retained topic), but a write through the API still gets the
full generic semantics and admission: this module runs a second
`CommitterCore` whose index is the apiserver's view of `events` (plus the
namespaces from `objects`, for the namespace-exists check) and appends its
records itself. Writes are serialized per apiserver.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import Any

from services.api.machinery import status as st
from services.apiserver.backend import WriteResult
from services.bus.port import Bus, OutRecord, Producer
from services.runtime.committer_core import CommitterCore
from services.runtime.informer import Change, Informer
from topics.declarations import EVENTS
from topics.envelope import Request, encode_event, object_key


def _own_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy whose metadata the core may change: it drops resourceVersion, and the view's object is shared."""
    return {**obj, "metadata": dict(obj.get("metadata") or {})}


class EventsWriter:
    def __init__(self, bus: Bus, core: CommitterCore, *, events: Informer, objects: Informer) -> None:
        self.bus = bus
        self.core = core
        self.events = events
        self._producer: Producer | None = None
        self._lock = asyncio.Lock()
        events.add_listener(self._on_change)
        objects.add_listener(self._on_namespace)

    async def start(self) -> None:
        self._producer = await self.bus.producer()

    async def close(self) -> None:
        if self._producer is not None:
            await self._producer.close()

    def seed(self, objects: Informer) -> None:
        """Load the namespaces already in the view (e.g. from its snapshot) into the index."""
        for ns in objects.store("", "namespaces").list():
            self.core.apply_record(
                object_key("", "namespaces", "", ns["metadata"]["name"]),
                "ADDED",
                _own_metadata(ns),
                int(ns["metadata"].get("resourceVersion") or 0),
                None,
            )

    def _on_change(self, change: Change) -> None:
        key = object_key(change.group, change.resource, change.namespace, change.name)
        self.core.apply_record(key, change.type, _own_metadata(change.object), change.offset, change.request_id)

    def _on_namespace(self, change: Change) -> None:
        if (change.group, change.resource) == ("", "namespaces"):
            self._on_change(change)

    async def write(self, request: Request) -> WriteResult:
        if self._producer is None:
            raise RuntimeError("events writer is not started")
        if not request.id:
            request = dataclasses.replace(request, id=uuid.uuid4().hex)
        async with self._lock:
            (outcome,) = self.core.process([request])
            if outcome.code >= 400:
                raise st.StatusError(outcome.status or st.make_status(outcome.code, "Unknown", "request failed"))
            records: list[OutRecord] = []
            positions: list[int] = []
            for w in outcome.writes:
                positions.append(len(records))
                records.append(
                    OutRecord(EVENTS, w.key.encode(), encode_event(w.type, w.object, request_id=w.request_id))
                )
                if w.type == "DELETED":
                    records.append(OutRecord(EVENTS, w.key.encode(), None))
            if records:
                offsets = await self._producer.send(records)
                for w, pos in zip(outcome.writes, positions, strict=True):
                    w.offset = offsets[pos]
                self.core.stamp([outcome])
                self.core.advance([outcome], max(offsets) + 1)
        if outcome.writes:
            await self.events.wait_for(outcome.writes[-1].offset, timeout=30)
        if outcome.return_status or outcome.object is None:
            return WriteResult(outcome.code, outcome.status or st.success_status(), tuple(outcome.warnings))
        return WriteResult(outcome.code, outcome.object, tuple(outcome.warnings))
