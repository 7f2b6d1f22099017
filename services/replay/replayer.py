"""`draplane replay`: read a topic from a start point to an end point and print each record.

Works on both backends through the bus port. Without ``--follow`` it stops at
the end of the log as it was when it started (or at ``--until``); with
``--follow`` it keeps reading new records until interrupted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from services.bus.port import BEGINNING, Bus, Record
from services.replay.output import ReplayedRecord
from services.replay.selection import Filter
from services.runtime.metrics import MALFORMED_RECORDS
from topics.declarations import OBJECTS
from topics.envelope import MalformedRecord, decode_event, split_key

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Range:
    start: tuple[str, int] | None = None  # ("offset", n) or ("time", ms); None: the beginning
    until: tuple[str, int] | None = None  # inclusive
    follow: bool = False


async def replay(
    bus: Bus,
    *,
    topic: str = OBJECTS,
    span: Range | None = None,
    select: Filter | None = None,
    emit: Callable[[ReplayedRecord], None],
) -> int:
    """Emit every selected record in the range; return how many were emitted."""
    span = span or Range()
    select = select or Filter()
    start: int | str = BEGINNING
    if span.start is not None:
        kind, value = span.start
        if kind == "offset":
            start = value
        else:
            found = await bus.offset_for_time(topic, value)
            start = found if found is not None else await bus.end_offset(topic)
    end = None if span.follow else await bus.end_offset(topic)
    consumer = await bus.consumer(topic, start=start)
    emitted = 0
    try:
        while end is None or consumer.position() < end:
            for record in await consumer.getmany(timeout_ms=200):
                if _past(record, span.until):
                    return emitted
                if end is not None and record.offset >= end:
                    return emitted
                replayed = _decode(record)
                if replayed is None:
                    continue
                if topic == OBJECTS:
                    try:
                        parts = split_key((record.key or b"").decode())
                    except (MalformedRecord, UnicodeDecodeError) as exc:
                        if replayed.type != "TOMBSTONE":
                            _skip(record, exc)
                        continue
                    if not select.matches(parts):
                        continue
                emit(replayed)
                emitted += 1
    finally:
        await consumer.close()
    return emitted


def _past(record: Record, until: tuple[str, int] | None) -> bool:
    if until is None:
        return False
    kind, value = until
    return record.offset > value if kind == "offset" else record.timestamp_ms > value


def _decode(record: Record) -> ReplayedRecord | None:
    key = record.key.decode(errors="replace") if record.key is not None else None
    if record.value is None:
        return ReplayedRecord(
            record.topic, record.partition, record.offset, record.timestamp_ms, key, "TOMBSTONE", None
        )
    if record.topic == OBJECTS:
        try:
            event = decode_event(record.value)
        except MalformedRecord as exc:
            _skip(record, exc)
            return None
        obj = event.object
        obj["metadata"]["resourceVersion"] = str(record.offset)
        return ReplayedRecord(
            record.topic, record.partition, record.offset, record.timestamp_ms, key, event.type, obj, event.request_id
        )
    try:
        payload = orjson.loads(record.value)
    except orjson.JSONDecodeError:
        payload = record.value.decode(errors="replace")
    return ReplayedRecord(record.topic, record.partition, record.offset, record.timestamp_ms, key, "RECORD", payload)


def _skip(record: Record, exc: Exception) -> None:
    MALFORMED_RECORDS.labels(topic=record.topic).inc()
    log.warning("skipping malformed record", extra={"topic": record.topic, "offset": record.offset, "error": str(exc)})
