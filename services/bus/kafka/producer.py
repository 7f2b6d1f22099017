"""Producers on Kafka: idempotent appends, and transactions fenced by transactional id.

Large sends go out as explicit record batches (one per partition and size
limit) rather than one ``send`` per record: fewer Python round trips, and a
batch's records get consecutive offsets, ``base offset + index``, so
`Transaction.send` returns real offsets as soon as the broker acknowledged the
batch (still invisible to read_committed readers until the commit). Small
sends — a client's one request — join the partition's open batch instead, so
that many concurrent small sends travel together: aiokafka has one batch per
partition in flight, and explicit batches would queue up one behind another.

Starting a transactional producer runs InitProducerId, which bumps the epoch of
its ``transactional.id`` and aborts whatever an older producer left open; the
older producer's next request fails and surfaces here as `ProducerFenced`.

A plain (idempotent) producer whose batch failed is replaced by a new one
before its next send. aiokafka gives a batch its sequence numbers when it
drains it and does not take them back when the batch then fails — a batch
that expired while its partition had no leader (a broker restarting), or that
the broker refused — so every later batch of that producer id is answered
OutOfOrderSequenceNumber, for good. A new producer id starts a new sequence.
(A transactional producer needs no such care: a failed batch fails its
transaction, and the committer starts a new producer, which bumps the epoch.)

A transaction's round trips are what a commit waits for (see
docs/decisions/latency.md), so a transactional producer trims two of them:

- **Partitions added at once.** Each partition a transaction writes must be
  added to it (AddPartitionsToTxn) before its first batch goes out, and
  aiokafka adds them as the sends come: the committer's `replies` waited for
  a second AddPartitionsToTxn, queued behind the offset commit's requests.
  A transaction now starts by adding every partition this producer's earlier
  transactions wrote, in one request sent at ``begin``; a partition added and
  not written only gets the commit marker. The set is forgotten when a
  transaction aborts (a partition that went away must not hold up the next).
- **A prompt retry after the previous commit.** The coordinator answers
  CONCURRENT_TRANSACTIONS to a transaction's first AddPartitionsToTxn while
  the previous transaction's markers are still being written (a few ms after
  EndTxn returns); aiokafka retries after a fixed 20 ms (`BACKOFF_OVERRIDE`,
  KAFKA-5477), longer than the wait it covers. This producer retries that
  case after `CONCURRENT_RETRY_S`; every other answer is handled as aiokafka does.

And it keeps the broker from refusing a write it would have taken. With
``transaction.partition.verification.enable`` (KIP-890 part 1, on by default)
the broker checks a transaction's offset commit and its first write to each
partition with the coordinator before it appends them, and it keeps at most
one check per transactional id waiting to be sent: a second one arriving
before the first went out replaces it, and the first is answered
NETWORK_EXCEPTION, which reaches this client as NOT_ENOUGH_REPLICAS (Produce)
or COORDINATOR_NOT_AVAILABLE (TxnOffsetCommit), retried 20 ms later (the
offset commit after a new FindCoordinator too). So **the offset commit waits
for the transaction's writes in flight**: aiokafka still adds the group
(AddOffsetsToTxn, the coordinator's own state change, never checked) beside
them, and sends TxnOffsetCommit once they are answered — and with them their
checks. (A first write sent while the offset commit is in flight can meet it
the same way: the committer sends its replies after the offsets.)

**Records that follow from offsets go out with them when their offsets are
known beforehand.** The committer's replies carry its records' offsets
(resourceVersions), so `send_then` sent them once the records' Produce was
answered: a round trip, and the broker's check of the replies' first write,
after it. A partition written only by this producer takes, after a commit,
its next record at the last one's offset + 2 (the commit marker takes one
offset; a partition added and not written, only the marker). So after a
commit this producer knows where the next transaction's first records will
land, and `send_then` calls ``then`` with those offsets and hands both sets of
records over together: aiokafka drains them into one Produce request, whose
partitions the broker checks with the coordinator in one go. The Produce's
answer is compared with the offsets ``then`` was given; if another writer
moved them, `send_then` raises `OffsetsMoved`, the transaction aborts (the
replies it carried are never read), and nothing is expected of the next
transaction's offsets until a commit has told them again. The first
transaction of a producer, and each one after an abort, sends as before.

**Records sent with the commit are not waited for before it.** aiokafka sends
EndTxn only once every batch handed to it is answered, so
`KafkaTransaction.send_with_commit` hands its records over and returns, and
the commit starts at once: the caller's and the sender's turns between the
last write's answer and EndTxn are gone. All or nothing stays: should one of
those writes fail, this producer's sender ends the transaction with an abort
instead (aiokafka would commit what did get in), and the commit raises that
write's error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.client import CoordinationType
from aiokafka.errors import ConcurrentTransactions, for_code
from aiokafka.producer.sender import AddPartitionsToTxnHandler
from aiokafka.producer.transaction_manager import TransactionResult
from aiokafka.structs import TopicPartition

from services.bus.kafka.context import KafkaContext
from services.bus.kafka.errors import translate, translated
from services.bus.port import BusError, OffsetsMoved, OutRecord, ProducerFenced, check_then_records

log = logging.getLogger(__name__)

# Sends of at most this many records to a partition go into aiokafka's shared
# open batch of that partition (see `_send_partition`); larger ones build their own.
SHARED_BATCH_MAX = 16
# aiokafka's transaction states from which an abort is allowed.
ABORTABLE_STATES = frozenset({"IN_TRANSACTION", "ABORTABLE_ERROR"})
# The retry of a transaction's first AddPartitionsToTxn answered CONCURRENT_TRANSACTIONS
# (the previous transaction's markers are still being written): aiokafka waits 20 ms.
CONCURRENT_RETRY_S = 0.002


class _PromptAddPartitions(AddPartitionsToTxnHandler):
    """AddPartitionsToTxn whose CONCURRENT_TRANSACTIONS answer at a transaction's start is retried promptly."""

    def handle_response(self, resp: Any) -> float | None:
        backoff: float | None = super().handle_response(resp)
        if backoff is None or self._sender._txn_manager.txn_partitions:
            return backoff
        concurrent = any(
            for_code(code) is ConcurrentTransactions for _, partitions in resp.errors for _, code in partitions
        )
        return min(backoff, CONCURRENT_RETRY_S) if concurrent else backoff


def _offsets_after_writes(producer: AIOKafkaProducer, writes: Mapping[asyncio.Future[object], TopicPartition]) -> None:
    """Make this producer's sender send TxnOffsetCommit once `writes` in flight then are answered (this instance only).

    Only writes whose partitions are in the transaction are waited for: a write to a
    partition still to be added waits for AddPartitionsToTxn, which this request would
    hold up. aiokafka adds pending partitions before it commits offsets, so there is none
    when this starts, unless a send raced it.
    """
    sender = producer._sender
    manager = producer._txn_manager
    commit_offsets = sender._do_txn_offset_commit

    async def txn_offset_commit(offsets: Any, group_id: str) -> Any:
        added = manager.txn_partitions
        in_flight = [f for f, tp in writes.items() if not f.done() and tp in added]
        if in_flight:
            await asyncio.wait(in_flight)
        return await commit_offsets(offsets, group_id)

    sender._do_txn_offset_commit = txn_offset_commit


def _failed(futures: Sequence[asyncio.Future[object]]) -> BaseException | None:
    """The first error among answered `futures` (None if all went in or are still out); retrieves every one."""
    first: BaseException | None = None
    for future in futures:
        if not future.done():
            continue
        error = asyncio.CancelledError() if future.cancelled() else future.exception()
        first = first or error
    return first


def _abort_on_failed_writes(producer: AIOKafkaProducer, with_commit: Sequence[asyncio.Future[object]]) -> None:
    """Make this producer's sender end a commit with an abort if a write in `with_commit` failed (this instance only).

    aiokafka's EndTxn waits for every batch handed over before it; it is sent once those
    of `with_commit` are answered, so their outcome is known when the result is chosen.
    """
    sender = producer._sender
    end_transaction = sender._do_txn_commit

    async def txn_commit(result: Any) -> Any:
        if result == TransactionResult.COMMIT and with_commit:
            await asyncio.wait(with_commit)
            if _failed(with_commit) is not None:
                result = TransactionResult.ABORT
        return await end_transaction(result)

    sender._do_txn_commit = txn_commit


def _prompt_add_partitions(producer: AIOKafkaProducer) -> None:
    """Make this producer's sender add partitions with `_PromptAddPartitions` (this instance only)."""
    sender = producer._sender
    manager = producer._txn_manager

    async def add_partitions(tps: Any) -> bool:
        node_id = await sender._find_coordinator(CoordinationType.TRANSACTION, manager.transactional_id)
        return bool(await _PromptAddPartitions(sender, tps).do(node_id))

    sender._do_add_partitions_to_txn = add_partitions


async def _started_producer(context: KafkaContext, transactional_id: str | None) -> AIOKafkaProducer:
    settings = context.settings
    producer = AIOKafkaProducer(
        **context.client,
        acks="all",
        enable_idempotence=True,
        transactional_id=None if transactional_id is None else context.stored(transactional_id),
        transaction_timeout_ms=settings.transaction_timeout_ms,
        linger_ms=settings.linger_ms,
        max_batch_size=settings.max_batch_size,
        max_request_size=max(settings.max_batch_size, 1024 * 1024),
    )
    if transactional_id is not None:
        _prompt_add_partitions(producer)
    try:
        with translated("starting a producer"):
            await producer.start()
    except BaseException:
        await producer.stop()
        raise
    return producer


class KafkaProducer:
    def __init__(self, context: KafkaContext, producer: AIOKafkaProducer, *, transactional: bool) -> None:
        self._context = context
        self._producer = producer
        self._transactional = transactional
        self._fenced: ProducerFenced | None = None
        self._in_transaction = False
        self._closed = False
        self._stale = False  # a batch failed: the idempotent sequence may have a gap (see the module docstring)
        self._renewing = asyncio.Lock()
        self._retired: set[asyncio.Task[None]] = set()
        # Partitions this producer's transactions wrote: each next transaction adds them at its start.
        self._txn_partitions: set[TopicPartition] = set()
        # This producer's writes not yet answered, and their partitions: an offset commit waits for them.
        self._writes: dict[asyncio.Future[object], TopicPartition] = {}
        # The current transaction's writes sent with its commit (`send_with_commit`), not awaited yet.
        self._with_commit: list[asyncio.Future[object]] = []
        # The current transaction's writes: (batch future, partition, records in the batch).
        self._txn_writes: list[tuple[asyncio.Future[object], TopicPartition, int]] = []
        # Between transactions, the offset each partition will give its next record, as a commit
        # told it (see the module docstring); empty after an abort.
        self._next_offsets: dict[TopicPartition, int] = {}
        if transactional:
            _offsets_after_writes(producer, self._writes)
            _abort_on_failed_writes(producer, self._with_commit)

    @classmethod
    async def create(cls, context: KafkaContext, *, transactional_id: str | None) -> KafkaProducer:
        producer = await _started_producer(context, transactional_id)
        return cls(context, producer, transactional=transactional_id is not None)

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        if self._transactional:
            raise BusError("a transactional producer sends inside `async with producer.transaction()`")
        if self._stale:
            await self._renew()
        return await self._send(records)

    async def _renew(self) -> None:
        """Replace the aiokafka producer by a new one (a new producer id, a new sequence)."""
        async with self._renewing:
            if not self._stale or self._closed:
                return
            new = await _started_producer(self._context, None)  # BusUnavailable while the broker is away
            old, self._producer, self._stale = self._producer, new, False
            log.warning("kafka: replaced the producer after a failed batch (its sequence numbers had a gap)")
            task = asyncio.create_task(old.stop())  # fails whatever the old one still holds
            self._retired.add(task)
            task.add_done_callback(self._retired.discard)

    def transaction(self) -> _TransactionContext:
        if not self._transactional:
            raise BusError("transaction() needs a producer created with a transactional_id")
        return _TransactionContext(self)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._in_transaction and self._can_abort():
            try:
                await self._producer.abort_transaction()
            except Exception as exc:  # the broker times the transaction out instead
                log.warning("kafka: aborting the open transaction on close failed: %r", exc)
        self._consume_fatal_error()
        await self._producer.stop()
        for task in list(self._retired):
            with contextlib.suppress(Exception):
                await task

    # -- internals ---------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._closed:
            raise BusError("the producer is closed")
        if self._fenced is not None:
            raise ProducerFenced(str(self._fenced))
        if self._transactional and self._producer._txn_manager.is_fatal_error():
            self._consume_fatal_error()
            raise self._fenced or BusError("the producer hit a fatal error and must be closed")

    def _can_abort(self) -> bool:
        return self._producer._txn_manager.state.name in ABORTABLE_STATES

    def _consume_fatal_error(self) -> None:
        """Retrieve the error aiokafka stored for a dead transaction (and keep it)."""
        manager = self._producer._txn_manager
        if manager is None or not manager.is_fatal_error():
            return
        waiter = manager.wait_for_transaction_end()
        if waiter is not None and waiter.done() and not waiter.cancelled():
            error = waiter.exception()
            if error is not None:
                self._note(translate(error, "transaction"))

    def _note(self, error: BaseException | None) -> None:
        if isinstance(error, ProducerFenced) and self._fenced is None:
            self._fenced = error

    async def _send(self, records: Sequence[OutRecord]) -> list[int]:
        self._check_usable()
        if not records:
            return []
        pending: list[tuple[list[int], asyncio.Future[object]]] = []
        try:
            await self._hand_over(records, pending)
        finally:
            results = await asyncio.gather(*(f for _, f in pending), return_exceptions=True)
        return self._offsets(len(records), pending, results)

    async def _send_with_expected(
        self, records: Sequence[OutRecord], expected: list[int], more: Sequence[OutRecord]
    ) -> None:
        """`records` and then `more` (sent with the commit) handed over together; OffsetsMoved unless
        the records got the `expected` offsets."""
        self._check_usable()
        pending: list[tuple[list[int], asyncio.Future[object]]] = []
        try:
            # No answer is awaited between the two: aiokafka drains both into one Produce request.
            await self._hand_over(records, pending)
            await self._send_with_commit(more)
        finally:
            results = await asyncio.gather(*(f for _, f in pending), return_exceptions=True)
        offsets = self._offsets(len(records), pending, results)
        if offsets != expected:
            raise OffsetsMoved(
                f"the records were written at offsets {offsets[0]}..{offsets[-1]}, "
                f"not at {expected[0]}..{expected[-1]} as the last commit said"
            )

    def _expected_offsets(self, records: Sequence[OutRecord]) -> list[int] | None:
        """The offsets `records` will get if sent now, or None when this transaction cannot say."""
        if not records or self._txn_writes:
            return None
        stored, following = self._context.stored, dict[tuple[str, int], int]()
        offsets: list[int] = []
        for record in records:
            at = (record.topic, record.partition)
            offset = following.get(at)
            if offset is None:
                offset = self._next_offsets.get(TopicPartition(stored(record.topic), record.partition))
                if offset is None:
                    return None
            offsets.append(offset)
            following[at] = offset + 1
        return offsets

    def _learn_offsets(self) -> None:
        """After a commit: each partition of the transaction gives its next record the offset after
        its last record and the commit marker (a partition not written: after the marker)."""
        last: dict[TopicPartition, int] = {}
        for future, tp, count in self._txn_writes:
            end = int(future.result().offset) + count - 1  # type: ignore[attr-defined]
            last[tp] = max(last.get(tp, end), end)
        self._txn_writes.clear()
        following = self._next_offsets
        for tp in self._txn_partitions:
            if tp in last:
                following[tp] = last[tp] + 2
            elif tp in following:
                following[tp] += 1

    def _forget_offsets(self) -> None:
        self._txn_writes.clear()
        self._next_offsets.clear()

    def _offsets(
        self, count: int, pending: list[tuple[list[int], asyncio.Future[object]]], results: list[object]
    ) -> list[int]:
        """Each record's offset from its batch's answer; a failed batch's error raised (translated)."""
        offsets = [0] * count
        for (indexes, _), result in zip(pending, results, strict=True):
            if isinstance(result, BaseException):
                error = translate(result, "send") or result
                self._note(error)
                if not self._transactional:
                    self._stale = True
                raise error from result
            base = int(result.offset)  # type: ignore[attr-defined]
            for n, i in enumerate(indexes):
                offsets[i] = base + n
        return offsets

    async def _send_with_commit(self, records: Sequence[OutRecord]) -> None:
        """Hand `records` to aiokafka for the transaction's commit to wait for (the module docstring)."""
        self._check_usable()
        pending: list[tuple[list[int], asyncio.Future[object]]] = []
        try:
            await self._hand_over(records, pending)
        finally:
            self._with_commit.extend(f for _, f in pending)

    async def _hand_over(
        self, records: Sequence[OutRecord], pending: list[tuple[list[int], asyncio.Future[object]]]
    ) -> None:
        """Give `records` to aiokafka, appending (record indexes, batch future) pairs to `pending`."""
        by_partition: dict[tuple[str, int], list[int]] = {}
        for i, record in enumerate(records):
            by_partition.setdefault((record.topic, record.partition), []).append(i)
        for topic, partition in by_partition:  # all or nothing: check before sending any
            await self._context.check_partition(topic, partition)
        for (topic, partition), indexes in by_partition.items():
            pending.extend(await self._send_partition(topic, partition, indexes, records))
        if self._transactional:
            stored = self._context.stored
            self._txn_partitions.update(TopicPartition(stored(t), p) for t, p in by_partition)

    async def _settle_with_commit(self) -> None:
        """Wait for the writes sent with the commit; raise the first one's error (the commit was an abort then)."""
        with_commit, self._with_commit[:] = list(self._with_commit), []
        if not with_commit:
            return
        await asyncio.wait(with_commit)
        error = _failed(with_commit)
        if error is not None:
            translated_error = translate(error, "send") or error
            self._note(translated_error)
            raise translated_error from error

    def _sent(self, future: asyncio.Future[object], tp: TopicPartition, count: int) -> asyncio.Future[object]:
        """A write of `count` records handed to aiokafka: a transaction's is remembered until answered
        (see `_offsets_after_writes`), and until the transaction ends (`_learn_offsets`)."""
        if self._transactional:
            writes = self._writes
            writes[future] = tp
            future.add_done_callback(lambda done: writes.pop(done, None))
            self._txn_writes.append((future, tp, count))
        return future

    async def _send_partition(
        self, topic: str, partition: int, indexes: list[int], records: Sequence[OutRecord]
    ) -> list[tuple[list[int], asyncio.Future[object]]]:
        """Send one partition's records; returns (record indexes, batch future) pairs."""
        producer, stored = self._producer, self._context.stored(topic)
        tp = TopicPartition(stored, partition)
        sent: list[tuple[list[int], asyncio.Future[object]]] = []
        if len(indexes) <= SHARED_BATCH_MAX:
            # A few records join the partition's open batch, shared with other concurrent
            # sends: aiokafka keeps one batch per partition in flight, and a batch of its
            # own would wait for every batch queued before it.
            with translated("send"):
                for i in indexes:
                    record = records[i]
                    future = await producer.send(stored, record.value, key=record.key, partition=partition)
                    sent.append(([i], self._sent(future, tp, 1)))
            return sent
        batch, in_batch = producer.create_batch(), list[int]()
        for i in indexes:
            record = records[i]
            if batch.append(key=record.key, value=record.value, timestamp=None) is None:
                if not in_batch:
                    raise BusError(f"record {i} for {topic!r} is larger than max_batch_size")
                with translated("send"):
                    future = await producer.send_batch(batch, stored, partition=partition)
                    sent.append((in_batch, self._sent(future, tp, len(in_batch))))
                batch, in_batch = producer.create_batch(), list[int]()
                if batch.append(key=record.key, value=record.value, timestamp=None) is None:
                    raise BusError(f"record {i} for {topic!r} is larger than max_batch_size")
            in_batch.append(i)
        if in_batch:
            with translated("send"):
                future = await producer.send_batch(batch, stored, partition=partition)
                sent.append((in_batch, self._sent(future, tp, len(in_batch))))
        return sent


class KafkaTransaction:
    def __init__(self, producer: KafkaProducer) -> None:
        self._producer = producer

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        return await self._producer._send(records)

    async def send_with_commit(self, records: Sequence[OutRecord]) -> None:
        """Handed over now and not waited for: the commit goes once they are in, or aborts (the module docstring)."""
        await self._producer._send_with_commit(records)

    async def send_then(
        self,
        records: Sequence[OutRecord],
        then: Callable[[list[int]], Sequence[OutRecord]],
        *,
        then_to: Sequence[tuple[str, int]],
        after: Awaitable[object] | None = None,
    ) -> None:
        """`send`, then ``then``'s records with the commit once ``after`` is done; or both at once, when
        this producer knows the offsets `records` will get (see `Transaction.send_then`)."""
        producer = self._producer
        expected = producer._expected_offsets(records)
        if expected is not None:
            more = then(expected)
            check_then_records(more, then_to)
            await producer._send_with_expected(records, expected, more)
            return
        offsets = await self.send(records)
        more = then(offsets)
        check_then_records(more, then_to)
        if after is not None:
            await after
        await self.send_with_commit(more)

    async def send_offsets(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        producer = self._producer
        producer._check_usable()
        context = producer._context
        tps = {TopicPartition(context.stored(t), p): o for (t, p), o in offsets.items()}
        try:
            with translated("send_offsets"):
                await producer._producer.send_offsets_to_transaction(tps, context.stored(group))
        except ProducerFenced as exc:
            producer._note(exc)
            raise


class _TransactionContext:
    """``async with producer.transaction() as txn``: commit on exit, abort on error."""

    def __init__(self, producer: KafkaProducer) -> None:
        self._producer = producer

    async def __aenter__(self) -> KafkaTransaction:
        producer = self._producer
        producer._check_usable()
        if producer._in_transaction:
            raise BusError("this producer already has an open transaction")
        with translated("begin transaction"):
            await producer._producer.begin_transaction()
        producer._in_transaction = True
        producer._txn_writes.clear()
        manager = producer._producer._txn_manager
        for tp in producer._txn_partitions:  # one AddPartitionsToTxn, sent now (see the module docstring)
            manager.maybe_add_partition_to_txn(tp)
        return KafkaTransaction(producer)

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> bool | None:
        producer = self._producer
        try:
            if exc_type is None:
                try:
                    with translated("commit"):
                        producer._check_usable()
                        await producer._producer.commit_transaction()
                    await producer._settle_with_commit()  # raises if the commit was turned into an abort
                    producer._learn_offsets()
                except ProducerFenced as error:
                    producer._note(error)
                    raise
                except BaseException:
                    await self._abort_quietly()
                    raise
            else:
                await self._abort_quietly()
        finally:
            producer._in_transaction = False
            producer._consume_fatal_error()
        return None

    async def _abort_quietly(self) -> None:
        """Abort if aiokafka still can, without hiding the exception that caused it."""
        producer = self._producer
        producer._txn_partitions.clear()
        producer._forget_offsets()
        with_commit, producer._with_commit[:] = list(producer._with_commit), []
        for future in with_commit:  # their errors are the abort's cause, already raised or moot
            future.add_done_callback(lambda done: _failed([done]))
        if not producer._can_abort():
            return
        try:
            with translated("abort"):
                await producer._producer.abort_transaction()
        except BusError as error:
            producer._note(error)
            log.warning("kafka: abort failed: %s", error)
