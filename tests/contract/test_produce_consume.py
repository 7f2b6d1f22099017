"""Producing and consuming: order, offsets, positions, seeking, timestamps."""

from __future__ import annotations

import asyncio

import pytest
from contract_support import read_all, values

from services.bus import BEGINNING, END, Bus, BusError, OutRecord, Record, TopicSpec


@pytest.fixture
async def log_bus(bus: Bus) -> Bus:
    await bus.ensure_topics([TopicSpec("log", 2), TopicSpec("other", 1)])
    return bus


async def test_records_come_back_in_order_with_their_offsets(log_bus: Bus) -> None:
    producer = await log_bus.producer()
    first = await producer.send([OutRecord("log", b"k%d" % i, b"v%d" % i) for i in range(5)])
    second = await producer.send([OutRecord("log", b"k", None), OutRecord("log", None, b"no key")])
    offsets = first + second
    assert offsets == sorted(offsets) and len(set(offsets)) == 7

    consumer = await log_bus.consumer("log")
    records = await read_all(consumer, await log_bus.end_offset("log"))

    assert [r.offset for r in records] == offsets
    assert values(records) == [b"v0", b"v1", b"v2", b"v3", b"v4", None, b"no key"]
    assert [r.key for r in records][:6] == [b"k0", b"k1", b"k2", b"k3", b"k4", b"k"]
    assert records[6].key is None
    assert {(r.topic, r.partition) for r in records} == {("log", 0)}
    assert all(r.timestamp_ms > 0 for r in records)
    assert consumer.position() == await log_bus.end_offset("log")


async def test_concurrent_sends_each_keep_their_records_together_and_in_order(log_bus: Bus) -> None:
    """Sends made at once (several producers, several sends each) may share a batch
    or a write transaction; each still gets its own offsets, in its order, once."""
    producers = [await log_bus.producer() for _ in range(3)]
    sends = [[OutRecord("log", b"s%d" % s, b"%d-%d" % (s, i)) for i in range(1 + s % 20)] for s in range(60)]
    results = await asyncio.gather(*(producers[s % 3].send(records) for s, records in enumerate(sends)))

    offsets = [o for result in results for o in result]
    assert len(set(offsets)) == len(offsets) == sum(len(records) for records in sends)
    records = await read_all(await log_bus.consumer("log"), await log_bus.end_offset("log"))
    by_offset = {r.offset: r.value for r in records}
    assert len(records) == len(offsets)
    for result, sent in zip(results, sends, strict=True):
        assert result == sorted(result)
        assert [by_offset[o] for o in result] == [r.value for r in sent]


async def test_partitions_are_independent_logs(log_bus: Bus) -> None:
    producer = await log_bus.producer()
    offsets = await producer.send(
        [OutRecord("log", b"a", b"p0", partition=0), OutRecord("log", b"b", b"p1", partition=1)]
    )
    assert offsets == [0, 0]
    assert await log_bus.end_offset("log", 1) == 1
    consumer = await log_bus.consumer("log", partition=1)
    records = await read_all(consumer, 1)
    assert [(r.partition, r.value) for r in records] == [(1, b"p1")]


async def test_beginning_end_and_seek(log_bus: Bus) -> None:
    assert await log_bus.beginning_offset("log") == 0
    assert await log_bus.end_offset("log") == 0
    producer = await log_bus.producer()
    offsets = await producer.send([OutRecord("log", b"k", b"%d" % i) for i in range(4)])
    end = await log_bus.end_offset("log")
    assert end == offsets[-1] + 1

    at_end = await log_bus.consumer("log", start=END)
    assert at_end.position() == end
    assert await at_end.getmany(timeout_ms=50) == []

    from_two = await log_bus.consumer("log", start=offsets[2])
    assert values(await read_all(from_two, end)) == [b"2", b"3"]

    await from_two.seek(BEGINNING)
    assert from_two.position() == 0
    assert values(await read_all(from_two, end)) == [b"0", b"1", b"2", b"3"]
    await from_two.seek(offsets[1])
    assert values(await read_all(from_two, end)) == [b"1", b"2", b"3"]


async def test_a_waiting_consumer_wakes_up_for_a_new_record(log_bus: Bus) -> None:
    consumer = await log_bus.consumer("log", start=END)
    waiting = asyncio.create_task(consumer.getmany(timeout_ms=10_000))
    await asyncio.sleep(0)  # let it start waiting
    producer = await log_bus.producer()
    await producer.send([OutRecord("log", b"k", b"hello")])
    records = await waiting
    assert values(records) == [b"hello"]


async def test_max_records_limits_a_batch_and_the_rest_follows(log_bus: Bus) -> None:
    producer = await log_bus.producer()
    await producer.send([OutRecord("log", b"k", b"%d" % i) for i in range(10)])
    consumer = await log_bus.consumer("log")
    got: list[Record] = []
    while len(got) < 10:
        batch = await consumer.getmany(timeout_ms=2000, max_records=3)
        assert 0 < len(batch) <= 3
        got += batch
    assert [r.offset for r in got] == list(range(10))


async def test_offset_for_time(log_bus: Bus) -> None:
    producer = await log_bus.producer()
    (early,) = await producer.send([OutRecord("log", b"k", b"early")])
    consumer = await log_bus.consumer("log")
    (first,) = await read_all(consumer, early + 1)
    await asyncio.sleep(0.01)  # the next record must carry a later millisecond
    (late,) = await producer.send([OutRecord("log", b"k", b"late")])
    (second,) = await read_all(consumer, late + 1)
    assert second.timestamp_ms > first.timestamp_ms

    assert await log_bus.offset_for_time("log", 0) == early
    assert await log_bus.offset_for_time("log", first.timestamp_ms) == early
    assert await log_bus.offset_for_time("log", first.timestamp_ms + 1) == late
    assert await log_bus.offset_for_time("log", second.timestamp_ms) == late
    assert await log_bus.offset_for_time("log", second.timestamp_ms + 60_000) is None

    # Seeking by time: find the offset, then read from it.
    replay = await log_bus.consumer("log")
    start = await log_bus.offset_for_time("log", first.timestamp_ms + 1)
    assert start is not None
    await replay.seek(start)
    assert values(await read_all(replay, late + 1)) == [b"late"]


async def test_topic_names_are_not_mixed_up(log_bus: Bus) -> None:
    producer = await log_bus.producer()
    await producer.send([OutRecord("other", b"k", b"elsewhere")])
    assert await log_bus.end_offset("log") == 0
    records = await read_all(await log_bus.consumer("other"), 1)
    assert [(r.topic, r.value) for r in records] == [("other", b"elsewhere")]


async def test_unknown_topics_and_partitions_are_errors(log_bus: Bus) -> None:
    with pytest.raises(BusError, match="unknown topic"):
        await log_bus.consumer("nope")
    with pytest.raises(BusError, match="unknown topic"):
        await log_bus.end_offset("log", 7)
    producer = await log_bus.producer()
    with pytest.raises(BusError, match="unknown topic"):
        await producer.send([OutRecord("log", b"k", b"v", partition=5)])
