"""Group commit for plain appends: concurrent sends of one process share a write transaction.

Every plain `send` used to be a SQLite write transaction of its own, and those
are serialised: a hundred clients sending one request each meant a hundred
transactions one after another. Sends now queue here until the next turn of
the event loop (and, while a write waits for the file's lock on the writer's
thread, until it is done); then one transaction appends all of them — one
``BEGIN IMMEDIATE`` … ``COMMIT`` and one append (a few statements) for the
lot, on the event loop's thread or with one hop to the writer's
(`Database.write_sync`). Each send keeps
its own outcome (should the combined append be refused, the sends are appended
again one by one, each under a savepoint), its records stay together and in
order, and sends are appended in the order they were made. A lone send goes
out at once: nothing lingers.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Sequence

from services.bus.embedded.db import Database, now_ms
from services.bus.embedded.log import append
from services.bus.port import BusError, OutRecord

Pids = dict[tuple[str, int], int]
_Pending = tuple[Sequence[OutRecord], Pids, "asyncio.Future[list[int]]"]


class Appender:
    def __init__(self, db: Database, on_commit: Callable[[Iterable[int]], None]) -> None:
        self._db = db
        self._on_commit = on_commit
        self._queue: list[_Pending] = []
        self._task: asyncio.Task[None] | None = None

    async def append(self, records: Sequence[OutRecord], pids: Pids) -> list[int]:
        """Append one send's records (``pids``: their partition ids); returns their offsets."""
        future: asyncio.Future[list[int]] = asyncio.get_running_loop().create_future()
        self._queue.append((records, pids, future))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._drain(), name=f"append-{self._db.path.name}")
        return await future

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for _, _, future in self._queue:
            if not future.done():
                future.set_exception(BusError("the bus is closed"))
        self._queue.clear()

    async def _drain(self) -> None:
        while self._queue:
            group, self._queue = self._queue, []
            try:
                results = await self._db.write_sync(_append_group, [(r, p) for r, p, _ in group])
            except BaseException as exc:
                for _, _, future in group:
                    if not future.done():
                        future.set_exception(exc if isinstance(exc, Exception) else BusError("the bus is closed"))
                if not isinstance(exc, Exception):
                    raise
                continue
            touched: set[int] = set()
            for (_, pids, future), result in zip(group, results, strict=True):
                if isinstance(result, BusError):
                    if not future.done():
                        future.set_exception(result)
                    continue
                touched.update(pids.values())
                if not future.done():
                    future.set_result(result)
            self._on_commit(touched)


def _append_group(
    conn: sqlite3.Connection, sends: list[tuple[Sequence[OutRecord], Pids]]
) -> list[list[int] | BusError]:
    """Append the sends as one append (a handful of statements), or, should that be refused, one by one.

    One append for the whole group keeps the statements — and with them, on
    the writer's thread, its waits for the GIL while it holds the write lock
    (see `log.insert_rows`) — independent of the number of sends. Each send's
    records stay together and in order within each partition, sends in order.
    Their append time is taken here, inside the write transaction (the lock
    is held), as a broker stamps LogAppendTime on its append.
    """
    now = now_ms()
    if len(sends) > 1:
        records = [record for send, _ in sends for record in send]
        pids: Pids = {}
        for _, send_pids in sends:
            pids.update(send_pids)
        conn.execute("SAVEPOINT group_append")
        try:
            offsets = append(conn, records, pids=pids, txn=None, now=now).offsets
        except BusError:
            conn.execute("ROLLBACK TO group_append")
            conn.execute("RELEASE group_append")
        else:
            conn.execute("RELEASE group_append")
            results: list[list[int] | BusError] = []
            at = 0
            for send, _ in sends:
                results.append(offsets[at : at + len(send)])
                at += len(send)
            return results
    return _append_one_by_one(conn, sends, now)


def _append_one_by_one(
    conn: sqlite3.Connection, sends: list[tuple[Sequence[OutRecord], Pids]], now: int
) -> list[list[int] | BusError]:
    """Append each send under a savepoint, so one refused send does not undo the others."""
    results: list[list[int] | BusError] = []
    for records, pids in sends:
        conn.execute("SAVEPOINT send")
        try:
            results.append(append(conn, records, pids=pids, txn=None, now=now).offsets)
        except BusError as exc:
            conn.execute("ROLLBACK TO send")
            results.append(exc)
        conn.execute("RELEASE send")
    return results
