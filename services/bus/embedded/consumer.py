"""A read_committed consumer of one partition of the embedded log.

It reads records below the partition's last stable offset, in offset order,
and waits for a wake-up (see `services.bus.embedded.notify`) when there are
none. Its position moves to the LSO once everything below it has been
returned, so gaps (aborted or compacted records) never stall it, exactly as a
Kafka consumer's position moves past transaction markers.
"""

from __future__ import annotations

import asyncio

from services.bus.embedded.log import read_committed, stable
from services.bus.embedded.notify import wait
from services.bus.embedded.shared import Shared
from services.bus.port import BEGINNING, END, BusError, Record, StartAt


class EmbeddedConsumer:
    def __init__(self, shared: Shared, topic: str, partition: int, pid: int) -> None:
        self._shared = shared
        self._topic = topic
        self._partition = partition
        self._pid = pid
        self._position = 0
        self._closed = False
        shared.peers.want(pid)  # other processes' commits to it are announced here from now on

    @classmethod
    async def create(
        cls, shared: Shared, topic: str, *, partition: int, start: StartAt
    ) -> EmbeddedConsumer:
        consumer = cls(shared, topic, partition, await shared.pid(topic, partition))
        await consumer.seek(start)
        return consumer

    async def seek(self, offset: StartAt) -> None:
        if offset == BEGINNING or offset == END:
            bounds = await stable(self._shared.db, self._pid)
            self._position = bounds.log_start if offset == BEGINNING else bounds.end
        elif isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0:
            self._position = offset
        else:
            raise ValueError(f"cannot seek to {offset!r}: use an offset >= 0, BEGINNING or END")

    def position(self) -> int:
        return self._position

    def reset_position(self, offset: int) -> None:
        """Set the position without checks (a group member taking over partition 0)."""
        self._position = offset

    async def getmany(self, *, timeout_ms: int = 100, max_records: int = 10_000) -> list[Record]:
        if max_records < 1:
            raise ValueError("max_records must be at least 1")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        db = self._shared.db
        while True:
            if self._closed:
                raise BusError("the consumer is closed")
            notifier, key = self._shared.notifier, self._shared.partition_key(self._pid)
            event = notifier.event(key)
            end, rows = await db.read_now(
                read_committed, self._pid, start=self._position, limit=max_records
            )
            if self._position < end:
                if len(rows) < max_records:
                    self._position = end
                else:
                    self._position = rows[-1][0] + 1
                if rows:
                    topic, partition = self._topic, self._partition
                    return [Record(topic, partition, *row) for row in rows]
            notifier.expect(key, event, self._position)
            if not await wait(event, deadline - loop.time()):
                return []

    async def close(self) -> None:
        self._closed = True
