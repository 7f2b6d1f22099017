"""A read_committed consumer of one Kafka partition, by manual assignment.

The position is aiokafka's fetch position, which moves past transaction
markers and aborted batches; it is read after every seek and fetch so that
`position()` can stay synchronous, as the port wants.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition

from services.bus.kafka.config import KafkaSettings
from services.bus.kafka.context import KafkaContext
from services.bus.kafka.errors import translated
from services.bus.port import BEGINNING, END, Record, StartAt

# A getmany blocked by a rebalance does not honour its timeout in aiokafka;
# the wrapper gives it this much more before giving up for this call.
REBALANCE_GRACE_S = 0.5


def consumer_options(client: dict[str, Any], settings: KafkaSettings) -> dict[str, Any]:
    """aiokafka consumer settings shared by plain consumers and group members."""
    return {
        **client,
        "enable_auto_commit": False,
        "isolation_level": "read_committed",
        "auto_offset_reset": "earliest",
        "fetch_max_wait_ms": settings.fetch_max_wait_ms,
        "max_partition_fetch_bytes": 8 * 1024 * 1024,
    }


def to_records(topic: str, partition: int, messages: list[Any]) -> list[Record]:
    return [Record(topic, partition, m.offset, m.timestamp, m.key, m.value) for m in messages]


class KafkaConsumer:
    def __init__(self, consumer: AIOKafkaConsumer, topic: str, tp: TopicPartition) -> None:
        self._consumer = consumer
        self._topic = topic
        self._tp = tp
        self._position = 0

    @classmethod
    async def create(
        cls, context: KafkaContext, topic: str, *, partition: int, start: StartAt
    ) -> KafkaConsumer:
        await context.check_partition(topic, partition)
        consumer = AIOKafkaConsumer(**consumer_options(context.client, context.settings))
        try:
            with translated("starting a consumer"):
                await consumer.start()
            tp = TopicPartition(context.stored(topic), partition)
            consumer.assign([tp])
            wrapper = cls(consumer, topic, tp)
            await wrapper.seek(start)
        except BaseException:
            await consumer.stop()
            raise
        return wrapper

    async def seek(self, offset: StartAt) -> None:
        with translated("seek"):
            if offset == BEGINNING:
                await self._consumer.seek_to_beginning(self._tp)
            elif offset == END:
                await self._consumer.seek_to_end(self._tp)
            elif isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0:
                self._consumer.seek(self._tp, offset)
            else:
                raise ValueError(f"cannot seek to {offset!r}: use an offset >= 0, BEGINNING or END")
            self._position = await self._consumer.position(self._tp)

    def position(self) -> int:
        return self._position

    async def getmany(self, *, timeout_ms: int = 100, max_records: int = 10_000) -> list[Record]:
        if max_records < 1:
            raise ValueError("max_records must be at least 1")
        with translated("getmany"):
            try:
                async with asyncio.timeout(timeout_ms / 1000 + REBALANCE_GRACE_S):
                    data = await self._consumer.getmany(
                        self._tp, timeout_ms=timeout_ms, max_records=max_records
                    )
            except TimeoutError:
                return []
            self._position = await self._consumer.position(self._tp)
        return to_records(self._topic, self._tp.partition, data.get(self._tp, []))

    async def close(self) -> None:
        await self._consumer.stop()
