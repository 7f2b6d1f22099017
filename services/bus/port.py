"""The bus port: the one narrow interface between draplane and its log.

Everything above this module (committer, informers, clients, tools) talks to a
`Bus`. Two adapters implement it with the same semantics:

- ``services.bus.kafka``: aiokafka against Apache Kafka (the only aiokafka importer);
- ``services.bus.embedded``: a SQLite log (WAL, ``BEGIN IMMEDIATE``), each connection on a thread of its own.

Semantics both adapters keep (the contract suite in ``tests/contract`` checks them):

- A topic has partitions; a partition is an append-only sequence of records with
  strictly increasing offsets. Offsets need not be contiguous (Kafka transaction
  markers take offsets), so callers treat them as opaque, ordered positions.
- Every record has a timestamp (ms since the epoch, assigned at append) and
  ``offset_for_time`` finds the first offset at or after a time.
- A transactional producer is fenced by its ``transactional_id``: initialising a
  second producer with the same id makes every later operation of the first one
  raise `ProducerFenced`. Records of a transaction become visible together on
  commit; an aborted transaction is never visible to a read_committed consumer.
- Consumers read committed data only.
- Group membership: members of a group that consume one topic share its
  partitions; the member that owns partition 0 is the group's leader. Offsets for
  a group are committed inside a transaction (`Transaction.send_offsets`).
- Compaction (``cleanup.policy=compact``): for a key, records older than the
  newest one, and older than ``min.compaction.lag.ms``, may disappear; a
  tombstone (value ``None``) disappears after ``delete.retention.ms``. Offsets of
  surviving records never change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, runtime_checkable


class BusError(Exception):
    """Base class of bus failures."""


class ProducerFenced(BusError):
    """A newer producer with the same transactional id exists: this one must stop."""


class TopicMismatch(BusError):
    """An existing topic's configuration differs from its declaration."""


class BusUnavailable(BusError):
    """The log could not be reached."""


def check_then_records(records: Sequence[OutRecord], then_to: Sequence[tuple[str, int]]) -> None:
    """`Transaction.send_then`'s rule: ``then``'s records go only to the partitions named beforehand."""
    allowed = set(then_to)
    for i, record in enumerate(records):
        if (record.topic, record.partition) not in allowed:
            raise BusError(
                f"send_then: record {i} goes to {record.topic}[{record.partition}], "
                f"not one of the partitions named beforehand ({sorted(allowed)})"
            )


class RecordTooLarge(BusError):
    """A record is larger than the log accepts (Kafka's ``max.message.bytes`` / ``max_request_size``)."""


class OffsetsMoved(BusError):
    """`Transaction.send_then` sent ``then``'s records from offsets it expected, and the log gave others.

    The transaction is aborted, so those records are never read; the caller may
    run it again, and the adapter does not expect offsets in the next one.
    """


class Record(NamedTuple):
    """One record as read from the log.

    Records are immutable named tuples rather than frozen dataclasses: an
    adapter builds one per record read, and a tuple is built four times
    faster (0.5 µs against 2 µs), which shows in an informer's catch-up.
    """

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None  # None is a tombstone


class OutRecord(NamedTuple):
    """One record to append (an immutable named tuple, like `Record`)."""

    topic: str
    key: bytes | None
    value: bytes | None
    partition: int = 0


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic declaration: name, partition count and topic-level config."""

    name: str
    partitions: int
    config: Mapping[str, str] = field(default_factory=dict)


# Where a consumer starts. An int is an absolute offset; the two strings are
# the partition's first and next-to-be-written offsets.
StartAt = int | str
BEGINNING = "beginning"
END = "end"


@runtime_checkable
class Consumer(Protocol):
    """Reads one partition of one topic, committed records only, in order."""

    async def getmany(self, *, timeout_ms: int = 100, max_records: int = 10_000) -> list[Record]:
        """Return the next records (possibly none once the timeout passes)."""
        ...

    async def seek(self, offset: StartAt) -> None:
        """Continue from an offset, or from BEGINNING or END."""
        ...

    def position(self) -> int:
        """The offset of the next record this consumer will return."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class Transaction(Protocol):
    """An open transaction of a transactional producer."""

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        """Append records inside the transaction and return their offsets.

        The offsets are final once the transaction commits; nobody sees the
        records before that.
        """
        ...

    async def send_offsets(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """Commit a group's consumed offsets (next offset to read) with the transaction."""
        ...

    async def send_with_commit(self, records: Sequence[OutRecord]) -> None:
        """Append records whose offsets the caller does not need, as part of the transaction.

        They are appended no later than the commit and, like every record of
        the transaction, seen only once it commits and never if it aborts. The
        records are checked now (an unknown topic raises here). An adapter may
        send them at once (Kafka) or write them in the commit's own step (the
        embedded log: one write transaction fewer per transaction).
        """
        ...

    async def send_then(
        self,
        records: Sequence[OutRecord],
        then: Callable[[list[int]], Sequence[OutRecord]],
        *,
        then_to: Sequence[tuple[str, int]],
        after: Awaitable[object] | None = None,
    ) -> None:
        """Append ``records``, then the records ``then(their offsets)`` returns, both with the commit.

        ``then``'s records may go only to the partitions ``then_to`` names
        (checked now; another one aborts the transaction). ``then`` must be
        quick and touch only its own data: an adapter may call it inside its
        commit's own step, on another thread (the embedded log: the records,
        what follows from their offsets and the commit are one write
        transaction); as soon as the offsets are back, sending its records no
        sooner than ``after`` is done (Kafka: `send`, then
        `send_with_commit`); or before ``records`` are sent, with the offsets
        the adapter knows they will get, both sent together (Kafka, when this
        producer is the only writer of their partitions: ``after`` is not
        waited for then). If the log then gives other offsets, `send_then`
        raises `OffsetsMoved` and the transaction aborts. What ``then`` raises
        aborts the transaction.
        """
        ...


@runtime_checkable
class Producer(Protocol):
    """A producer. Transactional when created with a transactional id."""

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        """Append records outside any transaction (non-transactional producers only)."""
        ...

    def transaction(self) -> TransactionContext:
        """``async with producer.transaction() as txn``: commit on exit, abort on error."""
        ...

    async def close(self) -> None: ...


class TransactionContext(Protocol):
    async def __aenter__(self) -> Transaction: ...

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> bool | None: ...


@runtime_checkable
class GroupMember(Protocol):
    """A member of a consumer group on one topic.

    ``leader`` is set while this member owns partition 0 and cleared when it
    loses it; ``consumer`` then reads partition 0 from the group's committed
    offset (or the beginning when nothing was committed). ``lost`` is set once
    leadership (or the membership) ends — partition 0 moved to another member,
    the session expired, or the member was closed — and stays set: close the
    member and join again to lead again.
    """

    leader: asyncio.Event
    lost: asyncio.Event

    @property
    def consumer(self) -> Consumer: ...

    async def committed(self) -> int | None:
        """The group's committed offset for partition 0, if any."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class Bus(Protocol):
    """A connection to one log (one Kafka cluster or one SQLite file)."""

    url: str

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def ensure_topics(self, specs: Sequence[TopicSpec]) -> None:
        """Create missing topics; raise TopicMismatch naming every differing setting."""
        ...

    async def producer(self, *, transactional_id: str | None = None) -> Producer:
        """A started producer. A transactional one fences older ones with the same id."""
        ...

    async def consumer(self, topic: str, *, partition: int = 0, start: StartAt = BEGINNING) -> Consumer:
        """A started read_committed consumer of one partition."""
        ...

    async def join_group(self, group: str, topic: str, *, member_id: str | None = None) -> GroupMember:
        """Join a consumer group on a topic (see GroupMember)."""
        ...

    async def beginning_offset(self, topic: str, partition: int = 0) -> int: ...

    async def end_offset(self, topic: str, partition: int = 0) -> int:
        """The offset the next committed record will have (the high watermark)."""
        ...

    async def offset_for_time(self, topic: str, timestamp_ms: int, partition: int = 0) -> int | None:
        """The first offset whose timestamp is at or after ``timestamp_ms``; None if none."""
        ...
