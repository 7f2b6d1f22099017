"""Reading the log into a point-in-time state: `ObjectState` fed through the bus port.

Both backends work alike: a read_committed consumer from the beginning of the
topic, stopping at the point (`services.replay.state.Stop`) or at the end of
the log as it was when the read began. ``events`` live on their own topic with
offsets of their own, so for them an offset point means the time of the
``objects`` record at that offset.

Compaction keeps history exact only within ``min.compaction.lag.ms`` (7 days
by default): a point older than that may miss objects that changed later, and
the result says so (`Rebuilt.inexact`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Container
from dataclasses import dataclass

from services.bus.port import BEGINNING, Bus
from services.replay.state import GroupResource, ObjectState, Stop
from services.runtime.metrics import MALFORMED_RECORDS
from topics.declarations import DEFAULT_OBJECTS_COMPACTION_LAG_MS, EVENTS, OBJECTS

log = logging.getLogger(__name__)

Point = tuple[str, int]  # ("offset", n) or ("time", ms since the epoch); see selection.parse_point


class PointError(ValueError):
    """The point cannot be shown: its history is no longer in the log."""


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """A state and where it stands."""

    state: ObjectState
    topic: str
    resource_version: str  # the offset of the last record folded in ("" for an empty fold)
    as_of_ms: int  # the time the state stood at: ages are measured from it
    log_end: int  # the topic's end offset when the read began
    inexact: bool  # older than the compaction lag: compaction may have dropped history
    past_end: bool = False  # the point lies beyond the log's end: this is the latest state


def topic_for(kind: GroupResource) -> str:
    """Events live on their own topic; everything else on ``objects``."""
    return EVENTS if kind == ("", "events") else OBJECTS


async def timestamp_at(bus: Bus, topic: str, offset: int) -> int | None:
    """The timestamp of the first record at or after ``offset``; None past the end of the log."""
    end = await bus.end_offset(topic)
    if offset >= end:
        return None
    consumer = await bus.consumer(topic, start=max(offset, await bus.beginning_offset(topic)))
    try:
        while consumer.position() < end:
            for record in await consumer.getmany(timeout_ms=200, max_records=1):
                return record.timestamp_ms
    finally:
        await consumer.close()
    return None


async def rebuild(
    bus: Bus,
    *,
    at: Point | None = None,
    kinds: Container[GroupResource] | None = None,
    topic: str = OBJECTS,
    now_ms: int | None = None,
) -> Rebuilt:
    """The state of ``topic`` at ``at`` (None: now), keeping only ``kinds`` when given."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    begin = await bus.beginning_offset(topic)
    end = await bus.end_offset(topic)
    stop = Stop()
    limit = end  # read no further than this offset (exclusive)
    past_end = False
    if at is not None:
        kind, value = at
        if kind == "offset" and topic != OBJECTS:
            found = await timestamp_at(bus, OBJECTS, value)
            kind, value = ("time", found) if found is not None else ("now", 0)
            past_end = found is None
        if kind == "offset":
            if value < begin:
                raise PointError(
                    f"offset {value} is no longer in the log: {topic} starts at offset {begin} "
                    "(retention or compaction removed what came before)"
                )
            stop = Stop(offset=value)
            limit = min(end, value + 1)
            past_end = value >= end
        elif kind == "time":
            stop = Stop(time_ms=value)
            after = await bus.offset_for_time(topic, value + 1)
            limit = end if after is None else min(end, after)
    state = ObjectState(kinds=kinds)
    if limit > begin:
        consumer = await bus.consumer(topic, start=BEGINNING)
        try:
            while consumer.position() < limit:
                if not state.fold(await consumer.getmany(timeout_ms=200), stop):
                    break
        finally:
            await consumer.close()
    for skipped in state.skipped:
        MALFORMED_RECORDS.labels(topic=topic).inc()
        log.warning(
            "skipping malformed record", extra={"topic": topic, "offset": skipped.offset, "error": skipped.error}
        )
    if stop.time_ms is not None:
        as_of = stop.time_ms
    elif stop.offset is not None and stop.offset < end and state.last_timestamp_ms is not None:
        as_of = state.last_timestamp_ms
    else:
        as_of = now_ms
    oldest_exact = now_ms - DEFAULT_OBJECTS_COMPACTION_LAG_MS
    return Rebuilt(
        state=state,
        topic=topic,
        resource_version="" if state.last_offset is None else str(state.last_offset),
        as_of_ms=min(as_of, now_ms),
        log_end=end,
        inexact=topic == OBJECTS and at is not None and as_of < oldest_exact,
        past_end=past_end,
    )
