"""Which HTTP server should the apiserver run on? aiohttp vs an ASGI server (uvicorn).

Measures, on loopback, with the server in its own process:

1. simple GET latency (p50/p99) and throughput of a ~1 KiB JSON object at
   concurrency 1 and 32 (``kubectl get`` / informer relists);
2. chunked streaming: a watch-like response of JSON lines — time to first
   event and events per second (``kubectl get -w``, informers);
3. the draplane app itself (``build_app`` over a static backend), to see what
   routing, negotiation and auth add on top of bare aiohttp.

Usage:  python ops/bench/http_servers.py [--requests 4000] [--events 50000]
uvicorn (with httptools and uvloop) is optional: ``pip install uvicorn httptools``
(or put them on PYTHONPATH); without it only aiohttp is measured.
Figures are printed, never asserted. Decision: docs/decisions/http.md.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from services.testing.ports import free_port

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-0",
        "namespace": "default",
        "uid": "5e1ad5e6-0b1a-4d8e-9c41-2f0d6f1c7a11",
        "resourceVersion": "12345",
        "creationTimestamp": "2024-06-01T10:00:00Z",
        "labels": {"app": "web", "tier": "front"},
    },
    "spec": {
        "nodeName": "node-1",
        "containers": [{"name": "c", "image": "nginx:1.27", "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
    },
    "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.7"}]},
}
BODY = orjson.dumps(POD)


# ------------------------------------------------------------------ servers


def _aiohttp_server(port: int, events: int) -> None:
    from aiohttp import web

    async def get(request: web.Request) -> web.Response:
        return web.Response(body=BODY, content_type="application/json")

    async def stream(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        line = orjson.dumps({"type": "MODIFIED", "object": POD}) + b"\n"
        for _ in range(events):
            await resp.write(line)
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get("/get", get)
    app.router.add_get("/stream", stream)
    _run_uvloop()
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def _asgi_app(events: int) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/get":
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": BODY})
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        line = orjson.dumps({"type": "MODIFIED", "object": POD}) + b"\n"
        for _ in range(events):
            await send({"type": "http.response.body", "body": line, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


def _uvicorn_server(port: int, events: int) -> None:
    import uvicorn

    uvicorn.run(
        _asgi_app(events),
        host="127.0.0.1",
        port=port,
        log_level="error",
        access_log=False,
        loop="uvloop",
        http="httptools",
    )


class _StaticBackend:
    """Serves one pod for get/list, and a stream of MODIFIED events for watch."""

    def __init__(self, events: int) -> None:
        self.events = events

    async def get(self, rt: Any, namespace: str, name: str) -> dict[str, Any]:
        return POD

    async def list(self, rt: Any, namespace: str | None, **kwargs: Any) -> Any:
        from services.apiserver.backend import ListResult

        return ListResult([POD] * 100, "12345")

    async def watch(self, rt: Any, namespace: str | None, **kwargs: Any) -> AsyncIterator[Any]:
        from services.apiserver.backend import WatchEvent

        for _ in range(self.events):
            yield WatchEvent("MODIFIED", POD)

    async def write(self, request: Any) -> Any:
        raise NotImplementedError


def _draplane_server(port: int, events: int) -> None:
    from aiohttp import web

    from services.apiserver.http.server import build_app

    _run_uvloop()
    app = build_app(_StaticBackend(events), anonymous=True)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def _run_uvloop() -> None:
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:
        pass


# ------------------------------------------------------------------ client


async def _wait_up(port: int) -> None:
    for _ in range(200):
        try:
            _, w = await asyncio.open_connection("127.0.0.1", port)
            w.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError("server did not start")


async def _get_load(url: str, total: int, concurrency: int) -> dict[str, float]:
    import aiohttp

    latencies: list[float] = []
    conn = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=conn) as session:
        for _ in range(50):  # warm up
            async with session.get(url) as r:
                await r.read()
        left = total

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                t = time.perf_counter()
                async with session.get(url) as r:
                    await r.read()
                latencies.append(time.perf_counter() - t)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
    }


async def _stream(url: str, headers: dict[str, str] | None = None) -> dict[str, float]:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        start = time.perf_counter()
        first = 0.0
        count = 0
        async with session.get(url, headers=headers) as r:
            assert r.headers.get("Transfer-Encoding") == "chunked", r.headers
            async for _line in r.content:
                if count == 0:
                    first = time.perf_counter() - start
                count += 1
        elapsed = time.perf_counter() - start
    return {"first_event_ms": first * 1000, "events_per_s": count / elapsed, "events": count}


def _measure(name: str, target: Any, paths: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    proc = mp.get_context("spawn").Process(target=target, args=(port, args.events), daemon=True)
    proc.start()
    try:

        async def run() -> dict[str, Any]:
            await _wait_up(port)
            base = f"http://127.0.0.1:{port}"
            out: dict[str, Any] = {}
            for c in (1, 32):
                out[f"get_c{c}"] = await _get_load(base + paths["get"], args.requests, c)
            out["stream"] = await _stream(base + paths["stream"])
            return out

        return asyncio.run(run())
    finally:
        proc.terminate()
        proc.join(5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--events", type=int, default=50000)
    args = parser.parse_args()
    servers: list[tuple[str, Any, dict[str, str]]] = [
        ("aiohttp", _aiohttp_server, {"get": "/get", "stream": "/stream"}),
    ]
    try:
        import uvicorn  # noqa: F401

        servers.append(("uvicorn+httptools", _uvicorn_server, {"get": "/get", "stream": "/stream"}))
    except ImportError:
        print("uvicorn not installed: measuring aiohttp only", file=sys.stderr)
    servers.append(
        (
            "draplane app (aiohttp)",
            _draplane_server,
            {"get": "/api/v1/namespaces/default/pods/web-0", "stream": "/api/v1/namespaces/default/pods?watch=1"},
        )
    )
    results = {name: _measure(name, target, paths, args) for name, target, paths in servers}
    print(
        f"{'server':<24} {'GET c=1 p50/p99 ms':>20} {'rps':>7} {'GET c=32 p50/p99 ms':>21} {'rps':>7}"
        f" {'stream 1st ms':>13} {'events/s':>9}"
    )
    for name, r in results.items():
        g1, g32, st = r["get_c1"], r["get_c32"], r["stream"]
        print(
            f"{name:<24} {g1['p50_ms']:>9.2f}/{g1['p99_ms']:<10.2f} {g1['rps']:>7.0f} "
            f"{g32['p50_ms']:>10.2f}/{g32['p99_ms']:<10.2f} {g32['rps']:>7.0f} "
            f"{st['first_event_ms']:>13.2f} {st['events_per_s']:>9.0f}"
        )
    if "uvicorn+httptools" in results:
        a, u = results["aiohttp"], results["uvicorn+httptools"]
        print(
            f"ratios aiohttp/uvicorn: GET rps c=1 {a['get_c1']['rps'] / u['get_c1']['rps']:.2f}, "
            f"c=32 {a['get_c32']['rps'] / u['get_c32']['rps']:.2f}, "
            f"stream events/s {a['stream']['events_per_s'] / u['stream']['events_per_s']:.2f}"
        )


if __name__ == "__main__":
    main()
