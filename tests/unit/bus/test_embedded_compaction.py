"""The embedded log's cleaner without a key index: Kafka's dirty ratio, scans in slices, schema upgrades.

The contract tests (`tests/contract/test_compaction.py`) hold both backends
to what disappears. These hold the embedded log's own mechanics: when a pass
runs at all, that a sliced scan removes what one scan would, that a tombstone
never goes while an older record of its key is still there for it to hide,
and that a log file of schema version 1 (the recorded upgrade fixture) is
taken to version 2 when opened.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.bus import OutRecord, TopicSpec, open_bus
from services.bus.embedded import EmbeddedBus, cleaner
from services.bus.embedded.schema import SCHEMA_VERSION
from services.bus.port import BusError
from tests.support.log_reading import read_topic

RECORDED_LOG = Path(__file__).parents[2] / "integration" / "upgrade" / "recorded-log" / "bus.db"


def compacted(ratio: str | None = None, *, tombstones_ms: int = 86_400_000) -> TopicSpec:
    config = {
        "cleanup.policy": "compact",
        "min.compaction.lag.ms": "0",
        "delete.retention.ms": str(tombstones_ms),
    }
    if ratio is not None:
        config["min.cleanable.dirty.ratio"] = ratio
    return TopicSpec("objects", 1, config)


@pytest.fixture
async def bus(tmp_path: Path) -> AsyncIterator[EmbeddedBus]:
    opened = open_bus(f"sqlite:///{tmp_path}/bus.db?maintenance_interval_ms=0")
    assert isinstance(opened, EmbeddedBus)
    await opened.start()
    yield opened
    await opened.close()


async def keys_and_values(bus: EmbeddedBus) -> list[tuple[bytes | None, bytes | None]]:
    return [(r.key, r.value) for r in await read_topic(bus, "objects")]


def clean_state(path: Path) -> tuple[int, int]:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT clean_upto, clean_records FROM partitions").fetchone()
    return int(row[0]), int(row[1])


def now() -> int:
    return time.time_ns() // 1_000_000


@pytest.mark.parametrize(
    ("clean", "dirty", "ratio", "runs"),
    [
        (0, 0, 0.0, False),  # nothing dirty: nothing to do at any ratio
        (0, 5, 0.5, True),
        (10, 10, 0.5, True),  # exactly the ratio
        (11, 10, 0.5, False),
        (99, 1, 0.01, True),
        (100, 1, 0.01, False),
    ],
)
def test_a_pass_runs_once_the_dirty_share_reaches_the_ratio(
    clean: int, dirty: int, ratio: float, runs: bool
) -> None:
    assert cleaner.cleanable(clean, dirty, ratio) is runs


async def test_below_the_dirty_ratio_nothing_is_cleaned_and_above_it_everything_is(
    bus: EmbeddedBus, tmp_path: Path
) -> None:
    await bus.ensure_topics([compacted()])  # Kafka's default ratio, 0.5
    producer = await bus.producer()
    await producer.send([OutRecord("objects", b"k%d" % i, b"v1") for i in range(10)])
    await bus.compact()
    assert clean_state(tmp_path / "bus.db") == (10, 10)  # all dirty: cleaned, nothing superseded

    await producer.send([OutRecord("objects", b"k0", b"v2")] * 3)  # 3 dirty of 13: below 0.5
    await bus.compact()
    assert len(await keys_and_values(bus)) == 13
    assert clean_state(tmp_path / "bus.db") == (10, 10)

    await producer.send([OutRecord("objects", b"k1", b"v2")] * 7)  # 10 dirty of 20
    await bus.compact()
    survivors = await keys_and_values(bus)
    assert sorted(survivors) == sorted([(b"k%d" % i, b"v1") for i in range(2, 10)] + [(b"k0", b"v2"), (b"k1", b"v2")])
    assert clean_state(tmp_path / "bus.db") == (20, 10)


async def test_a_tombstone_waits_for_its_key_to_be_cleaned_before_it_goes(
    bus: EmbeddedBus, tmp_path: Path
) -> None:
    await bus.ensure_topics([compacted(tombstones_ms=0)])
    producer = await bus.producer()
    await producer.send([OutRecord("objects", b"k%d" % i, b"v") for i in range(10)])
    await bus.compact()  # all clean now
    await producer.send([OutRecord("objects", b"k0", None)])  # 1 dirty of 11: no pass
    await bus.compact(now_ms=now() + 10)
    # Deleting the tombstone now would bring k0's value back from the clean section.
    assert (b"k0", b"v") in await keys_and_values(bus)
    assert (b"k0", None) in await keys_and_values(bus)
    await producer.send([OutRecord("objects", b"x%d" % i, b"v") for i in range(10)])  # 11 dirty of 21
    await bus.compact(now_ms=now() + 10)  # cleans k0's value, then its tombstone
    assert not [kv for kv in await keys_and_values(bus) if kv[0] == b"k0"]
    assert clean_state(tmp_path / "bus.db") == (21, 19)  # the tombstone left the count too


async def test_a_scan_in_slices_removes_what_one_scan_would(
    bus: EmbeddedBus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cleaner, "CHUNK", 7)
    monkeypatch.setattr(cleaner, "MAP_OFFSETS", 11)
    await bus.ensure_topics([compacted("0.01")])
    producer = await bus.producer()
    records = [OutRecord("objects", b"k%d" % (i % 9), b"v%d" % i) for i in range(40)]
    await producer.send(records)
    await bus.compact()
    newest = {r.key: r.value for r in records}
    assert sorted(await keys_and_values(bus)) == sorted(newest.items())
    assert clean_state(tmp_path / "bus.db") == (40, 9)


async def test_a_version_1_log_is_upgraded_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "bus.db"
    shutil.copy(RECORDED_LOG, path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
        before = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    upgraded = open_bus(f"sqlite:///{path}?maintenance_interval_ms=0")
    await upgraded.start()
    try:
        assert isinstance(upgraded, EmbeddedBus)
        with sqlite3.connect(path) as conn:
            version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            indexes = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")]
            assert conn.execute("SELECT count(*) FROM records").fetchone()[0] == before
        assert version == (str(SCHEMA_VERSION),)
        assert "records_by_key" not in indexes
        assert clean_state(path) == (0, 0)  # the recorded log was never compacted
        end = await upgraded.end_offset("objects")
        await upgraded.compact()  # seven days' lag: nothing of the fixture is old enough
        assert await upgraded.end_offset("objects") == end
    finally:
        await upgraded.close()


async def test_a_log_of_a_newer_version_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "bus.db"
    shutil.copy(RECORDED_LOG, path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
        # A newer schema today's DDL cannot run on: its tombstone index names a column this one lacks.
        conn.execute("DROP INDEX records_tombstones")
        conn.execute("ALTER TABLE records RENAME COLUMN value TO payload")
    newer = open_bus(f"sqlite:///{path}?maintenance_interval_ms=0")
    with pytest.raises(BusError, match=f"has schema version {SCHEMA_VERSION + 1}, this draplane reads version"):
        await newer.start()
    with sqlite3.connect(path) as conn:
        indexes = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")]
        columns = [row[1] for row in conn.execute("PRAGMA table_info(partitions)")]
    assert "records_by_key" in indexes and "records_tombstones" not in indexes and "clean_records" not in columns


async def test_retention_on_a_compacted_topic_takes_what_it_deletes_off_the_clean_count(
    bus: EmbeddedBus, tmp_path: Path
) -> None:
    spec = compacted()
    await bus.ensure_topics(
        [TopicSpec("objects", 1, {**spec.config, "cleanup.policy": "compact,delete", "retention.ms": "1000"})]
    )
    producer = await bus.producer()
    await producer.send([OutRecord("objects", b"k%d" % i, b"v") for i in range(6)])
    await bus.compact()
    assert clean_state(tmp_path / "bus.db") == (6, 6)
    await producer.send([OutRecord("objects", b"x", b"v")])  # dirty, past the clean section
    await bus.compact(now_ms=now() + 5000)  # retention takes all seven
    assert await bus.beginning_offset("objects") == 7
    assert clean_state(tmp_path / "bus.db") == (6, 0)


async def test_the_upgrade_counts_the_clean_section_of_a_compacted_version_1_log(tmp_path: Path) -> None:
    path = tmp_path / "bus.db"
    first = open_bus(f"sqlite:///{path}?maintenance_interval_ms=0")
    await first.start()
    assert isinstance(first, EmbeddedBus)
    await first.ensure_topics([compacted()])
    producer = await first.producer()
    await producer.send([OutRecord("objects", b"k%d" % (i % 4), b"v") for i in range(10)])
    await first.compact()
    await first.close()
    assert clean_state(path) == (10, 4)
    with sqlite3.connect(path) as conn:  # back to what version 1 kept
        conn.execute("CREATE INDEX records_by_key ON records (key, pos)")
        conn.execute("ALTER TABLE partitions DROP COLUMN clean_records")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    second = open_bus(f"sqlite:///{path}?maintenance_interval_ms=0")
    await second.start()
    await second.close()
    assert clean_state(path) == (10, 4)
