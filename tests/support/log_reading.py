"""Reading a topic of the log back in a test: every committed record, from its beginning to its end now."""

from __future__ import annotations

import asyncio

from services.bus import BEGINNING, Bus, Record
from topics.declarations import OBJECTS


async def read_topic(bus: Bus, topic: str = OBJECTS) -> list[Record]:
    """Every committed record of a topic, from its beginning to its current end."""
    end = await bus.end_offset(topic)
    consumer = await bus.consumer(topic, start=BEGINNING)
    records: list[Record] = []
    try:
        async with asyncio.timeout(30):
            while consumer.position() < end:
                records += await consumer.getmany(timeout_ms=200)
    finally:
        await consumer.close()
    return records
