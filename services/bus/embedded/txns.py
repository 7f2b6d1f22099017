"""Transactions and fencing in the embedded log, as a Kafka transaction coordinator does them.

- Initialising a transactional producer bumps the epoch of its
  ``transactional_id`` and aborts any transaction an older epoch left open.
- Every transactional write and the commit first check the epoch; an older one
  is fenced (`ProducerFenced`).
- A transaction's records are appended as they are sent, marked with the
  transaction, and unmarked on commit. Abort deletes them; their offsets stay
  used, as aborted records' offsets do in Kafka.
- A transaction open longer than its timeout is aborted by whichever process
  notices first, and its epoch bumped, so the late producer is fenced.

All functions run inside the caller's write transaction (``conn``).
"""

from __future__ import annotations

import aiosqlite

from services.bus.embedded.db import Database, fetchall
from services.bus.embedded.schema import base
from services.bus.port import ProducerFenced


async def init_producer(conn: aiosqlite.Connection, transactional_id: str) -> tuple[int, set[int]]:
    """Bump the epoch; abort the open transactions of older epochs.

    Returns the new epoch and the partition ids whose LSO moved.
    """
    rows = await fetchall(
        conn,
        "INSERT INTO producers (transactional_id, epoch) VALUES (?, 0) "
        "ON CONFLICT (transactional_id) DO UPDATE SET epoch = epoch + 1 RETURNING epoch",
        (transactional_id,),
    )
    epoch = int(rows[0][0])
    touched: set[int] = set()
    for (txn,) in await fetchall(
        conn, "SELECT id FROM txns WHERE transactional_id = ?", (transactional_id,)
    ):
        touched |= await abort(conn, int(txn))
    return epoch, touched


async def check_epoch(
    conn: aiosqlite.Connection | Database, transactional_id: str, epoch: int
) -> None:
    """Raise ProducerFenced unless ``epoch`` is still the newest for the id."""
    sql = "SELECT epoch FROM producers WHERE transactional_id = ?"
    if isinstance(conn, Database):
        row = await conn.fetchone(sql, (transactional_id,))
    else:
        rows = await fetchall(conn, sql, (transactional_id,))
        row = rows[0] if rows else None
    current = None if row is None else int(row[0])
    if current != epoch:
        raise ProducerFenced(
            f"transactional id {transactional_id!r}: epoch {epoch} was fenced by epoch {current} "
            "(a newer producer started, or the transaction timed out)"
        )


async def begin(
    conn: aiosqlite.Connection, transactional_id: str, epoch: int, *, now: int, timeout_ms: int
) -> int:
    rows = await fetchall(
        conn,
        "INSERT INTO txns (transactional_id, epoch, started_ms, timeout_ms) VALUES (?, ?, ?, ?) "
        "RETURNING id",
        (transactional_id, epoch, now, timeout_ms),
    )
    return int(rows[0][0])


async def add_partitions(conn: aiosqlite.Connection, txn: int, first: dict[int, int]) -> None:
    """Record the first offset the transaction wrote in each partition (by id)."""
    await conn.executemany(
        "INSERT OR IGNORE INTO txn_partitions (txn, pid, first_offset) VALUES (?, ?, ?)",
        [(txn, pid, offset) for pid, offset in first.items()],
    )


async def _ranges(conn: aiosqlite.Connection, txn: int) -> list[tuple[int, int, int]]:
    """(pid, first position, end position) of each partition the transaction wrote."""
    rows = await fetchall(conn, "SELECT pid, first_offset FROM txn_partitions WHERE txn = ?", (txn,))
    return [(int(p), base(int(p)) + int(o), base(int(p) + 1)) for p, o in rows]


async def commit(conn: aiosqlite.Connection, txn: int) -> set[int]:
    """Make the transaction's records visible; returns the partition ids it wrote."""
    ranges = await _ranges(conn, txn)
    await conn.executemany(
        "UPDATE records SET txn = NULL WHERE pos >= ? AND pos < ? AND txn = ?",
        [(first, end, txn) for _, first, end in ranges],
    )
    await _forget(conn, txn)
    return {pid for pid, _, _ in ranges}


async def abort(conn: aiosqlite.Connection, txn: int) -> set[int]:
    """Delete the transaction's records; returns the partition ids it wrote."""
    ranges = await _ranges(conn, txn)
    await conn.executemany(
        "DELETE FROM records WHERE pos >= ? AND pos < ? AND txn = ?",
        [(first, end, txn) for _, first, end in ranges],
    )
    await _forget(conn, txn)
    return {pid for pid, _, _ in ranges}


async def _forget(conn: aiosqlite.Connection, txn: int) -> None:
    await conn.execute("DELETE FROM txn_partitions WHERE txn = ?", (txn,))
    await conn.execute("DELETE FROM txns WHERE id = ?", (txn,))


async def expired(db: Database, now: int) -> list[tuple[int, str, int]]:
    """Open transactions past their timeout: (txn, transactional_id, epoch)."""
    rows = await db.fetchall(
        "SELECT id, transactional_id, epoch FROM txns WHERE started_ms + timeout_ms < ?", (now,)
    )
    return [(int(i), str(t), int(e)) for i, t, e in rows]


async def abort_expired(
    conn: aiosqlite.Connection, txn: int, transactional_id: str, epoch: int
) -> set[int]:
    """Abort a timed-out transaction and fence the producer that left it open."""
    still_open = await fetchall(conn, "SELECT 1 FROM txns WHERE id = ?", (txn,))
    if not still_open:
        return set()
    await conn.execute(
        "UPDATE producers SET epoch = epoch + 1 WHERE transactional_id = ? AND epoch = ?",
        (transactional_id, epoch),
    )
    return await abort(conn, txn)
