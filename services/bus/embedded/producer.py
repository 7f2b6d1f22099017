"""Producers of the embedded log: plain appends, and transactions with fencing.

A plain producer appends a batch in one SQLite transaction. A transactional
producer sends inside ``async with producer.transaction() as txn``: each
``txn.send`` appends at once (so it can return the real offsets) marked with the
open transaction, which read_committed readers cannot see past; leaving the
block commits (records and group offsets together) or, on an exception, aborts.
``txn.send_with_commit`` records are written by the commit itself, in its own
write transaction: they need no marking, and no write transaction of their own.
So are ``txn.send_then``'s, and the records computed from their offsets: the
committer's object records and the replies that carry their offsets are one
write transaction, not two with a hop to the event loop between them.
See `services.bus.embedded.txns` for the coordinator's rules.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from services.bus.embedded import txns
from services.bus.embedded.db import now_ms
from services.bus.embedded.log import Appended, append
from services.bus.embedded.shared import Shared
from services.bus.port import BusError, OutRecord, ProducerFenced, check_then_records

log = logging.getLogger(__name__)
GROUP_OFFSETS_SQL = "INSERT OR REPLACE INTO group_offsets (grp, topic, partition, offset) VALUES (?, ?, ?, ?)"


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
        epoch, touched = await shared.db.write_sync(txns.init_producer, stored)
        shared.wake_partitions(touched)
        return cls(shared, transactional_id=stored, epoch=epoch)

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        self._check_usable()
        if self._tid is not None:
            raise BusError("a transactional producer sends inside `async with producer.transaction()`")
        if not records:
            return []
        pids = await self._shared.check_records(records)
        return await self._shared.appender.append(records, pids)

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

    def _note(self, error: ProducerFenced) -> None:
        if self._fenced is None:
            self._fenced = error


Then = Callable[[list[int]], Sequence[OutRecord]]


@dataclass(slots=True)
class _Staged:
    """A `send_then`: its records, and what its ``then`` may write where (partition ids, compacted or not)."""

    records: list[OutRecord]
    then: Then
    then_to: list[tuple[str, int]]
    compacted: set[tuple[str, int]]


class EmbeddedTransaction:
    """One open transaction; its records and offsets commit together.

    Each `send` and the commit are one write transaction of the file each,
    run whole (`Database.write_sync`, see `services.bus.embedded.db`); the
    records of `send_with_commit` are appended by the commit's.
    """

    def __init__(self, producer: EmbeddedProducer) -> None:
        self._producer = producer
        self._shared = producer._shared
        self._txn: int | None = None
        self._offsets: dict[tuple[str, str, int], int] = {}  # (group, topic, partition) -> offset
        self._with_commit: list[OutRecord] = []  # appended by the commit (send_with_commit)
        self._with_commit_pids: dict[tuple[str, int], int] = {}
        self._staged: list[_Staged] = []  # appended by the commit, with what their `then` returns (send_then)

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        producer = self._producer
        producer._check_usable()
        if not records:
            return []
        pids = await self._shared.check_records(records)
        assert producer._tid is not None and producer._epoch is not None
        try:
            self._txn, appended = await self._shared.db.write_sync(
                _send,
                producer._tid,
                producer._epoch,
                self._txn,
                records,
                pids,
                self._shared.settings.transaction_timeout_ms,
            )
        except ProducerFenced as exc:
            producer._note(exc)
            raise
        return appended.offsets

    async def send_offsets(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        producer = self._producer
        producer._check_usable()
        assert producer._tid is not None and producer._epoch is not None
        try:
            # One indexed SELECT: on the event loop's thread, not a hop to the reader's (the commit checks again).
            await self._shared.db.read_now(txns.check_epoch, producer._tid, producer._epoch)
        except ProducerFenced as exc:
            producer._note(exc)
            raise
        stored_group = self._shared.stored(group)
        for (topic, partition), offset in offsets.items():
            self._offsets[(stored_group, self._shared.stored(topic), partition)] = offset

    async def send_with_commit(self, records: Sequence[OutRecord]) -> None:
        """Checked now, appended by the commit's write transaction (already committed there: no marking)."""
        self._producer._check_usable()
        if not records:
            return
        self._with_commit_pids.update(await self._shared.check_records(records))
        self._with_commit.extend(records)

    async def send_then(
        self,
        records: Sequence[OutRecord],
        then: Then,
        *,
        then_to: Sequence[tuple[str, int]],
        after: Awaitable[object] | None = None,
    ) -> None:
        """Checked now; the commit's write transaction appends ``records``, calls ``then`` inside it with
        their offsets and appends what it returns (``after``: the caller awaits it before the commit,
        which is when these are written)."""
        self._producer._check_usable()
        self._with_commit_pids.update(await self._shared.check_records(records))
        compacted: set[tuple[str, int]] = set()
        for topic, partition in then_to:
            self._with_commit_pids[(topic, partition)] = await self._shared.pid(topic, partition)
            if "compact" in (await self._shared.topic(topic)).policies:
                compacted.add((topic, partition))
        self._staged.append(_Staged(list(records), then, list(then_to), compacted))

    async def commit(self) -> None:
        producer = self._producer
        producer._check_usable()
        assert producer._tid is not None and producer._epoch is not None
        rows = [(g, t, p, o) for (g, t, p), o in self._offsets.items()]
        try:
            # The other processes are told right after the commit, on its thread (see write_sync_then).
            written = await self._shared.db.write_sync_then(
                self._shared.peers.announce,
                _commit,
                producer._tid,
                producer._epoch,
                self._txn,
                rows,
                self._staged,
                self._with_commit,
                self._with_commit_pids,
            )
        except ProducerFenced as exc:
            producer._note(exc)
            raise
        self._txn = None
        self._with_commit = []
        self._staged = []
        self._shared.wake_local(written)

    async def abort(self) -> None:
        self._with_commit = []  # never written
        self._staged = []
        if self._txn is None:
            return
        producer = self._producer
        touched = await self._shared.db.write_sync(_abort, producer._tid, producer._epoch, self._txn)
        self._txn = None
        self._shared.wake_partitions(touched)


def _send(
    conn: sqlite3.Connection,
    tid: str,
    epoch: int,
    txn: int | None,
    records: Sequence[OutRecord],
    pids: dict[tuple[str, int], int],
    timeout_ms: int,
) -> tuple[int, Appended]:
    """One `Transaction.send`: check the epoch, open the transaction if needed, append (stamped now)."""
    now = now_ms()
    txns.check_epoch(conn, tid, epoch)
    if txn is None:
        txn = txns.begin(conn, tid, epoch, now=now, timeout_ms=timeout_ms)
    appended = append(conn, records, pids=pids, txn=txn, now=now)
    txns.add_partitions(conn, txn, appended.first)
    return txn, appended


def _commit(
    conn: sqlite3.Connection,
    tid: str,
    epoch: int,
    txn: int | None,
    offsets: list[tuple[str, str, int, int]],
    staged: Sequence[_Staged],
    with_commit: Sequence[OutRecord],
    pids: dict[tuple[str, int], int],
) -> set[int]:
    """Commit: check the epoch, make the records visible, append the `send_then` records and what their
    ``then`` makes of their offsets, then those sent with the commit, store the group offsets. Returns
    the partition ids written. Appended records are stamped with the time they are appended."""
    txns.check_epoch(conn, tid, epoch)
    written = txns.commit(conn, txn) if txn is not None else set()
    now = now_ms()
    for send in staged:
        # Appended unmarked, like the records sent with the commit (below).
        appended = append(conn, send.records, pids=pids, txn=None, now=now)
        written.update(appended.first)
        more = send.then(appended.offsets)
        check_then_records(more, send.then_to)
        for i, record in enumerate(more):
            if record.key is None and (record.topic, record.partition) in send.compacted:
                raise BusError(f"compacted topic {record.topic!r} cannot accept a record without a key (record {i})")
        written.update(append(conn, more, pids=pids, txn=None, now=now).first)
    if with_commit:
        # Appended unmarked: this write transaction makes them visible with the rest, or none of it.
        written.update(append(conn, with_commit, pids=pids, txn=None, now=now).first)
    if offsets:
        conn.executemany(GROUP_OFFSETS_SQL, offsets)
    return written


def _abort(conn: sqlite3.Connection, tid: str | None, epoch: int | None, txn: int) -> set[int]:
    """Abort our own transaction, and only while our epoch owns it: a fencing producer may have already."""
    owned = conn.execute(
        "SELECT 1 FROM txns WHERE id = ? AND transactional_id = ? AND epoch = ?", (txn, tid, epoch)
    ).fetchone()
    return txns.abort(conn, txn) if owned is not None else set()


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
