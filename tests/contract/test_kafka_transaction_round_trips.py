"""The round trips of a Kafka transaction: partitions added once, at begin; a prompt retry after a commit;
the offset commit after the writes in flight.

A committer batch writes the same partitions (`objects`, `replies`) in every
transaction. aiokafka adds a partition to a transaction (AddPartitionsToTxn) at
its first send, so the second partition waited for a second request. The
adapter adds every partition the producer's earlier transactions wrote in one
request at ``begin`` (`services.bus.kafka.producer`), and retries the
coordinator's CONCURRENT_TRANSACTIONS at a transaction's start after
`CONCURRENT_RETRY_S` rather than aiokafka's fixed 20 ms. It sends a
transaction's TxnOffsetCommit once the writes in flight are answered, so that
the broker's checks of the two (KIP-890) never wait to be sent at once, where
the broker refuses the older one. Records sent with the commit are handed over
and not waited for: aiokafka's EndTxn waits for them, and a failed one turns
the commit into an abort. After a commit it knows where a partition it alone
writes takes its next record, so `send_then` sends the records that follow from
the offsets (the committer's replies) in the same Produce request as the
records; another writer moving those offsets aborts the transaction
(`OffsetsMoved`). The requests are
counted by a wrapper around the aiokafka client's ``send``; the records are
read back, so the guarantees (atomic commit, aborts never read) are checked on
the same path.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka.errors import ConcurrentTransactions, CoordinatorLoadInProgressError, NoError
from aiokafka.structs import TopicPartition
from contract_support import end_after, read_all, values

from services.bus import Bus, BusError, OffsetsMoved, OutRecord, TopicSpec, open_bus
from services.bus.kafka.producer import CONCURRENT_RETRY_S, KafkaProducer, _PromptAddPartitions
from tests.support.eventually import eventually

pytestmark = pytest.mark.kafka


@pytest.fixture
async def kafka_bus(kafka_bootstrap: str) -> Any:
    bus = open_bus(f"kafka://{kafka_bootstrap}?prefix=t{uuid.uuid4().hex[:12]}-")
    await bus.start()
    await bus.ensure_topics([TopicSpec("out", 1), TopicSpec("in", 1)])
    yield bus
    await bus.close()


class Requests:
    """Counts what a producer's aiokafka client sends, by request class; keeps AddPartitionsToTxn's partitions."""

    def __init__(self, producer: KafkaProducer) -> None:
        self.sent: Counter[str] = Counter()
        self.added: list[set[str]] = []
        client = producer._producer.client
        send = client.send

        async def counting(node_id: int, request: Any, **kwargs: Any) -> Any:
            name = type(request).__name__
            self.sent[name] += 1
            if name.startswith("AddPartitionsToTxnRequest"):
                self.added.append({topic.rsplit("-", 1)[-1] for topic, _ in request._topics})
            return await send(node_id, request, **kwargs)

        client.send = counting

    def reset(self) -> None:
        self.sent.clear()
        self.added.clear()

    def additions(self) -> list[set[str]]:
        """The partitions of each AddPartitionsToTxn, a retry (the same set again) counted once."""
        out: list[set[str]] = []
        for added in self.added:
            if not out or out[-1] != added:
                out.append(added)
        return out

    def count(self, prefix: str) -> int:
        return sum(n for name, n in self.sent.items() if name.startswith(prefix))


class Timeline:
    """Each request a producer's aiokafka client sends: (name, sent, answered), monotonic seconds.

    Produce answers are held back by `produce_delay_s`, as a broker that takes
    long over a check would.
    """

    def __init__(self, producer: KafkaProducer, *, produce_delay_s: float) -> None:
        self.requests: list[tuple[str, float, float]] = []
        client = producer._producer.client
        send = client.send

        async def timed(node_id: int, request: Any, **kwargs: Any) -> Any:
            name, sent = type(request).__name__, time.monotonic()
            response = await send(node_id, request, **kwargs)
            if name.startswith("ProduceRequest"):
                await asyncio.sleep(produce_delay_s)
            self.requests.append((name, sent, time.monotonic()))
            return response

        client.send = timed

    def of(self, prefix: str) -> list[tuple[float, float]]:
        return [(sent, answered) for name, sent, answered in self.requests if name.startswith(prefix)]


async def test_a_transaction_adds_the_partitions_of_earlier_ones_in_one_request_at_begin(kafka_bus: Bus) -> None:
    producer = await kafka_bus.producer(transactional_id="writer")
    assert isinstance(producer, KafkaProducer)
    requests = Requests(producer)
    # The first transaction adds each partition at its first send: two requests.
    async with producer.transaction() as txn:
        await txn.send([OutRecord("out", b"k", b"1")])
        await txn.send([OutRecord("in", b"k", b"1")])
    assert requests.additions() == [{"out"}, {"in"}]
    # The next ones add both in one request, sent at begin.
    for n in (b"2", b"3"):
        requests.reset()
        async with producer.transaction() as txn:
            await txn.send([OutRecord("out", b"k", n)])
            await txn.send([OutRecord("in", b"k", n)])
        assert requests.additions() == [{"out", "in"}]
        assert requests.count("EndTxn") == 1
    for topic in ("out", "in"):
        consumer = await kafka_bus.consumer(topic)
        assert values(await read_all(consumer, await kafka_bus.end_offset(topic))) == [b"1", b"2", b"3"]
    await producer.close()


async def test_a_partition_added_and_not_written_gets_only_the_commit_marker(kafka_bus: Bus) -> None:
    producer = await kafka_bus.producer(transactional_id="writer")
    async with producer.transaction() as txn:
        await txn.send([OutRecord("out", b"k", b"a"), OutRecord("in", b"k", b"a")])
    in_end = await kafka_bus.end_offset("in")
    async with producer.transaction() as txn:  # `in` is added at begin and not written
        (offset,) = await txn.send([OutRecord("out", b"k", b"b")])
    out = await kafka_bus.consumer("out")
    assert values(await read_all(out, await end_after(kafka_bus, "out", offset))) == [b"a", b"b"]
    inn = await kafka_bus.consumer("in")
    end = await kafka_bus.end_offset("in")
    assert end == in_end + 1  # the second transaction's marker, and nothing else
    assert values(await read_all(inn, end)) == [b"a"]
    await producer.close()


async def test_an_aborted_transaction_forgets_the_partitions(kafka_bus: Bus) -> None:
    producer = await kafka_bus.producer(transactional_id="writer")
    assert isinstance(producer, KafkaProducer)
    requests = Requests(producer)
    async with producer.transaction() as txn:
        await txn.send([OutRecord("out", b"k", b"kept"), OutRecord("in", b"k", b"kept")])
    with pytest.raises(RuntimeError, match="changed my mind"):
        async with producer.transaction() as txn:
            await txn.send([OutRecord("out", b"k", b"aborted")])
            raise RuntimeError("changed my mind")
    requests.reset()
    async with producer.transaction() as txn:
        (offset,) = await txn.send([OutRecord("out", b"k", b"after")])
    # added at its send again, alone (retried while the abort's markers are written)
    assert requests.additions() == [{"out"}]
    out = await kafka_bus.consumer("out")
    assert values(await read_all(out, await end_after(kafka_bus, "out", offset))) == [b"kept", b"after"]
    await producer.close()


async def test_the_offset_commit_goes_once_the_writes_in_flight_are_answered(kafka_bus: Bus) -> None:
    producer = await kafka_bus.producer(transactional_id="writer")
    assert isinstance(producer, KafkaProducer)
    async with producer.transaction() as txn:  # `out` is added at begin from the next transaction on
        await txn.send([OutRecord("out", b"k", b"0")])
    timeline = Timeline(producer, produce_delay_s=0.2)
    async with producer.transaction() as txn:
        # As the committer does: the offsets beside the records, not after them.
        offsets = asyncio.create_task(txn.send_offsets("readers", {("in", 0): 1}))
        (offset,) = await txn.send([OutRecord("out", b"k", b"1")])
        await offsets
    ((_, produce_answered),) = timeline.of("ProduceRequest")
    ((add_offsets_sent, _),) = timeline.of("AddOffsetsToTxnRequest")
    ((commit_sent, _),) = timeline.of("TxnOffsetCommitRequest")
    assert add_offsets_sent < produce_answered  # the group is still added beside the write
    assert commit_sent >= produce_answered  # its offsets once the write is in
    out = await kafka_bus.consumer("out")
    assert values(await read_all(out, await end_after(kafka_bus, "out", offset))) == [b"0", b"1"]
    member = await kafka_bus.join_group("readers", "in")  # the offsets are in the transaction, as before
    await eventually(member.committed, until=lambda at: at == 1, what="the committed offset", interval=0.02)
    await member.close()
    await producer.close()


async def test_records_sent_with_the_commit_are_committed_without_being_waited_for_first(kafka_bus: Bus) -> None:
    producer = await kafka_bus.producer(transactional_id="writer")
    assert isinstance(producer, KafkaProducer)
    async with producer.transaction() as txn:
        await txn.send([OutRecord("out", b"k", b"0"), OutRecord("in", b"k", b"0")])
    timeline = Timeline(producer, produce_delay_s=0.2)
    async with producer.transaction() as txn:
        (offset,) = await txn.send([OutRecord("out", b"k", b"1")])
        await txn.send_with_commit([OutRecord("in", b"k", b"1")])
        # handed over: its Produce is not answered yet when send_with_commit returns
        assert len(timeline.of("ProduceRequest")) == 1
    (_, (_, with_commit_answered)) = timeline.of("ProduceRequest")
    ((end_sent, _),) = timeline.of("EndTxnRequest")
    assert end_sent >= with_commit_answered  # the commit still goes once the write is in
    out, inn = await kafka_bus.consumer("out"), await kafka_bus.consumer("in")
    assert values(await read_all(out, await end_after(kafka_bus, "out", offset))) == [b"0", b"1"]
    assert values(await read_all(inn, await kafka_bus.end_offset("in"))) == [b"0", b"1"]
    await producer.close()


async def test_a_failed_write_sent_with_the_commit_aborts_the_transaction(kafka_bus: Bus) -> None:
    await kafka_bus.ensure_topics([TopicSpec("small", 1, {"max.message.bytes": "1024"})])
    producer = await kafka_bus.producer(transactional_id="writer")
    async with producer.transaction() as txn:
        await txn.send([OutRecord("out", b"k", b"kept")])
    with pytest.raises(BusError):  # the broker refuses the record (larger than the topic takes)
        async with producer.transaction() as txn:
            await txn.send([OutRecord("out", b"k", b"aborted")])
            await txn.send_with_commit([OutRecord("small", b"k", b"x" * 4096)])
    async with producer.transaction() as txn:  # the producer carries on
        (offset,) = await txn.send([OutRecord("out", b"k", b"after")])
    out = await kafka_bus.consumer("out")
    assert values(await read_all(out, await end_after(kafka_bus, "out", offset))) == [b"kept", b"after"]
    small = await kafka_bus.consumer("small")
    assert values(await read_all(small, await kafka_bus.end_offset("small"))) == []
    await producer.close()


async def _send_then(txn: Any, values_: list[bytes], given: list[list[int]]) -> None:
    """As the committer: records to `out`, and to `in` one record per offset they got (kept in `given`)."""

    def then(offsets: list[int]) -> list[OutRecord]:
        given.append(offsets)
        return [OutRecord("in", b"k", str(o).encode()) for o in offsets]

    await txn.send_then([OutRecord("out", b"k", v) for v in values_], then, then_to=[("in", 0)])


async def _offsets_of(bus: Bus, topic: str) -> dict[bytes, int]:
    consumer = await bus.consumer(topic)
    return {r.value: r.offset for r in await read_all(consumer, await bus.end_offset(topic)) if r.value is not None}


async def test_after_a_commit_the_records_that_follow_from_offsets_go_in_the_same_produce_request(
    kafka_bus: Bus,
) -> None:
    producer = await kafka_bus.producer(transactional_id="writer")
    assert isinstance(producer, KafkaProducer)
    requests = Requests(producer)
    given: list[list[int]] = []
    async with producer.transaction() as txn:  # nothing known yet: the records, then the others
        await _send_then(txn, [b"a1", b"a2"], given)
    # two at least (a fresh topic's first write may be retried on a loaded machine: 3 seen in a full run)
    assert requests.count("ProduceRequest") >= 2
    for batch in ([b"b1", b"b2", b"b3"], [b"c1"]):
        requests.reset()
        async with producer.transaction() as txn:
            await _send_then(txn, batch, given)
        assert requests.count("ProduceRequest") == 1
    written = await _offsets_of(kafka_bus, "out")
    assert given == [[written[b"a1"], written[b"a2"]], [written[v] for v in (b"b1", b"b2", b"b3")], [written[b"c1"]]]
    inn = await kafka_bus.consumer("in")
    read = values(await read_all(inn, await kafka_bus.end_offset("in")))
    assert read == [str(o).encode() for offsets in given for o in offsets]
    await producer.close()


async def test_a_partition_added_and_not_written_is_expected_one_offset_on_for_its_marker(kafka_bus: Bus) -> None:
    producer = await kafka_bus.producer(transactional_id="writer")
    assert isinstance(producer, KafkaProducer)
    requests = Requests(producer)
    given: list[list[int]] = []
    async with producer.transaction() as txn:
        await _send_then(txn, [b"a"], given)
    async with producer.transaction() as txn:  # `out` is added at begin and gets only the marker
        await txn.send([OutRecord("in", b"k", b"only in")])
    requests.reset()
    async with producer.transaction() as txn:
        await _send_then(txn, [b"c"], given)
    assert requests.count("ProduceRequest") == 1  # expected, and rightly: no OffsetsMoved
    assert given[-1] == [(await _offsets_of(kafka_bus, "out"))[b"c"]]
    await producer.close()


async def test_another_writer_moving_the_offsets_aborts_the_transaction(kafka_bus: Bus) -> None:
    producer = await kafka_bus.producer(transactional_id="writer")
    assert isinstance(producer, KafkaProducer)
    requests = Requests(producer)
    given: list[list[int]] = []
    async with producer.transaction() as txn:
        await _send_then(txn, [b"kept"], given)
    other = await kafka_bus.producer()
    await other.send([OutRecord("out", b"k", b"other")])
    with pytest.raises(OffsetsMoved, match="as the last commit said"):
        async with producer.transaction() as txn:
            await _send_then(txn, [b"moved"], given)
    requests.reset()
    async with producer.transaction() as txn:  # nothing expected after the abort: the two-step way
        await _send_then(txn, [b"after"], given)
    assert requests.count("ProduceRequest") == 2
    written = await _offsets_of(kafka_bus, "out")
    assert set(written) == {b"kept", b"other", b"after"}  # the aborted record is never read
    inn = await kafka_bus.consumer("in")
    # of the three offsets given out, the aborted transaction's one is never read
    assert values(await read_all(inn, await kafka_bus.end_offset("in"))) == [
        str(written[b"kept"]).encode(),
        str(written[b"after"]).encode(),
    ]
    assert given[1] == [written[b"other"]]  # it expected the offset the other writer's record took
    await other.close()
    await producer.close()


def _response(code: int) -> Any:
    return SimpleNamespace(errors=[("t-out", [(0, code)])])


@pytest.mark.parametrize(
    ("code", "partitions_in_txn", "expected"),
    [
        # At a transaction's start, the previous one's markers are still being written.
        (ConcurrentTransactions.errno, False, CONCURRENT_RETRY_S),
        # Mid-transaction, aiokafka's own backoff stays.
        (ConcurrentTransactions.errno, True, 0.02),
        (CoordinatorLoadInProgressError.errno, False, 0.02),
        (NoError.errno, False, None),
    ],
)
def test_only_concurrent_transactions_at_a_transactions_start_is_retried_promptly(
    code: int, partitions_in_txn: bool, expected: float | None
) -> None:
    added: list[TopicPartition] = []
    manager = SimpleNamespace(
        txn_partitions={TopicPartition("t-in", 0)} if partitions_in_txn else set(),
        partition_added=added.append,
    )
    sender = SimpleNamespace(_txn_manager=manager, _retry_backoff=0.02)
    assert _PromptAddPartitions(sender, [TopicPartition("t-out", 0)]).handle_response(_response(code)) == expected
    assert added == ([TopicPartition("t-out", 0)] if code == NoError.errno else [])
