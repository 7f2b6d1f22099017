"""`/metrics` (Prometheus text format) and `/healthz` for a component, on its own small HTTP server.

Every component serves the process-wide runtime metrics plus its own
registries; compose healthchecks probe `/healthz`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aiohttp import web
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST


def metrics_app(
    registries: Sequence[CollectorRegistry], *, healthy: Callable[[], bool] = lambda: True
) -> web.Application:
    async def metrics(_: web.Request) -> web.Response:
        body = b"".join(generate_latest(r) for r in (REGISTRY, *registries))
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok") if healthy() else web.Response(status=503, text="not ready")

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    return app


async def serve_metrics(
    listen: str, registries: Sequence[CollectorRegistry], *, healthy: Callable[[], bool] = lambda: True
) -> web.AppRunner:
    host, _, port = listen.rpartition(":")
    runner = web.AppRunner(metrics_app(registries, healthy=healthy), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host or "127.0.0.1", int(port)).start()
    return runner
