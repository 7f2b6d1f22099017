"""What the parts of one embedded bus share: the file, the wake-ups, names and settings.

Producers, consumers and group members get this one object rather than the
bus itself, which keeps them free of the bus's lifecycle code and makes each
part readable on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from services.bus.embedded.appender import Appender
from services.bus.embedded.db import Database
from services.bus.embedded.log import UnknownPartition
from services.bus.embedded.notify import Notifier
from services.bus.embedded.peers import Peers
from services.bus.embedded.topics import TopicInfo, load_topic
from services.bus.port import BusError, OutRecord
from services.bus.urls import Option


@dataclass(frozen=True, slots=True)
class Settings:
    """Timeouts and intervals (milliseconds), from the URL or ``open_bus`` options."""

    session_timeout_ms: int = 10_000
    heartbeat_interval_ms: int = 1_000
    transaction_timeout_ms: int = 60_000
    poll_interval_ms: int = 25
    maintenance_interval_ms: int = 10_000
    checkpoint_interval_ms: int = 50  # how often the WAL's length is looked at; 0: commits checkpoint (`checkpoint`)
    # frames waiting to be copied that make a checkpoint due; 0: 4 MiB of the file's own pages
    # (`schema.CHECKPOINT_BYTES`); commits checkpoint at 4x (`checkpoint`)
    checkpoint_frames: int = 0
    busy_timeout_ms: int = 10_000
    writes_on_loop: int = 1  # 1: a write runs on the event loop's thread when the file's write lock is free (`db`)

    @classmethod
    def from_options(cls, options: Mapping[str, Option]) -> Settings:
        values = {k: int(v) for k, v in options.items()}
        if "session_timeout_ms" in values and "heartbeat_interval_ms" not in values:
            values["heartbeat_interval_ms"] = max(10, min(1_000, values["session_timeout_ms"] // 3))
        return cls(**values)


@dataclass(slots=True)
class Shared:
    db: Database
    notifier: Notifier
    prefix: str
    settings: Settings
    _topics: dict[str, TopicInfo] = field(default_factory=dict)
    appender: Appender = field(init=False)  # the plain producers' group commit
    peers: Peers = field(init=False)  # the other processes' buses on the file: told of our commits

    def __post_init__(self) -> None:
        self.appender = Appender(self.db, self.wake_partitions)
        self.peers = Peers(self.db.path, self.wake_local)

    def stored(self, topic: str) -> str:
        """The stored name of a topic (or group, or transactional id): prefixed."""
        return self.prefix + topic

    PARTITION_KEYS = "partition:"

    @classmethod
    def partition_key(cls, pid: int) -> str:
        return f"{cls.PARTITION_KEYS}{pid}"

    @staticmethod
    def group_key(stored_group: str, stored_topic: str) -> str:
        return f"group:{stored_group}/{stored_topic}"

    def wake_partitions(self, pids: Iterable[int]) -> None:
        """After a commit (or abort) by this bus: wake its waiters on ``pids``, and tell the other buses."""
        pids = list(pids)
        if pids:
            self.wake_local(pids)
            self.peers.announce(pids)

    def wake_local(self, pids: Iterable[int]) -> None:
        """Wake this bus's waiters on ``pids`` (another bus committed to them)."""
        self.notifier.wake(self.partition_key(p) for p in pids)

    async def topic(self, topic: str) -> TopicInfo:
        """A declared topic's settings (cached: declarations never change)."""
        stored = self.stored(topic)
        info = self._topics.get(stored)
        if info is None:
            info = await load_topic(self.db, stored)
            if info is None:
                raise UnknownPartition(topic, 0)
            self._topics[stored] = info
        return info

    async def pid(self, topic: str, partition: int) -> int:
        """The id of a declared partition; `UnknownPartition` otherwise."""
        info = await self.topic(topic)
        if not 0 <= partition < len(info.pids):
            raise UnknownPartition(topic, partition)
        return info.pids[partition]

    async def check_records(self, records: Sequence[OutRecord]) -> dict[tuple[str, int], int]:
        """Validate records as a broker would; return (topic, partition) → partition id."""
        pids: dict[tuple[str, int], int] = {}
        for record in records:
            where = (record.topic, record.partition)
            if where not in pids:
                pids[where] = await self.pid(*where)
            if record.key is None and "compact" in (await self.topic(record.topic)).policies:
                raise BusError(
                    f"compacted topic {record.topic!r} cannot accept a record without a key"
                )
        return pids
