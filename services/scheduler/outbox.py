"""Fire-and-forget records for the side topics (``events``, ``decisions``), sent in batches.

Every attempt produces a decision record and most produce an Event. Both are
best effort and must never hold up the scheduling loop, and one produce round
trip per record would cap the scheduler at the log's latency (a few hundred
records per second on Kafka). So the loop only appends to this outbox; one
task drains it, sending whatever has accumulated as one batch. A failed send
is logged and counted, and its records are dropped, as client-go drops
Events it cannot write.

The task lingers ``linger`` seconds (20 ms by default) after the first record
of a batch before it sends: in steady state each bound pod puts an Event and a
decision, and sent at once they made one log append per pod beside the pod's
three requests — a write transaction, a wake-up of every other process on the
embedded log, and a turn at the log's write lock that the committer may be
waiting for. ``flush`` (and ``close``) send at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

from services.bus.port import Bus, OutRecord, Producer

log = logging.getLogger(__name__)

DEFAULT_MAX_BATCH = 1000
DEFAULT_MAX_PENDING = 100_000
DEFAULT_LINGER = 0.02  # seconds between a batch's first record and its send


class Outbox:
    """A queue of records and the task that sends them; ``put`` never blocks."""

    def __init__(
        self,
        bus: Bus,
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_pending: int = DEFAULT_MAX_PENDING,
        linger: float = DEFAULT_LINGER,
    ) -> None:
        self.bus = bus
        self.max_batch = max_batch
        self.max_pending = max_pending
        self.linger = linger
        self.batches = 0  # sends made
        self.sent = 0
        self.dropped = 0
        self._pending: deque[OutRecord] = deque()
        self._queued = 0  # records ever put
        self._done = 0  # records sent or dropped
        self._wakeup = asyncio.Event()
        self._urgent = asyncio.Event()  # a flush waits: send without lingering
        self._progress = asyncio.Condition()
        self._producer: Producer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._producer = await self.bus.producer()
        self._task = asyncio.create_task(self._run(), name="scheduler-outbox")

    async def close(self, *, drain_timeout: float = 5.0) -> None:
        """Send what is pending (waiting at most ``drain_timeout``), then stop."""
        if self._task is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(drain_timeout):
                    await self.flush()
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._producer is not None:
            await self._producer.close()
            self._producer = None

    def put(self, record: OutRecord) -> None:
        if len(self._pending) >= self.max_pending:
            self._pending.popleft()
            self.dropped += 1
            self._done += 1
        self._pending.append(record)
        self._queued += 1
        self._wakeup.set()

    async def flush(self) -> None:
        """Wait until every record put so far has been sent (or dropped)."""
        target = self._queued
        if self._done < target:
            self._urgent.set()
        async with self._progress:
            await self._progress.wait_for(lambda: self._done >= target)

    async def _run(self) -> None:
        assert self._producer is not None
        while True:
            await self._wakeup.wait()
            if self.linger > 0 and not self._urgent.is_set() and len(self._pending) < self.max_batch:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.linger):
                        await self._urgent.wait()
            self._wakeup.clear()
            self._urgent.clear()
            while self._pending:
                batch = [self._pending.popleft() for _ in range(min(self.max_batch, len(self._pending)))]
                try:
                    self.batches += 1
                    await self._producer.send(batch)
                    self.sent += len(batch)
                except Exception:
                    self.dropped += len(batch)
                    log.exception("could not write %d records to %s", len(batch), batch[0].topic)
                self._done += len(batch)
                async with self._progress:
                    self._progress.notify_all()
