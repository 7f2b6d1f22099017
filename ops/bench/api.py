"""API latency benchmark: create and get at fixed request rates, and a LIST of 10,000 pods.

Starts `draplane apiserver` as its own process (on the embedded log by
default, or on Kafka with ``--bus kafka://...``), then drives it over HTTP
from this process with an open-loop load generator: requests are sent on a
fixed schedule whatever the latency, so queueing shows up in the figures.
Prints p50/p99 next to Kubernetes' API-call latency SLO (mutating and
single-object calls p99 <= 1 s; LIST p99 <= 30 s cluster-scoped). Figures, not
assertions.

    .venv/bin/python ops/bench/api.py [--bus URL] [--rates 100,1000] [--seconds 5] [--list-pods 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import orjson

from services.testing.ports import free_port

REPO = str(Path(__file__).resolve().parents[2])
SLO_MUTATING_P99 = 1.0
SLO_READ_P99 = 1.0
SLO_LIST_P99 = 30.0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def pod(name: str) -> bytes:
    return orjson.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"bench": "api"}},
            "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}]},
        }
    )


async def start_apiserver(bus: str, data: Path, port: int) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.cli",
        "apiserver",
        "--bus",
        bus,
        "--data",
        str(data),
        "--listen",
        f"127.0.0.1:{port}",
        "--anonymous",
        "--log-level",
        "WARNING",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": REPO},
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 120)
    if b"ready" not in line:
        raise RuntimeError(f"apiserver did not start: {line!r}")
    return proc


async def wait_writable(session: aiohttp.ClientSession, base: str) -> None:
    for _ in range(600):
        async with session.post(
            f"{base}/api/v1/namespaces/default/pods",
            data=pod("warmup-" + uuid.uuid4().hex[:6]),
            headers={"Content-Type": "application/json"},
        ) as resp:
            if resp.status == 201:
                return
        await asyncio.sleep(0.1)
    raise RuntimeError("the committer never took writes")


async def open_loop(rate: float, seconds: float, call: Callable[[], Awaitable[bool]]) -> list[float]:
    """Fire ``call()`` ``rate`` times a second for ``seconds``; return each latency."""
    latencies: list[float] = []
    errors = 0
    tasks = []
    loop = asyncio.get_running_loop()
    start = loop.time()
    count = int(rate * seconds)

    async def one() -> None:
        nonlocal errors
        t0 = time.perf_counter()
        ok = await call()
        if ok:
            latencies.append(time.perf_counter() - t0)
        else:
            errors += 1

    for i in range(count):
        delay = start + i / rate - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one()))
    await asyncio.gather(*tasks)
    if errors:
        print(f"    ({errors} requests failed)")
    return latencies


async def run(args: argparse.Namespace) -> None:
    data = Path(tempfile.mkdtemp(prefix="draplane-bench-api-"))
    bus = args.bus or f"sqlite:///{data / 'bus.db'}"
    port = free_port()
    proc = await start_apiserver(bus, data, port)
    base = f"http://127.0.0.1:{port}"
    names = (f"p-{uuid.uuid4().hex[:10]}" for _ in itertools.count())
    created: list[str] = []
    try:
        connector = aiohttp.TCPConnector(limit=256)
        async with aiohttp.ClientSession(connector=connector) as session:
            await wait_writable(session, base)
            headers = {"Content-Type": "application/json"}

            async def create() -> bool:
                name = next(names)
                async with session.post(f"{base}/api/v1/namespaces/default/pods", data=pod(name), headers=headers) as r:
                    await r.read()
                    if r.status == 201:
                        created.append(name)
                    return r.status == 201

            async def get() -> bool:
                name = created[int(time.perf_counter_ns()) % len(created)]
                async with session.get(f"{base}/api/v1/namespaces/default/pods/{name}") as r:
                    await r.read()
                    return r.status == 200

            print(f"backend: {bus.split(':')[0]}   ({os.cpu_count()} CPUs; client and server share them)")
            print(f"{'call':<8}{'rate/s':>8}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}{'SLO p99':>10}{'p99/SLO':>9}")
            for rate in args.rates:
                for label, call, slo in (("create", create, SLO_MUTATING_P99), ("get", get, SLO_READ_P99)):
                    lat = await open_loop(rate, args.seconds, call)
                    p50, p99 = pct(lat, 0.5), pct(lat, 0.99)
                    print(
                        f"{label:<8}{rate:>8}{len(lat):>7}{p50 * 1000:>10.1f}{p99 * 1000:>10.1f}"
                        f"{slo * 1000:>9.0f}ms{p99 / slo:>9.3f}"
                    )
            missing = args.list_pods - len(created)
            if missing > 0:
                sem = asyncio.Semaphore(200)

                async def fill() -> None:
                    async with sem:
                        await create()

                t0 = time.perf_counter()
                await asyncio.gather(*(fill() for _ in range(missing)))
                print(
                    f"created {missing} more pods for LIST in {time.perf_counter() - t0:.1f}s "
                    f"({missing / (time.perf_counter() - t0):.0f}/s at concurrency 200)"
                )
            times = []
            for _ in range(args.list_runs):
                t0 = time.perf_counter()
                async with session.get(f"{base}/api/v1/pods") as r:
                    body = await r.read()
                times.append(time.perf_counter() - t0)
            count = len(orjson.loads(body)["items"])
            print(
                f"LIST {count} pods ({len(body) / 1e6:.1f} MB): p50 {statistics.median(times) * 1000:.0f} ms, "
                f"max {max(times) * 1000:.0f} ms; SLO p99 {SLO_LIST_P99:.0f} s, ratio {max(times) / SLO_LIST_P99:.4f}"
            )
    finally:
        proc.terminate()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bus", help="kafka://host:port to run on Kafka (default: a fresh embedded log)")
    parser.add_argument("--rates", default="100,1000", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--list-pods", type=int, default=10_000)
    parser.add_argument("--list-runs", type=int, default=5)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
