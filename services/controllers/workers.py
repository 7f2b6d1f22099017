"""The worker loop both controllers run over their work queues.

Why this module exists: client-go's ``processNextWorkItem`` contract — take a
key, sync it, ``Forget`` it on success, ``AddRateLimited`` it on failure,
always ``Done`` — is the same for every controller, and getting it wrong
(forgetting ``done``, swallowing cancellation) stalls keys for good. Here it is
once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import TypeVar

from services.controllers.metrics import ControllerMetrics
from services.runtime.workqueue import ShutDown, WorkQueue

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)


async def run_workers(
    queue: WorkQueue[K],
    sync: Callable[[K], Awaitable[None]],
    *,
    workers: int,
    name: str,
    metrics: ControllerMetrics,
    describe: Callable[[K], str] = str,
    expected: tuple[type[BaseException], ...] = (),
) -> None:
    """Run ``workers`` workers on ``queue`` until cancelled; then shut the queue down.

    Failures are logged (with a traceback unless they are of an ``expected``
    type), counted, and the key is retried with backoff.
    """

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            try:
                await sync(key)
            except asyncio.CancelledError:
                raise
            except Exception as err:
                metrics.sync_errors.labels(controller=name).inc()
                log.warning(
                    f"{describe(key)} failed with: {err}",
                    extra={"controller": name, "key": describe(key), "retries": queue.retries(key)},
                    exc_info=not isinstance(err, expected),
                )
                queue.add_rate_limited(key)
            else:
                queue.forget(key)
            finally:
                queue.done(key)

    log.info("starting controller", extra={"controller": name, "workers": workers})
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
        log.info("shutting down controller", extra={"controller": name})
