"""Cross-process wake-ups of the embedded log: a commit wakes another bus on the file at once,
and a lost wake-up still reaches it through the poll.

Two buses on one file in one process stand for two processes: each binds its own
socket, exactly as a second process does. With the poll interval set to ten
minutes, a consumer of the second bus can only be woken by the datagram, so a
read that returns the record proves the datagram arrived (without it the read
would time out empty).
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from services.bus import OutRecord, Record, TopicSpec, open_bus
from services.bus.embedded.bus import EmbeddedBus
from services.bus.embedded.peers import decode_pids, encode_pids, read_wants, wake_dir, wants_dir
from tests.support.eventually import eventually

NO_POLL = "poll_interval_ms=600000"  # ten minutes: only a datagram wakes a consumer within a test


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A short directory: a socket's path must fit in 100 bytes, and pytest's tmp_path can be long."""
    with tempfile.TemporaryDirectory(prefix="peers-", dir="/tmp") as tmp:
        yield Path(tmp)


async def start(url: str) -> EmbeddedBus:
    bus = open_bus(url)
    assert isinstance(bus, EmbeddedBus)
    await bus.start()
    return bus


async def waiting_read(bus: EmbeddedBus, topic: str) -> asyncio.Task[list[Record]]:
    """A consumer's read of ``topic`` that has found nothing and waits for a wake-up (up to a minute)."""
    consumer = await bus.consumer(topic)
    read = asyncio.create_task(consumer.getmany(timeout_ms=60_000))
    key = bus._shared.partition_key(await bus._shared.pid(topic, 0))
    await eventually(lambda: key in bus._shared.notifier._events, what="the read to wait")
    return read


@pytest.fixture
async def two_buses(short_dir: Path) -> AsyncIterator[tuple[EmbeddedBus, EmbeddedBus]]:
    url = f"sqlite://{short_dir / 'bus.db'}?{NO_POLL}"
    writer, reader = await start(url), await start(url)
    await writer.ensure_topics([TopicSpec("objects", 1)])
    try:
        yield writer, reader
    finally:
        await reader.close()
        await writer.close()


@pytest.mark.parametrize(
    ("pids", "datagram"),
    [
        ([3], encode_pids([3])),
        ([1, 2, 7], encode_pids([7, 2, 1, 2])),  # sorted, each once
        ([], b""),
        ([], b"\x01\x02\x03"),  # not whole ids: malformed, wakes nothing
    ],
)
def test_a_datagram_holds_partition_ids(pids: list[int], datagram: bytes) -> None:
    assert decode_pids(datagram) == pids


async def test_a_plain_send_wakes_a_consumer_of_another_bus_at_once(
    two_buses: tuple[EmbeddedBus, EmbeddedBus],
) -> None:
    writer, reader = two_buses
    read = await waiting_read(reader, "objects")
    producer = await writer.producer()
    await producer.send([OutRecord("objects", b"k", b"v")])
    assert [r.value for r in await read] == [b"v"]


async def test_a_transaction_commit_wakes_a_consumer_of_another_bus_at_once(
    two_buses: tuple[EmbeddedBus, EmbeddedBus],
) -> None:
    writer, reader = two_buses
    read = await waiting_read(reader, "objects")
    producer = await writer.producer(transactional_id="committer")
    async with producer.transaction() as txn:
        await txn.send([OutRecord("objects", b"k", b"committed")])
    assert [r.value for r in await read] == [b"committed"]


async def test_records_sent_with_the_commit_wake_a_consumer_of_another_bus_at_once(
    two_buses: tuple[EmbeddedBus, EmbeddedBus],
) -> None:
    writer, reader = two_buses
    read = await waiting_read(reader, "objects")
    producer = await writer.producer(transactional_id="committer")
    async with producer.transaction() as txn:
        await txn.send_with_commit([OutRecord("objects", b"k", b"with-the-commit")])
    assert [r.value for r in await read] == [b"with-the-commit"]


async def test_a_lost_wake_up_is_made_up_for_by_the_poll(short_dir: Path) -> None:
    path = short_dir / "bus.db"
    writer = await start(f"sqlite://{path}?{NO_POLL}")
    reader = await start(f"sqlite://{path}?poll_interval_ms=20")
    try:
        await writer.ensure_topics([TopicSpec("objects", 1)])
        read = await waiting_read(reader, "objects")
        for sock in wake_dir(path).iterdir():  # every datagram to the reader is lost
            sock.unlink()
        producer = await writer.producer()
        await producer.send([OutRecord("objects", b"k", b"v")])
        assert [r.value for r in await read] == [b"v"]
        assert reader._shared.peers.received == 0
    finally:
        await reader.close()
        await writer.close()


async def test_a_socket_nobody_listens_on_is_removed_with_its_file_of_partitions_by_the_next_commit(
    two_buses: tuple[EmbeddedBus, EmbeddedBus],
) -> None:
    writer, _ = two_buses
    dead = wake_dir(writer.path) / "1-deadbeef"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(dead))  # a process that died: its socket file stays, nothing is bound to it
    wants_dir(writer.path).mkdir(exist_ok=True)
    its_file = wants_dir(writer.path) / dead.name
    its_file.write_bytes(encode_pids([await writer._shared.pid("objects", 0)]))
    producer = await writer.producer()
    await producer.send([OutRecord("objects", b"k", b"v")])
    assert not dead.exists() and not its_file.exists()


async def test_a_bus_that_cannot_bind_polls_and_a_closed_bus_leaves_no_socket(short_dir: Path) -> None:
    path = short_dir / "bus.db"
    wake_dir(path).write_text("not a directory")
    bus = await start(f"sqlite://{path}?poll_interval_ms=20")
    try:
        await bus.ensure_topics([TopicSpec("objects", 1)])
        producer = await bus.producer()
        assert await producer.send([OutRecord("objects", b"k", b"v")]) == [0]
    finally:
        await bus.close()
    wake_dir(path).unlink()

    bus = await start(f"sqlite://{path}")
    assert len(list(wake_dir(path).iterdir())) == 1
    await bus.close()
    assert list(wake_dir(path).iterdir()) == []


def wants_file(bus: EmbeddedBus) -> Path:
    """``bus``'s file of the partitions it reads (named as its socket)."""
    return wants_dir(bus.path) / Path(bus._shared.peers._path).name


async def test_a_commit_is_announced_only_to_the_buses_that_read_what_it_touched(
    two_buses: tuple[EmbeddedBus, EmbeddedBus],
) -> None:
    writer, reader = two_buses
    await writer.ensure_topics([TopicSpec("requests", 1)])
    read = await waiting_read(reader, "objects")
    assert read_wants(wants_file(reader)) == {await reader._shared.pid("objects", 0)}
    producer = await writer.producer()
    await producer.send([OutRecord("requests", b"k", b"nobody there reads it")])
    assert writer._shared.peers.sent == 0  # the reader reads objects only: not told
    await producer.send([OutRecord("objects", b"k", b"v")])
    assert [r.value for r in await read] == [b"v"]
    assert (writer._shared.peers.sent, reader._shared.peers.received) == (1, 1)


async def test_a_partition_read_later_is_announced_once_its_file_says_so(
    two_buses: tuple[EmbeddedBus, EmbeddedBus],
) -> None:
    writer, reader = two_buses
    await writer.ensure_topics([TopicSpec("requests", 1)])
    await reader.consumer("objects")
    producer = await writer.producer()
    await producer.send([OutRecord("requests", b"k", b"before")])
    assert writer._shared.peers.sent == 0
    consumer = await reader.consumer("requests")  # its file changes, and the writer is told to list again
    assert [r.value for r in await consumer.getmany(timeout_ms=60_000)] == [b"before"]
    read = asyncio.create_task(consumer.getmany(timeout_ms=60_000))
    key = reader._shared.partition_key(await reader._shared.pid("requests", 0))
    await eventually(lambda: key in reader._shared.notifier._events, what="the read to wait")
    await producer.send([OutRecord("requests", b"k", b"after")])
    assert [r.value for r in await asyncio.wait_for(read, 10)] == [b"after"]
    assert writer._shared.peers.sent == 1


@pytest.mark.parametrize("content", [None, b"\x01\x02\x03"], ids=["missing", "malformed"])
async def test_a_bus_whose_file_cannot_be_read_is_told_of_every_commit(
    two_buses: tuple[EmbeddedBus, EmbeddedBus], content: bytes | None
) -> None:
    writer, reader = two_buses
    await writer.ensure_topics([TopicSpec("requests", 1)])
    read = await waiting_read(reader, "objects")
    mine = wants_file(reader)
    if content is None:
        mine.unlink()
    else:
        mine.write_bytes(content)
    producer = await writer.producer()
    await producer.send([OutRecord("requests", b"k", b"v")])
    assert writer._shared.peers.sent == 1
    assert not read.done()
    read.cancel()


async def test_a_closed_bus_leaves_no_file_of_partitions(short_dir: Path) -> None:
    path = short_dir / "bus.db"
    bus = await start(f"sqlite://{path}")
    await bus.ensure_topics([TopicSpec("objects", 1)])
    await bus.consumer("objects")
    assert len(list(wants_dir(path).iterdir())) == 1
    await bus.close()
    assert list(wants_dir(path).iterdir()) == []


async def test_a_request_appended_wakes_the_group_member_reading_requests_in_another_bus(
    two_buses: tuple[EmbeddedBus, EmbeddedBus],
) -> None:
    """The committer's path: it reads requests as a group member, and only a datagram wakes it here."""
    writer, reader = two_buses
    await writer.ensure_topics([TopicSpec("requests", 1)])
    member = await reader.join_group("committer", "requests", member_id="committer")
    await asyncio.wait_for(member.leader.wait(), 10)
    assert read_wants(wants_file(reader)) == {await reader._shared.pid("requests", 0)}
    read = asyncio.create_task(member.consumer.getmany(timeout_ms=60_000))
    key = reader._shared.partition_key(await reader._shared.pid("requests", 0))
    await eventually(lambda: key in reader._shared.notifier._events, what="the read to wait")
    producer = await writer.producer()
    await producer.send([OutRecord("requests", b"k", b"a request")])
    assert [r.value for r in await asyncio.wait_for(read, 10)] == [b"a request"]
    assert writer._shared.peers.sent == 1
