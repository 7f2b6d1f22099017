"""The shared worker loop keeps client-go's processNextWorkItem contract — on fake time (looptime).

client-go (``k8s.io/client-go/util/workqueue`` users, e.g. the DRA controller
library's ``processNextWorkItem``): ``Forget`` on success, ``AddRateLimited``
on failure, ``Done`` always; the library's ``errPeriodic`` is ``Forget`` then
``AddAfter(recheckDelay)``.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from services.runtime.workers import RequeueAfter, process_next, run_workers
from services.runtime.workqueue import ExponentialBackoff, TokenBucket, WorkQueue


def queue() -> WorkQueue[str]:
    return WorkQueue(backoff=ExponentialBackoff(base=1.0, cap=60.0), bucket=TokenBucket(rate=1000, burst=1000))


class Boom(Exception):
    pass


@pytest.mark.looptime
async def test_a_failure_is_retried_with_backoff_and_a_success_forgets_it() -> None:
    q = queue()
    loop = asyncio.get_running_loop()
    outcomes = [Boom("first"), Boom("second"), None]
    failures: list[tuple[str, str]] = []

    async def sync(key: str) -> None:
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome

    async def failed(key: str, err: Exception) -> None:
        failures.append((key, str(err)))

    q.add("k")
    start = loop.time()
    assert await process_next(q, sync, name="t", on_failure=failed)
    assert q.retries("k") == 1
    assert await process_next(q, sync, name="t", on_failure=failed)  # back after 1s
    assert q.retries("k") == 2
    assert await process_next(q, sync, name="t", on_failure=failed)  # back after 2s more
    assert loop.time() - start == pytest.approx(3.0)
    assert failures == [("k", "first"), ("k", "second")]
    assert q.retries("k") == 0, "a success forgets the key's backoff"
    assert len(q) == 0


@pytest.mark.parametrize("fails", [False, True], ids=["success", "failure"])
async def test_done_is_always_called(fails: bool) -> None:
    q = queue()

    async def sync(key: str) -> None:
        q.add(key)  # changed while a worker holds it: it must come back once the worker is done
        if fails:
            raise Boom

    q.add("k")
    assert await process_next(q, sync, name="t")
    assert len(q) == 1, "the key added during the sync is queued again, so done() was called"


@pytest.mark.looptime
async def test_requeue_after_forgets_and_adds_after_the_delay_without_a_failure() -> None:
    q = queue()
    loop = asyncio.get_running_loop()
    failures: list[str] = []
    q.add_rate_limited("k")  # a backoff that must be forgotten
    await q.get()
    q.done("k")
    assert q.retries("k") == 1

    async def sync(key: str) -> None:
        raise RequeueAfter(30.0)

    async def failed(key: str, err: Exception) -> None:
        failures.append(key)

    q.add("k")
    assert await process_next(q, sync, name="t", on_failure=failed)
    assert q.retries("k") == 0
    assert failures == []
    start = loop.time()
    assert await q.get() == "k"
    assert loop.time() - start == pytest.approx(30.0)


async def test_a_failing_on_failure_still_requeues() -> None:
    q = WorkQueue[str](backoff=ExponentialBackoff(base=0.0))

    async def sync(key: str) -> None:
        raise Boom

    async def failed(key: str, err: Exception) -> None:
        raise RuntimeError("the event could not be recorded")

    q.add("k")
    assert await process_next(q, sync, name="t", on_failure=failed)
    assert await q.get() == "k"
    assert q.retries("k") == 1


@pytest.mark.parametrize(("expected", "traceback"), [((), True), ((Boom,), False)], ids=["unexpected", "expected"])
async def test_failures_are_logged_with_a_traceback_unless_expected(
    caplog: pytest.LogCaptureFixture, expected: tuple[type[BaseException], ...], traceback: bool
) -> None:
    q = queue()

    async def sync(key: str) -> None:
        raise Boom("no luck")

    q.add("k")
    with caplog.at_level(logging.WARNING, logger="services.runtime.workers"):
        await process_next(q, sync, name="t", describe=lambda k: f"key {k}", expected=expected)
    [record] = caplog.records
    assert record.getMessage() == "key k failed with: no luck"
    assert bool(record.exc_info) is traceback


async def test_cancellation_propagates_and_the_key_is_done() -> None:
    q = queue()
    entered = asyncio.Event()

    async def sync(key: str) -> None:
        entered.set()
        await asyncio.Event().wait()

    q.add("k")
    step = asyncio.create_task(process_next(q, sync, name="t"))
    await entered.wait()
    q.add("k")
    step.cancel()
    with pytest.raises(asyncio.CancelledError):
        await step
    assert len(q) == 1, "done() ran on the way out"
    assert q.retries("k") == 0, "a cancelled sync is not a failure"


async def test_process_next_says_when_the_queue_is_shut_down() -> None:
    q = queue()
    q.shutdown()

    async def sync(key: str) -> None:
        raise AssertionError("no key to sync")

    assert await process_next(q, sync, name="t") is False


async def test_run_workers_syncs_with_several_workers_and_cancels_them_all() -> None:
    q = queue()
    running: set[str] = set()
    both = asyncio.Event()

    async def sync(key: str) -> None:
        running.add(key)
        if len(running) == 2:
            both.set()
        await asyncio.Event().wait()

    q.add("a")
    q.add("b")
    task = asyncio.create_task(run_workers(q, sync, workers=2, name="t"))
    await both.wait()  # two keys in flight at once: two workers
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    q.add("c")
    assert len(q) == 0, "the queue is shut down once the workers stopped"


async def test_run_workers_returns_when_the_queue_shuts_down() -> None:
    q = queue()
    synced: list[str] = []

    async def sync(key: str) -> None:
        synced.append(key)
        if key == "last":
            q.shutdown()

    for key in ("a", "b", "last"):
        q.add(key)
    await run_workers(q, sync, workers=3, name="t")
    assert sorted(synced) == ["a", "b", "last"]
