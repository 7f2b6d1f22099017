"""Pauses between retries: exponential backoff with jitter, the one shape every retry loop uses.

Why this module exists: a fixed pause makes every process that lost the log at
the same moment (a broker restart, a committer failover) come back at the same
moments too, and hammers a dependency that stays away at a constant rate.
`Backoff` is client-go's ``wait.Backoff`` (``k8s.io/apimachinery/pkg/util/wait``):
each `step` returns the current duration plus a random share of up to
``jitter`` times it, then multiplies the duration by ``factor`` until it
reaches ``cap`` (the cap applies before the jitter, so a pause is at most
``cap * (1 + jitter)``). ``steps`` limits how often the duration grows
(None: until the cap). Work queues keep their own per-item rate limiter
(`services.runtime.workqueue`, client-go's, without jitter) and the scheduler
its pod backoff (kube-scheduler's); this is for loops that pause and try again.

The presets below are the pauses the components use; each call returns a fresh
`Backoff`, which a loop keeps and `reset`s after a success.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable


class Backoff:
    """client-go's ``wait.Backoff``: ``step`` gives the next pause and advances (see module docstring).

    ``rand`` returns a float in [0, 1) (``random.random``; a test passes a seeded ``random.Random``'s).
    """

    def __init__(
        self,
        duration: float,
        *,
        factor: float = 2.0,
        jitter: float = 0.0,
        cap: float | None = None,
        steps: int | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        if duration < 0 or factor < 0 or jitter < 0 or (cap is not None and cap < 0):
            raise ValueError("backoff durations, factor and jitter must not be negative")
        self.initial = duration
        self.factor = factor
        self.jitter = jitter
        self.cap = cap
        self.initial_steps = steps
        self._rand = rand
        self.duration = duration
        self.steps = steps

    def step(self) -> float:
        """The next pause in seconds; the duration grows for the one after it."""
        duration = self.duration
        growing = self.steps is None or self.steps >= 1
        if growing:
            if self.steps is not None:
                self.steps -= 1
            if self.factor != 0:
                self.duration *= self.factor
                if self.cap is not None and self.cap > 0 and self.duration > self.cap:
                    self.duration = self.cap
                    self.steps = 0
        if self.jitter > 0:
            duration += self._rand() * self.jitter * duration
        return duration

    def reset(self) -> None:
        """Back to the first pause (after the retried operation succeeded)."""
        self.duration = self.initial
        self.steps = self.initial_steps

    async def pause(self) -> float:
        """Sleep for the next step; returns how long."""
        delay = self.step()
        await asyncio.sleep(delay)
        return delay


def retry_on_conflict() -> Backoff:
    """client-go's ``retry.DefaultRetry``: five attempts, 10 ms apart, up to 10% later each."""
    return Backoff(0.01, factor=1.0, jitter=0.1, steps=5)


def log_unavailable() -> Backoff:
    """While the log is away (informers, reply readers, the committer): 0.1 s doubling to 2 s, up to half again."""
    return Backoff(0.1, factor=2.0, jitter=0.5, cap=2.0)


def node_registration() -> Backoff:
    """The kubelet's node registration retry (100 ms doubling to 7 s), with up to half again of jitter."""
    return Backoff(0.1, factor=2.0, jitter=0.5, cap=7.0)


def write_retry(*, cap: float) -> Backoff:
    """A failed write tried again (the driver's ResourceSlice publisher): 50 ms doubling to ``cap``."""
    return Backoff(0.05, factor=2.0, jitter=0.5, cap=cap)


def leader_election_retry(retry_period: float) -> Backoff:
    """Leader election's acquire loop (client-go's ``JitterUntil(retryPeriod, JitterFactor=1.2)``): no growth."""
    return Backoff(retry_period, factor=1.0, jitter=1.2)
