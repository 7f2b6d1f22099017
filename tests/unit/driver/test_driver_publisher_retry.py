"""A failed ResourceSlice publication is tried again after a growing, jittered pause — not at once.

Before `services.runtime.backoff`, the publisher set its own wake event
before pausing, so the pause ended at once and a failing API was retried in
a hot loop. On fake time (looptime): the gaps between passes follow
`backoff.write_retry` (50 ms doubling, up to half again), capped by
``max_backoff``; a change cuts a pause short; a success resets the backoff.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import cast

import pytest

from services.api.machinery import status as st
from services.driver.publisher import SlicePublisher
from services.runtime.client import Client
from services.runtime.informer import Informer


class FlakyPublisher(SlicePublisher):
    """A publisher whose passes fail while ``failing`` says so; records when each pass ran."""

    def __init__(self, *, max_backoff: float) -> None:
        super().__init__(
            cast(Informer, None), cast(Client, None), node="node-1", driver="gpu.example.com", max_backoff=max_backoff
        )
        self.failing = True
        self.passes: list[float] = []
        self.passed = asyncio.Event()

    async def reconcile(self) -> bool:
        await asyncio.sleep(0)  # a yield, as a real pass's API call makes: a hot retry loop would not hang the test
        self.passes.append(asyncio.get_running_loop().time())
        self.passed.set()
        if self.failing:
            raise st.service_unavailable("the API is away")
        return True


async def next_pass(publisher: FlakyPublisher) -> float:
    publisher.passed.clear()
    await publisher.passed.wait()
    return publisher.passes[-1]


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


@pytest.mark.looptime
async def test_failed_passes_are_retried_after_growing_pauses_up_to_the_cap() -> None:
    publisher = FlakyPublisher(max_backoff=0.4)
    task = asyncio.create_task(publisher.run())
    try:
        publisher.wake()
        for _ in range(7):
            await next_pass(publisher)
        bases = [0.05, 0.1, 0.2, 0.4, 0.4, 0.4]
        for base, gap in zip(bases, gaps(publisher.passes), strict=True):
            assert base <= gap < base * 1.5 + 1e-9

        publisher.failing = False
        await next_pass(publisher)
        assert publisher.in_sync.is_set()
        # Succeeded: the next failure starts from the first pause again.
        publisher.failing = True
        publisher.wake()
        first = await next_pass(publisher)
        assert 0.05 <= await next_pass(publisher) - first < 0.075 + 1e-9
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


@pytest.mark.looptime
async def test_a_change_cuts_a_pause_short() -> None:
    publisher = FlakyPublisher(max_backoff=30.0)
    task = asyncio.create_task(publisher.run())
    try:
        publisher.wake()
        for _ in range(6):  # pauses of 0.05 .. 0.8 s so far; the next is at least 1.6 s
            await next_pass(publisher)
        loop = asyncio.get_running_loop()
        woken_at = loop.time()
        publisher.wake()
        assert await next_pass(publisher) == pytest.approx(woken_at)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
