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
from services.bus.embedded.schema import PAGE_SIZE


def page_size(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
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
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA page_size=16384")
    conn.execute("CREATE TABLE made_before (a)")  # the first page is written: the size is the file's now
    conn.commit()
    conn.close()
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
