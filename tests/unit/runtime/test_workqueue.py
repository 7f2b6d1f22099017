"""The work queue's guarantees: dedup, one worker per key, backoff — on fake time (looptime)."""

from __future__ import annotations

import asyncio

import pytest

from services.runtime.workqueue import ExponentialBackoff, ShutDown, TokenBucket, WorkQueue


async def test_a_key_is_held_at_most_once() -> None:
    q: WorkQueue[str] = WorkQueue()
    for key in ["a", "b", "a", "a", "c", "b"]:
        q.add(key)
    assert len(q) == 3
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]


async def test_a_key_added_while_processing_waits_for_done() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    first = await q.get()
    q.add("a")  # changed again while a worker holds it
    assert len(q) == 0, "must not be handed to a second worker"
    q.done(first)
    assert len(q) == 1
    assert await q.get() == "a"


async def test_two_workers_never_hold_the_same_key() -> None:
    q: WorkQueue[int] = WorkQueue()
    holding: set[int] = set()
    clashes = 0
    processed = 0

    async def worker() -> None:
        nonlocal clashes, processed
        while True:
            try:
                key = await q.get()
            except ShutDown:
                return
            if key in holding:
                clashes += 1
            holding.add(key)
            await asyncio.sleep(0)
            q.add(key % 3)  # keep re-adding keys that may be in flight
            holding.discard(key)
            processed += 1
            q.done(key)
            if processed > 300:
                q.shutdown()

    for i in range(10):
        q.add(i)
    await asyncio.gather(*(worker() for _ in range(4)))
    assert clashes == 0
    assert processed > 300


@pytest.mark.looptime
async def test_rate_limited_adds_back_off_exponentially() -> None:
    q: WorkQueue[str] = WorkQueue(
        backoff=ExponentialBackoff(base=1.0, cap=8.0), bucket=TokenBucket(rate=1000, burst=1000)
    )
    loop = asyncio.get_running_loop()
    seen = []
    start = loop.time()
    for _ in range(5):
        q.add_rate_limited("k")
        key = await q.get()
        seen.append(round(loop.time() - start))
        q.done(key)
    assert seen == [1, 3, 7, 15, 23]  # 1, 2, 4, 8, then capped at 8
    q.forget("k")
    assert q.retries("k") == 0


@pytest.mark.looptime
async def test_token_bucket_limits_overall_rate() -> None:
    q: WorkQueue[int] = WorkQueue(backoff=ExponentialBackoff(base=0.0), bucket=TokenBucket(rate=10, burst=2))
    loop = asyncio.get_running_loop()
    start = loop.time()
    for i in range(6):
        q.add_rate_limited(i)
    got = [await q.get() for _ in range(6)]
    assert sorted(got) == list(range(6))
    assert loop.time() - start == pytest.approx(0.4, abs=0.01)  # 2 at once, then 4 at 10/s


@pytest.mark.looptime
async def test_add_after_delays() -> None:
    q: WorkQueue[str] = WorkQueue()
    loop = asyncio.get_running_loop()
    start = loop.time()
    q.add_after("late", 5.0)
    q.add_after("early", 2.0)
    assert await q.get() == "early"
    assert loop.time() - start == pytest.approx(2.0)
    assert await q.get() == "late"
    assert loop.time() - start == pytest.approx(5.0)


async def test_shutdown_releases_waiting_workers() -> None:
    q: WorkQueue[str] = WorkQueue()
    waiter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.shutdown()
    with pytest.raises(ShutDown):
        await waiter
