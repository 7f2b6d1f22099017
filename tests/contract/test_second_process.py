"""Two processes on one log: each sees the other's records and can join its groups.

On Kafka this is what a broker is for; on the embedded log it is the reason
every rule lives in the SQLite file. The Kafka run of these tests checks the
same through a second client process.
"""

from __future__ import annotations

from collections.abc import Callable

from contract_support import BusProcess, OpenBus, read_all, values, wait_for

from services.bus import Bus, OutRecord, TopicSpec


async def test_a_second_process_reads_and_writes_the_same_log(
    bus_url: Callable[..., str], open_test_bus: OpenBus
) -> None:
    bus: Bus = await open_test_bus()
    await bus.ensure_topics([TopicSpec("requests", 1), TopicSpec("replies", 1)])
    producer = await bus.producer()
    await producer.send([OutRecord("requests", b"q", b"ping-%d" % i) for i in range(3)])
    replies = await bus.consumer("replies")

    child = await BusProcess.start(bus_url())
    try:
        seen = await child.call("read", topic="requests", count=3)
        assert [value for _, value in seen] == ["ping-0", "ping-1", "ping-2"]
        offsets = await child.call("produce", topic="replies", values=["pong-0", "pong-1"])
        assert offsets == [0, 1]
        # This process is woken by the other's commit (at once on the embedded log, by its datagram).
        assert values(await read_all(replies, 2)) == [b"pong-0", b"pong-1"]

        await child.call("join", group="g", topic="requests")
        assert await child.call("await_leader") is True
        standby = await bus.join_group("g", "requests")
        assert not standby.leader.is_set()
        await child.call("leave")
        await wait_for(standby.leader, "leadership to pass from the other process")
    finally:
        await child.close()
