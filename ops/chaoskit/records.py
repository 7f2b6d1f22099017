"""The `objects` log as the invariant checks see it: decoded records in offset order.

Why this module exists: the checks in `ops.chaoskit.invariants` are pure
functions over a sequence of `LogRecord`; this module is the one place that
reads the log (through the bus port, so both backends work) and turns raw
records into that form. Tombstones are kept (as type ``TOMBSTONE``): a
tombstone on a live key is exactly how compaction would lose an object.
Malformed records are kept as ``MALFORMED``, with the decoding error, so the
checks report each one as a violation (no component could apply it).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from services.bus.port import BEGINNING, Bus, Record
from topics.declarations import OBJECTS
from topics.envelope import MalformedRecord, decode_event, split_key

TOMBSTONE = "TOMBSTONE"
MALFORMED = "MALFORMED"

Obj = dict[str, Any]


class LogRecord(NamedTuple):
    """One record of `objects`: offset, key, type, the object (None for tombstones) and its request id.

    A ``MALFORMED`` record has no object; ``error`` says why it did not decode.
    """

    offset: int
    key: str
    type: str  # ADDED, MODIFIED, DELETED, TOMBSTONE or MALFORMED
    object: Obj | None = None
    req: str | None = None
    error: str | None = None

    @property
    def group(self) -> str:
        return key_parts(self.key)[0]

    @property
    def resource(self) -> str:
        return key_parts(self.key)[1]


def key_parts(key: str) -> tuple[str, str, str, str]:
    """(group, resource, namespace, name) of a key; a key that names no object gives empty parts."""
    try:
        return split_key(key)
    except MalformedRecord:
        return ("", "", "", key)


def decode(record: Record) -> LogRecord:
    """A raw `objects` record as a `LogRecord` (the object's resourceVersion stamped from the offset)."""
    key = (record.key or b"").decode(errors="replace")
    if record.value is None:
        return LogRecord(record.offset, key, TOMBSTONE)
    try:
        event = decode_event(record.value)
    except MalformedRecord as exc:
        return LogRecord(record.offset, key, MALFORMED, error=str(exc) or type(exc).__name__)
    event.object["metadata"]["resourceVersion"] = str(record.offset)
    return LogRecord(record.offset, key, event.type, event.object, event.request_id)


async def read_objects(bus: Bus, *, until: int | None = None) -> list[LogRecord]:
    """Every record of `objects` from the beginning up to ``until`` (default: the end now), in order."""
    end = await bus.end_offset(OBJECTS) if until is None else until
    records: list[LogRecord] = []
    consumer = await bus.consumer(OBJECTS, start=BEGINNING)
    try:
        while consumer.position() < end:
            for record in await consumer.getmany(timeout_ms=500):
                if record.offset >= end:
                    return records
                records.append(decode(record))
    finally:
        await consumer.close()
    return records
