"""Wake-ups for the embedded log: how a waiting consumer learns of new records.

Inside one process a commit wakes the consumers of the partitions it touched
at once; other processes are told at once by a datagram
(`services.bus.embedded.peers`). Should that be lost, commits by other
processes are still noticed by polling SQLite's ``PRAGMA data_version`` (it
changes whenever another connection commits) every ``poll_interval``; a
change wakes every waiting consumer, which then re-reads.
Group members are not woken by it (they would renew their leases on every
commit); they notice other processes' group changes at their next heartbeat.
Nor are consumers that have already read up to their partition's stable end
(`Notifier.expect`): with the datagrams, in steady state nearly every poll
sees a change that a datagram has already announced and whose records the
waiters have read, and waking them all meant a read per waiter and poll for
nothing (40 polls a second in every process).

A waiter takes its event *before* it reads, so a commit that lands between the
read and the wait still wakes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Iterable, Mapping

from services.bus.embedded.db import Database
from services.bus.port import BusError

log = logging.getLogger(__name__)


class Notifier:
    """One event per key (a topic, or a group); `wake` sets and replaces it."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}
        self._read_to: dict[str, int] = {}  # key -> the lowest end its current event's waiters have read to

    def event(self, key: str) -> asyncio.Event:
        event = self._events.get(key)
        if event is None:
            event = self._events[key] = asyncio.Event()
        return event

    def expect(self, key: str, event: asyncio.Event, end: int) -> None:
        """A waiter on ``event`` (of ``key``) has read everything below ``end``.

        The poll then leaves it asleep while the partition's stable end is
        still ``end``. A waiter that never says so is always woken by the poll.
        """
        if self._events.get(key) is event:  # else its event was set already: it is awake
            known = self._read_to.get(key)
            if known is None or end < known:
                self._read_to[key] = end

    def wake(self, keys: Iterable[str]) -> None:
        """Wake the waiters on ``keys``."""
        for key in keys:
            event = self._events.pop(key, None)
            self._read_to.pop(key, None)
            if event is not None:
                event.set()

    def wake_prefixed(self, prefix: str) -> None:
        """Wake every waiter whose key starts with ``prefix``."""
        self.wake([key for key in self._events if key.startswith(prefix)])

    def waiting(self, prefix: str) -> dict[str, int | None]:
        """The keys starting with ``prefix`` that have waiters: the end they read to (None: unknown)."""
        return {key: self._read_to.get(key) for key in self._events if key.startswith(prefix)}

    def wake_behind(self, prefix: str, ends: Mapping[int, int]) -> None:
        """Wake the waiters of keys ``prefix + str(pid)`` whose partition's stable end (``ends``) moved
        past what they read; those of unknown ends or vanished partitions too (they re-read and see)."""
        stale: list[str] = []
        for key, read_to in self.waiting(prefix).items():
            try:
                end = ends.get(int(key[len(prefix) :]))
            except ValueError:
                end = None
            if read_to is None or end is None or end > read_to:
                stale.append(key)
        self.wake(stale)


async def wait(event: asyncio.Event, timeout: float) -> bool:
    """Wait for ``event`` at most ``timeout`` seconds; True if it was set."""
    if event.is_set():
        return True
    if timeout <= 0:
        return False
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            await event.wait()
    return event.is_set()


async def watch_other_processes(
    db: Database,
    notifier: Notifier,
    interval: float,
    *,
    prefix: str,
    stable_ends: Callable[[sqlite3.Connection], dict[int, int]],
) -> None:
    """Poll ``PRAGMA data_version``; when another connection committed, wake the waiters
    whose keys (``prefix`` and a partition id) are behind their partition's stable end
    (``stable_ends``: partition id → end); group members keep their own pace."""
    last = -1
    while True:
        try:
            version = await db.data_version()
            if version != last and last != -1 and notifier.waiting(prefix):
                notifier.wake_behind(prefix, await db.read_now(stable_ends))
        except BusError as exc:  # a locked or vanished file: keep trying
            log.warning("embedded log: cannot poll for changes: %s", exc)
            version = last
            notifier.wake_prefixed(prefix)  # let them find out for themselves
        last = version
        await asyncio.sleep(interval)
