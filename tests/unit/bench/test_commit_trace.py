"""latency.py's exact commit → seen: the commit trace stamps each announced commit's objects offsets."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ops.bench import commit_trace
from ops.bench.latency import Observer
from services.bus import open_bus
from services.bus.port import Bus, OutRecord, TopicSpec
from services.runtime.informer import Change

REPO = Path(__file__).resolve().parents[3]
TOPICS = [TopicSpec("objects", partitions=1), TopicSpec("replies", partitions=1)]


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[commit_trace.Trace]:
    out = tmp_path / "trace"
    out.mkdir()
    trace = commit_trace.install(out)
    try:
        yield trace
    finally:
        commit_trace.uninstall()


async def commit_objects(bus: Bus, values: list[bytes]) -> list[int]:
    """One committer-like transaction: objects records, and replies made from their offsets."""
    producer = await bus.producer(transactional_id="committer")
    written: list[int] = []

    def replies(offsets: list[int]) -> list[OutRecord]:
        written.extend(offsets)
        return [OutRecord("replies", b"r", str(o).encode()) for o in offsets]

    async with producer.transaction() as txn:
        await txn.send_then([OutRecord("objects", b"k", v) for v in values], replies, then_to=[("replies", 0)])
    await producer.close()
    return written


async def test_an_announced_commit_is_stamped_with_its_objects_offsets(
    traced: commit_trace.Trace, tmp_path: Path
) -> None:
    bus = open_bus(f"sqlite://{tmp_path / 'bus.db'}")
    await bus.start()
    try:
        await bus.ensure_topics(TOPICS)
        plain = await bus.producer()
        assert await plain.send([OutRecord("objects", b"k", b"plain")]) == [0]  # not a transaction's: not stamped
        before = time.time_ns()
        offsets = await commit_objects(bus, [b"a", b"b"])
        after = time.time_ns()
    finally:
        await bus.close()
    assert [o for o, _ in traced.commits] == offsets == [1, 2]
    assert all(before <= ns <= after for _, ns in traced.commits)
    traced.dump()
    assert commit_trace.announced(traced.path.parent) == dict(traced.commits)

    observer = Observer()  # latency.py's informer listener, which stamps what it measures
    observer(applied(1))  # not measuring: not kept
    observer.measuring = True
    observer(applied(2))
    observer(applied(0))  # no traced commit made it visible: left out
    (delivery,) = observer.seen.delivery_ms(dict(traced.commits))
    assert 0 <= delivery < 60_000


def applied(offset: int) -> Change:
    """An objects record as the benchmark's informer hands it over (a pod of another namespace)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "elsewhere"}}
    return Change(offset, 0, "ADDED", "", "pods", "elsewhere", "p", pod, None, None)


async def test_uninstall_puts_the_log_back(tmp_path: Path) -> None:
    from services.bus.embedded import db, producer

    originals = (producer.append, db._in_transaction_then)
    commit_trace.install(tmp_path)
    assert (producer.append, db._in_transaction_then) != originals
    commit_trace.uninstall()
    assert (producer.append, db._in_transaction_then) == originals


def test_a_child_process_traces_its_commits_through_sitecustomize(tmp_path: Path) -> None:
    """What the benchmark relies on: a child started with `child_env` writes its stamps as it exits."""
    out = tmp_path / "trace"
    out.mkdir()
    script = f"""
import asyncio
from tests.unit.bench.test_commit_trace import TOPICS, commit_objects
from services.bus import open_bus

async def main():
    bus = open_bus("sqlite://{tmp_path / 'bus.db'}")
    await bus.start()
    await bus.ensure_topics(TOPICS)
    print(await commit_objects(bus, [b"x", b"y", b"z"]))
    await bus.close()

asyncio.run(main())
"""
    env = commit_trace.child_env({"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}, out)
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "[0, 1, 2]"
    assert sorted(commit_trace.announced(out)) == [0, 1, 2]
