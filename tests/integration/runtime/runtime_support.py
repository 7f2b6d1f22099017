"""Helpers of the runtime integration tests: a bus that can stall a transaction, and reading the log back.

`StallingBus` wraps a real bus and hands out transactional producers whose
transactions can be held *inside* the transaction — after the committer has
sent a batch's object records and replies (on the embedded log, handed the
replies to the commit), before it commits. A test arms it, waits until a committer is held there, and then
kills, cancels or fences that committer: a crash mid-batch at a known point.
It also records how each held transaction ended, so a test can see a zombie's
commit refused. `services.runtime.committer` is used unchanged.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from services.bus import BEGINNING, Bus, Consumer, GroupMember, OutRecord, Producer, Record, TopicSpec, Transaction
from services.bus.port import StartAt, TransactionContext, check_then_records
from services.runtime.client import Client
from topics.declarations import REPLIES
from topics.envelope import Request, UserInfo, decode_event

ADMIN = UserInfo("system:admin", ("system:masters", "system:authenticated"))
BOOTSTRAP_PREFIX = "bootstrap-"


class StallingBus:
    """A `Bus` whose transactions can be held mid-batch (see the module docstring)."""

    def __init__(self, bus: Bus) -> None:
        self.inner = bus
        self.url = bus.url
        self.armed = False
        self.held = asyncio.Event()  # a transaction is being held
        self.release = asyncio.Event()  # let it go on
        self.members: list[GroupMember] = []
        self.endings: list[BaseException | None] = []  # how each held transaction ended (None: committed)
        self.ended = asyncio.Event()

    def as_bus(self) -> Bus:
        return cast(Bus, self)

    async def start(self) -> None:
        await self.inner.start()

    async def close(self) -> None:
        await self.inner.close()

    async def ensure_topics(self, specs: Sequence[TopicSpec]) -> None:
        await self.inner.ensure_topics(specs)

    async def producer(self, *, transactional_id: str | None = None) -> Producer:
        producer = await self.inner.producer(transactional_id=transactional_id)
        return producer if transactional_id is None else cast(Producer, _StallingProducer(self, producer))

    async def consumer(self, topic: str, *, partition: int = 0, start: StartAt = BEGINNING) -> Consumer:
        return await self.inner.consumer(topic, partition=partition, start=start)

    async def join_group(self, group: str, topic: str, *, member_id: str | None = None) -> GroupMember:
        member = await self.inner.join_group(group, topic, member_id=member_id)
        self.members.append(member)
        return member

    async def beginning_offset(self, topic: str, partition: int = 0) -> int:
        return await self.inner.beginning_offset(topic, partition)

    async def end_offset(self, topic: str, partition: int = 0) -> int:
        return await self.inner.end_offset(topic, partition)

    async def offset_for_time(self, topic: str, timestamp_ms: int, partition: int = 0) -> int | None:
        return await self.inner.offset_for_time(topic, timestamp_ms, partition)

    def _take_hold(self) -> bool:
        """Whether the transaction asking is the one to hold (once per arming)."""
        if not self.armed:
            return False
        self.armed = False
        self.held.set()
        return True


class _StallingProducer:
    def __init__(self, owner: StallingBus, inner: Producer) -> None:
        self._owner = owner
        self._inner = inner

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        return await self._inner.send(records)

    def transaction(self) -> TransactionContext:
        return _StallingContext(self._owner, self._inner.transaction())

    async def close(self) -> None:
        await self._inner.close()


class _StallingContext:
    def __init__(self, owner: StallingBus, inner: TransactionContext) -> None:
        self._owner = owner
        self._inner = inner
        self._held = False

    async def __aenter__(self) -> Transaction:
        txn = await self._inner.__aenter__()
        return cast(Transaction, _StallingTransaction(self, txn))

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> bool | None:
        try:
            result = await self._inner.__aexit__(exc_type, exc, tb)
        except BaseException as error:
            self._ended(error)
            raise
        self._ended(exc if isinstance(exc, BaseException) else None)
        return result

    def _ended(self, error: BaseException | None) -> None:
        if self._held:
            self._owner.endings.append(error)
            self._owner.ended.set()


class _StallingTransaction:
    def __init__(self, context: _StallingContext, inner: Transaction) -> None:
        self._context = context
        self._inner = inner

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        offsets = await self._inner.send(records)
        await self._maybe_hold(records)
        return offsets

    async def send_with_commit(self, records: Sequence[OutRecord]) -> None:
        await self._inner.send_with_commit(records)
        await self._maybe_hold(records)

    async def send_then(
        self,
        records: Sequence[OutRecord],
        then: Callable[[list[int]], Sequence[OutRecord]],
        *,
        then_to: Sequence[tuple[str, int]],
        after: Awaitable[object] | None = None,
    ) -> None:
        # Sent apart, so the batch can be held with its records sent and uncommitted (as on Kafka).
        more = then(await self.send(records))
        check_then_records(more, then_to)
        if after is not None:
            await after
        await self.send_with_commit(more)

    async def _maybe_hold(self, records: Sequence[OutRecord]) -> None:
        # The committer sends a batch's replies last: its records are all sent, uncommitted.
        owner = self._context._owner
        if records and records[0].topic == REPLIES and owner._take_hold():
            self._context._held = True
            await owner.release.wait()

    async def send_offsets(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        await self._inner.send_offsets(group, offsets)


# -- reading the log back ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entry:
    """One `objects` record, decoded."""

    offset: int
    key: str
    type: str
    object: dict[str, Any]
    request_id: str | None


def entries(records: Iterable[Record]) -> list[Entry]:
    """The object records (not tombstones) of `objects`, decoded, in log order."""
    found = []
    for r in records:
        if r.value is None:
            continue
        event = decode_event(r.value)
        found.append(Entry(r.offset, (r.key or b"").decode(), event.type, event.object, event.request_id))
    return found


def request_id_counts(log: Iterable[Entry]) -> Counter[str]:
    """How often each request id appears on `objects` (the committer's bootstrap left out)."""
    return Counter(e.request_id for e in log if e.request_id and not e.request_id.startswith(BOOTSTRAP_PREFIX))


# -- requests ---------------------------------------------------------------------------

def claim(name: str, **annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }


def create_claim(client: Client, name: str, *, request_id: str, generate: bool = False) -> Request:
    """A create request for a claim, sent (and retried) under ``request_id``.

    With ``generate`` the claim has a generateName instead of a name: a create
    applied twice would then make two claims rather than fail the second time.
    """
    body = claim(name)
    if generate:
        body["metadata"] = {"generateName": f"{name}-", "namespace": "default"}
    return Request(
        id=request_id,
        op="create",
        group="resource.k8s.io",
        version="v1alpha3",
        resource="resourceclaims",
        namespace="default",
        name="" if generate else name,
        user=ADMIN,
        reply_to=client.requester_id,
        object=body,
    )
