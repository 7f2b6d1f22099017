"""Group membership: the owner of partition 0 leads; leadership moves when it leaves or dies,
and the old leader's transactional producer is fenced."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from contract_support import (
    BusProcess,
    OpenBus,
    end_after,
    read_all,
    values,
    wait_for,
)

from services.bus import Bus, OutRecord, ProducerFenced, TopicSpec
from tests.support.eventually import eventually

GROUP = "committers"


@pytest.fixture
async def group_bus(bus: Bus) -> Bus:
    await bus.ensure_topics([TopicSpec("requests", 2), TopicSpec("out", 1)])
    return bus


async def test_leadership_stays_put_and_moves_when_the_leader_leaves(group_bus: Bus) -> None:
    bus = group_bus
    plain = await bus.producer()
    sent = await plain.send([OutRecord("requests", b"r", b"%d" % i) for i in range(4)])

    first = await bus.join_group(GROUP, "requests", member_id="the-leader")
    await wait_for(first.leader, "the first member to lead")
    assert values(await read_all(first.consumer, sent[-1] + 1)) == [b"0", b"1", b"2", b"3"]
    producer_one = await bus.producer(transactional_id="committer")
    async with producer_one.transaction() as txn:
        await txn.send_offsets(GROUP, {("requests", 0): 2})  # processed 0 and 1 only

    second = await bus.join_group(GROUP, "requests", member_id="a-newcomer")
    # The group settles with the leader keeping partition 0 and the newcomer taking the other.
    await eventually(lambda: _partitions(second), until=lambda p: p == {1}, what="the newcomer's share", interval=0.02)
    assert first.leader.is_set() and not first.lost.is_set()
    assert not second.leader.is_set()
    assert await second.consumer.getmany(timeout_ms=50) == []

    await first.close()
    assert first.lost.is_set() and not first.leader.is_set()
    await wait_for(second.leader, "the second member to take over")
    await eventually(second.committed, until=lambda offset: offset == 2, what="the committed offset", interval=0.02)
    assert second.consumer.position() == 2
    assert values(await read_all(second.consumer, sent[-1] + 1)) == [b"2", b"3"]

    producer_two = await bus.producer(transactional_id="committer")
    with pytest.raises(ProducerFenced):
        async with producer_one.transaction() as txn:
            await txn.send([OutRecord("out", b"k", b"from the old leader")])
    async with producer_two.transaction() as txn:
        (last,) = await txn.send([OutRecord("out", b"k", b"from the new leader")])
    consumer = await bus.consumer("out")
    assert values(await read_all(consumer, await end_after(bus, "out", last))) == [
        b"from the new leader"
    ]


async def test_a_frozen_leader_is_replaced_and_fenced(
    bus_url: Callable[..., str], open_test_bus: OpenBus
) -> None:
    bus = await open_test_bus()
    await bus.ensure_topics([TopicSpec("requests", 1), TopicSpec("out", 1)])
    child = await BusProcess.start(bus_url(session_timeout_ms=1000))
    try:
        await child.call("join", group=GROUP, topic="requests")
        assert await child.call("await_leader") is True
        await child.call("transactional", transactional_id="committer")
        await child.call("begin")
        await child.call("send", topic="out", values=["from the zombie"])

        standby = await bus.join_group(GROUP, "requests", member_id="standby")
        child.freeze()  # no heartbeats: its session expires
        await wait_for(standby.leader, "the standby to take over from the frozen leader")
        producer = await bus.producer(transactional_id="committer")  # fences the zombie
        async with producer.transaction() as txn:
            (last,) = await txn.send([OutRecord("out", b"k", b"from the new leader")])
        child.thaw()
        answer = await child.ask("commit")
        assert answer["ok"] is False and answer["error"] == "ProducerFenced", answer
    finally:
        await child.close()
    consumer = await bus.consumer("out")
    assert values(await read_all(consumer, await end_after(bus, "out", last))) == [
        b"from the new leader"
    ]


async def test_a_dead_leader_is_replaced(
    bus_url: Callable[..., str], open_test_bus: OpenBus
) -> None:
    bus = await open_test_bus()
    await bus.ensure_topics([TopicSpec("requests", 1)])
    child = await BusProcess.start(bus_url(session_timeout_ms=1000))
    try:
        await child.call("join", group=GROUP, topic="requests")
        assert await child.call("await_leader") is True
        standby = await bus.join_group(GROUP, "requests", member_id="standby")
        assert not standby.leader.is_set()
        child.proc.kill()
        await child.proc.wait()
        await wait_for(standby.leader, "the standby to take over from the dead leader")
    finally:
        await child.close()


async def _partitions(member: object) -> set[int]:
    """The partitions a member owns (both adapters expose it; the port does not need it)."""
    return set(member.partitions)  # type: ignore[attr-defined]
