"""The SQLite file behind the embedded log: connections, write transactions, errors.

Each `EmbeddedBus` holds two aiosqlite connections to the file: a writer, used
only inside `Database.write` (``BEGIN IMMEDIATE`` … ``COMMIT``, serialised in
this process by a lock and across processes by SQLite's write lock), and a
reader for everything else (WAL readers never wait for the writer). Every
statement of the adapter goes through this module, so SQLite errors become
`BusUnavailable` in one place and a cancelled coroutine never leaves a write
transaction open.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import aiosqlite

from services.bus.embedded.schema import CONNECTION_PRAGMAS, DDL, PAGE_SIZE, SCHEMA_VERSION
from services.bus.port import BusError, BusUnavailable

Params = Sequence[Any] | dict[str, Any]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Database:
    """One SQLite log file, opened by one bus."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = 10_000) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()

    async def open(self) -> None:
        try:
            await self._open()
        except BaseException:
            await self.close()
            raise

    async def _open(self) -> None:
        with translate_errors(f"cannot open the log {self.path}"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = await self._connect()
            # Both are properties of the file: page_size only while it is empty,
            # journal_mode needs the write lock (busy_timeout covers that).
            await self._writer.execute(f"PRAGMA page_size={PAGE_SIZE}")
            await self._writer.execute("PRAGMA journal_mode=WAL")
            async with self.write() as conn:
                # Not executescript: it would COMMIT the open transaction first.
                for statement in DDL.split(";"):
                    if statement.strip():
                        await conn.execute(statement)
                await conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
                rows = await fetchall(conn, "SELECT value FROM meta WHERE key = 'schema_version'")
            if rows[0][0] != str(SCHEMA_VERSION):
                raise BusError(
                    f"embedded log {self.path} has schema version {rows[0][0]}, "
                    f"this draplane reads version {SCHEMA_VERSION}"
                )
            self._reader = await self._connect()

    async def _connect(self) -> aiosqlite.Connection:
        conn = await aiosqlite.connect(self.path, isolation_level=None)
        await conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
        for pragma in CONNECTION_PRAGMAS:
            await conn.execute(pragma)
        return conn

    async def close(self) -> None:
        for conn in (self._reader, self._writer):
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
        self._reader = self._writer = None

    @property
    def reader(self) -> aiosqlite.Connection:
        if self._reader is None:
            raise BusError("the embedded bus is not started")
        return self._reader

    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator[aiosqlite.Connection]:
        """A write transaction: ``BEGIN IMMEDIATE`` on entry, ``COMMIT`` on a clean exit.

        On any exception (cancellation included) it rolls back. Statements queue
        on the connection's thread in order, so the ROLLBACK always runs after
        whatever statement was in flight, and before the next transaction.
        """
        conn = self._writer
        if conn is None:
            raise BusError("the embedded bus is not started")
        async with self._write_lock:
            try:
                with translate_errors("write failed"):
                    await conn.execute("BEGIN IMMEDIATE")
                    yield conn
            except BaseException:
                await asyncio.shield(self._rollback(conn))
                raise
            with translate_errors("commit failed"):
                await asyncio.shield(conn.execute("COMMIT"))

    @staticmethod
    async def _rollback(conn: aiosqlite.Connection) -> None:
        with contextlib.suppress(sqlite3.Error, ValueError):
            await conn.execute("ROLLBACK")

    async def fetchall(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        with translate_errors("read failed"):
            rows = await self.reader.execute_fetchall(sql, params)
        return cast(list[tuple[Any, ...]], rows)  # tuples: no row_factory is set

    async def fetchone(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def data_version(self) -> int:
        row = await self.fetchone("PRAGMA data_version")
        return int(row[0]) if row else 0


async def fetchall(conn: aiosqlite.Connection, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
    """Run a statement inside a write transaction and return its rows."""
    rows = await conn.execute_fetchall(sql, params)
    return cast(list[tuple[Any, ...]], rows)  # tuples: no row_factory is set


@contextlib.contextmanager
def translate_errors(what: str) -> Iterator[None]:
    """SQLite and file-system failures (a locked or unreadable file) become `BusUnavailable`."""
    try:
        yield
    except (sqlite3.DatabaseError, OSError) as exc:
        raise BusUnavailable(f"embedded log: {what}: {exc}") from exc
