"""The embedded log's WAL is checkpointed in the background, never inside a commit.

SQLite's automatic checkpoint ran inside the commit that took the WAL past
1,000 pages, syncing files on the writer's thread before the commit's wake-up
datagram went out (`services.bus.embedded.checkpoint`). The database file (as
opposed to the WAL beside it) only grows when a checkpoint copies pages into
it, so its size says whether one ran.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.bus import OutRecord, TopicSpec, open_bus
from services.bus.embedded.bus import EmbeddedBus
from services.bus.embedded.checkpoint import checkpoint_passive
from tests.support.eventually import eventually

MB = 1 << 20
RECORD = b"x" * (256 * 1024)


def size(path: Path | str) -> int:
    return Path(path).stat().st_size


async def started(url: str, *, declare: bool = True) -> EmbeddedBus:
    bus = open_bus(url)
    assert isinstance(bus, EmbeddedBus)
    await bus.start()
    if declare:
        await bus.ensure_topics([TopicSpec("objects", 1)])
    return bus


@pytest.fixture
async def quiet_bus(tmp_path: Path) -> AsyncIterator[EmbeddedBus]:
    bus = await started(f"sqlite://{tmp_path / 'bus.db'}?checkpoint_interval_ms=0")
    try:
        yield bus
    finally:
        await bus.close()


async def test_commits_never_checkpoint_by_themselves(quiet_bus: EmbeddedBus) -> None:
    producer = await quiet_bus.producer(transactional_id="committer")
    # 24 MB through transactions and plain appends: SQLite's own checkpoint would have run at 16 MB.
    for _ in range(12):
        async with producer.transaction() as txn:
            await txn.send([OutRecord("objects", b"k", RECORD) for _ in range(4)])
    plain = await quiet_bus.producer()
    for _ in range(12):
        await plain.send([OutRecord("objects", b"k", RECORD) for _ in range(4)])
    assert size(quiet_bus.path) < 2 * MB
    assert size(f"{quiet_bus.path}-wal") > 24 * MB
    consumer = await quiet_bus.consumer("objects")
    assert len(await consumer.getmany(timeout_ms=1000, max_records=1000)) == 96


async def test_a_bus_that_wrote_checkpoints_in_the_background(tmp_path: Path) -> None:
    bus = await started(f"sqlite://{tmp_path / 'bus.db'}?checkpoint_interval_ms=10")
    try:
        before = size(bus.path)
        producer = await bus.producer()
        await producer.send([OutRecord("objects", b"k", RECORD) for _ in range(8)])
        await eventually(lambda: size(bus.path) >= before + 2 * MB, what="the WAL copied into the file")
    finally:
        await bus.close()


async def test_a_bus_that_only_reads_never_checkpoints(tmp_path: Path) -> None:
    path = tmp_path / "bus.db"
    writer = await started(f"sqlite://{path}?checkpoint_interval_ms=0")
    reader = await started(f"sqlite://{path}?checkpoint_interval_ms=10", declare=False)
    committed = reader._shared.db.commits  # opening the file wrote its schema
    try:
        before = size(path)
        await (await writer.producer()).send([OutRecord("objects", b"k", RECORD) for _ in range(8)])
        consumer = await reader.consumer("objects")
        assert len(await consumer.getmany(timeout_ms=1000)) == 8
        assert reader._shared.db.commits == committed
        for _ in range(5):  # several of the reader's rounds
            await consumer.getmany(timeout_ms=20)
        assert size(path) == before
    finally:
        await reader.close()
        await writer.close()


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
