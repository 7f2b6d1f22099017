"""`KafkaBus`: the `Bus` port on an Apache Kafka cluster, through aiokafka.

One admin client (topics, metadata) and one group-less read_committed consumer
(beginning/end offsets and time lookups) per bus; every producer, consumer and
group member gets its own aiokafka client. This is the only package that
imports aiokafka.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import TopicPartition

from services.bus.kafka import topics
from services.bus.kafka.config import KafkaSettings, client_options
from services.bus.kafka.consumer import KafkaConsumer, consumer_options
from services.bus.kafka.context import KafkaContext
from services.bus.kafka.errors import translated
from services.bus.kafka.group import KafkaGroupMember
from services.bus.kafka.producer import KafkaProducer
from services.bus.port import BEGINNING, BusError, StartAt, TopicSpec
from services.bus.urls import KafkaTarget


class KafkaBus:
    def __init__(self, target: KafkaTarget, *, url: str) -> None:
        self.url = url
        self.prefix = target.prefix
        self.settings = KafkaSettings.from_options(target.options)
        self._client = client_options(target, self.settings)
        self._context: KafkaContext | None = None
        self._offsets: AIOKafkaConsumer | None = None
        # Whatever this bus handed out and is still referenced: closed with the bus.
        self._closables: weakref.WeakSet[Any] = weakref.WeakSet()

    async def start(self) -> None:
        if self._context is not None:
            return
        admin = AIOKafkaAdminClient(**self._client)
        offsets = AIOKafkaConsumer(**consumer_options(self._client, self.settings))
        try:
            with translated(f"connecting to {', '.join(self._client['bootstrap_servers'])}"):
                await admin.start()
                await offsets.start()
        except BaseException:
            await offsets.stop()
            await admin.close()
            raise
        self._offsets = offsets
        self._context = KafkaContext(self.prefix, self.settings, self._client, admin)

    async def close(self) -> None:
        for closable in list(self._closables):
            with contextlib.suppress(Exception):
                await closable.close()
        self._closables.clear()
        if self._offsets is not None:
            await self._offsets.stop()
            self._offsets = None
        if self._context is not None:
            await self._context.admin.close()
            self._context = None

    async def __aenter__(self) -> KafkaBus:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the port ---------------------------------------------------------------------

    async def ensure_topics(self, specs: Sequence[TopicSpec]) -> None:
        await topics.ensure_topics(self._ctx(), specs)

    async def producer(self, *, transactional_id: str | None = None) -> KafkaProducer:
        producer = await KafkaProducer.create(self._ctx(), transactional_id=transactional_id)
        self._closables.add(producer)
        return producer

    async def consumer(
        self, topic: str, *, partition: int = 0, start: StartAt = BEGINNING
    ) -> KafkaConsumer:
        consumer = await KafkaConsumer.create(self._ctx(), topic, partition=partition, start=start)
        self._closables.add(consumer)
        return consumer

    async def join_group(
        self, group: str, topic: str, *, member_id: str | None = None
    ) -> KafkaGroupMember:
        member = await KafkaGroupMember.create(self._ctx(), group, topic, member_id=member_id)
        self._closables.add(member)
        return member

    async def beginning_offset(self, topic: str, partition: int = 0) -> int:
        tp = await self._tp(topic, partition)
        with translated("beginning_offset"):
            return int((await self._offsets_consumer().beginning_offsets([tp]))[tp])

    async def end_offset(self, topic: str, partition: int = 0) -> int:
        """The last stable offset (read_committed): open transactions hold it back."""
        tp = await self._tp(topic, partition)
        with translated("end_offset"):
            return int((await self._offsets_consumer().end_offsets([tp]))[tp])

    async def offset_for_time(
        self, topic: str, timestamp_ms: int, partition: int = 0
    ) -> int | None:
        tp = await self._tp(topic, partition)
        with translated("offset_for_time"):
            found = (await self._offsets_consumer().offsets_for_times({tp: timestamp_ms}))[tp]
        return None if found is None else int(found.offset)

    # -- internals ----------------------------------------------------------------------

    def _ctx(self) -> KafkaContext:
        if self._context is None:
            raise BusError("the bus is not started: call `await bus.start()` first")
        return self._context

    def _offsets_consumer(self) -> AIOKafkaConsumer:
        if self._offsets is None:
            raise BusError("the bus is not started: call `await bus.start()` first")
        return self._offsets

    async def _tp(self, topic: str, partition: int) -> TopicPartition:
        context = self._ctx()
        await context.check_partition(topic, partition)
        return TopicPartition(context.stored(topic), partition)
