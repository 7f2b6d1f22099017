"""The embedded log's page size: set when a file is created, kept by a file made before.

Why it matters: a commit writes every page it touched to the WAL whole, so
small commits cost less with small pages (docs/decisions/latency.md,
"Eighteenth pass"). A file keeps the page size it was created with.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from services.bus import OutRecord, TopicSpec, open_bus
from services.bus.embedded import db as db_module
from services.bus.embedded.bus import EmbeddedBus
from services.bus.embedded.checkpoint import checkpoint_frames, commit_checkpoint_frames
from services.bus.embedded.schema import CHECKPOINT_BYTES, PAGE_SIZE
from services.bus.embedded.shared import Settings
from services.bus.embedded.wal_index import frames_to_copy
from tests.support.embedded_bus import started
from tests.support.eventually import eventually

MB = 1 << 20
BIG = b"x" * (256 * 1024)


def page_size(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()


def made_with_16_kib_pages(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA page_size=16384")
    conn.execute("CREATE TABLE made_before (a)")  # the first page is written: the size is the file's now
    conn.commit()
    conn.close()


async def round_trip(path: Path) -> list[bytes | None]:
    bus = open_bus(f"sqlite://{path}")
    assert isinstance(bus, EmbeddedBus)
    await bus.start()
    try:
        await bus.ensure_topics([TopicSpec("objects", 1)])
        await (await bus.producer()).send([OutRecord("objects", b"k", b"v" * 1500) for _ in range(20)])
        consumer = await bus.consumer("objects")
        return [r.value for r in await consumer.getmany(timeout_ms=1000)]
    finally:
        await bus.close()


async def test_a_new_log_file_has_4_kib_pages(tmp_path: Path) -> None:
    assert PAGE_SIZE == 4096
    path = tmp_path / "bus.db"
    assert await round_trip(path) == [b"v" * 1500] * 20
    assert page_size(path) == 4096


async def test_a_file_made_with_16_kib_pages_keeps_them_and_works(tmp_path: Path) -> None:
    path = tmp_path / "bus.db"
    made_with_16_kib_pages(path)
    assert await round_trip(path) == [b"v" * 1500] * 20
    assert page_size(path) == 16384


async def test_a_log_written_with_16_kib_pages_keeps_its_records_and_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log as draplane wrote it before stop 37 (the bus itself, with 16 KiB pages) opens under today's code."""
    path = tmp_path / "bus.db"
    with monkeypatch.context() as before:
        before.setattr(db_module, "PAGE_SIZE", 16384)
        assert await round_trip(path) == [b"v" * 1500] * 20
    assert page_size(path) == 16384
    assert await round_trip(path) == [b"v" * 1500] * 40  # the old records, then the new ones
    assert page_size(path) == 16384


def test_checkpoint_thresholds_are_bytes_of_the_files_own_pages() -> None:
    default = Settings()
    assert checkpoint_frames(default, 4096) == CHECKPOINT_BYTES // 4096 == 1024
    assert checkpoint_frames(default, 16384) == 256  # 4 MiB too, not 16
    assert commit_checkpoint_frames(default, 16384) == 1024
    assert commit_checkpoint_frames(Settings(checkpoint_interval_ms=0), 16384) == 256
    assert checkpoint_frames(Settings(checkpoint_frames=77), 16384) == 77  # a given count is taken as it is


async def test_a_16_kib_file_is_checkpointed_by_commits_at_16_mib(tmp_path: Path) -> None:
    """Four times 4 MiB, as a new file; counted in frames of a new file's pages it would be 64 MiB."""
    path = tmp_path / "bus.db"
    made_with_16_kib_pages(path)
    bus = await started(f"sqlite://{path}?checkpoint_interval_ms=600000")  # within the test only commits
    try:
        assert bus._shared.db.page_size == 16384
        assert bus._shared.db.autocheckpoint_frames == 1024
        before = path.stat().st_size
        producer = await bus.producer()
        for _ in range(20):  # 20 MB: past 16 MiB, short of 64
            await producer.send([OutRecord("objects", b"k", BIG) for _ in range(4)])
        assert path.stat().st_size >= before + 8 * MB
    finally:
        await bus.close()


async def test_a_16_kib_file_is_checkpointed_in_the_background_at_4_mib(tmp_path: Path) -> None:
    path = tmp_path / "bus.db"
    made_with_16_kib_pages(path)
    bus = await started(f"sqlite://{path}?checkpoint_interval_ms=10")
    try:
        before = path.stat().st_size
        await (await bus.producer()).send([OutRecord("objects", b"k", BIG) for _ in range(24)])  # 6 MB
        await eventually(lambda: frames_to_copy(path) == 0, what="the WAL copied into the file", timeout=10.0)
        assert path.stat().st_size >= before + 4 * MB
    finally:
        await bus.close()
