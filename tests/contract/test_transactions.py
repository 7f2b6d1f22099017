"""Transactions: atomic visibility, aborts, offsets committed with the records, fencing."""

from __future__ import annotations

import pytest
from contract_support import end_after, read_all, values

from services.bus import Bus, BusError, OutRecord, ProducerFenced, TopicSpec
from tests.support.eventually import eventually


@pytest.fixture
async def txn_bus(bus: Bus) -> Bus:
    await bus.ensure_topics([TopicSpec("out", 1), TopicSpec("in", 1)])
    return bus


async def test_a_transaction_becomes_visible_at_once_on_commit(txn_bus: Bus) -> None:
    plain = await txn_bus.producer()
    (before,) = await plain.send([OutRecord("out", b"k", b"before")])
    producer = await txn_bus.producer(transactional_id="writer")
    consumer = await txn_bus.consumer("out")
    async with producer.transaction() as txn:
        offsets = await txn.send([OutRecord("out", b"k", b"a"), OutRecord("out", b"k", b"b")])
        # A plain record written meanwhile waits behind the open transaction.
        (after,) = await plain.send([OutRecord("out", b"k", b"after")])
        offsets += await txn.send([OutRecord("out", b"k", b"c")])
        assert before < offsets[0] < offsets[1] < after < offsets[2]
        assert values(await read_all(consumer, before + 1)) == [b"before"]
        assert await consumer.getmany(timeout_ms=200) == []
        assert await txn_bus.end_offset("out") == offsets[0]
    records = await read_all(consumer, await end_after(txn_bus, "out", offsets[-1]))
    assert [r.offset for r in records] == [offsets[0], offsets[1], after, offsets[2]]
    assert values(records) == [b"a", b"b", b"after", b"c"]


async def test_an_aborted_transaction_is_never_read(txn_bus: Bus) -> None:
    producer = await txn_bus.producer(transactional_id="writer")
    with pytest.raises(RuntimeError, match="changed my mind"):
        async with producer.transaction() as txn:
            await txn.send([OutRecord("out", b"k", b"aborted-1"), OutRecord("out", b"k", b"aborted-2")])
            raise RuntimeError("changed my mind")
    async with producer.transaction() as txn:
        (kept,) = await txn.send([OutRecord("out", b"k", b"kept")])

    consumer = await txn_bus.consumer("out")
    end = await end_after(txn_bus, "out", kept)
    records = await read_all(consumer, end)
    assert values(records) == [b"kept"]
    assert records[0].offset == kept
    assert consumer.position() == end


async def test_group_offsets_commit_with_the_transaction(txn_bus: Bus) -> None:
    plain = await txn_bus.producer()
    await plain.send([OutRecord("in", b"r", b"%d" % i) for i in range(3)])
    member = await txn_bus.join_group("workers", "in")
    assert await member.committed() is None

    producer = await txn_bus.producer(transactional_id="worker")
    with pytest.raises(RuntimeError):
        async with producer.transaction() as txn:
            await txn.send([OutRecord("out", b"k", b"lost")])
            await txn.send_offsets("workers", {("in", 0): 2})
            raise RuntimeError("abort")
    assert await member.committed() is None

    async with producer.transaction() as txn:
        await txn.send([OutRecord("out", b"k", b"done")])
        await txn.send_offsets("workers", {("in", 0): 2})
    await eventually(member.committed, until=lambda offset: offset == 2, what="the committed offset", interval=0.02)


async def test_a_new_producer_fences_the_old_one(txn_bus: Bus) -> None:
    old = await txn_bus.producer(transactional_id="leader")
    async with old.transaction() as txn:
        await txn.send([OutRecord("out", b"k", b"old-committed")])

    new = await txn_bus.producer(transactional_id="leader")
    with pytest.raises(ProducerFenced):
        async with old.transaction() as txn:
            await txn.send([OutRecord("out", b"k", b"zombie")])
    with pytest.raises(ProducerFenced):  # and it stays fenced
        async with old.transaction() as txn:
            await txn.send([OutRecord("out", b"k", b"zombie-again")])

    async with new.transaction() as txn:
        (last,) = await txn.send([OutRecord("out", b"k", b"new")])
    consumer = await txn_bus.consumer("out")
    records = await read_all(consumer, await end_after(txn_bus, "out", last))
    assert values(records) == [b"old-committed", b"new"]


async def test_fencing_aborts_the_open_transaction_of_the_old_producer(txn_bus: Bus) -> None:
    old = await txn_bus.producer(transactional_id="leader")
    context = old.transaction()
    txn = await context.__aenter__()
    await txn.send([OutRecord("out", b"k", b"in-flight")])

    new = await txn_bus.producer(transactional_id="leader")  # aborts the open transaction
    async with new.transaction() as txn2:
        (last,) = await txn2.send([OutRecord("out", b"k", b"new")])
    consumer = await txn_bus.consumer("out")
    assert values(await read_all(consumer, await end_after(txn_bus, "out", last))) == [b"new"]

    with pytest.raises(ProducerFenced):
        await context.__aexit__(None, None, None)  # the old producer tries to commit


async def test_transactional_and_plain_producers_keep_to_their_kind(txn_bus: Bus) -> None:
    plain = await txn_bus.producer()
    with pytest.raises(BusError):
        plain.transaction()
    transactional = await txn_bus.producer(transactional_id="t")
    with pytest.raises(BusError):
        await transactional.send([OutRecord("out", b"k", b"v")])


async def test_records_sent_with_the_commit_are_seen_with_it_and_only_with_it(txn_bus: Bus) -> None:
    plain = await txn_bus.producer()
    (before,) = await plain.send([OutRecord("out", b"k", b"before")])
    producer = await txn_bus.producer(transactional_id="writer")
    consumer = await txn_bus.consumer("out", start=before + 1)
    async with producer.transaction() as txn:
        (sent,) = await txn.send([OutRecord("out", b"k", b"sent")])
        await txn.send_with_commit([OutRecord("out", b"k", b"with-commit-1"), OutRecord("in", b"k", b"elsewhere")])
        await txn.send_with_commit([OutRecord("out", b"k", b"with-commit-2")])
        assert await consumer.getmany(timeout_ms=200) == []
        assert await txn_bus.end_offset("out") == sent
        assert await txn_bus.end_offset("in") == 0
    (marker,) = await plain.send([OutRecord("out", b"k", b"marker")])
    records = await read_all(consumer, await end_after(txn_bus, "out", marker))
    assert values(records) == [b"sent", b"with-commit-1", b"with-commit-2", b"marker"]
    assert [r.offset for r in records] == sorted(r.offset for r in records)
    other = await txn_bus.consumer("in")
    assert values(await read_all(other, await end_after(txn_bus, "in", -1))) == [b"elsewhere"]


async def test_records_sent_with_the_commit_are_gone_with_an_abort(txn_bus: Bus) -> None:
    producer = await txn_bus.producer(transactional_id="writer")
    with pytest.raises(RuntimeError, match="changed my mind"):
        async with producer.transaction() as txn:
            await txn.send_with_commit([OutRecord("out", b"k", b"aborted-alone")])
            raise RuntimeError("changed my mind")
    with pytest.raises(RuntimeError, match="changed my mind"):
        async with producer.transaction() as txn:
            await txn.send([OutRecord("out", b"k", b"aborted-sent")])
            await txn.send_with_commit([OutRecord("out", b"k", b"aborted-with-commit")])
            raise RuntimeError("changed my mind")
    async with producer.transaction() as txn:
        (kept,) = await txn.send([OutRecord("out", b"k", b"kept")])
    consumer = await txn_bus.consumer("out")
    assert values(await read_all(consumer, await end_after(txn_bus, "out", kept))) == [b"kept"]


async def test_a_fenced_producer_cannot_send_with_the_commit(txn_bus: Bus) -> None:
    old = await txn_bus.producer(transactional_id="leader")
    context = old.transaction()
    txn = await context.__aenter__()
    await txn.send([OutRecord("out", b"k", b"zombie-sent")])
    await txn.send_with_commit([OutRecord("out", b"k", b"zombie-with-commit")])

    new = await txn_bus.producer(transactional_id="leader")

    async def zombie_commits() -> None:
        try:
            await txn.send_with_commit([OutRecord("out", b"k", b"zombie-after-fencing")])
        except BaseException as exc:
            await context.__aexit__(type(exc), exc, None)
            raise
        await context.__aexit__(None, None, None)

    with pytest.raises(ProducerFenced):
        await zombie_commits()
    async with new.transaction() as txn2:
        (last,) = await txn2.send([OutRecord("out", b"k", b"new")])
    consumer = await txn_bus.consumer("out")
    assert values(await read_all(consumer, await end_after(txn_bus, "out", last))) == [b"new"]


async def test_sending_with_the_commit_to_an_unknown_topic_fails_at_once(txn_bus: Bus) -> None:
    producer = await txn_bus.producer(transactional_id="writer")
    async with producer.transaction() as txn:
        with pytest.raises(BusError, match="unknown topic"):
            await txn.send_with_commit(
                [OutRecord("out", b"k", b"refused-with-it"), OutRecord("no-such-topic", b"k", b"v")]
            )
        (kept,) = await txn.send([OutRecord("out", b"k", b"kept")])
    consumer = await txn_bus.consumer("out")
    assert values(await read_all(consumer, await end_after(txn_bus, "out", kept))) == [b"kept"]


async def test_records_made_from_the_offsets_of_others_commit_with_them(txn_bus: Bus) -> None:
    producer = await txn_bus.producer(transactional_id="writer")
    consumer = await txn_bus.consumer("out")
    replies = await txn_bus.consumer("in")
    seen: list[list[int]] = []

    def answers(offsets: list[int]) -> list[OutRecord]:
        seen.append(offsets)
        return [OutRecord("in", b"k", f"reply for {o}".encode()) for o in offsets]

    async with producer.transaction() as txn:
        await txn.send_then(
            [OutRecord("out", b"k", b"a"), OutRecord("out", b"k", b"b")], answers, then_to=[("in", 0)]
        )
        assert await consumer.getmany(timeout_ms=100) == []
    (offsets,) = seen
    records = await read_all(consumer, await end_after(txn_bus, "out", offsets[-1]))
    assert [(r.offset, r.value) for r in records] == [(offsets[0], b"a"), (offsets[1], b"b")]
    answered = await read_all(replies, await end_after(txn_bus, "in", -1))
    assert values(answered) == [f"reply for {o}".encode() for o in offsets]


async def test_records_made_from_offsets_go_only_where_named_and_a_refusal_aborts(txn_bus: Bus) -> None:
    producer = await txn_bus.producer(transactional_id="writer")
    with pytest.raises(BusError, match=r"record 0 goes to out\[0\], not one of the partitions named beforehand"):
        async with producer.transaction() as txn:
            await txn.send_then(
                [OutRecord("out", b"k", b"refused")],
                lambda offsets: [OutRecord("out", b"k", b"elsewhere")],
                then_to=[("in", 0)],
            )
    with pytest.raises(RuntimeError, match="cannot answer"):
        async with producer.transaction() as txn:

            def fails(offsets: list[int]) -> list[OutRecord]:
                raise RuntimeError("cannot answer")

            await txn.send_then([OutRecord("out", b"k", b"refused too")], fails, then_to=[("in", 0)])
    async with producer.transaction() as txn:
        (kept,) = await txn.send([OutRecord("out", b"k", b"kept")])
    consumer = await txn_bus.consumer("out")
    assert values(await read_all(consumer, await end_after(txn_bus, "out", kept))) == [b"kept"]
