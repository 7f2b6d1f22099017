"""Stopping service tasks for sure.

Why this module exists: on Python 3.11, ``asyncio.wait_for`` can swallow a
cancellation that arrives just as the awaited future completes (fixed in
3.12). A service loop that then goes back to waiting never ends, and
whoever awaits it after ``cancel()`` hangs. `stop` cancels again until the
tasks are really done, and `raise_if_cancelling` lets a loop notice a
cancellation that was requested but swallowed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any


def raise_if_cancelling() -> None:
    """Raise CancelledError when the current task was asked to stop (even if the request got lost)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def stop(tasks: Iterable[asyncio.Task[Any]], *, grace: float = 1.0) -> None:
    """Cancel ``tasks`` and wait until all have ended, cancelling again every ``grace`` seconds."""
    tasks = list(tasks)
    pending = {t for t in tasks if not t.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=grace)
    for task in tasks:
        if not task.cancelled():
            with contextlib.suppress(Exception):
                task.exception()  # retrieved, so asyncio does not log it as never retrieved
