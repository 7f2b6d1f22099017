"""Running one component until a signal: its task, its /metrics server, a clean stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from prometheus_client import CollectorRegistry

from services.cmd.common import run_until_signalled
from services.runtime.metrics_server import serve_metrics

log = logging.getLogger(__name__)


async def run_component(
    name: str,
    main: Coroutine[Any, Any, None],
    registries: Sequence[CollectorRegistry],
    metrics_listen: str,
    healthy: Callable[[], bool],
) -> None:
    """Run ``main`` until SIGINT/SIGTERM (or until it ends), serving /metrics when asked."""
    runner = await serve_metrics(metrics_listen, registries, healthy=healthy) if metrics_listen else None
    task = asyncio.create_task(main, name=name)
    signalled = asyncio.create_task(run_until_signalled())
    try:
        await asyncio.wait({task, signalled}, return_when=asyncio.FIRST_COMPLETED)
        if task.done() and task.exception() is not None:
            log.error("component failed", exc_info=task.exception())
    finally:
        for t in (task, signalled):
            t.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        if runner is not None:
            await runner.cleanup()
