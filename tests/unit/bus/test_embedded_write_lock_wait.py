"""A writer of the embedded log waits for another connection's write lock in steps of at most 1 ms.

SQLite's own busy handler sleeps 1, 2, 5, 10 … ms between tries; `begin_immediate` retries after
0.1 ms, doubling to 1 ms, for as long as the busy timeout allows, and then fails as before.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from services.bus.embedded import db as dbmod
from services.bus.embedded.db import Database, begin_immediate
from services.bus.port import BusUnavailable


def locked_file(path: Path) -> sqlite3.Connection:
    """Another connection holding the file's write lock."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("CREATE TABLE IF NOT EXISTS t (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO t VALUES (1)")
    return other


def test_the_lock_is_retried_in_fine_steps_until_it_is_free(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.db"
    other = locked_file(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=0")
    pauses: list[float] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 7:
            other.execute("COMMIT")  # the other writer lets go

    monkeypatch.setattr(dbmod.time, "sleep", sleep)
    begin_immediate(conn, 10_000)
    assert conn.in_transaction
    conn.execute("INSERT INTO t VALUES (2)")
    conn.execute("COMMIT")
    assert pauses == pytest.approx([0.0001, 0.0002, 0.0004, 0.0008, 0.001, 0.001, 0.001])
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (2,)


def test_the_lock_still_taken_after_the_timeout_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    other = locked_file(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=0")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        begin_immediate(conn, 20)
    assert not conn.in_transaction
    other.execute("ROLLBACK")


def test_an_error_other_than_busy_is_not_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = sqlite3.connect(tmp_path / "f.db", isolation_level=None)
    conn.execute("BEGIN")  # a transaction is open: BEGIN IMMEDIATE fails at once, not busy
    monkeypatch.setattr(dbmod.time, "sleep", lambda s: pytest.fail("retried"))
    with pytest.raises(sqlite3.OperationalError, match="within a transaction"):
        begin_immediate(conn, 10_000)


async def test_a_bus_write_waits_for_another_process_lock_and_then_commits(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db", busy_timeout_ms=10_000)
    await db.open()
    try:
        # The writer does not use SQLite's busy handler (its sleeps are coarse): begin_immediate waits.
        assert await db.fetchone("PRAGMA busy_timeout") == (10_000,)  # the reader keeps it
        assert await db.write_sync(lambda c: c.execute("PRAGMA busy_timeout").fetchone()) == (0,)
        other = locked_file(tmp_path / "bus.db")
        release = threading.Timer(0.05, lambda: other.execute("COMMIT"))
        release.start()
        assert await db.write_sync(lambda c: c.execute("SELECT count(*) FROM t").fetchone()) == (1,)
        release.join()
    finally:
        await db.close()


async def test_a_bus_write_gives_up_after_the_busy_timeout(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db", busy_timeout_ms=30)
    await db.open()
    other = locked_file(tmp_path / "bus.db")
    try:
        with pytest.raises(BusUnavailable, match="locked"):
            await db.write_sync(lambda c: None)
        with pytest.raises(BusUnavailable, match="locked"):  # the context manager's transactions alike
            async with db.write():
                pass
        other.execute("ROLLBACK")
        async with db.write() as conn:  # free again
            await conn.execute("INSERT INTO t VALUES (3)")
        assert await db.fetchone("SELECT count(*) FROM t") == (1,)
    finally:
        await db.close()
