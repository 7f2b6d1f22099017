"""Wake-ups for the embedded log: how a waiting consumer learns of new records.

Inside one process a commit wakes the consumers of the partitions it touched
at once; other processes are told at once by a datagram
(`services.bus.embedded.peers`). Should that be lost, commits by other
processes are still noticed by polling SQLite's ``PRAGMA data_version`` (it
changes whenever another connection commits) every ``poll_interval``; a
change wakes every waiting consumer, which then re-reads.
Group members are not woken by it (they would renew their leases on every
commit); they notice other processes' group changes at their next heartbeat.

A waiter takes its event *before* it reads, so a commit that lands between the
read and the wait still wakes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable

from services.bus.embedded.db import Database
from services.bus.port import BusError

log = logging.getLogger(__name__)


class Notifier:
    """One event per key (a topic, or a group); `wake` sets and replaces it."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    def event(self, key: str) -> asyncio.Event:
        event = self._events.get(key)
        if event is None:
            event = self._events[key] = asyncio.Event()
        return event

    def wake(self, keys: Iterable[str]) -> None:
        """Wake the waiters on ``keys``."""
        for key in keys:
            event = self._events.pop(key, None)
            if event is not None:
                event.set()

    def wake_prefixed(self, prefix: str) -> None:
        """Wake every waiter whose key starts with ``prefix``."""
        self.wake([key for key in self._events if key.startswith(prefix)])


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
    db: Database, notifier: Notifier, interval: float, *, prefix: str
) -> None:
    """Poll ``PRAGMA data_version``; when another connection committed, wake the waiters
    whose keys start with ``prefix`` (the consumers; group members keep their own pace)."""
    last = -1
    while True:
        try:
            version = await db.data_version()
        except BusError as exc:  # a locked or vanished file: keep trying
            log.warning("embedded log: cannot poll for changes: %s", exc)
            version = last
        if version != last:
            if last != -1:
                notifier.wake_prefixed(prefix)
            last = version
        await asyncio.sleep(interval)
