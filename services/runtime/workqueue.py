"""A rate-limited work queue with client-go's guarantees.

Controllers put object keys on it from informer handlers and workers take them
off. The queue holds a key at most once; a key that is added while a worker
holds it is queued again only after that worker calls `done`, so two workers
never hold the same key at once. `add_rate_limited` delays a key by the larger
of a per-item exponential backoff and a shared token bucket, like client-go's
default controller rate limiter. Time comes from the event loop, so tests can
fast-forward it (looptime) instead of sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class ShutDown(Exception):
    """The queue was shut down; workers should exit."""


@dataclass
class ExponentialBackoff(Generic[K]):
    """Per-item backoff: base * 2**failures, capped."""

    base: float = 0.005
    cap: float = 1000.0
    failures: dict[K, int] = field(default_factory=dict)

    def when(self, item: K) -> float:
        n = self.failures.get(item, 0)
        self.failures[item] = n + 1
        return min(self.base * (2**n), self.cap)

    def forget(self, item: K) -> None:
        self.failures.pop(item, None)

    def retries(self, item: K) -> int:
        return self.failures.get(item, 0)


@dataclass
class TokenBucket:
    """Overall rate limit: ``rate`` tokens per second with a ``burst``."""

    rate: float = 10.0
    burst: int = 100
    _tokens: float | None = None
    _last: float = 0.0

    def reserve(self, now: float) -> float:
        """Take a token and return how long to wait for it."""
        if self._tokens is None:
            self._tokens, self._last = float(self.burst), now
        tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate) - 1.0
        self._tokens, self._last = tokens, now
        return 0.0 if tokens >= 0 else -tokens / self.rate


class WorkQueue(Generic[K]):
    """Deduplicating FIFO of keys with delayed and rate-limited adds."""

    def __init__(
        self,
        *,
        backoff: ExponentialBackoff[K] | None = None,
        bucket: TokenBucket | None = None,
    ) -> None:
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiting: list[tuple[float, int, K]] = []
        self._seq = itertools.count()
        self._backoff: ExponentialBackoff[K] = backoff or ExponentialBackoff()
        self._bucket = bucket or TokenBucket()
        self._ready = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._shutdown = False

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, item: K) -> None:
        """Queue a key now, unless it is already queued."""
        if self._shutdown or item in self._dirty:
            return
        self._dirty.add(item)
        if item not in self._processing:
            self._queue.append(item)
            self._notify()

    def add_after(self, item: K, delay: float) -> None:
        """Queue a key once ``delay`` seconds have passed."""
        if self._shutdown:
            return
        if delay <= 0:
            self.add(item)
            return
        loop = asyncio.get_running_loop()
        heapq.heappush(self._waiting, (loop.time() + delay, next(self._seq), item))
        self._arm_timer()

    def add_rate_limited(self, item: K) -> None:
        """Queue a key after its backoff (and the shared bucket) allow it."""
        loop = asyncio.get_running_loop()
        delay = max(self._backoff.when(item), self._bucket.reserve(loop.time()))
        self.add_after(item, delay)

    def forget(self, item: K) -> None:
        """Reset a key's backoff after it was processed successfully."""
        self._backoff.forget(item)

    def retries(self, item: K) -> int:
        return self._backoff.retries(item)

    async def get(self) -> K:
        """Take the next key; the caller must call `done` with it."""
        while not self._queue:
            if self._shutdown:
                raise ShutDown
            self._ready.clear()
            await self._ready.wait()
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        return item

    def done(self, item: K) -> None:
        """Release a key; if it was added meanwhile, it goes back on the queue."""
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._notify()

    def shutdown(self) -> None:
        self._shutdown = True
        if self._timer is not None:
            self._timer.cancel()
        self._notify()

    def _notify(self) -> None:
        self._ready.set()

    def _arm_timer(self) -> None:
        loop = asyncio.get_running_loop()
        if self._timer is not None:
            self._timer.cancel()
        if self._waiting:
            self._timer = loop.call_at(self._waiting[0][0], self._release_due)

    def _release_due(self) -> None:
        self._timer = None
        now = asyncio.get_running_loop().time()
        while self._waiting and self._waiting[0][0] <= now:
            _, _, item = heapq.heappop(self._waiting)
            self.add(item)
        self._arm_timer()
