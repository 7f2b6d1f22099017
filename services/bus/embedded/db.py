"""The SQLite file behind the embedded log: connections, write transactions, errors.

Each `EmbeddedBus` holds three connections to the file. Two are used from a
thread of their own (`Connection`): a writer, for write transactions
(``BEGIN IMMEDIATE`` … ``COMMIT``, serialised in this process by a lock and
across processes by SQLite's write lock) that have to wait for that lock, and a
reader for reads that have to wait (WAL readers never wait for the writer).
The third is used on the event loop's own thread: consumers' reads
(`Database.read_now`) and, while SQLite's write lock is free, whole writes
(`Database.write_sync`), each falling back to its thread when SQLite says
busy. Every statement of the adapter goes through this module, so SQLite
errors become `BusUnavailable` in one place and a cancelled coroutine never
leaves a write transaction open.

The hot paths — appending, a transaction's sends and commit, a consumer's
read — are plain functions of a ``sqlite3.Connection`` run whole
(`Database.write_sync`, `Database.read_now`): on a thread, that is one hop
between the event loop and the thread per transaction, not one per statement.
Each hop costs tens of microseconds, and on a busy process far more, since the
thread must win the GIL back from the event loop to hand its result over; so
they run on the event loop's thread whenever they need not wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from services.bus.embedded import wal_index
from services.bus.embedded.schema import CONNECTION_PRAGMAS, DDL, PAGE_SIZE, SCHEMA_VERSION, upgrades_from
from services.bus.port import BusError, BusUnavailable

log = logging.getLogger(__name__)
Params = Sequence[Any] | dict[str, Any]
T = TypeVar("T")


SQLITE_AUTOCHECKPOINT = 1000  # SQLite's own ``wal_autocheckpoint``


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class Executed:
    """What a statement reports back: the rows it changed."""

    rowcount: int


class Connection:
    """One ``sqlite3`` connection, used from a thread of its own.

    Statements (`execute`, `executemany`, `execute_fetchall`) and whole
    functions (`run`) are jobs on that thread, in submission order. A job
    whose caller is cancelled still runs to its end.
    """

    def __init__(self, path: Path, *, busy_timeout_ms: int, autocheckpoint_frames: int = 0) -> None:
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._autocheckpoint_frames = autocheckpoint_frames
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sqlite-{path.name}")
        self._conn: sqlite3.Connection | None = None

    async def open(self) -> None:
        self._conn = await self._submit(self._connect)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
        for pragma in CONNECTION_PRAGMAS:
            conn.execute(pragma)
        conn.execute(f"PRAGMA wal_autocheckpoint={int(self._autocheckpoint_frames)}")
        return conn

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await self._submit(conn.close)
        self._executor.shutdown(wait=False)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(sqlite3_connection, *args, **kwargs)`` on the connection's thread."""
        conn = self._conn
        if conn is None:
            raise BusError("the embedded bus is not started")
        return await self._submit(functools.partial(fn, conn, *args, **kwargs))

    async def execute(self, sql: str, params: Params = ()) -> Executed:
        return await self.run(_execute, sql, params)

    async def executemany(self, sql: str, seq: Iterable[Params]) -> Executed:
        return await self.run(_executemany, sql, list(seq))

    async def execute_fetchall(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return await self.run(_fetchall, sql, params)

    async def _submit(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)


def _execute(conn: sqlite3.Connection, sql: str, params: Params) -> Executed:
    return Executed(conn.execute(sql, params).rowcount)


def _executemany(conn: sqlite3.Connection, sql: str, seq: list[Params]) -> Executed:
    return Executed(conn.executemany(sql, seq).rowcount)


def _fetchall(conn: sqlite3.Connection, sql: str, params: Params) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
    return rows


def _in_transaction(conn: sqlite3.Connection, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``BEGIN IMMEDIATE``, ``fn(conn, *args, **kwargs)``, ``COMMIT`` — or ``ROLLBACK`` on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn, *args, **kwargs)
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


def _in_transaction_then(
    conn: sqlite3.Connection, then: Callable[[T], None], fn: Callable[..., T], *args: Any, **kwargs: Any
) -> T:
    """`_in_transaction`, then ``then(result)`` once it committed (an error there is logged, not raised)."""
    result = _in_transaction(conn, fn, *args, **kwargs)
    try:
        then(result)
    except Exception:
        log.exception("embedded log: after a commit")
    return result


class Database:
    """One SQLite log file, opened by one bus."""

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout_ms: int = 10_000,
        autocheckpoint_frames: Callable[[int], int] = lambda page_size: SQLITE_AUTOCHECKPOINT,
        writes_on_loop: bool = True,
    ) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        # The WAL's length at which a commit checkpoints it itself, given the file's page size
        # (SQLite's 1000 by default; an `EmbeddedBus` that checkpoints in the background sets it
        # far higher: `checkpoint`). Known once the file is open: `autocheckpoint_frames`.
        self._autocheckpoint = autocheckpoint_frames
        self.page_size = PAGE_SIZE  # the file's own, once open: a file keeps the size it was made with
        self.autocheckpoint_frames = 0
        self.writes_on_loop = writes_on_loop  # see `_on_writer`
        self._writer: Connection | None = None
        self._reader: Connection | None = None
        self._here: sqlite3.Connection | None = None  # reads on the event loop's thread (see read_now)
        self._write_lock = asyncio.Lock()
        self._queued_writes = 0  # writes holding or waiting for the write lock (the writer's thread)
        self.commits = 0  # write transactions this process committed (`checkpoint` watches it)
        self._wal_index_held = False

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
            self.page_size = int((await self._writer.execute_fetchall("PRAGMA page_size"))[0][0])
            self.autocheckpoint_frames = self._autocheckpoint(self.page_size)
            await self._writer.execute(f"PRAGMA wal_autocheckpoint={int(self.autocheckpoint_frames)}")
            async with self.write() as conn:
                # The version first: a file of a newer draplane is left as it is.
                has_meta = await fetchall(conn, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
                rows = await fetchall(conn, "SELECT value FROM meta WHERE key = 'schema_version'") if has_meta else []
                found = str(rows[0][0]) if rows else None
                upgrades = () if found is None else upgrades_from(found)
                if upgrades is None:
                    raise BusError(
                        f"embedded log {self.path} has schema version {found}, "
                        f"this draplane reads version {SCHEMA_VERSION}"
                    )
                # Upgrades first, then whatever of today's tables is missing. Not executescript: it
                # would COMMIT the open transaction first.
                for statement in (*upgrades, *DDL.split(";")):
                    if statement.strip():
                        await conn.execute(statement)
                await conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
            self._reader = await self._connect()
            here = sqlite3.connect(self.path, isolation_level=None)
            here.execute("PRAGMA busy_timeout=0")  # never wait on the event loop: fall back to the threads
            for pragma in CONNECTION_PRAGMAS:
                here.execute(pragma)
            here.execute(f"PRAGMA wal_autocheckpoint={int(self.autocheckpoint_frames)}")  # it writes too
            self._here = here
            wal_index.acquire(self.path)
            self._wal_index_held = True

    async def _connect(self) -> Connection:
        """A connection on a thread of its own that never checkpoints (the writer's commits are
        let to once the file's page size is known: `_open`)."""
        conn = Connection(self.path, busy_timeout_ms=self.busy_timeout_ms)
        try:
            await conn.open()
        except BaseException:
            await conn.close()
            raise
        return conn

    async def close(self) -> None:
        if self._here is not None:
            with contextlib.suppress(Exception):
                self._here.close()
            self._here = None
        for conn in (self._reader, self._writer):
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
        self._reader = self._writer = None
        if self._wal_index_held:  # after the connections: see `wal_index`
            self._wal_index_held = False
            wal_index.release(self.path)

    @property
    def reader(self) -> Connection:
        if self._reader is None:
            raise BusError("the embedded bus is not started")
        return self._reader

    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator[Connection]:
        """A write transaction: ``BEGIN IMMEDIATE`` on entry, ``COMMIT`` on a clean exit.

        On any exception (cancellation included) it rolls back. Statements queue
        on the connection's thread in order, so the ROLLBACK always runs after
        whatever statement was in flight, and before the next transaction.
        """
        conn = self._writer
        if conn is None:
            raise BusError("the embedded bus is not started")
        self._queued_writes += 1
        try:
            async with self._write_lock:
                try:
                    with translate_errors("write failed"):
                        await conn.execute("BEGIN IMMEDIATE")
                        yield conn
                except BaseException:
                    await asyncio.shield(conn.run(_rollback))
                    raise
                with translate_errors("commit failed"):
                    await asyncio.shield(conn.execute("COMMIT"))
                self.commits += 1
        finally:
            self._queued_writes -= 1

    async def write_sync(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(sqlite3_connection, *args, **kwargs)`` as one write transaction, whole (see `_on_writer`).

        Commits when ``fn`` returns, rolls back when it raises. A caller
        cancelled meanwhile leaves the transaction to finish (or fail) alone.
        """
        return await self._on_writer(_in_transaction, fn, *args, **kwargs)

    async def write_sync_then(self, then: Callable[[T], None], fn: Callable[..., T], *args: Any) -> T:
        """`write_sync`, and ``then(fn's result)`` on the same thread as soon as the write committed.

        Why: what must follow a commit at once — telling the other processes
        (`Peers.announce`) — then happens before anything else, and when the
        write ran on the writer's thread, before the result's hop back to the
        event loop.
        """
        return await self._on_writer(_in_transaction_then, then, fn, *args)

    async def _on_writer(self, run: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``run(sqlite3_connection, *args, **kwargs)`` as one write, in this process one at a time.

        On the event loop's own thread when nothing else of this process is
        writing and SQLite's write lock is free at once (`writes_on_loop`);
        otherwise, and whenever SQLite says busy there, on the writer's thread,
        which waits for the lock. Why: a write is a few statements, far shorter
        than the two hops to a thread and back, and each hop can wait a GIL
        switch interval (5 ms) while the event loop computes. A write that
        has to wait keeps its place: the event loop only writes while no
        write of this process holds or waits for the lock, and a write refused
        as busy there was rolled back (SQLite refuses at ``BEGIN IMMEDIATE``).
        """
        conn = self._writer
        if conn is None:
            raise BusError("the embedded bus is not started")
        here = self._here
        if self.writes_on_loop and here is not None and not self._queued_writes:
            try:
                result = _unless_busy(here, "write", run, *args, **kwargs)
            except _Busy:
                pass
            else:
                self.commits += 1
                return result
        self._queued_writes += 1
        try:
            async with self._write_lock:
                with translate_errors("write failed"):
                    result = await conn.run(run, *args, **kwargs)
                self.commits += 1
                return result
        finally:
            self._queued_writes -= 1

    async def read_now(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(sqlite3_connection, *args, **kwargs)`` on the event loop's own thread, or the reader's when busy.

        Why not always the reader's thread: Python's sqlite3 lets go of the GIL
        around every row it steps to, and a thread waits up to the GIL's switch
        interval to get it back while the event loop's thread computes. A read
        of 1,000 records took ~4 ms on an idle process and ~250 ms beside a
        busy event loop (a scheduler running cycles), which delayed every reply
        and informer update there by up to 1.5 s. A WAL read never waits for
        writers, so it runs here at once; in the rare case SQLite says busy
        (another connection recovering the WAL), it goes to the reader thread,
        which may wait.
        """
        conn = self._here
        if conn is None:
            raise BusError("the embedded bus is not started")
        try:
            return _unless_busy(conn, "read", fn, *args, **kwargs)
        except _Busy:
            return await self.read_sync(fn, *args, **kwargs)

    async def read_sync(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(sqlite3_connection, *args, **kwargs)`` on the reader's thread."""
        with translate_errors("read failed"):
            return await self.reader.run(fn, *args, **kwargs)

    async def fetchall(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        with translate_errors("read failed"):
            return await self.reader.execute_fetchall(sql, params)

    async def fetchone(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def data_version(self) -> int:
        return await self.read_now(_data_version)


def _data_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA data_version").fetchone()
    return int(row[0]) if row else 0


class _Busy(Exception):
    """SQLite said busy to the event loop's connection; what was asked left nothing behind there."""


def _unless_busy(conn: sqlite3.Connection, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(conn, *args, **kwargs)`` on this thread; `_Busy` (rolled back) when SQLite says busy, so the
    caller can go to a thread that waits; any other SQLite or file-system failure is `BusUnavailable`.

    Plain ``try`` rather than `translate_errors`: this runs for every read and write of the log, and the
    context manager costs ~1 µs a call."""
    try:
        return fn(conn, *args, **kwargs)
    except sqlite3.OperationalError as exc:
        if _busy(exc):
            _rollback(conn)
            if not conn.in_transaction:
                raise _Busy from exc
        raise BusUnavailable(f"embedded log: {what} failed: {exc}") from exc
    except (sqlite3.DatabaseError, OSError) as exc:
        raise BusUnavailable(f"embedded log: {what} failed: {exc}") from exc


def _busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    text = str(exc)
    return "locked" in text or "busy" in text


def _rollback(conn: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):
        conn.execute("ROLLBACK")


async def fetchall(conn: Connection, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
    """Run a statement inside a write transaction and return its rows."""
    return await conn.execute_fetchall(sql, params)


@contextlib.contextmanager
def translate_errors(what: str) -> Iterator[None]:
    """SQLite and file-system failures (a locked or unreadable file) become `BusUnavailable`."""
    try:
        yield
    except (sqlite3.DatabaseError, OSError) as exc:
        raise BusUnavailable(f"embedded log: {what}: {exc}") from exc
