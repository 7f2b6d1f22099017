"""Reads and writes of the embedded log run on the event loop's thread, and go to the log's threads when SQLite
is busy (writes also while another write of the process is on the writer's thread)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from services.bus.embedded.db import Database
from services.bus.port import BusUnavailable


def where(conn: sqlite3.Connection, answer: str) -> tuple[str, str]:
    return answer, threading.current_thread().name


async def test_a_read_runs_on_the_calling_thread(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db")
    await db.open()
    try:
        assert await db.read_now(where, "here") == ("here", threading.current_thread().name)
        assert await db.data_version() >= 0
    finally:
        await db.close()


async def test_a_busy_read_is_retried_on_the_reader_thread(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db")
    await db.open()
    calls: list[str] = []

    def busy_here(conn: sqlite3.Connection) -> str:
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database is locked")
        return "read"

    try:
        assert await db.read_now(busy_here) == "read"
        assert calls[0] == threading.current_thread().name
        assert calls[1] != threading.current_thread().name  # the reader's own thread
    finally:
        await db.close()


async def test_other_read_errors_say_the_log_is_unavailable(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db")
    await db.open()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("SELECT * FROM no_such_table")

    try:
        with pytest.raises(BusUnavailable, match="no such table"):
            await db.read_now(broken)
    finally:
        await db.close()


async def test_what_follows_a_write_runs_on_the_writer_thread_once_it_committed(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db", writes_on_loop=False)
    await db.open()
    seen: list[tuple[int, str]] = []

    def write(conn: sqlite3.Connection, value: int) -> int:
        conn.execute("CREATE TABLE IF NOT EXISTS t (v INTEGER)")
        conn.execute("INSERT INTO t (v) VALUES (?)", (value,))
        return value

    def committed(value: int) -> None:
        other = sqlite3.connect(db.path)  # another connection sees the write: it committed
        try:
            (count,) = other.execute("SELECT count(*) FROM t WHERE v = ?", (value,)).fetchone()
        finally:
            other.close()
        seen.append((count, threading.current_thread().name))
        if value == 2:
            raise RuntimeError("what follows a commit failed")

    try:
        assert await db.write_sync_then(committed, write, 1) == 1
        assert seen == [(1, seen[0][1])]
        assert seen[0][1] != threading.current_thread().name
        assert await db.write_sync_then(committed, write, 2) == 2  # its failure does not undo the write
        assert seen[1][0] == 1
    finally:
        await db.close()


def insert(conn: sqlite3.Connection, value: int) -> str:
    conn.execute("CREATE TABLE IF NOT EXISTS t (v INTEGER)")
    conn.execute("INSERT INTO t (v) VALUES (?)", (value,))
    return threading.current_thread().name


def values(path: Path) -> list[int]:
    other = sqlite3.connect(path)
    try:
        return [v for (v,) in other.execute("SELECT v FROM t ORDER BY rowid")]
    finally:
        other.close()


async def test_a_write_runs_on_the_calling_thread_when_the_lock_is_free(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db")
    await db.open()
    try:
        commits = db.commits
        assert await db.write_sync(insert, 1) == threading.current_thread().name
        assert values(db.path) == [1]  # committed: another connection sees it
        assert db.commits == commits + 1
    finally:
        await db.close()


async def test_a_write_waits_on_the_writer_thread_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db")
    await db.open()
    other = sqlite3.connect(db.path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # as another process committing would
        first = asyncio.create_task(db.write_sync(insert, 1))
        await asyncio.sleep(0.05)
        assert not first.done()  # refused at once on the event loop, waiting on the writer's thread
        second = asyncio.create_task(db.write_sync(insert, 2))
        await asyncio.sleep(0.05)
        assert not second.done()  # behind the first: never on the event loop while a write is queued
        other.execute("COMMIT")
        # The lock is free now, before the writer's thread retries: a write asked for at once must not
        # take it from the event loop ahead of the two that wait.
        assert await db.write_sync(insert, 3) != threading.current_thread().name
        assert await first != threading.current_thread().name
        assert await second != threading.current_thread().name
        assert values(db.path) == [1, 2, 3]  # in the order they were asked for
    finally:
        other.close()
        await db.close()


async def test_a_write_that_fails_on_the_loop_rolls_back_and_says_the_log_is_unavailable(tmp_path: Path) -> None:
    db = Database(tmp_path / "bus.db")
    await db.open()

    def half_then_broken(conn: sqlite3.Connection) -> None:
        insert(conn, 1)
        conn.execute("INSERT INTO no_such_table VALUES (1)")

    try:
        with pytest.raises(BusUnavailable, match="no such table"):
            await db.write_sync(half_then_broken)
        await db.write_sync(insert, 2)
        assert values(db.path) == [2]  # nothing of the failed write was kept
    finally:
        await db.close()
