"""The committer: the one writer of `objects`.

It is the member of the `requests` consumer group that owns partition 0. When
it becomes leader it first creates its transactional producer — the fixed
``transactional.id`` fences any zombie leader and aborts its open transaction —
then reads `objects` to the end (from its aiosqlite snapshot when it has one),
and only then takes requests. Each batch of requests is one transaction: the
object records, the replies and the consumed request offsets commit together
or not at all, so a request is committed exactly once even when a leader dies
mid-batch. The decisions themselves are pure (`committer_core`).

While a batch commits, the next one is already fetched and decoded (a task
of its own), so decoding fills the waits for the log; the request offsets are
sent beside the records, and the replies, which carry the records' offsets,
with the commit (`Transaction.send_then`: on the embedded log the records, the
replies and the commit are one write).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from services.api.machinery import status as st
from services.api.machinery.conversion import upgrade_stored
from services.bus.port import (
    Bus,
    BusUnavailable,
    Consumer,
    GroupMember,
    OffsetsMoved,
    OutRecord,
    Producer,
    ProducerFenced,
    Record,
    RecordTooLarge,
)
from services.kube.times import time_text
from services.runtime import backoff, gc_pause
from services.runtime.committer_core import CommitterCore, Outcome
from services.runtime.metrics import COMMIT_BATCH_SIZE, COMMITTED_REQUESTS, MALFORMED_RECORDS
from services.runtime.snapshot import SnapshotStore
from topics.declarations import OBJECTS, REPLIES, REQUESTS
from topics.envelope import (
    MalformedRecord,
    Reply,
    Request,
    UserInfo,
    decode_event,
    decode_request,
    encode_event,
    encode_reply,
    object_key,
    split_key,
)

log = logging.getLogger(__name__)

COMMITTER_GROUP = "draplane-committer"
TRANSACTIONAL_ID = "draplane-committer"
BIRTH_KEY = object_key("draplane.io", "logs", "", OBJECTS)
BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SNAPSHOT_REQUEST_IDS = 10_000  # newest committed request ids a snapshot keeps (retries after a restart)


class Committer:
    """Runs for as long as the process lives, leading whenever it owns partition 0."""

    def __init__(
        self,
        bus: Bus,
        core: CommitterCore,
        *,
        snapshot: SnapshotStore | None = None,
        snapshot_interval: float = 10.0,
        batch_max: int = 1000,
        member_id: str | None = None,
        on_batch: Callable[[list[Outcome]], None] | None = None,
    ) -> None:
        self.bus = bus
        self.core = core
        self.snapshot = snapshot
        self.snapshot_interval = snapshot_interval
        self.batch_max = batch_max
        self.member_id = member_id
        self.on_batch = on_batch
        self.is_leader = asyncio.Event()
        self.batches = 0
        self._snapshot_loaded = False
        self._dirty: set[str] = set()
        self._next_snapshot = 0.0
        self._stopping = False

    async def run(self) -> None:
        """Join the group and lead whenever elected; step down when fenced or revoked."""
        unavailable = backoff.log_unavailable()  # before joining again after the log failed
        try:
            if self.snapshot is not None:
                await self.snapshot.open()  # in the try: stopped while it opens, it is closed all the same
            while not self._stopping:
                try:
                    member = await self.bus.join_group(COMMITTER_GROUP, REQUESTS, member_id=self.member_id)
                except BusUnavailable as exc:
                    log.warning("committer cannot reach the log; trying again", extra={"error": str(exc)})
                    await unavailable.pause()
                    continue
                unavailable.reset()
                try:
                    await _wait_either(member.leader, member.lost)
                    if member.leader.is_set() and not member.lost.is_set():
                        await self._lead(member)
                except ProducerFenced:
                    log.warning("committer fenced by a newer leader; stepping down")
                except BusUnavailable as exc:
                    # The next leadership (ours or another's) recovers from the log, which
                    # holds the batch if its commit got through and not if it did not.
                    log.warning("committer lost the log mid-leadership; stepping down", extra={"error": str(exc)})
                    await unavailable.pause()
                finally:
                    self.is_leader.clear()
                    with contextlib.suppress(BusUnavailable):
                        await member.close()
        finally:
            await self._close_snapshot()

    def stop(self) -> None:
        self._stopping = True

    async def _lead(self, member: GroupMember) -> None:
        producer = await self.bus.producer(transactional_id=TRANSACTIONAL_ID)
        try:
            await self._recover()
            if self.core.index.position == 0:
                await self._bootstrap(producer)
            self.is_leader.set()
            log.info("committer is leader", extra={"offset": self.core.index.position})
            consumer = member.consumer
            # The next batch is fetched and decoded while the current one commits, and topped up
            # with what came after that fetch returned.
            fetch = asyncio.create_task(self._fetch(consumer))
            try:
                while not member.lost.is_set() and not self._stopping:
                    batch = await self._top_up(consumer, await fetch)
                    fetch = asyncio.create_task(self._fetch(consumer))
                    if batch.records:
                        await self._commit_guarded(producer, batch)
            finally:
                fetch.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await fetch
        finally:
            self.is_leader.clear()
            await producer.close()

    async def _fetch(self, consumer: Consumer) -> Batch:
        """The next requests, decoded; malformed ones answered 400 when their sender can be told."""
        return _decoded(await consumer.getmany(timeout_ms=100, max_records=self.batch_max))

    async def _top_up(self, consumer: Consumer, batch: Batch) -> Batch:
        """`batch` and the requests already read after it, up to `batch_max` in all.

        The fetch for the next batch returns as soon as a request comes, early in
        the current batch's commit; without this, the requests that came later
        in that commit would wait for the whole next batch before theirs.
        """
        room = self.batch_max - len(batch.records)
        if not batch.records or room <= 0:
            return batch
        later = await consumer.getmany(timeout_ms=0, max_records=room)
        if not later:
            return batch
        more = _decoded(later)
        return Batch(batch.records + more.records, batch.requests + more.requests, batch.bad + more.bad)

    async def _commit_guarded(self, producer: Producer, batch: Batch) -> None:
        """Commit a batch; a record too large for the log costs its own request a 413, not the committer.

        The transaction of a batch holding such a record fails as a whole (and
        is aborted), so its requests are committed again one per transaction,
        decoded afresh from their records, and the one that cannot be written
        is answered 413 RequestEntityTooLarge. Otherwise the request would stop
        every committer that ever reads it.
        """
        try:
            await self._commit_batch(producer, batch)
            return
        except OffsetsMoved as exc:
            # Another writer took the offsets the replies were computed from: the transaction
            # aborted, and the next one sends the replies once the records' offsets are back.
            log.warning(
                "the log's offsets moved under a batch; committing it again",
                extra={"offset": batch.records[0].offset, "error": str(exc)},
            )
            await self._commit_guarded(producer, _decoded(batch.records, quiet=True))
            return
        except RecordTooLarge as exc:
            if len(batch.records) == 1:
                await self._refuse_too_large(producer, batch, exc)
                return
            log.warning(
                "a batch holds a record too large for the log; committing its requests one by one",
                extra={"offset": batch.records[0].offset, "error": str(exc)},
            )
        for record in batch.records:
            await self._commit_guarded(producer, _decoded([record], quiet=True))

    async def _refuse_too_large(self, producer: Producer, batch: Batch, exc: RecordTooLarge) -> None:
        status = st.too_large_for_the_log().status
        replies = [
            OutRecord(REPLIES, r.reply_to.encode(), encode_reply(Reply(r.id, 413, status=status)))
            for r in batch.requests
        ]
        replies += [OutRecord(REPLIES, to.encode(), encode_reply(r)) for r, to in batch.bad]
        async with producer.transaction() as txn:
            await txn.send_with_commit(replies)
            await txn.send_offsets(COMMITTER_GROUP, {(REQUESTS, 0): batch.records[-1].offset + 1})
        for request in batch.requests:
            log.warning(
                "request refused: its record is too large for the log",
                extra={"request_id": request.id, "key": request.key, "error": str(exc)},
            )
            COMMITTED_REQUESTS.labels(op=request.op, code="413").inc()

    # -- recovery -------------------------------------------------------------

    async def _recover(self) -> None:
        """Bring the index to the end of `objects` (read_committed), from the snapshot if any."""
        if not self._snapshot_loaded and self.snapshot is not None:
            snap = await self.snapshot.load()
            if snap is not None:
                for key, (offset, obj) in snap.objects.items():
                    self.core.index.put(key, offset, obj)
                for request_id, key in snap.extra.get("requests", []):
                    self.core.index.remember_request(request_id, key)
                self.core.index.position = snap.offset
        self._snapshot_loaded = True
        end = await self.bus.end_offset(OBJECTS)
        if self.core.index.position >= end:
            return
        consumer = await self.bus.consumer(OBJECTS, start=self.core.index.position)
        try:
            with gc_pause.pause():  # a long run of long-lived objects (see gc_pause)
                while consumer.position() < end:
                    for record in await consumer.getmany(timeout_ms=200):
                        self._replay_record(record)
            self.core.index.position = consumer.position()
        finally:
            await consumer.close()

    async def _bootstrap(self, producer: Producer) -> None:
        """Write a new log's first records: its birth record at offset 0, then the system namespaces.

        The birth record keeps offset 0 — and with it resourceVersion "0", which
        Kubernetes clients read as "any version" — away from every API object.
        """
        admin = UserInfo("system:apiserver", ("system:masters",))
        requests = [
            Request(
                id=f"bootstrap-namespace-{ns}",
                op="create",
                group="",
                resource="namespaces",
                namespace="",
                name=ns,
                user=admin,
                reply_to="",
                object={"metadata": {"name": ns}},
            )
            for ns in BOOTSTRAP_NAMESPACES
        ]
        outcomes = self.core.process(requests)
        writes = [w for o in outcomes for w in o.writes]
        birth = {
            "apiVersion": "draplane.io/v1",
            "kind": "Log",
            "metadata": {"name": OBJECTS, "uid": str(uuid.uuid4()), "creationTimestamp": time_text(self.core.clock())},
        }
        records = [OutRecord(OBJECTS, BIRTH_KEY.encode(), encode_event("ADDED", birth, request_id="bootstrap-log"))]
        records += [
            OutRecord(OBJECTS, w.key.encode(), encode_event("ADDED", w.object, request_id=w.request_id)) for w in writes
        ]
        async with producer.transaction() as txn:
            offsets = await txn.send(records)
        self.core.apply_record(BIRTH_KEY, "ADDED", birth, offsets[0], "bootstrap-log")
        for w, offset in zip(writes, offsets[1:], strict=True):
            w.offset = offset
        self.core.advance(outcomes, offsets[-1] + 1)
        self._dirty.update([BIRTH_KEY, *(w.key for w in writes)])
        log.info("bootstrapped a new log", extra={"offset": offsets[0]})

    def _replay_record(self, record: Record) -> None:
        if record.value is None:
            return  # a tombstone: the DELETED record before it did the work
        try:
            key = (record.key or b"").decode()
            split_key(key)  # a key that names no object would sit in the index forever
            event = decode_event(record.value)
        except (MalformedRecord, UnicodeDecodeError) as exc:
            MALFORMED_RECORDS.labels(topic=record.topic).inc()
            log.warning(
                "skipping malformed record", extra={"topic": record.topic, "offset": record.offset, "error": str(exc)}
            )
            return
        self.core.apply_record(key, event.type, upgrade_stored(event.object), record.offset, event.request_id)
        self._dirty.add(key)

    # -- one batch --------------------------------------------------------------

    async def _commit_batch(self, producer: Producer, batch: Batch) -> None:
        outcomes = self.core.process(batch.requests, owned=True)
        out: list[OutRecord] = []
        positions: list[int] = []  # index in `out` of each write's object record
        writes = [w for o in outcomes for w in o.writes]
        for w in writes:
            positions.append(len(out))
            key = w.key.encode()
            out.append(OutRecord(OBJECTS, key, encode_event(w.type, w.object, request_id=w.request_id)))
            if w.type == "DELETED":
                out.append(OutRecord(OBJECTS, key, None))
        async with producer.transaction() as txn:
            # The request offsets need no answer first: they travel beside the records.
            offsets_sent = asyncio.create_task(
                txn.send_offsets(COMMITTER_GROUP, {(REQUESTS, 0): batch.records[-1].offset + 1})
            )

            def replies(offsets: list[int]) -> list[OutRecord]:
                """The replies, which carry the records' offsets (resourceVersions): pure, and quick."""
                for w, pos in zip(writes, positions, strict=True):
                    w.offset = offsets[pos]
                self.core.stamp(outcomes)
                answers = [OutRecord(REPLIES, o.request.reply_to.encode(), encode_reply(_reply(o))) for o in outcomes]
                return answers + [OutRecord(REPLIES, to.encode(), encode_reply(r)) for r, to in batch.bad]

            try:
                # On the embedded log the records, the replies and the commit are one write transaction
                # (`replies` runs inside it). On Kafka, after a commit, the producer knows the offsets the
                # records will get, and sends the replies with them in one Produce request (OffsetsMoved,
                # handled above, if another writer moved them). Otherwise the records go now and the
                # replies once the offsets are in: there the broker checks a transaction's offset commit
                # and its first write to each partition with the coordinator (KIP-890), and of two such
                # checks of one transaction waiting at once it refuses one, retried 20 ms later; the
                # replies' is never beside the offset commit's this way (and the Kafka producer sends the
                # offset commit once the writes in flight are in: its module docstring).
                await txn.send_then(out, replies, then_to=[(REPLIES, 0)], after=offsets_sent)
            finally:
                await offsets_sent  # (its error, if any, wins: it says why the transaction failed)
        position = (max(w.offset for w in writes) + 1) if writes else self.core.index.position
        self.core.advance(outcomes, position)
        self._dirty.update(w.key for w in writes)
        self.batches += 1
        COMMIT_BATCH_SIZE.observe(len(batch.records))
        for (op, code), count in Counter((o.request.op, o.code) for o in outcomes).items():
            COMMITTED_REQUESTS.labels(op=op, code=str(code)).inc(count)
        if self.on_batch is not None:
            self.on_batch(outcomes)
        if self.snapshot is not None and time.monotonic() >= self._next_snapshot:
            await self._save_snapshot()

    async def _close_snapshot(self) -> None:
        """Save and close the snapshot; it is closed even when the save fails or is cancelled.

        (An open snapshot is a thread that keeps the process from exiting: `SqliteFile`.)
        """
        if self.snapshot is None:
            return
        try:
            with contextlib.suppress(Exception):
                await self._save_snapshot()
        finally:
            await self.snapshot.close()

    async def _save_snapshot(self) -> None:
        if self.snapshot is None or not self._snapshot_loaded:
            return
        dirty, self._dirty = self._dirty, set()
        index = self.core.index
        upserts = {k: index.entries[k] for k in dirty if k in index.entries}
        deletes = [k for k in dirty if k not in index.entries]
        # The newest ids, without materialising all of them (up to the window, 200,000) first.
        recent = list(itertools.islice(reversed(index.request_ids.items()), SNAPSHOT_REQUEST_IDS))[::-1]
        try:
            await self.snapshot.save(
                offset=index.position, upserts=upserts, deletes=deletes, extra={"requests": recent}
            )
        except BaseException:
            # Not saved: the keys stay dirty, or a later save would store a later offset
            # without them and the next leader would start from a stale index.
            self._dirty |= dirty
            raise
        self._next_snapshot = time.monotonic() + self.snapshot_interval


@dataclass(slots=True)
class Batch:
    """Records read from `requests`, and what decoding made of them."""

    records: list[Record]
    requests: list[Request] = field(default_factory=list)
    bad: list[tuple[Reply, str]] = field(default_factory=list)  # 400 replies to malformed requests, reply-to


def _reply(outcome: Outcome) -> Reply:
    if outcome.code >= 400 or outcome.return_status:
        return Reply(
            outcome.request.id,
            outcome.code,
            object=outcome.object if outcome.code < 400 else None,
            status=outcome.status,
            warnings=tuple(outcome.warnings),
        )
    return Reply(outcome.request.id, outcome.code, object=outcome.object, warnings=tuple(outcome.warnings))


def _decoded(records: list[Record], *, quiet: bool = False) -> Batch:
    """Requests decoded from records; malformed ones logged and counted (unless ``quiet``: seen before)
    and answered 400 when their sender can be told."""
    batch = Batch(records)
    for record in records:
        try:
            batch.requests.append(decode_request(record.value or b""))
        except MalformedRecord as exc:
            if not quiet:
                MALFORMED_RECORDS.labels(topic=record.topic).inc()
                log.warning(
                    "malformed request", extra={"topic": record.topic, "offset": record.offset, "error": str(exc)}
                )
            salvaged = _salvage_ids(record.value)
            if salvaged is not None:
                err = st.bad_request(f"malformed request: {exc}")
                batch.bad.append((Reply(salvaged[0], 400, status=err.status), salvaged[1]))
    return batch


def _salvage_ids(value: bytes | None) -> tuple[str, str] | None:
    """The id and reply-to of a malformed request, when they can be read, so it gets a 400."""
    try:
        doc: Any = orjson.loads(value or b"")
    except orjson.JSONDecodeError:
        return None
    if isinstance(doc, dict) and isinstance(doc.get("id"), str) and isinstance(doc.get("replyTo"), str):
        return doc["id"], doc["replyTo"]
    return None


async def _wait_either(a: asyncio.Event, b: asyncio.Event) -> None:
    ta, tb = asyncio.create_task(a.wait()), asyncio.create_task(b.wait())
    try:
        await asyncio.wait({ta, tb}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        ta.cancel()
        tb.cancel()
