"""The embedded log's WAL is checkpointed in the background, never inside a commit.

SQLite's automatic checkpoint ran inside the commit that took the WAL past
1,000 pages, syncing files on the writer's thread before the commit's wake-up
datagram went out (`services.bus.embedded.checkpoint`). The database file (as
opposed to the WAL beside it) only grows when a checkpoint copies pages into
it, so its size says whether one ran.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from services.bus import OutRecord
from services.bus.embedded import wal_index
from services.bus.embedded.checkpoint import checkpoint_passive
from services.bus.embedded.schema import PAGE_SIZE
from services.bus.embedded.wal_index import frames_to_copy
from tests.support.embedded_bus import started
from tests.support.eventually import eventually

MB = 1 << 20
MB_FRAMES = MB // PAGE_SIZE  # the WAL frames of 1 MB of a new file's pages (256 of 4 KiB)
RECORD = b"x" * (256 * 1024)


def size(path: Path | str) -> int:
    return Path(path).stat().st_size


NO_BACKGROUND = "checkpoint_interval_ms=600000"  # ten minutes: within a test only commits could checkpoint


async def test_commits_leave_a_wal_of_checkpoint_frames_to_the_background(tmp_path: Path) -> None:
    bus = await started(f"sqlite://{tmp_path / 'bus.db'}?{NO_BACKGROUND}&checkpoint_frames={MB_FRAMES}")
    try:
        before = size(bus.path)
        producer = await bus.producer(transactional_id="committer")
        # 1 MB, written twice (appended, then unmarked by the commit): ~2 MB of frames, past
        # checkpoint_frames (SQLite's commit would have copied them), short of four times it.
        async with producer.transaction() as txn:
            await txn.send([OutRecord("objects", b"k", RECORD) for _ in range(4)])
        assert size(bus.path) == before
        assert (frames_to_copy(bus.path) or 0) > MB_FRAMES
        consumer = await bus.consumer("objects")
        assert len(await consumer.getmany(timeout_ms=1000)) == 4
    finally:
        await bus.close()


async def test_a_commit_checkpoints_a_wal_the_background_cannot_keep_up_with(tmp_path: Path) -> None:
    bus = await started(f"sqlite://{tmp_path / 'bus.db'}?{NO_BACKGROUND}&checkpoint_frames={MB_FRAMES}")
    try:
        before = size(bus.path)
        producer = await bus.producer()
        for _ in range(6):  # 6 MB: past four times checkpoint_frames
            await producer.send([OutRecord("objects", b"k", RECORD) for _ in range(4)])
        assert size(bus.path) >= before + 4 * MB
    finally:
        await bus.close()


async def test_without_background_checkpoints_commits_checkpoint_as_sqlite_does(tmp_path: Path) -> None:
    bus = await started(f"sqlite://{tmp_path / 'bus.db'}?checkpoint_interval_ms=0&checkpoint_frames={MB_FRAMES}")
    try:
        before = size(bus.path)
        await (await bus.producer()).send([OutRecord("objects", b"k", RECORD) for _ in range(8)])
        assert size(bus.path) >= before + 1 * MB
    finally:
        await bus.close()


async def test_a_wal_of_checkpoint_frames_is_copied_in_the_background(tmp_path: Path) -> None:
    bus = await started(f"sqlite://{tmp_path / 'bus.db'}?checkpoint_interval_ms=10&checkpoint_frames={MB_FRAMES}")
    try:
        before = size(bus.path)
        producer = await bus.producer()
        await producer.send([OutRecord("objects", b"k", RECORD) for _ in range(8)])  # 2 MB: twice checkpoint_frames
        await eventually(lambda: frames_to_copy(bus.path) == 0, what="the WAL copied into the file")
        assert size(bus.path) >= before + 2 * MB
    finally:
        await bus.close()


async def test_a_shorter_wal_is_left_alone(tmp_path: Path) -> None:
    bus = await started(f"sqlite://{tmp_path / 'bus.db'}?checkpoint_interval_ms=10&checkpoint_frames={4 * MB_FRAMES}")
    try:
        before = size(bus.path)
        await (await bus.producer()).send([OutRecord("objects", b"k", RECORD) for _ in range(8)])
        consumer = await bus.consumer("objects")
        assert len(await consumer.getmany(timeout_ms=1000)) == 8
        for _ in range(10):  # several of the bus's rounds
            await consumer.getmany(timeout_ms=20)
        assert size(bus.path) == before
        assert (frames_to_copy(bus.path) or 0) >= 128
    finally:
        await bus.close()


async def test_any_bus_on_the_file_copies_a_long_wal(tmp_path: Path) -> None:
    path = tmp_path / "bus.db"
    writer = await started(f"sqlite://{path}?{NO_BACKGROUND}")
    other = await started(f"sqlite://{path}?checkpoint_interval_ms=10&checkpoint_frames={MB_FRAMES}", declare=False)
    try:
        before = size(path)
        await (await writer.producer()).send([OutRecord("objects", b"k", RECORD) for _ in range(8)])
        await eventually(lambda: size(path) >= before + 2 * MB, what="the other bus to copy the WAL")
    finally:
        await other.close()
        await writer.close()


def test_the_frames_to_copy_are_read_from_the_wal_index(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute("CREATE TABLE t (v BLOB)")
        assert frames_to_copy(path) is None  # not held open by this process
        wal_index.acquire(path)
        try:
            conn.execute("INSERT INTO t VALUES (?)", (RECORD,))
            waiting = frames_to_copy(path)
            assert waiting is not None and waiting > 16
            assert checkpoint_passive(conn).wal_frames == waiting
            assert frames_to_copy(path) == 0
        finally:
            wal_index.release(path)
        assert frames_to_copy(path) is None
    finally:
        conn.close()


OTHER_PROCESS_TRUNCATES = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA busy_timeout=0")
print(conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
"""


def test_reading_the_frames_keeps_this_process_sqlite_locks(tmp_path: Path) -> None:
    """A read transaction here holds a lock on the WAL-index; reading the header must not drop it.

    (Closing a descriptor of the file would: POSIX locks belong to the process.)
    Another process's TRUNCATE checkpoint must then still find the reader and
    answer busy.
    """
    path = tmp_path / "plain.db"
    writer = sqlite3.connect(path, isolation_level=None)
    reader = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("CREATE TABLE t (v BLOB)")
        writer.execute("INSERT INTO t VALUES (?)", (RECORD,))
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM t").fetchone()  # holds its read lock until COMMIT
        wal_index.acquire(path)  # as a Database of this process does when it opens the log
        wal_index.acquire(path)  # and a second one
        wal_index.release(path)  # that one closed: the descriptor stays open for the first
        for _ in range(3):
            assert frames_to_copy(path)
        other = subprocess.run(
            [sys.executable, "-c", OTHER_PROCESS_TRUNCATES, str(path)], capture_output=True, text=True, check=True
        )
        assert other.stdout.strip() == "1"  # busy: our reader still counts
        reader.execute("COMMIT")
    finally:
        reader.close()
        writer.close()
        wal_index.release(path)


def test_a_passive_checkpoint_reports_busy_and_frames(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert checkpoint_passive(conn).wal_frames == -1  # not in WAL mode
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute("CREATE TABLE t (v BLOB)")
        conn.execute("INSERT INTO t VALUES (?)", (RECORD,))
        done = checkpoint_passive(conn)
        assert not done.busy
        assert done.wal_frames > 0
        assert done.copied_frames == done.wal_frames
    finally:
        conn.close()
