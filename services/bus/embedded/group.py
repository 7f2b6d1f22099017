"""Consumer groups on the embedded log: leases, sticky ownership, leadership.

A member holds a lease (``members.expires_ms``) that its heartbeat renews every
``heartbeat_interval_ms``; a lease not renewed within ``session_timeout_ms``
expires, and the next heartbeat of any member (in any process) removes it and
hands its partitions on. Ownership is sticky: a live owner keeps its
partitions, unowned ones go to the least-loaded member, and a member above its
fair share gives up its highest-numbered partitions itself, so a partition is
never taken from a live owner behind its back. Partition 0 is therefore only
lost by leaving or by letting the lease expire.

The owner of partition 0 is the group's leader (`GroupMember.leader`). When
leadership ends — partition 0 moves away, the lease expired, or the member
closes — `GroupMember.lost` is set for good; the caller closes the member and
joins again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
import uuid

from services.bus.embedded.consumer import EmbeddedConsumer
from services.bus.embedded.db import Connection, fetchall, now_ms
from services.bus.embedded.notify import wait
from services.bus.embedded.shared import Shared
from services.bus.port import BusError, Record, StartAt

log = logging.getLogger(__name__)


class EmbeddedGroupMember:
    def __init__(
        self, shared: Shared, group: str, topic: str, *, member_id: str | None, pid0: int
    ) -> None:
        self._shared = shared
        self.group = group
        self.topic = topic
        self.member_id = f"{member_id or 'member'}-{uuid.uuid4().hex[:10]}"
        self._grp = shared.stored(group)
        self._stored_topic = shared.stored(topic)
        self.leader = asyncio.Event()
        self.lost = asyncio.Event()
        self._pid0 = pid0
        self._inner = EmbeddedConsumer(shared, topic, 0, pid0)
        self._consumer = LeaderConsumer(self, self._inner)
        self._owned: frozenset[int] = frozenset()
        self._joined = False
        self._last_ok = time.monotonic()
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    async def create(
        cls, shared: Shared, group: str, topic: str, *, member_id: str | None
    ) -> EmbeddedGroupMember:
        pid0 = await shared.pid(topic, 0)  # the topic must be declared
        member = cls(shared, group, topic, member_id=member_id, pid0=pid0)
        await member._beat()
        member._task = asyncio.create_task(member._heartbeats(), name=f"heartbeat-{member.member_id}")
        return member

    @property
    def consumer(self) -> LeaderConsumer:
        return self._consumer

    @property
    def partitions(self) -> frozenset[int]:
        """The partitions this member owns now."""
        return self._owned

    async def committed(self) -> int | None:
        row = await self._shared.db.fetchone(
            "SELECT offset FROM group_offsets WHERE grp = ? AND topic = ? AND partition = 0",
            (self._grp, self._stored_topic),
        )
        return None if row is None else int(row[0])

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        try:
            async with self._shared.db.write() as conn:
                await conn.execute(
                    "DELETE FROM members WHERE grp = ? AND topic = ? AND member_id = ?",
                    (self._grp, self._stored_topic, self.member_id),
                )
                await self._assign(conn, now_ms(), me=None)
        except BusError as exc:  # the lease will expire instead
            log.warning("embedded log: leaving group %s failed: %s", self.group, exc)
        self._wake_others()
        self._owned = frozenset()
        self._end_leadership()
        await self._inner.close()

    # -- heartbeats ---------------------------------------------------------------

    async def _heartbeats(self) -> None:
        settings = self._shared.settings
        key = self._shared.group_key(self._grp, self._stored_topic)
        while not self._closed:
            event = self._shared.notifier.event(key)
            await wait(event, settings.heartbeat_interval_ms / 1000)
            try:
                await self._beat()
            except Exception as exc:  # keep beating: the file may come back
                log.warning("embedded log: heartbeat of %s failed: %r", self.member_id, exc)
                if time.monotonic() - self._last_ok > settings.session_timeout_ms / 1000:
                    # Our lease has run out by now: someone else may lead.
                    self._owned = frozenset()
                    if self.leader.is_set():
                        self._end_leadership()

    async def _beat(self) -> None:
        """Renew the lease (or join again), settle ownership, and act on the result."""
        now = now_ms()
        session = self._shared.settings.session_timeout_ms
        async with self._shared.db.write() as conn:
            await self._expire(conn, now)
            renewed = await conn.execute(
                "UPDATE members SET expires_ms = ? WHERE grp = ? AND topic = ? AND member_id = ?",
                (now + session, self._grp, self._stored_topic, self.member_id),
            )
            rejoined = renewed.rowcount == 0
            if rejoined:
                await conn.execute(
                    "INSERT INTO members (grp, topic, member_id, joined_ms, expires_ms) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (self._grp, self._stored_topic, self.member_id, now, now + session),
                )
            changed = await self._assign(conn, now, me=self.member_id)
            owned = frozenset(
                int(p)
                for (p,) in await fetchall(
                    conn,
                    "SELECT partition FROM owners WHERE grp = ? AND topic = ? AND member_id = ?",
                    (self._grp, self._stored_topic, self.member_id),
                )
            )
            start = await self._start_offset(conn) if 0 in owned else 0
        self._last_ok = time.monotonic()
        if changed or rejoined:
            self._wake_others()
        if rejoined and self._joined:
            # Our lease had expired: whatever we owned was handed on meanwhile.
            log.warning("embedded log: member %s lost its lease and joined again", self.member_id)
            if self.leader.is_set():
                self._end_leadership()
        self._joined = True
        self._owned = owned
        if 0 in owned:
            if not self.leader.is_set() and not self.lost.is_set():
                self._inner.reset_position(start)
                self.leader.set()
        elif self.leader.is_set():
            self._end_leadership()

    def _end_leadership(self) -> None:
        self.leader.clear()
        self.lost.set()

    def _wake_others(self) -> None:
        self._shared.notifier.wake([self._shared.group_key(self._grp, self._stored_topic)])

    async def _expire(self, conn: Connection, now: int) -> None:
        await conn.execute(
            "DELETE FROM members WHERE grp = ? AND topic = ? AND expires_ms < ?",
            (self._grp, self._stored_topic, now),
        )

    async def _start_offset(self, conn: Connection) -> int:
        """Where the new leader reads partition 0: the committed offset, else the log start."""
        rows = await fetchall(
            conn,
            "SELECT offset FROM group_offsets WHERE grp = ? AND topic = ? AND partition = 0",
            (self._grp, self._stored_topic),
        )
        if rows:
            return int(rows[0][0])
        rows = await fetchall(conn, "SELECT log_start FROM partitions WHERE id = ?", (self._pid0,))
        return int(rows[0][0]) if rows else 0

    async def _assign(self, conn: Connection, now: int, *, me: str | None) -> bool:
        """Settle ownership; ``me`` gives up what it holds beyond its fair share.

        Returns whether ownership changed.
        """
        grp, topic = self._grp, self._stored_topic
        members = [
            str(m)
            for (m,) in await fetchall(
                conn,
                "SELECT member_id FROM members WHERE grp = ? AND topic = ? AND expires_ms >= ? "
                "ORDER BY joined_ms, member_id",
                (grp, topic, now),
            )
        ]
        rows = await fetchall(conn, "SELECT partitions FROM topics WHERE name = ?", (topic,))
        count = int(rows[0][0]) if rows else 0
        owners = {
            int(p): str(m)
            for p, m in await fetchall(
                conn, "SELECT partition, member_id FROM owners WHERE grp = ? AND topic = ?", (grp, topic)
            )
        }
        live = set(members)
        wanted = {p: m for p, m in owners.items() if m in live and p < count}
        if members:
            quota = math.ceil(count / len(members))
            if me is not None:
                mine = sorted(p for p, m in wanted.items() if m == me)
                for p in mine[quota:]:  # highest-numbered first; partition 0 stays
                    del wanted[p]
            load = {m: 0 for m in members}
            for m in wanted.values():
                load[m] += 1
            rank = {m: i for i, m in enumerate(members)}
            for p in range(count):
                if p not in wanted:
                    m = min(members, key=lambda x: (load[x], rank[x]))
                    wanted[p] = m
                    load[m] += 1
        if wanted == owners:
            return False
        await conn.execute("DELETE FROM owners WHERE grp = ? AND topic = ?", (grp, topic))
        await conn.executemany(
            "INSERT INTO owners (grp, topic, partition, member_id) VALUES (?, ?, ?, ?)",
            [(grp, topic, p, m) for p, m in sorted(wanted.items())],
        )
        return True


class LeaderConsumer:
    """The member's consumer of partition 0: returns records only while leader."""

    def __init__(self, member: EmbeddedGroupMember, inner: EmbeddedConsumer) -> None:
        self._member = member
        self._inner = inner

    async def getmany(self, *, timeout_ms: int = 100, max_records: int = 10_000) -> list[Record]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        if not await wait(self._member.leader, timeout_ms / 1000):
            return []
        remaining = max(0, int((deadline - loop.time()) * 1000))
        return await self._inner.getmany(timeout_ms=remaining, max_records=max_records)

    async def seek(self, offset: StartAt) -> None:
        await self._inner.seek(offset)

    def position(self) -> int:
        return self._inner.position()

    async def close(self) -> None:
        """The member owns this consumer; closing the member closes it."""
