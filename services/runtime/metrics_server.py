"""`/metrics` (Prometheus text format) and `/healthz` for a component, on its own small HTTP server.

Every component serves the process-wide runtime metrics plus its own
registries; compose healthchecks probe `/healthz`, which answers as
`services.runtime.healthz` describes: 500 naming each failed check (not yet
caught up with the log, a task that died), ``ok`` when all pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from aiohttp import web
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from services.runtime.healthz import HealthCheck, add_healthz


def metrics_app(registries: Sequence[CollectorRegistry], *, checks: Sequence[HealthCheck] = ()) -> web.Application:
    async def metrics(_: web.Request) -> web.Response:
        body = b"".join(generate_latest(r) for r in (REGISTRY, *registries))
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    add_healthz(app, checks)
    return app


async def serve_metrics(
    listen: str, registries: Sequence[CollectorRegistry], *, checks: Sequence[HealthCheck] = ()
) -> web.AppRunner:
    host, _, port = listen.rpartition(":")
    runner = web.AppRunner(metrics_app(registries, checks=checks), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host or "127.0.0.1", int(port)).start()
    return runner
