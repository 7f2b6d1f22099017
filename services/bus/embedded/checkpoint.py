"""Checkpoints of the embedded log's WAL, off the writers' path.

Left to itself, SQLite checkpoints a WAL file inside the commit that takes it
past 1,000 pages (16 MB at the 16 KiB pages the log had then): that
``COMMIT`` copies the WAL into the database file and syncs both before it
returns, 10 to 15 ms on a virtual disk, before the commit's datagram goes out
(`services.bus.embedded.peers`) and while the process's next write waits. It
was most of the embedded log's commit → seen p99 (docs/decisions/latency.md,
"Tenth pass").

So every bus looks at the WAL-index header (`services.bus.embedded.wal_index`)
every ``checkpoint_interval_ms``, and once ``checkpoint_frames`` frames wait
to be copied it runs a PASSIVE checkpoint on a connection and thread of its
own. By default that is 4 MiB of the file's own pages (`schema.CHECKPOINT_BYTES`:
1,024 pages of 4 KiB, or 256 of a file made with 16 KiB pages).
PASSIVE never waits: it copies what no reader still needs and leaves the rest
for the next round, writers keep appending meanwhile, and of two processes
checkpointing at once one is told "busy" and looks again next round.

A commit still checkpoints itself past four times that many frames (16 MiB
by default, what SQLite's own 1,000 frames were at 16 KiB pages). A
checkpoint beside a stream of writes never catches up with them, and SQLite
only starts the WAL over once one has: with no commit checkpointing, bulk
writes grew the WAL to 200 MB in 13 s; at 4,000 frames of 16 KiB it stayed
at 64 MB, and the committer's CPU per pod still rose ~10 %. The writer that
stops to checkpoint lets it catch up, as before, so bulk writes keep SQLite's
WAL and its costs (on the event loop's thread when that write ran there:
`Database.write_sync`); a steady workload checkpoints in the background long
before a commit would. With ``checkpoint_interval_ms=0`` commits checkpoint
at ``checkpoint_frames``, as SQLite does.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from dataclasses import dataclass

from services.bus.embedded.db import Connection, Database
from services.bus.embedded.schema import CHECKPOINT_BYTES
from services.bus.embedded.shared import Settings
from services.bus.embedded.wal_index import frames_to_copy
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


COMMIT_CHECKPOINT_FACTOR = 4


def checkpoint_frames(settings: Settings, page_size: int) -> int:
    """The frames waiting to be copied that make a checkpoint due, in a file of ``page_size`` pages."""
    return settings.checkpoint_frames or max(1, CHECKPOINT_BYTES // page_size)


def commit_checkpoint_frames(settings: Settings, page_size: int) -> int:
    """The WAL's length at which a commit checkpoints it itself (``PRAGMA wal_autocheckpoint``)."""
    frames = checkpoint_frames(settings, page_size)
    if settings.checkpoint_interval_ms <= 0:
        return frames
    return frames * COMMIT_CHECKPOINT_FACTOR


async def checkpoint_when_due(db: Database, *, interval: float, frames: int) -> None:
    """Every ``interval`` seconds, checkpoint when ``frames`` or more wait to be copied.

    Runs until cancelled; a failed checkpoint is logged and tried again next
    round (the WAL only grows meanwhile: nothing is lost).
    """
    conn = Connection(db.path, busy_timeout_ms=0)
    await conn.open()
    try:
        done_at = db.commits
        while True:
            await asyncio.sleep(interval)
            waiting = frames_to_copy(db.path)
            commits = db.commits
            if (commits == done_at) if waiting is None else (waiting < frames):
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
