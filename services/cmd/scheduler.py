"""`draplane scheduler`: kube-scheduler's DRA behaviour over the log, as ``system:kube-scheduler``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket

from aiohttp import web

from services.bus import open_bus
from services.cmd.common import (
    DEFAULT_DATA,
    add_bus_argument,
    add_common_arguments,
    default_bus,
    parse_gates,
    parse_listen,
    run_until_signalled,
)
from services.runtime.logs import setup_logging
from services.scheduler.queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
)
from services.scheduler.service import SchedulerConfig, SchedulerService
from topics.declarations import declarations

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("scheduler", help="run the scheduler (queue, DRA plugin, structured allocator)")
    add_bus_argument(p)
    add_common_arguments(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="data directory of the embedded log (for the default --bus)")
    p.add_argument(
        "--metrics-listen",
        default="",
        help="HOST:PORT to serve /metrics (Prometheus text) and /healthz on; off when empty",
    )
    p.add_argument(
        "--pod-initial-backoff-seconds", type=float, default=DEFAULT_POD_INITIAL_BACKOFF, help="backoff after a failure"
    )
    p.add_argument("--pod-max-backoff-seconds", type=float, default=DEFAULT_POD_MAX_BACKOFF, help="longest backoff")
    p.add_argument(
        "--pod-max-in-unschedulable-pods-duration",
        type=float,
        default=DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        help="seconds after which an unschedulable pod is retried without a matching event",
    )
    p.add_argument(
        "--percentage-of-nodes-to-score",
        type=int,
        default=None,
        help="stop filtering after this percentage of nodes were found feasible (default: kube's adaptive rule)",
    )
    p.set_defaults(run=run)


def config_from(args: argparse.Namespace) -> SchedulerConfig:
    return SchedulerConfig(
        gates=parse_gates(args.feature_gates),
        pod_initial_backoff=args.pod_initial_backoff_seconds,
        pod_max_backoff=args.pod_max_backoff_seconds,
        pod_max_in_unschedulable_pods_duration=args.pod_max_in_unschedulable_pods_duration,
        percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
        host=socket.gethostname(),
    )


async def serve_metrics(service: SchedulerService, listen: str) -> web.AppRunner:
    """A tiny HTTP server for ``/metrics`` and ``/healthz`` (ready once the informer caught up)."""
    host, port = parse_listen(listen)

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(body=service.exposition(), content_type="text/plain", charset="utf-8")

    async def healthz(_: web.Request) -> web.Response:
        if service.ready.is_set():
            return web.Response(text="ok")
        return web.Response(status=503, text="informer not synced")

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner


def run(args: argparse.Namespace) -> int:
    setup_logging("scheduler", level=args.log_level, json=not args.plain_logs)
    config = config_from(args)
    url = args.bus or default_bus(args.data)

    async def main() -> None:
        bus = open_bus(url)
        await bus.start()
        runner: web.AppRunner | None = None
        task: asyncio.Task[None] | None = None
        try:
            await bus.ensure_topics(declarations())
            service = SchedulerService(bus, config=config)
            if args.metrics_listen:
                runner = await serve_metrics(service, args.metrics_listen)
            task = asyncio.create_task(service.run(), name="scheduler")
            ready = asyncio.create_task(service.ready.wait())
            await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
            if ready.done():
                print("scheduler ready", flush=True)
            else:
                ready.cancel()
            if not task.done():
                signalled = asyncio.create_task(run_until_signalled())
                await asyncio.wait({task, signalled}, return_when=asyncio.FIRST_COMPLETED)
                signalled.cancel()
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if runner is not None:
                await runner.cleanup()
            await bus.close()

    asyncio.run(main())
    return 0
