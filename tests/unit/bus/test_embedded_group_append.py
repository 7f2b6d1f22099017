"""The embedded log's group append: many sends, a handful of statements, each send's outcome its own."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.bus.embedded.appender import Appender, _append_group
from services.bus.embedded.db import Database
from services.bus.embedded.log import INSERT_CHUNK, insert_rows
from services.bus.embedded.schema import DDL, MAX_OFFSET, base
from services.bus.port import BusError, OutRecord

A, B = ("a", 0), ("b", 0)


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript(DDL)
    db.executemany("INSERT INTO partitions (topic, partition) VALUES (?, ?)", [A, B])
    yield db
    db.close()


def pids(conn: sqlite3.Connection) -> dict[tuple[str, int], int]:
    return {(t, p): i for i, t, p in conn.execute("SELECT id, topic, partition FROM partitions")}


def stored(conn: sqlite3.Connection, topic_partition: tuple[str, int]) -> list[tuple[int, bytes]]:
    pid = pids(conn)[topic_partition]
    rows = conn.execute(
        "SELECT pos - ?, value FROM records WHERE pos >= ? AND pos < ? ORDER BY pos",
        (base(pid), base(pid), base(pid + 1)),
    ).fetchall()
    return [(int(offset), bytes(value)) for offset, value in rows]


def send(*values: tuple[tuple[str, int], str]) -> list[OutRecord]:
    return [OutRecord(t, b"k", v.encode(), partition=p) for (t, p), v in values]


def counting(conn: sqlite3.Connection) -> list[str]:
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    return statements


def test_a_group_appends_every_send_in_order_with_its_records_together(conn: sqlite3.Connection) -> None:
    known = pids(conn)
    sends = [
        send((A, "1a"), (B, "1b"), (A, "1c")),
        send((B, "2a")),
        send((A, "3a"), (A, "3b")),
    ]
    conn.execute("BEGIN IMMEDIATE")
    results = _append_group(conn, [(s, known) for s in sends])
    conn.execute("COMMIT")
    assert results == [[0, 0, 1], [1], [2, 3]]
    assert stored(conn, A) == [(0, b"1a"), (1, b"1c"), (2, b"3a"), (3, b"3b")]
    assert stored(conn, B) == [(0, b"1b"), (1, b"2a")]


def test_the_statements_of_a_group_do_not_grow_with_its_sends(conn: sqlite3.Connection) -> None:
    """The writer thread waits for the GIL after every statement step while it holds the write lock."""
    known = pids(conn)
    sends = [(send((A, f"r{i}")), known) for i in range(300)]
    statements = counting(conn)
    conn.execute("BEGIN IMMEDIATE")
    results = _append_group(conn, sends)
    conn.execute("COMMIT")
    assert results == [[i] for i in range(300)]
    assert len(stored(conn, A)) == 300
    assert len(statements) < 15, statements


def test_a_refused_send_does_not_undo_the_others(conn: sqlite3.Connection) -> None:
    known = pids(conn)
    conn.execute("UPDATE partitions SET next_offset = ? WHERE id = ?", (MAX_OFFSET, known[B]))
    sends = [send((A, "ok-1")), send((B, "too-far")), send((A, "ok-2"))]
    conn.execute("BEGIN IMMEDIATE")
    results = _append_group(conn, [(s, known) for s in sends])
    conn.execute("COMMIT")
    assert results[0] == [0] and results[2] == [1]
    assert isinstance(results[1], BusError) and "is full" in str(results[1])
    assert stored(conn, A) == [(0, b"ok-1"), (1, b"ok-2")]
    assert stored(conn, B) == []


@pytest.mark.parametrize("rows", [0, 1, 2, 3, 7, INSERT_CHUNK - 1, INSERT_CHUNK, INSERT_CHUNK + 1, 3 * INSERT_CHUNK + 77])
def test_insert_rows_writes_exactly_the_rows_given(conn: sqlite3.Connection, rows: int) -> None:
    params: list[object] = []
    for i in range(rows):
        params += (i, 5, b"k", f"v{i}".encode(), None)
    insert_rows(conn, params)
    got = conn.execute("SELECT pos, value FROM records ORDER BY pos").fetchall()
    assert got == [(i, f"v{i}".encode()) for i in range(rows)]


async def test_records_are_stamped_when_appended_not_when_asked_for(tmp_path: Path) -> None:
    """A send that waits for the file's write lock is stamped once it holds it, as a broker stamps
    LogAppendTime on its append: the stamp is never earlier than the wait's end."""
    db = Database(tmp_path / "bus.db")
    await db.open()
    other = sqlite3.connect(db.path, isolation_level=None)
    try:
        other.executemany("INSERT INTO partitions (topic, partition) VALUES (?, ?)", [A, B])
        known = pids(other)
        other.execute("BEGIN IMMEDIATE")  # another process writing
        appending = asyncio.create_task(Appender(db, lambda _: None).append(send((A, "late")), known))
        await asyncio.sleep(0.2)
        released_ms = time.time_ns() // 1_000_000
        other.execute("COMMIT")
        assert await appending == [0]
        (ts,) = other.execute("SELECT ts FROM records").fetchone()
        assert ts >= released_ms
    finally:
        other.close()
        await db.close()
