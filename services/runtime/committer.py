"""The committer: the one writer of `objects`.

It is the member of the `requests` consumer group that owns partition 0. When
it becomes leader it first creates its transactional producer — the fixed
``transactional.id`` fences any zombie leader and aborts its open transaction —
then reads `objects` to the end (from its aiosqlite snapshot when it has one),
and only then takes requests. Each batch of requests is one transaction: the
object records, the replies and the consumed request offsets commit together
or not at all, so a request is committed exactly once even when a leader dies
mid-batch. The decisions themselves are pure (`committer_core`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import orjson

from services.api import status as st
from services.bus.port import Bus, Consumer, GroupMember, OutRecord, Producer, ProducerFenced, Record
from services.runtime.committer_core import CommitterCore, Outcome, rfc3339
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
)

log = logging.getLogger(__name__)

COMMITTER_GROUP = "draplane-committer"
TRANSACTIONAL_ID = "draplane-committer"
BIRTH_KEY = object_key("draplane.io", "logs", "", OBJECTS)
BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


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
        if self.snapshot is not None:
            await self.snapshot.open()
        try:
            while not self._stopping:
                member = await self.bus.join_group(COMMITTER_GROUP, REQUESTS, member_id=self.member_id)
                try:
                    await _wait_either(member.leader, member.lost)
                    if member.leader.is_set() and not member.lost.is_set():
                        await self._lead(member)
                except ProducerFenced:
                    log.warning("committer fenced by a newer leader; stepping down")
                finally:
                    self.is_leader.clear()
                    await member.close()
        finally:
            if self.snapshot is not None:
                with contextlib.suppress(Exception):
                    await self._save_snapshot()
                await self.snapshot.close()

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
            while not member.lost.is_set() and not self._stopping:
                records = await consumer.getmany(timeout_ms=100, max_records=self.batch_max)
                if records:
                    await self._commit_batch(producer, consumer, records)
        finally:
            self.is_leader.clear()
            await producer.close()

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
            "metadata": {"name": OBJECTS, "uid": str(uuid.uuid4()), "creationTimestamp": rfc3339(self.core.clock())},
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
        if record.value is None or record.key is None:
            return
        try:
            key = record.key.decode()
            event = decode_event(record.value)
        except (MalformedRecord, UnicodeDecodeError) as exc:
            MALFORMED_RECORDS.labels(topic=record.topic).inc()
            log.warning(
                "skipping malformed record", extra={"topic": record.topic, "offset": record.offset, "error": str(exc)}
            )
            return
        self.core.apply_record(key, event.type, event.object, record.offset, event.request_id)
        self._dirty.add(key)

    # -- one batch --------------------------------------------------------------

    async def _commit_batch(self, producer: Producer, consumer: Consumer, records: list[Record]) -> None:
        requests: list[Request] = []
        bad: list[Reply] = []
        bad_reply_to: list[str] = []
        for record in records:
            try:
                requests.append(decode_request(record.value or b""))
            except MalformedRecord as exc:
                MALFORMED_RECORDS.labels(topic=record.topic).inc()
                log.warning(
                    "malformed request", extra={"topic": record.topic, "offset": record.offset, "error": str(exc)}
                )
                salvaged = _salvage_ids(record.value)
                if salvaged is not None:
                    err = st.bad_request(f"malformed request: {exc}")
                    bad.append(Reply(salvaged[0], 400, status=err.status))
                    bad_reply_to.append(salvaged[1])
        outcomes = self.core.process(requests)
        out: list[OutRecord] = []
        positions: list[int] = []  # index in `out` of each write's object record
        writes = [w for o in outcomes for w in o.writes]
        for w in writes:
            positions.append(len(out))
            key = w.key.encode()
            out.append(OutRecord(OBJECTS, key, encode_event(w.type, w.object, request_id=w.request_id)))  # type: ignore[arg-type]
            if w.type == "DELETED":
                out.append(OutRecord(OBJECTS, key, None))
        async with producer.transaction() as txn:
            if out:
                offsets = await txn.send(out)
                for w, pos in zip(writes, positions, strict=True):
                    w.offset = offsets[pos]
            self.core.stamp(outcomes)
            replies = [OutRecord(REPLIES, o.request.reply_to.encode(), encode_reply(_reply(o))) for o in outcomes]
            replies += [
                OutRecord(REPLIES, to.encode(), encode_reply(r)) for r, to in zip(bad, bad_reply_to, strict=True)
            ]
            if replies:
                await txn.send(replies)
            await txn.send_offsets(COMMITTER_GROUP, {(REQUESTS, 0): records[-1].offset + 1})
        position = (max(w.offset for w in writes) + 1) if writes else self.core.index.position
        self.core.advance(outcomes, position)
        self._dirty.update(w.key for w in writes)
        self.batches += 1
        COMMIT_BATCH_SIZE.observe(len(records))
        for o in outcomes:
            COMMITTED_REQUESTS.labels(op=o.request.op, code=str(o.code)).inc()
        if self.on_batch is not None:
            self.on_batch(outcomes)
        if self.snapshot is not None and time.monotonic() >= self._next_snapshot:
            await self._save_snapshot()

    async def _save_snapshot(self) -> None:
        if self.snapshot is None or not self._snapshot_loaded:
            return
        dirty, self._dirty = self._dirty, set()
        index = self.core.index
        upserts = {k: index.entries[k] for k in dirty if k in index.entries}
        deletes = [k for k in dirty if k not in index.entries]
        recent = list(index.request_ids.items())[-10_000:]
        await self.snapshot.save(offset=index.position, upserts=upserts, deletes=deletes, extra={"requests": recent})
        self._next_snapshot = time.monotonic() + self.snapshot_interval


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
