"""Consumer-group membership on Kafka, and leadership as ownership of partition 0.

A member is an aiokafka consumer subscribed to the topic in the group, with
`LeaderStickyAssignor` and a rebalance listener. aiokafka rebalances eagerly:
every rebalance revokes everything and assigns again. The listener therefore
decides on the assignment, not the revocation: partition 0 assigned → leader;
assigned elsewhere after we held it → `lost` (for good: close and join again).
A leader that keeps partition 0 across a rebalance keeps its read position
instead of going back to the committed offset, so nothing is read twice.

``max_poll_interval_ms`` is set very high: membership here means liveness
(heartbeats), not a poll loop; a standby may not read for hours.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
from aiokafka.structs import TopicPartition

from services.bus.kafka.assignor import LeaderStickyAssignor
from services.bus.kafka.consumer import REBALANCE_GRACE_S, consumer_options, to_records
from services.bus.kafka.context import KafkaContext
from services.bus.kafka.errors import translated
from services.bus.port import BEGINNING, END, Record, StartAt

log = logging.getLogger(__name__)

DAY_MS = 24 * 60 * 60 * 1000


class KafkaGroupMember:
    def __init__(self, context: KafkaContext, group: str, topic: str, member_id: str | None) -> None:
        self.group = group
        self.topic = topic
        self.member_id = member_id or "member"
        self.leader = asyncio.Event()
        self.lost = asyncio.Event()
        self._context = context
        self._tp0 = TopicPartition(context.stored(topic), 0)
        self._kept_position: int | None = None
        settings = context.settings
        self._consumer = AIOKafkaConsumer(
            **{**consumer_options(context.client, settings), "client_id": f"{settings.client_id}-{self.member_id}"},
            group_id=context.stored(group),
            session_timeout_ms=settings.session_timeout_ms,
            heartbeat_interval_ms=settings.heartbeat_interval_ms,
            rebalance_timeout_ms=settings.session_timeout_ms,
            max_poll_interval_ms=7 * DAY_MS,
            partition_assignment_strategy=(LeaderStickyAssignor(),),
        )
        self._leader_consumer = LeaderConsumer(self)
        self._closed = False

    @classmethod
    async def create(
        cls, context: KafkaContext, group: str, topic: str, *, member_id: str | None
    ) -> KafkaGroupMember:
        await context.partitions(topic)  # the topic must exist
        member = cls(context, group, topic, member_id)
        member._consumer.subscribe([member._tp0.topic], listener=_Listener(member))
        try:
            with translated("joining a group"):
                await member._consumer.start()
        except BaseException:
            await member._consumer.stop()
            raise
        return member

    @property
    def consumer(self) -> LeaderConsumer:
        return self._leader_consumer

    @property
    def partitions(self) -> frozenset[int]:
        """The partitions this member owns now."""
        return frozenset(tp.partition for tp in self._consumer.assignment())

    async def committed(self) -> int | None:
        with translated("reading the committed offset"):
            offset = await self._consumer.committed(self._tp0)
        return None if offset is None or offset < 0 else int(offset)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._consumer.stop()  # leaves the group: partition 0 moves at once
        self.leader.clear()
        self.lost.set()

    # -- the rebalance listener's decisions ------------------------------------------

    def _revoked(self, revoked: set[TopicPartition]) -> None:
        if self._tp0 in revoked and self.leader.is_set():
            self._kept_position = self._leader_consumer.position()

    async def _assigned(self, assigned: set[TopicPartition]) -> None:
        kept, self._kept_position = self._kept_position, None
        if self._tp0 not in assigned:
            if self.leader.is_set():
                log.info("kafka: %s lost partition 0 of %s", self.member_id, self.topic)
                self.leader.clear()
                self.lost.set()
            return
        if self.lost.is_set():
            return
        if kept is not None:
            self._consumer.seek(self._tp0, kept)  # a rebalance, but we stay leader
        self._leader_consumer._position = await self._consumer.position(self._tp0)
        self.leader.set()


class _Listener(ConsumerRebalanceListener):
    def __init__(self, member: KafkaGroupMember) -> None:
        self._member = member

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self._member._revoked(set(revoked))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await self._member._assigned(set(assigned))


class LeaderConsumer:
    """The member's consumer of partition 0: returns records only while leader."""

    def __init__(self, member: KafkaGroupMember) -> None:
        self._member = member
        self._position = 0

    async def getmany(self, *, timeout_ms: int = 100, max_records: int = 10_000) -> list[Record]:
        member = self._member
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        if not member.leader.is_set():
            try:
                async with asyncio.timeout(timeout_ms / 1000):
                    await member.leader.wait()
            except TimeoutError:
                return []
        remaining = max(0, int((deadline - loop.time()) * 1000))
        tp = member._tp0
        consumer = member._consumer
        with translated("getmany"):
            try:
                async with asyncio.timeout(remaining / 1000 + REBALANCE_GRACE_S):
                    data = await consumer.getmany(tp, timeout_ms=remaining, max_records=max_records)
            except TimeoutError:
                return []
            if tp in consumer.assignment():
                self._position = await consumer.position(tp)
        return to_records(member.topic, 0, data.get(tp, []))

    async def seek(self, offset: StartAt) -> None:
        member = self._member
        consumer, tp = member._consumer, member._tp0
        with translated("seek"):
            if offset == BEGINNING:
                await consumer.seek_to_beginning(tp)
            elif offset == END:
                await consumer.seek_to_end(tp)
            elif isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0:
                consumer.seek(tp, offset)
            else:
                raise ValueError(f"cannot seek to {offset!r}: use an offset >= 0, BEGINNING or END")
            self._position = await consumer.position(tp)

    def position(self) -> int:
        return self._position

    async def close(self) -> None:
        """The member owns this consumer; closing the member closes it."""
