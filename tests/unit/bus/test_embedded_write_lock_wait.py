"""How a writer of the embedded log waits for another connection's write lock.

The writer's connection has ``busy_timeout`` = `LOCK_STEP_MS`, so one ``BEGIN IMMEDIATE`` waits at
most that long inside SQLite. A prompt write (the transactional producer's) tries again so for its
first ``prompt_ms``; after that — and any other write after its first try — waits in SQLite's own
handler for the rest of the bus's busy timeout, and then fails as before (`BusUnavailable`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.bus.embedded import db as dbmod
from services.bus.embedded.db import LOCK_STEP_MS, PROMPT_WAIT_MS, Database, begin_immediate
from services.bus.port import BusUnavailable


def locked_file(path: Path) -> sqlite3.Connection:
    """Another connection holding the file's write lock."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("CREATE TABLE IF NOT EXISTS t (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO t VALUES (1)")
    return other


class Counting(sqlite3.Connection):
    """Counts its ``BEGIN IMMEDIATE`` tries and the ``busy_timeout`` each ran with; on the
    ``release_at``-th try it lets ``other`` commit first."""

    tries = 0
    timeouts: list[int]
    release_at = 0
    other: sqlite3.Connection | None = None

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql == "BEGIN IMMEDIATE":
            self.tries += 1
            self.timeouts.append(super().execute("PRAGMA busy_timeout").fetchone()[0])
            if self.tries == self.release_at and self.other is not None:
                self.other.execute("COMMIT")
        return super().execute(sql, *args)


def clock(monkeypatch: pytest.MonkeyPatch, step_s: float) -> None:
    """``time.monotonic`` in `db` advancing by ``step_s`` a call, whatever the machine does meanwhile."""
    ticks: Iterator[float] = (n * step_s for n in range(1_000_000))
    monkeypatch.setattr(dbmod.time, "monotonic", lambda: next(ticks))


def writer(path: Path) -> Counting:
    conn = sqlite3.connect(path, isolation_level=None, factory=Counting)
    conn.execute(f"PRAGMA busy_timeout={LOCK_STEP_MS}")
    conn.timeouts = []
    return conn


def test_a_prompt_write_tries_every_step_until_the_lock_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f.db"
    conn = writer(path)
    conn.other = locked_file(path)
    conn.release_at = 4
    clock(monkeypatch, 0.001)
    begin_immediate(conn, 10_000, prompt_ms=5)
    assert conn.tries == 4 and conn.in_transaction
    assert conn.timeouts == [LOCK_STEP_MS] * 4
    conn.execute("INSERT INTO t VALUES (2)")
    conn.execute("COMMIT")
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (2,)


def test_past_its_prompt_wait_a_write_waits_in_sqlites_handler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.db"
    conn = writer(path)
    other = locked_file(path)
    threading.Timer(0.05, lambda: other.execute("COMMIT")).start()
    clock(monkeypatch, 0.001)  # the deadline is read once, then one ms per try
    begin_immediate(conn, 10_000, prompt_ms=5)
    # Five tries of a step each, then one for the rest of the 10 s (less the 5 ms the clock says passed).
    assert conn.timeouts[:5] == [LOCK_STEP_MS] * 5 and 9_990 <= conn.timeouts[5] <= 9_996
    assert conn.tries == 6
    assert conn.in_transaction
    conn.execute("ROLLBACK")
    assert conn.execute("PRAGMA busy_timeout").fetchone() == (LOCK_STEP_MS,)  # set back


def test_any_other_write_waits_in_sqlites_handler_after_its_first_try(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    conn = writer(path)
    other = locked_file(path)
    threading.Timer(0.05, lambda: other.execute("COMMIT")).start()
    begin_immediate(conn, 10_000)
    assert conn.tries == 2 and conn.timeouts[0] == LOCK_STEP_MS and conn.timeouts[1] > 9_000
    conn.execute("ROLLBACK")
    assert conn.execute("PRAGMA busy_timeout").fetchone() == (LOCK_STEP_MS,)


def test_the_lock_still_taken_after_the_timeout_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.db"
    other = locked_file(path)
    conn = writer(path)
    clock(monkeypatch, 0.001)  # the deadline (20 ms) is read once, then one ms per try
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        begin_immediate(conn, 20, prompt_ms=PROMPT_WAIT_MS)
    assert conn.tries == PROMPT_WAIT_MS + 1 and not conn.in_transaction
    assert conn.execute("PRAGMA busy_timeout").fetchone() == (LOCK_STEP_MS,)
    other.execute("ROLLBACK")


def test_an_error_other_than_busy_is_not_tried_again(tmp_path: Path) -> None:
    conn = writer(tmp_path / "f.db")
    conn.execute("BEGIN")  # a transaction is open: BEGIN IMMEDIATE fails at once, not busy
    with pytest.raises(sqlite3.OperationalError, match="within a transaction"):
        begin_immediate(conn, 10_000)
    assert conn.tries == 1


async def test_a_bus_write_waits_for_another_process_lock_and_then_commits(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db", busy_timeout_ms=10_000)
    await db.open()
    try:
        assert await db.fetchone("PRAGMA busy_timeout") == (10_000,)  # the reader keeps the bus's
        assert await db.write_sync(lambda c: c.execute("PRAGMA busy_timeout").fetchone()) == (LOCK_STEP_MS,)
        for rows, write in enumerate((db.write_sync, db.write_sync_prompt), start=1):
            other = locked_file(tmp_path / "bus.db")
            release = threading.Timer(0.05, other.execute, ("COMMIT",))
            release.start()
            # It waited for the other connection's row, then read it.
            assert await write(lambda c: c.execute("SELECT count(*) FROM t").fetchone()) == (rows,)
            release.join()
            other.close()
    finally:
        await db.close()


async def test_a_bus_write_gives_up_after_the_busy_timeout(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db", busy_timeout_ms=30)
    await db.open()
    other = locked_file(tmp_path / "bus.db")
    try:
        with pytest.raises(BusUnavailable, match="locked"):
            await db.write_sync(lambda c: None)
        with pytest.raises(BusUnavailable, match="locked"):
            await db.write_sync_prompt(lambda c: None)
        with pytest.raises(BusUnavailable, match="locked"):
            await db.write_sync_then(lambda result: None, lambda c: None)
        with pytest.raises(BusUnavailable, match="locked"):  # the context manager's transactions alike
            async with db.write():
                pass
        other.execute("ROLLBACK")
        async with db.write() as conn:  # free again
            await conn.execute("INSERT INTO t VALUES (3)")
        assert await db.fetchone("SELECT count(*) FROM t") == (1,)
    finally:
        await db.close()
