"""Checkpoints of the embedded log's WAL, off the writers' path.

Left to itself, SQLite checkpoints a WAL file inside the commit that takes it
past 1,000 pages (16 MB at this log's page size): that ``COMMIT`` copies the
WAL into the database file and syncs both before it returns, 10 to 15 ms on a
virtual disk, on the writer's thread, before the commit's datagram goes out
(`services.bus.embedded.peers`) and while the process's next write waits. It
was most of the embedded log's commit → seen p99 (docs/decisions/latency.md,
"Tenth pass").

So every connection turns the automatic checkpoint off
(`schema.CONNECTION_PRAGMAS`), and each bus that has committed since its last
checkpoint runs a PASSIVE one on a connection and thread of its own every
``checkpoint_interval_ms``. PASSIVE never waits: it copies what no reader still
needs and leaves the rest for the next round, writers keep appending to the
WAL meanwhile, and of two processes checkpointing at once one is told "busy"
and simply tries again later. SQLite still checkpoints (and removes the WAL)
when the last connection to the file closes.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from dataclasses import dataclass

from services.bus.embedded.db import Connection, Database
from services.bus.port import BusError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Checkpointed:
    """What ``PRAGMA wal_checkpoint(PASSIVE)`` reports."""

    busy: bool  # another connection was checkpointing: nothing done this time
    wal_frames: int  # frames in the WAL (-1 when busy or not in WAL mode)
    copied_frames: int  # frames now in the database file (-1 likewise)


def checkpoint_passive(conn: sqlite3.Connection) -> Checkpointed:
    row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    busy, wal_frames, copied = (int(v) for v in row) if row else (0, -1, -1)
    return Checkpointed(bool(busy), wal_frames, copied)


async def checkpoint_after_writes(db: Database, interval: float) -> None:
    """Every ``interval`` seconds, checkpoint if ``db`` committed anything since the last round.

    Runs until cancelled; a failed checkpoint is logged and tried again next
    round (the WAL only grows meanwhile: nothing is lost).
    """
    conn = Connection(db.path, busy_timeout_ms=0)
    await conn.open()
    try:
        done_at = db.commits
        while True:
            await asyncio.sleep(interval)
            commits = db.commits
            if commits == done_at:
                continue
            try:
                result = await conn.run(checkpoint_passive)
            except (sqlite3.Error, OSError, BusError) as exc:
                log.warning("embedded log: checkpoint failed: %s", exc)
                continue
            if not result.busy:
                done_at = commits
    finally:
        await conn.close()
