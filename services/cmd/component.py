"""Running one component until a signal: its task, its /metrics and /healthz server, a clean stop.

A component's task runs until the process is told to stop. If it ends before
that (raises, returns, or is cancelled by someone else) the component is
half-dead, so the process does not run on: the death is logged with its
traceback, ``/healthz`` fails naming the task, everything stops and the
command exits with status 1 for its supervisor (compose, a kubelet) to
restart it; a restart recovers from the log (see docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from prometheus_client import CollectorRegistry

from services.cmd.common import until_signalled_or_died
from services.runtime.healthz import ready_check
from services.runtime.metrics_server import serve_metrics
from services.runtime.supervised import Supervised


async def run_component(
    name: str,
    main: Coroutine[Any, Any, None],
    registries: Sequence[CollectorRegistry],
    metrics_listen: str,
    ready: Callable[[], bool],
    *,
    tasks: Supervised | None = None,
) -> int:
    """Run ``main`` until SIGINT/SIGTERM (0) or until a task of the component dies (1).

    ``main`` runs as the supervised task ``name``, in ``tasks`` when given (next
    to the component's other tasks, which are stopped the same way). With
    ``metrics_listen`` it serves /metrics and /healthz, whose checks are
    ``informer-sync`` (``ready()``) and one per task.
    """
    tasks = tasks if tasks is not None else Supervised()
    synced = ready_check("informer-sync", ready, reason=f"{name} has not caught up with the log")
    checks = [synced, *tasks.checks(), tasks.check(name)]
    try:
        runner = await serve_metrics(metrics_listen, registries, checks=checks) if metrics_listen else None
    except BaseException:
        main.close()
        raise
    tasks.spawn(name, main)  # after the server listens: /healthz answers from the task's first step on
    try:
        return await until_signalled_or_died(tasks, name=name)
    finally:
        await tasks.stop()  # while /healthz still answers (and says what died)
        if runner is not None:
            await runner.cleanup()
