"""Compaction and retention: what disappears from the log, and what must stay.

On Kafka the broker's log cleaner does the work (the test topic rolls segments
after 100 ms and is cleanable at any dirt; ``ops/kafka`` runs the cleaner every
200 ms); on the embedded log the test runs a cleaner pass itself. Either way
the test polls the log until the superseded record is gone.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from contract_support import end_after, read_all

from services.bus import Bus, OutRecord, ProducerFenced, TopicSpec
from services.bus.embedded import EmbeddedBus
from tests.support.eventually import eventually

LAG_MS = 1000
COMPACTED = TopicSpec(
    "objects",
    1,
    {
        "cleanup.policy": "compact",
        "min.compaction.lag.ms": str(LAG_MS),
        "delete.retention.ms": "86400000",
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
    },
)


async def view(bus: Bus, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every record in the topic now, after a cleaner pass."""
    if isinstance(bus, EmbeddedBus):
        await bus.compact()
    consumer = await bus.consumer(topic)
    try:
        records = await read_all(consumer, await bus.end_offset(topic))
    finally:
        await consumer.close()
    return [(r.offset, r.key, r.value) for r in records]


async def sleep_until_ms(wall_clock_ms: int) -> None:
    """Let wall-clock time pass: the compaction lag is measured against it."""
    await asyncio.sleep(max(0.0, wall_clock_ms / 1000 - time.time()))


async def test_superseded_records_older_than_the_lag_disappear(bus: Bus) -> None:
    await bus.ensure_topics([COMPACTED])
    producer = await bus.producer()
    old = await producer.send(
        [
            OutRecord("objects", b"a", b"a1"),
            OutRecord("objects", b"a", b"a2"),
            OutRecord("objects", b"b", b"b1"),
            OutRecord("objects", b"c", b"c1"),
            OutRecord("objects", b"c", None),  # a tombstone supersedes c1
        ]
    )
    written = await read_all(await bus.consumer("objects"), old[-1] + 1)
    await sleep_until_ms(max(r.timestamp_ms for r in written) + LAG_MS + 100)
    new = await producer.send(
        [OutRecord("objects", b"a", b"a3"), OutRecord("objects", b"d", b"d1")]
    )  # within the lag: nothing they supersede may go yet
    await end_after(bus, "objects", new[-1])

    survivors = await eventually(
        lambda: view(bus, "objects"),
        until=lambda records: (old[0], b"a", b"a1") not in records,
        what="the cleaner to remove superseded records",
        timeout=30,
        interval=0.2,
    )
    assert survivors == [
        (old[1], b"a", b"a2"),  # superseded only by a3, which is newer than the lag
        (old[2], b"b", b"b1"),
        (old[4], b"c", None),  # a tombstone stays for delete.retention.ms
        (new[0], b"a", b"a3"),
        (new[1], b"d", b"d1"),
    ]
    assert await bus.beginning_offset("objects") == 0  # compaction never moves the log start


def embedded_only(bus: Bus) -> EmbeddedBus:
    if not isinstance(bus, EmbeddedBus):
        pytest.skip("embedded log only: Kafka's cleaner works by segment and needs minutes here")
    return bus


async def test_tombstones_disappear_after_delete_retention(bus: Bus) -> None:
    embedded = embedded_only(bus)
    await bus.ensure_topics(
        [
            TopicSpec(
                "objects",
                1,
                {"cleanup.policy": "compact", "min.compaction.lag.ms": "0", "delete.retention.ms": "500"},
            )
        ]
    )
    producer = await bus.producer()
    await producer.send(
        [OutRecord("objects", b"a", b"a1"), OutRecord("objects", b"a", None), OutRecord("objects", b"b", b"b1")]
    )
    now = time.time_ns() // 1_000_000
    await embedded.compact(now_ms=now)
    assert [(k, v) for _, k, v in await view(bus, "objects")] == [(b"a", None), (b"b", b"b1")]
    await embedded.compact(now_ms=now + 1000)
    assert [(k, v) for _, k, v in await view(bus, "objects")] == [(b"b", b"b1")]


async def test_retention_deletes_old_records_and_moves_the_log_start(bus: Bus) -> None:
    embedded = embedded_only(bus)
    await bus.ensure_topics([TopicSpec("events", 1, {"cleanup.policy": "delete", "retention.ms": "1000"})])
    producer = await bus.producer()
    offsets = await producer.send([OutRecord("events", b"e", b"%d" % i) for i in range(3)])
    await embedded.compact(now_ms=time.time_ns() // 1_000_000 + 5000)
    assert await bus.beginning_offset("events") == offsets[-1] + 1
    assert await bus.end_offset("events") == offsets[-1] + 1
    (later,) = await producer.send([OutRecord("events", b"e", b"later")])
    consumer = await bus.consumer("events")
    records = await read_all(consumer, later + 1)
    assert [(r.offset, r.value) for r in records] == [(later, b"later")]


async def test_a_transaction_open_past_its_timeout_is_aborted_and_fenced(bus: Bus) -> None:
    embedded = embedded_only(bus)
    await bus.ensure_topics([TopicSpec("out", 1)])
    producer = await bus.producer(transactional_id="slow")
    context = producer.transaction()
    txn = await context.__aenter__()
    (held,) = await txn.send([OutRecord("out", b"k", b"too slow")])
    assert await bus.end_offset("out") == held  # the open transaction holds readers back
    await embedded.compact(now_ms=time.time_ns() // 1_000_000 + 120_000)
    assert await bus.end_offset("out") == held + 1
    with pytest.raises(ProducerFenced):
        await context.__aexit__(None, None, None)
    assert await view(bus, "out") == []
