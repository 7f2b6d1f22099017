"""The way from clients to the committer and back: one per bus and process, shared by every client.

Every client sends its requests on `requests` and waits for the committer's
replies on `replies`, keyed by its requester id. If each client had its own
producer and its own consumer of `replies`, N clients in one process would
read (and fetch, and for the embedded log query) every reply N times, and
their small sends could not share a batch. A `RequestChannel` holds one
producer and one reply consumer per bus in a process; clients register their
requester id and get their replies handed to them. Only replies for a
registered requester are decoded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable

from services.bus.port import END, Bus, BusError, BusUnavailable, Consumer, OutRecord, Producer
from services.runtime import backoff
from services.runtime.metrics import MALFORMED_RECORDS
from topics.declarations import REPLIES
from topics.envelope import MalformedRecord, Reply, decode_reply

log = logging.getLogger(__name__)

Deliver = Callable[[Reply], None]

_channels: weakref.WeakKeyDictionary[Bus, RequestChannel] = weakref.WeakKeyDictionary()


class RequestChannel:
    """One requests producer and one replies consumer on a bus, shared by its clients."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self._routes: dict[bytes, Deliver] = {}
        self._users = 0
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._producer: Producer | None = None
        self._starting: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def acquire(cls, bus: Bus) -> RequestChannel:
        """The bus's channel (started on first use); `release` it when done."""
        channel = _channels.get(bus)
        if channel is None or channel._dead():
            channel = _channels[bus] = cls(bus)
            channel._starting = asyncio.ensure_future(channel._start())
        channel._users += 1
        try:
            await asyncio.shield(channel._ready)
        except BaseException:
            await channel.release()
            raise
        return channel

    async def release(self) -> None:
        self._users -= 1
        if self._users > 0:
            return
        if _channels.get(self.bus) is self:
            del _channels[self.bus]
        await self._stop()

    def register(self, requester_id: str, deliver: Deliver) -> None:
        self._routes[requester_id.encode()] = deliver

    def unregister(self, requester_id: str) -> None:
        self._routes.pop(requester_id.encode(), None)

    async def send(self, record: OutRecord) -> None:
        await self.send_all([record])

    async def send_all(self, records: list[OutRecord]) -> None:
        """Append records in this order, in one producer call (chained requests reach one batch)."""
        if self._producer is None:
            raise BusError("the request channel is closed")
        await self._producer.send(records)

    # -- internals ------------------------------------------------------------------

    def _dead(self) -> bool:
        return self._task is not None and self._task.done()

    async def _start(self) -> None:
        try:
            consumer = await self.bus.consumer(REPLIES, start=END)
            try:
                self._producer = await self.bus.producer()
            except BaseException:
                await consumer.close()
                raise
            self._task = asyncio.create_task(self._read(consumer), name="replies")
        except BaseException as exc:
            if _channels.get(self.bus) is self:
                del _channels[self.bus]
            if not self._ready.done():
                self._ready.set_exception(exc)
            return
        self._ready.set_result(None)

    async def _stop(self) -> None:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._ready
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await producer.close()

    async def _read(self, consumer: Consumer) -> None:
        unavailable = backoff.log_unavailable()
        try:
            while True:
                try:
                    records = await consumer.getmany(timeout_ms=1000)
                except BusUnavailable as exc:  # the log comes back; clients retry meanwhile
                    log.warning("reading replies failed; trying again", extra={"error": str(exc)})
                    await unavailable.pause()
                    continue
                unavailable.reset()
                for record in records:
                    deliver = self._routes.get(record.key or b"")
                    if deliver is None:
                        continue
                    try:
                        reply = decode_reply(record.value or b"")
                    except MalformedRecord as exc:
                        MALFORMED_RECORDS.labels(topic=record.topic).inc()
                        log.warning(
                            "skipping malformed reply",
                            extra={"topic": record.topic, "offset": record.offset, "error": str(exc)},
                        )
                        continue
                    try:
                        deliver(reply)
                    except Exception:
                        log.exception("delivering a reply failed", extra={"request_id": reply.id})
        finally:
            await consumer.close()
