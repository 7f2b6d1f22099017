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

The functions taking a ``sqlite3.Connection`` run inside the caller's write
transaction (`Database.write_sync`).
"""

from __future__ import annotations

import sqlite3

from services.bus.embedded.db import Database
from services.bus.embedded.schema import base
from services.bus.port import ProducerFenced


def init_producer(conn: sqlite3.Connection, transactional_id: str) -> tuple[int, set[int]]:
    """Bump the epoch; abort the open transactions of older epochs.

    Returns the new epoch and the partition ids whose LSO moved.
    """
    (epoch,) = conn.execute(
        "INSERT INTO producers (transactional_id, epoch) VALUES (?, 0) "
        "ON CONFLICT (transactional_id) DO UPDATE SET epoch = epoch + 1 RETURNING epoch",
        (transactional_id,),
    ).fetchone()
    touched: set[int] = set()
    for (txn,) in conn.execute("SELECT id FROM txns WHERE transactional_id = ?", (transactional_id,)).fetchall():
        touched |= abort(conn, int(txn))
    return int(epoch), touched


def check_epoch(conn: sqlite3.Connection, transactional_id: str, epoch: int) -> None:
    """Raise ProducerFenced unless ``epoch`` is still the newest for the id."""
    row = conn.execute("SELECT epoch FROM producers WHERE transactional_id = ?", (transactional_id,)).fetchone()
    current = None if row is None else int(row[0])
    if current != epoch:
        raise ProducerFenced(
            f"transactional id {transactional_id!r}: epoch {epoch} was fenced by epoch {current} "
            "(a newer producer started, or the transaction timed out)"
        )


def begin(conn: sqlite3.Connection, transactional_id: str, epoch: int, *, now: int, timeout_ms: int) -> int:
    (txn,) = conn.execute(
        "INSERT INTO txns (transactional_id, epoch, started_ms, timeout_ms) VALUES (?, ?, ?, ?) RETURNING id",
        (transactional_id, epoch, now, timeout_ms),
    ).fetchone()
    return int(txn)


def add_partitions(conn: sqlite3.Connection, txn: int, first: dict[int, int]) -> None:
    """Record the first offset the transaction wrote in each partition (by id)."""
    conn.executemany(
        "INSERT OR IGNORE INTO txn_partitions (txn, pid, first_offset) VALUES (?, ?, ?)",
        [(txn, pid, offset) for pid, offset in first.items()],
    )


def _ranges(conn: sqlite3.Connection, txn: int) -> list[tuple[int, int, int]]:
    """(pid, first position, end position) of each partition the transaction wrote."""
    rows = conn.execute("SELECT pid, first_offset FROM txn_partitions WHERE txn = ?", (txn,)).fetchall()
    return [(int(p), base(int(p)) + int(o), base(int(p) + 1)) for p, o in rows]


def commit(conn: sqlite3.Connection, txn: int) -> set[int]:
    """Make the transaction's records visible; returns the partition ids it wrote."""
    ranges = _ranges(conn, txn)
    conn.executemany(
        "UPDATE records SET txn = NULL WHERE pos >= ? AND pos < ? AND txn = ?",
        [(first, end, txn) for _, first, end in ranges],
    )
    _forget(conn, txn)
    return {pid for pid, _, _ in ranges}


def abort(conn: sqlite3.Connection, txn: int) -> set[int]:
    """Delete the transaction's records; returns the partition ids it wrote."""
    ranges = _ranges(conn, txn)
    conn.executemany(
        "DELETE FROM records WHERE pos >= ? AND pos < ? AND txn = ?",
        [(first, end, txn) for _, first, end in ranges],
    )
    _forget(conn, txn)
    return {pid for pid, _, _ in ranges}


def _forget(conn: sqlite3.Connection, txn: int) -> None:
    conn.execute("DELETE FROM txn_partitions WHERE txn = ?", (txn,))
    conn.execute("DELETE FROM txns WHERE id = ?", (txn,))


async def expired(db: Database, now: int) -> list[tuple[int, str, int]]:
    """Open transactions past their timeout: (txn, transactional_id, epoch)."""
    rows = await db.fetchall(
        "SELECT id, transactional_id, epoch FROM txns WHERE started_ms + timeout_ms < ?", (now,)
    )
    return [(int(i), str(t), int(e)) for i, t, e in rows]


def abort_expired(conn: sqlite3.Connection, txn: int, transactional_id: str, epoch: int) -> set[int]:
    """Abort a timed-out transaction and fence the producer that left it open."""
    if conn.execute("SELECT 1 FROM txns WHERE id = ?", (txn,)).fetchone() is None:
        return set()
    conn.execute(
        "UPDATE producers SET epoch = epoch + 1 WHERE transactional_id = ? AND epoch = ?",
        (transactional_id, epoch),
    )
    return abort(conn, txn)
