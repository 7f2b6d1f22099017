"""`EmbeddedBus`: the `Bus` port on one SQLite file (the single-machine log).

Any number of processes may open the same file: they see the same records and
can all produce, consume and join groups, because every rule lives in the file
(offsets, transactions, epochs, leases) and SQLite serialises the writers.
In-process consumers wake at once on a commit; other processes are told of it
by a datagram (`services.bus.embedded.peers`) and, should that be lost, notice
within ``poll_interval_ms``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Sequence
from typing import Any

from services.bus.embedded import cleaner, log
from services.bus.embedded.checkpoint import checkpoint_frames, checkpoint_when_due, commit_checkpoint_frames
from services.bus.embedded.consumer import EmbeddedConsumer
from services.bus.embedded.db import Database, now_ms
from services.bus.embedded.group import EmbeddedGroupMember
from services.bus.embedded.notify import Notifier, watch_other_processes
from services.bus.embedded.producer import EmbeddedProducer
from services.bus.embedded.shared import Settings, Shared
from services.bus.embedded.topics import ensure_topics
from services.bus.port import BEGINNING, BusError, StartAt, TopicSpec
from services.bus.urls import SqliteTarget

logger = logging.getLogger(__name__)


class EmbeddedBus:
    def __init__(self, target: SqliteTarget, *, url: str) -> None:
        self.url = url
        self.path = target.path
        self.prefix = target.prefix
        self.settings = Settings.from_options(target.options)
        self._shared = Shared(
            db=Database(
                target.path,
                busy_timeout_ms=self.settings.busy_timeout_ms,
                autocheckpoint_frames=lambda page_size: commit_checkpoint_frames(self.settings, page_size),
                writes_on_loop=bool(self.settings.writes_on_loop),
            ),
            notifier=Notifier(),
            prefix=target.prefix,
            settings=self.settings,
        )
        self._tasks: list[asyncio.Task[None]] = []
        # Whatever this bus handed out and is still referenced: closed with the bus.
        self._closables: weakref.WeakSet[Any] = weakref.WeakSet()
        self._started = False

    async def start(self) -> None:
        if self._started:
            return
        await self._shared.db.open()
        self._started = True
        self._shared.peers.open()
        interval = self.settings.poll_interval_ms / 1000
        self._tasks.append(
            asyncio.create_task(
                watch_other_processes(
                    self._shared.db,
                    self._shared.notifier,
                    interval,
                    prefix=Shared.PARTITION_KEYS,
                    stable_ends=log.stable_ends,
                ),
                name=f"bus-watch-{self.path.name}",
            )
        )
        if self.settings.maintenance_interval_ms > 0:
            self._tasks.append(asyncio.create_task(self._maintain(), name=f"bus-clean-{self.path.name}"))
        if self.settings.checkpoint_interval_ms > 0:
            self._tasks.append(
                asyncio.create_task(
                    checkpoint_when_due(
                        self._shared.db,
                        interval=self.settings.checkpoint_interval_ms / 1000,
                        frames=checkpoint_frames(self.settings, self._shared.db.page_size),
                    ),
                    name=f"bus-checkpoint-{self.path.name}",
                )
            )

    async def close(self) -> None:
        for closable in list(self._closables):
            with contextlib.suppress(Exception):
                await closable.close()
        self._closables.clear()
        await self._shared.appender.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        self._shared.peers.close()
        await self._shared.db.close()
        self._started = False

    async def __aenter__(self) -> EmbeddedBus:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the port ---------------------------------------------------------------------

    async def ensure_topics(self, specs: Sequence[TopicSpec]) -> None:
        self._check_started()
        await ensure_topics(self._shared.db, specs, prefix=self.prefix)

    async def producer(self, *, transactional_id: str | None = None) -> EmbeddedProducer:
        self._check_started()
        producer = await EmbeddedProducer.create(self._shared, transactional_id=transactional_id)
        self._closables.add(producer)
        return producer

    async def consumer(
        self, topic: str, *, partition: int = 0, start: StartAt = BEGINNING
    ) -> EmbeddedConsumer:
        self._check_started()
        consumer = await EmbeddedConsumer.create(
            self._shared, topic, partition=partition, start=start
        )
        self._closables.add(consumer)
        return consumer

    async def join_group(
        self, group: str, topic: str, *, member_id: str | None = None
    ) -> EmbeddedGroupMember:
        self._check_started()
        member = await EmbeddedGroupMember.create(self._shared, group, topic, member_id=member_id)
        self._closables.add(member)
        return member

    async def beginning_offset(self, topic: str, partition: int = 0) -> int:
        self._check_started()
        return (await log.stable(self._shared.db, await self._shared.pid(topic, partition))).log_start

    async def end_offset(self, topic: str, partition: int = 0) -> int:
        self._check_started()
        return (await log.stable(self._shared.db, await self._shared.pid(topic, partition))).end

    async def offset_for_time(
        self, topic: str, timestamp_ms: int, partition: int = 0
    ) -> int | None:
        self._check_started()
        pid = await self._shared.pid(topic, partition)
        return await log.offset_for_time(self._shared.db, pid, timestamp_ms)

    # -- beyond the port ----------------------------------------------------------------

    async def compact(self, *, now_ms: int | None = None) -> None:
        """Run one cleaner pass now: compaction, retention and transaction timeouts.

        The background task does this every ``maintenance_interval_ms``; tests
        and tools call it to see the effect at once.
        """
        self._check_started()
        now = _now() if now_ms is None else now_ms
        touched = await cleaner.abort_expired_transactions(self._shared.db, now=now)
        touched |= await cleaner.clean(self._shared.db, now=now)
        self._shared.wake_partitions(touched)

    async def _maintain(self) -> None:
        interval = self.settings.maintenance_interval_ms / 1000
        # Transaction timeouts are checked more often than the log is cleaned.
        tick = min(interval, 1.0)
        elapsed = 0.0
        while True:
            await asyncio.sleep(tick)
            elapsed += tick
            try:
                touched = await cleaner.abort_expired_transactions(self._shared.db, now=_now())
                if elapsed >= interval:
                    elapsed = 0.0
                    touched |= await cleaner.clean(self._shared.db, now=_now())
                self._shared.wake_partitions(touched)
            except Exception as exc:  # the next pass tries again
                logger.warning("embedded log: cleaner pass failed: %r", exc)

    def _check_started(self) -> None:
        if not self._started:
            raise BusError("the bus is not started: call `await bus.start()` first")


def _now() -> int:
    return now_ms()
