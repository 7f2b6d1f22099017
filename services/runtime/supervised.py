"""The tasks a process runs until it is stopped, and what happens when one ends before that.

Why this module exists: a component's work runs in asyncio tasks that should
never end on their own. One that raises, returns or is cancelled by someone
else leaves the process half-dead — it still answers, but that part of the
work no longer happens. `Supervised` turns such an end into something seen:
it is logged (with the traceback when the task raised), its health check
fails (so ``/healthz`` answers 500 naming it), and `wait_death` returns, on
which the commands stop and exit non-zero. The process is restarted from
outside (compose's ``restart: unless-stopped``, a kubelet), and a restart
recovers from the log, so nothing here restarts a task in place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

from services.runtime.healthz import HealthCheck

log = logging.getLogger(__name__)


def why_ended(task: asyncio.Task[None]) -> str:
    """How a finished task ended, in words for ``/healthz/<name>`` and the log."""
    if task.cancelled():
        return "was cancelled"
    exc = task.exception()
    if exc is not None:
        return f"raised {type(exc).__name__}: {exc}" if str(exc) else f"raised {type(exc).__name__}"
    return "returned, though it runs until the process stops"


class Supervised:
    """Named tasks that run until `stop`; the first to end before that is a death."""

    def __init__(self) -> None:
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.deaths: dict[str, str] = {}  # task name -> how it ended, in the order they died
        self._died = asyncio.Event()
        self._stopping = False

    def spawn(self, name: str, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        if name in self.tasks:
            raise ValueError(f"a task named {name!r} runs already")
        task = asyncio.create_task(coro, name=name)
        self.tasks[name] = task
        task.add_done_callback(self._ended)
        return task

    def _ended(self, task: asyncio.Task[None]) -> None:
        if self._stopping:
            return
        name, why = task.get_name(), why_ended(task)
        self.deaths[name] = why
        exc = None if task.cancelled() else task.exception()
        log.error("component task died: %s %s", name, why, exc_info=exc, extra={"task": name})
        self._died.set()

    def check(self, name: str) -> HealthCheck:
        """The health check of one task: fails once it died."""
        return HealthCheck(name, lambda: None if name not in self.deaths else f"{name} {self.deaths[name]}")

    def checks(self) -> list[HealthCheck]:
        return [self.check(name) for name in self.tasks]

    @property
    def died(self) -> bool:
        return self._died.is_set()

    async def wait_death(self) -> str:
        """Wait until a task died; the first death, as ``<name> <how it ended>``."""
        await self._died.wait()
        name, why = next(iter(self.deaths.items()))
        return f"{name} {why}"

    async def stop(self) -> None:
        """Cancel every task and wait for them; they end as asked, which is no death."""
        self._stopping = True
        for task in self.tasks.values():
            task.cancel()
        for task in self.tasks.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
