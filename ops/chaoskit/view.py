"""The run's own live view of `objects`, for pacing the workload and seeing it settle.

Why this module exists: the run must keep watching through broker restarts,
so it does not lean on a component's informer (whose failures are what the
run is looking for). This view consumes `objects` with a loop that survives
every bus error: on a failure it opens a new consumer at the position it had
reached and carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from ops.chaoskit.records import decode, key_parts
from services.bus.port import BEGINNING, Bus, Consumer
from topics.declarations import OBJECTS

log = logging.getLogger(__name__)

Obj = dict[str, Any]


class LiveView:
    """Key → latest object of `objects`, kept up to date by a task; ``errors`` counts reconnections."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.objects: dict[str, Obj] = {}
        self.position = 0
        self.errors = 0
        self.last_error = ""
        self._task: asyncio.Task[None] | None = None
        self.caught_up = asyncio.Event()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="chaos-view")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def get(self, group: str, resource: str, namespace: str, name: str) -> Obj | None:
        return self.objects.get(f"{group or 'core'}/{resource}/{namespace}/{name}")

    def list(self, group: str, resource: str, namespace: str | None = None) -> list[Obj]:
        prefix = f"{group or 'core'}/{resource}/" + (f"{namespace}/" if namespace is not None else "")
        return [obj for key, obj in self.objects.items() if key.startswith(prefix)]

    async def wait_for(self, offset: int, timeout: float) -> bool:
        """Wait until the record at ``offset`` has been applied; False on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.position <= offset:
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    async def _run(self) -> None:
        start: int | str = BEGINNING
        while True:
            consumer: Consumer | None = None
            try:
                consumer = await self.bus.consumer(OBJECTS, start=start)
                end = await self.bus.end_offset(OBJECTS)
                while True:
                    for record in await consumer.getmany(timeout_ms=200):
                        self._apply(record.offset, record)
                    self.position = consumer.position()
                    start = self.position
                    if self.position >= end:
                        self.caught_up.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.errors += 1
                self.last_error = repr(exc)
                log.info("chaos view: reading objects failed; reconnecting", extra={"error": repr(exc)})
                await asyncio.sleep(0.5)
            finally:
                if consumer is not None:
                    with contextlib.suppress(Exception):
                        await consumer.close()

    def _apply(self, offset: int, record: Any) -> None:
        decoded = decode(record)
        if decoded.object is None or key_parts(decoded.key)[1] == "":
            return
        if decoded.type == "DELETED":
            self.objects.pop(decoded.key, None)
        else:
            self.objects[decoded.key] = decoded.object
