"""The embedded log's cleaner: compaction, retention and transaction timeouts.

It applies each topic's ``cleanup.policy`` as Kafka's log cleaner and
retention do, at record rather than segment granularity:

- ``compact``: below the *compaction boundary* — the first record newer than
  ``min.compaction.lag.ms``, or the last stable offset if that comes first — a
  record disappears when a newer record with the same key exists below the
  boundary. A tombstone (the newest record of its key below the boundary)
  disappears once older than ``delete.retention.ms``. Surviving records keep
  their offsets and the log start does not move. ``partitions.clean_upto``
  remembers the boundary, so each pass only maps the keys written since.
- ``delete``: records older than ``retention.ms`` (and below the LSO) disappear
  and the log start moves past them. A negative ``retention.ms`` keeps all.
- Transactions open longer than their timeout are aborted and their producer
  fenced (see `services.bus.embedded.txns`).

`EmbeddedBus` runs a pass every ``maintenance_interval_ms`` and on demand
(`EmbeddedBus.compact`); any process may run it, SQLite serialises them.
"""

from __future__ import annotations

from services.bus.embedded import txns
from services.bus.embedded.db import Database, fetchall
from services.bus.embedded.log import STABLE_SQL, first_at_or_after
from services.bus.embedded.schema import base
from services.bus.embedded.topics import TopicInfo, load_topics

CHUNK = 50_000  # offsets cleaned per write transaction


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
    """Compact one partition; returns how many records disappeared.

    The dirty range is cleaned in chunks, each its own short write transaction,
    so a large pass never holds the writers off for long.
    """
    lag = info.int_setting("min.compaction.lag.ms")
    tombstone_retention = info.int_setting("delete.retention.ms")
    b = base(pid)
    boundary, dirty_from = await _compaction_range(db, pid, now - lag)
    removed = 0
    while dirty_from < boundary:
        upto = min(boundary, dirty_from + CHUNK)
        async with db.write() as conn:
            latest = await fetchall(
                conn,
                "SELECT key, max(pos) FROM records WHERE pos >= ? AND pos < ? AND key IS NOT NULL "
                "GROUP BY key",
                (b + dirty_from, b + upto),
            )
            cursor = await conn.executemany(
                "DELETE FROM records WHERE key = ? AND pos >= ? AND pos < ?",
                [(key, b, newest) for key, newest in latest],
            )
            removed += max(cursor.rowcount, 0)
            await conn.execute("UPDATE partitions SET clean_upto = ? WHERE id = ?", (upto, pid))
        dirty_from = upto
    async with db.write() as conn:
        old = await first_at_or_after(conn, pid, now - tombstone_retention)
        tombstones_end = boundary if old is None else min(boundary, old)
        cursor = await conn.execute(
            "DELETE FROM records WHERE value IS NULL AND pos >= ? AND pos < ?",
            (b, b + tombstones_end),
        )
        removed += max(cursor.rowcount, 0)
    return removed


async def _compaction_range(db: Database, pid: int, older_than: int) -> tuple[int, int]:
    """(compaction boundary, first dirty offset) of a partition."""
    stable = await db.fetchone(STABLE_SQL, (pid,))
    clean = await db.fetchone("SELECT clean_upto FROM partitions WHERE id = ?", (pid,))
    assert stable is not None and clean is not None
    boundary = int(stable[0])  # never past the LSO
    newer = await first_at_or_after(db, pid, older_than + 1)
    if newer is not None:
        boundary = min(boundary, newer)
    return boundary, int(clean[0])


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
