"""Appending to and reading from partitions of the embedded log.

The rules are Kafka's:

- An append takes the partition's next offsets (strictly increasing, never
  reused, even when the transaction that took them aborts) and stamps every
  record with the append time, which never goes backwards within a partition.
- Readers are read_committed: they stop at the last stable offset (LSO), the
  first offset still held by an open transaction, or the partition's next
  offset when none is open. Every record below the LSO is final, which is what
  lets a reader advance its position to the LSO even across gaps left by
  aborted transactions and compaction.

Partitions are addressed by their id (``pid``); see `schema` for positions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from services.bus.embedded.db import Connection, Database, fetchall
from services.bus.embedded.schema import MAX_OFFSET, base
from services.bus.port import BusError, OutRecord

STABLE_SQL = """
SELECT coalesce((SELECT min(first_offset) FROM txn_partitions WHERE pid = ?1), next_offset),
       log_start
FROM partitions WHERE id = ?1
"""
READ_SQL = """
SELECT pos - ?1, ts, key, value FROM records WHERE pos >= ?2 AND pos < ?3 ORDER BY pos LIMIT ?4
"""
RESERVE_SQL = """
UPDATE partitions SET next_offset = next_offset + ?1, last_ts = max(last_ts, ?2)
WHERE id = ?3
RETURNING next_offset - ?1, last_ts
"""
INSERT_SQL = "INSERT INTO records (pos, ts, key, value, txn) VALUES (?, ?, ?, ?, ?)"
INSERT_CHUNK = 128
"""Rows per multi-row INSERT (5 parameters a row, far below SQLite's 32,766)."""
TIME_INDEX_SQL = """
INSERT INTO time_index (pid, ts, offset) SELECT ?1, ?2, ?3
WHERE NOT EXISTS (SELECT 1 FROM time_index WHERE pid = ?1 AND ts = ?2)
"""
FIRST_AT_OR_AFTER_SQL = """
SELECT offset FROM time_index WHERE pid = ? AND ts >= ? ORDER BY ts, offset LIMIT 1
"""
FIRST_RECORD_SQL = "SELECT pos - ?1 FROM records WHERE pos >= ?2 AND pos < ?3 ORDER BY pos LIMIT 1"


class UnknownPartition(BusError):
    """The topic (or this partition of it) was never declared."""

    def __init__(self, topic: str, partition: int) -> None:
        super().__init__(f"unknown topic or partition: {topic}[{partition}]")


STABLE_ENDS_SQL = """
SELECT p.id, coalesce((SELECT min(t.first_offset) FROM txn_partitions t WHERE t.pid = p.id), p.next_offset)
FROM partitions p
"""


def stable_ends(conn: sqlite3.Connection) -> dict[int, int]:
    """Every partition's last stable offset, by partition id (one statement)."""
    return dict(conn.execute(STABLE_ENDS_SQL).fetchall())


@dataclass(frozen=True, slots=True)
class Stable:
    """A partition's read_committed bounds."""

    log_start: int  # the first offset that may still exist
    end: int  # the last stable offset: what a read_committed reader may reach


async def stable(db: Database, pid: int) -> Stable:
    row = await db.fetchone(STABLE_SQL, (pid,))
    if row is None:
        raise BusError(f"partition id {pid} vanished from the embedded log")
    return Stable(log_start=int(row[1]), end=int(row[0]))


async def first_at_or_after(conn: Connection | Database, pid: int, timestamp_ms: int) -> int | None:
    """The first offset appended at or after ``timestamp_ms`` (from the time index)."""
    if isinstance(conn, Database):
        row = await conn.fetchone(FIRST_AT_OR_AFTER_SQL, (pid, timestamp_ms))
    else:
        rows = await fetchall(conn, FIRST_AT_OR_AFTER_SQL, (pid, timestamp_ms))
        row = rows[0] if rows else None
    return None if row is None else int(row[0])


async def offset_for_time(db: Database, pid: int, timestamp_ms: int) -> int | None:
    """The first committed record at or after ``timestamp_ms``; None if there is none."""
    bounds = await stable(db, pid)
    first = await first_at_or_after(db, pid, timestamp_ms)
    if first is None or first >= bounds.end:
        return None
    b = base(pid)
    row = await db.fetchone(FIRST_RECORD_SQL, (b, b + first, b + bounds.end))
    return None if row is None else int(row[0])


@dataclass(slots=True)
class Appended:
    """Offsets of an append, in input order, and the first offset per partition id."""

    offsets: list[int]
    first: dict[int, int]


def append(
    conn: sqlite3.Connection,
    records: Sequence[OutRecord],
    *,
    pids: dict[tuple[str, int], int],
    txn: int | None,
    now: int,
) -> Appended:
    """Append ``records`` inside the caller's write transaction.

    ``pids`` maps each (topic, partition) of the records to its partition id.
    Records keep their order within each partition.
    """
    by_pid: dict[int, list[int]] = {}
    for i, record in enumerate(records):
        by_pid.setdefault(pids[(record.topic, record.partition)], []).append(i)
    offsets = [0] * len(records)
    first: dict[int, int] = {}
    for pid, indexes in by_pid.items():
        start, ts = conn.execute(RESERVE_SQL, (len(indexes), now, pid)).fetchone()
        if start + len(indexes) > MAX_OFFSET:
            raise BusError(f"partition id {pid} is full ({MAX_OFFSET} offsets)")
        first[pid] = start
        b = base(pid) + start
        params: list[object] = []
        for n, i in enumerate(indexes):
            record = records[i]
            offsets[i] = start + n
            params += (b + n, ts, record.key, record.value, txn)
        insert_rows(conn, params)
        conn.execute(TIME_INDEX_SQL, (pid, ts, start))
    return Appended(offsets, first)


def insert_rows(conn: sqlite3.Connection, params: list[object]) -> None:
    """Insert records (5 parameters each, flat) with a few multi-row INSERTs instead of one step per row.

    Why: a write that waited for the file's lock runs on the writer's thread,
    and Python's sqlite3 lets go
    of the GIL around every step of a statement (``executemany`` steps once per
    row). When the event loop's thread is busy — a scheduler running its
    cycles back to back — the writer then waits up to the GIL's switch
    interval (5 ms) to get it back after *each* row, while it holds the log's
    write lock, which every other process waits for: measured, an append
    group of a few hundred requests held it for up to a second. Full chunks of
    `INSERT_CHUNK` rows and the rest in powers of two keep the statement texts
    few (they stay in sqlite3's statement cache) and the steps per append a
    handful.
    """
    width = 5
    rows = len(params) // width
    done = 0
    while done < rows:
        left = rows - done
        size = INSERT_CHUNK if left >= INSERT_CHUNK else 1 << (left.bit_length() - 1)
        conn.execute(_insert_sql(size), params[done * width : (done + size) * width])
        done += size


_INSERT_SQL_BY_SIZE: dict[int, str] = {}


def _insert_sql(rows: int) -> str:
    sql = _INSERT_SQL_BY_SIZE.get(rows)
    if sql is None:
        values = ", ".join(["(?, ?, ?, ?, ?)"] * rows)
        sql = _INSERT_SQL_BY_SIZE[rows] = f"INSERT INTO records (pos, ts, key, value, txn) VALUES {values}"
    return sql


def read_committed(
    conn: sqlite3.Connection, pid: int, *, start: int, limit: int
) -> tuple[int, list[tuple[int, int, bytes | None, bytes | None]]]:
    """A read_committed read from ``start``: (the LSO, up to ``limit`` records below it).

    Both statements run in one read transaction, so the records are exactly
    those below the LSO it returns.
    """
    conn.execute("BEGIN")
    try:
        row = conn.execute(STABLE_SQL, (pid,)).fetchone()
        if row is None:
            raise BusError(f"partition id {pid} vanished from the embedded log")
        end = int(row[0])
        if start >= end:
            return end, []
        b = base(pid)
        rows: list[tuple[int, int, bytes | None, bytes | None]] = conn.execute(
            READ_SQL, (b, b + start, b + min(end, MAX_OFFSET), limit)
        ).fetchall()
        return end, rows
    finally:
        conn.execute("COMMIT")
