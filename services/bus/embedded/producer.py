"""Producers of the embedded log: plain appends, and transactions with fencing.

A plain producer appends a batch in one SQLite transaction. A transactional
producer sends inside ``async with producer.transaction() as txn``: each
``txn.send`` appends at once (so it can return the real offsets) marked with the
open transaction, which read_committed readers cannot see past; leaving the
block commits (records and group offsets together) or, on an exception, aborts.
See `services.bus.embedded.txns` for the coordinator's rules.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import aiosqlite

from services.bus.embedded import txns
from services.bus.embedded.db import now_ms
from services.bus.embedded.log import append
from services.bus.embedded.shared import Shared
from services.bus.port import BusError, OutRecord, ProducerFenced

log = logging.getLogger(__name__)


class EmbeddedProducer:
    def __init__(self, shared: Shared, *, transactional_id: str | None, epoch: int | None) -> None:
        self._shared = shared
        self._tid = transactional_id  # stored (prefixed) id
        self._epoch = epoch
        self._fenced: ProducerFenced | None = None
        self._open: EmbeddedTransaction | None = None
        self._closed = False

    @classmethod
    async def create(cls, shared: Shared, *, transactional_id: str | None) -> EmbeddedProducer:
        if transactional_id is None:
            return cls(shared, transactional_id=None, epoch=None)
        stored = shared.stored(transactional_id)
        async with shared.db.write() as conn:
            epoch, touched = await txns.init_producer(conn, stored)
        shared.wake_partitions(touched)
        return cls(shared, transactional_id=stored, epoch=epoch)

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        self._check_usable()
        if self._tid is not None:
            raise BusError("a transactional producer sends inside `async with producer.transaction()`")
        if not records:
            return []
        pids = await self._shared.check_records(records)
        async with self._shared.db.write() as conn:
            appended = await append(conn, records, pids=pids, txn=None, now=now_ms())
        self._shared.wake_partitions(pids.values())
        return appended.offsets

    def transaction(self) -> _TransactionContext:
        if self._tid is None:
            raise BusError("transaction() needs a producer created with a transactional_id")
        return _TransactionContext(self)

    async def close(self) -> None:
        if self._open is not None:
            try:
                await self._open.abort()
            except BusError as exc:
                log.warning("embedded log: aborting the open transaction on close failed: %s", exc)
        self._closed = True

    # -- internals used by the transaction ------------------------------------------

    def _check_usable(self) -> None:
        if self._closed:
            raise BusError("the producer is closed")
        if self._fenced is not None:
            raise ProducerFenced(str(self._fenced))

    async def _check_epoch(self, conn: aiosqlite.Connection | None = None) -> None:
        assert self._tid is not None and self._epoch is not None
        try:
            await txns.check_epoch(
                self._shared.db if conn is None else conn, self._tid, self._epoch
            )
        except ProducerFenced as exc:
            self._fenced = exc
            raise


class EmbeddedTransaction:
    """One open transaction; its records and offsets commit together."""

    def __init__(self, producer: EmbeddedProducer) -> None:
        self._producer = producer
        self._shared = producer._shared
        self._txn: int | None = None
        self._offsets: dict[tuple[str, str, int], int] = {}  # (group, topic, partition) -> offset

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        producer = self._producer
        producer._check_usable()
        if not records:
            return []
        pids = await self._shared.check_records(records)
        assert producer._tid is not None and producer._epoch is not None
        async with self._shared.db.write() as conn:
            await producer._check_epoch(conn)
            txn = self._txn
            if txn is None:
                txn = await txns.begin(
                    conn,
                    producer._tid,
                    producer._epoch,
                    now=now_ms(),
                    timeout_ms=self._shared.settings.transaction_timeout_ms,
                )
            appended = await append(conn, records, pids=pids, txn=txn, now=now_ms())
            await txns.add_partitions(conn, txn, appended.first)
        self._txn = txn
        return appended.offsets

    async def send_offsets(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        self._producer._check_usable()
        await self._producer._check_epoch()
        stored_group = self._shared.stored(group)
        for (topic, partition), offset in offsets.items():
            self._offsets[(stored_group, self._shared.stored(topic), partition)] = offset

    async def commit(self) -> None:
        producer = self._producer
        producer._check_usable()
        written: set[int] = set()
        async with self._shared.db.write() as conn:
            await producer._check_epoch(conn)
            if self._txn is not None:
                written = await txns.commit(conn, self._txn)
            if self._offsets:
                await conn.executemany(
                    "INSERT OR REPLACE INTO group_offsets (grp, topic, partition, offset) "
                    "VALUES (?, ?, ?, ?)",
                    [(g, t, p, o) for (g, t, p), o in self._offsets.items()],
                )
        self._txn = None
        self._shared.wake_partitions(written)

    async def abort(self) -> None:
        if self._txn is None:
            return
        async with self._shared.db.write() as conn:
            # Only our own transaction, and only while our epoch owns it: a
            # fencing producer may already have aborted it.
            rows = await conn.execute_fetchall(
                "SELECT 1 FROM txns WHERE id = ? AND transactional_id = ? AND epoch = ?",
                (self._txn, self._producer._tid, self._producer._epoch),
            )
            touched = await txns.abort(conn, self._txn) if list(rows) else set()
        self._txn = None
        self._shared.wake_partitions(touched)


class _TransactionContext:
    """``async with producer.transaction() as txn``: commit on exit, abort on error."""

    def __init__(self, producer: EmbeddedProducer) -> None:
        self._producer = producer
        self._txn: EmbeddedTransaction | None = None

    async def __aenter__(self) -> EmbeddedTransaction:
        producer = self._producer
        producer._check_usable()
        if producer._open is not None:
            raise BusError("this producer already has an open transaction")
        self._txn = producer._open = EmbeddedTransaction(producer)
        return self._txn

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> bool | None:
        txn = self._txn
        assert txn is not None
        try:
            if exc_type is None:
                try:
                    await txn.commit()
                except ProducerFenced:
                    raise
                except BaseException:
                    await self._abort_quietly(txn)
                    raise
            else:
                await self._abort_quietly(txn)
        finally:
            self._producer._open = None
        return None

    @staticmethod
    async def _abort_quietly(txn: EmbeddedTransaction) -> None:
        """Abort, without hiding the exception that caused it."""
        try:
            await txn.abort()
        except BusError as exc:
            log.warning("embedded log: abort failed: %s", exc)
