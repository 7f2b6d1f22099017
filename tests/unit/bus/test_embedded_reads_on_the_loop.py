"""Reads of the embedded log run on the event loop's thread, and go to the reader's thread when SQLite is busy."""

from __future__ import annotations

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
    db = Database(tmp_path / "bus.db")
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
