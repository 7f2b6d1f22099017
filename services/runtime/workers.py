"""The worker loop every component runs over its work queue.

Why this module exists: client-go's ``processNextWorkItem`` contract — take a
key, sync it, ``Forget`` it on success, ``AddRateLimited`` it on failure,
always ``Done``, and let cancellation through — is the same for the
controller-manager's controllers, a driver's classic controller and the node
agent's pod workers, and getting it wrong (forgetting ``done``, swallowing
cancellation) stalls keys for good. Here it is once, in the shared runtime
layer, so no component imports another for it.

What differs between the users is passed in: how many workers, what a
failure costs besides the retry (a metric, an Event on the object) via
``on_failure``, and a sync that wants its key looked at again later without
it being a failure raises `RequeueAfter` (the DRA controller library's
``errPeriodic``: ``Forget`` then ``AddAfter``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import TypeVar

from services.runtime.lifecycle import raise_if_cancelling
from services.runtime.workqueue import ShutDown, WorkQueue

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)


class RequeueAfter(Exception):
    """Raised by a sync: the key is fine for now but must be looked at again after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        super().__init__(f"requeue after {delay:g}s")
        self.delay = delay


async def process_next(
    queue: WorkQueue[K],
    sync: Callable[[K], Awaitable[object]],
    *,
    name: str,
    on_failure: Callable[[K, Exception], Awaitable[None]] | None = None,
    describe: Callable[[K], str] = str,
    expected: tuple[type[BaseException], ...] = (),
) -> bool:
    """Take one key and sync it (client-go's ``processNextWorkItem``); False once the queue is shut down.

    - success: ``forget`` (its backoff starts over);
    - `RequeueAfter`: ``forget``, then ``add_after`` the delay;
    - any other exception: logged (with a traceback unless it is ``expected``),
      ``on_failure`` awaited, then ``add_rate_limited``;
    - always ``done``; CancelledError propagates (after ``done``).
    """
    try:
        key = await queue.get()
    except ShutDown:
        return False
    try:
        await sync(key)
    except RequeueAfter as again:
        queue.forget(key)
        queue.add_after(key, again.delay)
    except asyncio.CancelledError:
        raise
    except Exception as err:
        log.warning(
            f"{describe(key)} failed with: {err}",
            extra={"controller": name, "key": describe(key), "retries": queue.retries(key), "error": str(err)},
            exc_info=not isinstance(err, expected),
        )
        try:
            if on_failure is not None:
                await on_failure(key, err)
        except Exception:
            log.exception("reporting a failed sync failed", extra={"controller": name, "key": describe(key)})
        finally:
            queue.add_rate_limited(key)  # even when on_failure is cancelled: the key must come back
    else:
        queue.forget(key)
    finally:
        queue.done(key)
    return True


async def run_workers(
    queue: WorkQueue[K],
    sync: Callable[[K], Awaitable[object]],
    *,
    workers: int = 1,
    name: str,
    on_failure: Callable[[K, Exception], Awaitable[None]] | None = None,
    describe: Callable[[K], str] = str,
    expected: tuple[type[BaseException], ...] = (),
) -> None:
    """Run ``workers`` workers on ``queue`` until cancelled or the queue shuts down; then shut the queue down.

    Each worker repeats `process_next`. Cancelling the caller cancels every
    worker and waits until they have ended.
    """

    async def worker() -> None:
        while True:
            raise_if_cancelling()  # a cancellation Python 3.11's wait_for swallowed
            if not await process_next(
                queue, sync, name=name, on_failure=on_failure, describe=describe, expected=expected
            ):
                return

    log.info("starting workers", extra={"controller": name, "workers": workers})
    tasks = [asyncio.create_task(worker(), name=f"{name}-{i}") for i in range(workers)]
    try:
        await asyncio.gather(*tasks)
    finally:
        queue.shutdown()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        log.info("workers stopped", extra={"controller": name})
