"""The embedded log's cleaner: compaction, retention and transaction timeouts.

It applies each topic's ``cleanup.policy`` as Kafka's log cleaner and
retention do, at record rather than segment granularity:

- ``compact``: below the *compaction boundary* — the first record newer than
  ``min.compaction.lag.ms``, or the last stable offset if that comes first — a
  record disappears when a newer record with the same key exists below the
  boundary. Surviving records keep their offsets and the log start does not
  move. As in Kafka's cleaner, a pass maps the keys of the *dirty* section
  (written since the last pass: ``partitions.clean_upto`` remembers where
  that ended) to their newest offset, then scans the partition up to the
  boundary and drops every record the map supersedes. So keys need no index,
  and a pass runs only once the dirty section is at least
  ``min.cleanable.dirty.ratio`` of the records below the boundary
  (``partitions.clean_records`` counts the clean section), which keeps the
  scans' cost proportional to what is written. A tombstone (the newest record
  of its key) disappears once older than ``delete.retention.ms`` and in the
  clean section, where nothing older of its key is left for it to hide.
- ``delete``: records older than ``retention.ms`` (and below the LSO) disappear
  and the log start moves past them. A negative ``retention.ms`` keeps all.
- Transactions open longer than their timeout are aborted and their producer
  fenced (see `services.bus.embedded.txns`).

`EmbeddedBus` runs a pass every ``maintenance_interval_ms`` and on demand
(`EmbeddedBus.compact`); any process may run it, SQLite serialises them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from services.bus.embedded import txns
from services.bus.embedded.db import Database
from services.bus.embedded.log import STABLE_SQL, first_at_or_after
from services.bus.embedded.schema import base
from services.bus.embedded.topics import TopicInfo, load_topics

CHUNK = 50_000  # offsets per slice of a pass: scanned by compaction, deleted by retention
MAP_OFFSETS = 200_000  # dirty offsets mapped per scan (Kafka's cleaner bounds its map the same way)


async def clean(db: Database, *, now: int) -> set[int]:
    """One pass over every topic; returns the ids of partitions that changed."""
    changed: set[int] = set()
    for info in await load_topics(db):
        for pid in info.pids:
            removed = 0
            if "compact" in info.policies:
                removed += await compact(db, info, pid, now=now)
            if "delete" in info.policies:
                removed += await expire(db, info, pid, now=now)
            if removed:
                changed.add(pid)
    return changed


async def compact(db: Database, info: TopicInfo, pid: int, *, now: int) -> int:
    """Compact one partition if dirty enough; returns how many records disappeared.

    The scan reads (writers go on meanwhile) and deletes what each slice found
    in a short write transaction of its own; an interrupted pass leaves
    ``clean_upto`` where it was and the next one does it again.
    """
    lag = info.int_setting("min.compaction.lag.ms")
    tombstone_retention = info.int_setting("delete.retention.ms")
    ratio = info.float_setting("min.cleanable.dirty.ratio")
    b = base(pid)
    boundary, clean_upto, clean_records = await _compaction_range(db, pid, now - lag)
    removed = 0
    if cleanable(clean_records, boundary - clean_upto, ratio):
        while clean_upto < boundary:
            upto = min(boundary, clean_upto + MAP_OFFSETS)
            latest = dict(
                await db.fetchall(
                    "SELECT key, max(pos) FROM records WHERE pos >= ? AND pos < ? "
                    "AND key IS NOT NULL GROUP BY key",
                    (b + clean_upto, b + upto),
                )
            )
            survivors = 0
            for start in range(0, upto, CHUNK):
                end = min(upto, start + CHUNK)
                doomed, kept = await db.read_sync(_superseded, b + start, b + end, latest)
                survivors += kept
                done = (upto, survivors, pid) if end == upto else None
                removed += await db.write_sync(_delete, doomed, done)
            clean_upto = upto
    async with db.write() as conn:
        old = await first_at_or_after(conn, pid, now - tombstone_retention)
        tombstones_end = clean_upto if old is None else min(clean_upto, old)
        cursor = await conn.execute(
            "DELETE FROM records WHERE value IS NULL AND pos >= ? AND pos < ?",
            (b, b + tombstones_end),
        )
        gone = max(cursor.rowcount, 0)
        if gone:
            await conn.execute(
                "UPDATE partitions SET clean_records = max(clean_records - ?, 0) WHERE id = ?", (gone, pid)
            )
        removed += gone
    return removed


def cleanable(clean_records: int, dirty_offsets: int, min_dirty_ratio: float) -> bool:
    """Kafka's test: is the dirty share of the records below the boundary at least the ratio?"""
    if dirty_offsets <= 0:
        return False
    return dirty_offsets / (clean_records + dirty_offsets) >= min_dirty_ratio


def _superseded(
    conn: sqlite3.Connection, start: int, end: int, latest: Mapping[bytes, int]
) -> tuple[list[tuple[int]], int]:
    """The positions in [start, end) that a newer record of their key supersedes, and how many stay.

    A read, not a write: below the compaction boundary records only ever
    disappear (compaction, retention), so deleting what this found later
    deletes the same records or fewer.
    """
    rows = conn.execute("SELECT pos, key FROM records WHERE pos >= ? AND pos < ?", (start, end)).fetchall()
    doomed = [(pos,) for pos, key in rows if key is not None and pos < latest.get(key, -1)]
    return doomed, len(rows) - len(doomed)


def _delete(conn: sqlite3.Connection, doomed: list[tuple[int]], done: tuple[int, int, int] | None) -> int:
    """Delete records by position; with ``done`` (clean_upto, clean_records, pid), record the pass."""
    deleted = max(conn.executemany("DELETE FROM records WHERE pos = ?", doomed).rowcount, 0) if doomed else 0
    if done is not None:
        conn.execute("UPDATE partitions SET clean_upto = ?, clean_records = ? WHERE id = ?", done)
    return deleted


async def _compaction_range(db: Database, pid: int, older_than: int) -> tuple[int, int, int]:
    """(compaction boundary, first dirty offset, records in the clean section) of a partition."""
    stable = await db.fetchone(STABLE_SQL, (pid,))
    clean = await db.fetchone("SELECT clean_upto, clean_records FROM partitions WHERE id = ?", (pid,))
    assert stable is not None and clean is not None
    boundary = int(stable[0])  # never past the LSO
    newer = await first_at_or_after(db, pid, older_than + 1)
    if newer is not None:
        boundary = min(boundary, newer)
    return boundary, int(clean[0]), int(clean[1])


async def expire(db: Database, info: TopicInfo, pid: int, *, now: int) -> int:
    """Apply ``retention.ms`` to one partition; returns how many records disappeared."""
    retention = info.int_setting("retention.ms")
    if retention < 0:
        return 0
    b = base(pid)
    bounds = await db.fetchone(STABLE_SQL, (pid,))
    assert bounds is not None
    end, log_start = int(bounds[0]), int(bounds[1])
    recent = await first_at_or_after(db, pid, now - retention)
    cut = end if recent is None else min(end, recent)
    removed = 0
    while log_start < cut:
        upto = min(cut, log_start + CHUNK)
        async with db.write() as conn:
            if "compact" in info.policies:  # what goes from the clean section leaves its count
                await conn.execute(
                    "UPDATE partitions SET clean_records = max(clean_records - (SELECT count(*) "
                    "FROM records WHERE pos >= ?2 AND pos < ?3 + min(?4, partitions.clean_upto)), 0) "
                    "WHERE id = ?1",
                    (pid, b + log_start, b, upto),
                )
            cursor = await conn.execute(
                "DELETE FROM records WHERE pos >= ? AND pos < ?", (b + log_start, b + upto)
            )
            removed += max(cursor.rowcount, 0)
            await conn.execute(
                "UPDATE partitions SET log_start = max(log_start, ?) WHERE id = ?", (upto, pid)
            )
            # Keep the time-index entry that still covers the new log start.
            await conn.execute(
                "DELETE FROM time_index WHERE pid = ?1 AND offset < "
                "(SELECT max(offset) FROM time_index WHERE pid = ?1 AND offset <= ?2)",
                (pid, upto),
            )
        log_start = upto
    return removed


async def abort_expired_transactions(db: Database, *, now: int) -> set[int]:
    """Abort transactions past their timeout; returns the partition ids whose LSO moved."""
    touched: set[int] = set()
    for txn, transactional_id, epoch in await txns.expired(db, now):
        touched |= await db.write_sync(txns.abort_expired, txn, transactional_id, epoch)
    return touched
