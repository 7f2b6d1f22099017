"""Recording core/v1 Events on the `events` topic.

Events are best-effort, as in Kubernetes: they skip the committer and go
straight to their own topic, which has time retention, so that a storm of
FailedScheduling events can never bloat `objects`. Like client-go's event
recorder, repeats of the same (object, type, reason, message) within ten
minutes update one Event (count and lastTimestamp) instead of creating new ones.
The apiserver serves the `events` resource from this topic; their
resourceVersions are offsets of `events` (as with an etcd override for events
in Kubernetes, they are a separate version space).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from services.bus.port import Bus, OutRecord, Producer
from services.kube.times import time_text
from topics.declarations import EVENTS
from topics.envelope import EventType, encode_event, object_key

log = logging.getLogger(__name__)

Obj = dict[str, Any]
AGGREGATION_WINDOW = 600.0


def event_key(namespace: str, name: str) -> str:
    return object_key("", "events", namespace, name)


def involved_reference(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    ref: Obj = {
        "kind": obj.get("kind", ""),
        "name": meta.get("name", ""),
        "apiVersion": obj.get("apiVersion", ""),
    }
    for src, dst in (("namespace", "namespace"), ("uid", "uid"), ("resourceVersion", "resourceVersion")):
        if meta.get(src):
            ref[dst] = meta[src]
    return ref


def make_event(
    involved: Obj,
    *,
    type_: str,
    reason: str,
    message: str,
    component: str,
    host: str = "",
    now: datetime,
    count: int = 1,
    first: str | None = None,
    name: str | None = None,
) -> Obj:
    """A core/v1 Event as client-go's recorder writes it."""
    ref = involved_reference(involved)
    stamp = time_text(now)
    namespace = ref.get("namespace") or "default"
    source: Obj = {"component": component}
    if host:
        source["host"] = host
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name or f"{ref['name']}.{time.time_ns():x}",
            "namespace": namespace,
            "uid": str(uuid.uuid4()),
            "creationTimestamp": first or stamp,
        },
        "involvedObject": ref,
        "reason": reason,
        "message": message,
        "type": type_,
        "source": source,
        "count": count,
        "firstTimestamp": first or stamp,
        "lastTimestamp": stamp,
        "reportingComponent": component,
        "reportingInstance": host,
    }


class EventRecorder:
    """Fire-and-forget Events for one component."""

    def __init__(self, bus: Bus, *, component: str, host: str = "", max_tracked: int = 4096) -> None:
        self.bus = bus
        self.component = component
        self.host = host
        self._producer: Producer | None = None
        self._recent: OrderedDict[tuple[str, str, str, str], tuple[float, Obj]] = OrderedDict()
        self._max = max_tracked

    async def start(self) -> None:
        self._producer = await self.bus.producer()

    async def close(self) -> None:
        if self._producer is not None:
            await self._producer.close()
            self._producer = None

    def build(self, involved: Obj, type_: str, reason: str, message: str) -> Obj:
        """The Event to write, aggregated with a recent identical one."""
        uid = (involved.get("metadata") or {}).get("uid", "")
        key = (uid, type_, reason, message)
        now_mono = time.monotonic()
        now = datetime.now(UTC)
        seen = self._recent.get(key)
        if seen is not None and now_mono - seen[0] < AGGREGATION_WINDOW:
            prior = seen[1]
            event = make_event(
                involved,
                type_=type_,
                reason=reason,
                message=message,
                component=self.component,
                host=self.host,
                now=now,
                count=int(prior.get("count", 1)) + 1,
                first=prior.get("firstTimestamp"),
                name=prior["metadata"]["name"],
            )
        else:
            event = make_event(
                involved, type_=type_, reason=reason, message=message, component=self.component, host=self.host, now=now
            )
        self._recent[key] = (now_mono, event)
        self._recent.move_to_end(key)
        while len(self._recent) > self._max:
            self._recent.popitem(last=False)
        return event

    async def record(self, involved: Obj, type_: str, reason: str, message: str) -> Obj:
        event = self.build(involved, type_, reason, message)
        await self.write(event)
        return event

    async def write(self, event: Obj) -> int | None:
        """Append an Event record; returns its offset, or None when the log refused it (logged)."""
        if self._producer is None:
            raise RuntimeError("event recorder is not started")
        meta = event["metadata"]
        type_: EventType = "ADDED" if int(event.get("count", 1)) <= 1 else "MODIFIED"
        record = OutRecord(EVENTS, event_key(meta["namespace"], meta["name"]).encode(), encode_event(type_, event))
        try:
            (offset,) = await self._producer.send([record])
            return offset
        except Exception:
            log.exception("could not record event", extra={"reason": event.get("reason")})
            return None
