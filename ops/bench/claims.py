"""Claims per second of the resourceclaim controller, and proof that no pod got two.

Why this benchmark exists: every pod with a claim template costs the
controller two writes through the committer (create the claim, record it in
the pod status), so its throughput bounds how fast templated pods become
schedulable. The target is 1,000 claims/s for 5,000 pods.

It starts a log with a leading committer (`LogHarness`; the embedded SQLite log
unless ``--bus`` names another), creates a ResourceClaimTemplate and the pods,
then starts the controller-manager and measures the time from "informer
synced" until every pod status records its claim. Afterwards it checks every
pod: exactly one claim owned by it, and that claim is the one recorded. It
prints figures (and a FAIL line for duplicates); it never asserts on time.

    .venv/bin/python ops/bench/claims.py [--pods 5000] [--workers 512] [--live] [--bus URL]

``--live`` starts the controller first and measures while the pods arrive.
``--process`` runs the controller-manager as its own OS process
(``draplane controller-manager``), as it is deployed: the committer and the
controller then have a core each, instead of sharing this process's one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import logging
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("services") is None:  # run from a checkout without `pip install -e`
    sys.path.insert(0, str(REPO))

import aiohttp  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from services.controllers.manager import DEFAULT_CLAIM_WORKERS, ControllerManager  # noqa: E402
from services.runtime import gc_pause  # noqa: E402
from services.runtime.client import Client  # noqa: E402
from services.testing.harness import LogHarness  # noqa: E402
from services.testing.ports import free_port  # noqa: E402
from services.testing.proc import cpu_seconds  # noqa: E402

RG = "resource.k8s.io"
NS = "default"
TEMPLATE: dict[str, Any] = {
    "metadata": {"name": "gpu", "namespace": NS},
    "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}},
}


def pod(i: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"bench-{i:05d}", "namespace": NS},
        "spec": {
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
        },
    }


async def create_pods(admin: Client, count: int, in_flight: int) -> float:
    """Create the pods with ``in_flight`` concurrent requests; returns seconds taken."""
    gate = asyncio.Semaphore(in_flight)

    async def one(i: int) -> None:
        async with gate:
            await admin.create("", "pods", pod(i))

    started = time.monotonic()
    await asyncio.gather(*(one(i) for i in range(count)))
    return time.monotonic() - started


class Recorded:
    """Informer handler: counts pods whose status records their claim, and says when all do."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.names: set[str] = set()
        self.all_done = asyncio.Event()

    def _see(self, pod: dict[str, Any]) -> None:
        if (pod.get("status") or {}).get("resourceClaimStatuses"):
            self.names.add(pod["metadata"]["name"])
            if len(self.names) >= self.target:
                self.all_done.set()

    def on_add(self, obj: dict[str, Any]) -> None:
        self._see(obj)

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._see(new)

    def on_delete(self, obj: dict[str, Any]) -> None:
        pass


def check(admin: Client, count: int) -> tuple[int, int, int]:
    """(pods with exactly one owned claim that is the recorded one, pods with duplicates, stray claims)."""
    owned: dict[str, list[str]] = {}
    for claim in admin.list(RG, "resourceclaims", NS):
        for ref in claim["metadata"].get("ownerReferences") or ():
            if ref.get("controller"):
                owned.setdefault(ref["uid"], []).append(claim["metadata"]["name"])
    good = dupes = 0
    for p in admin.list("", "pods", NS):
        names = owned.pop(p["metadata"]["uid"], [])
        statuses = (p.get("status") or {}).get("resourceClaimStatuses") or []
        if len(names) > 1:
            dupes += 1
        elif len(names) == 1 and [s.get("resourceClaimName") for s in statuses] == names:
            good += 1
    return good, dupes, sum(len(v) for v in owned.values())


Sample = tuple[str, tuple[tuple[str, str], ...]]
SYNC_ERRORS: Sample = ("draplane_controller_sync_errors_total", (("controller", "resourceclaim-controller"),))


class InProcess:
    """The controller-manager as a task of this process."""

    def __init__(self, manager: ControllerManager) -> None:
        self.manager = manager
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.task = asyncio.create_task(self.manager.run())
        await self.manager.ready.wait()

    async def samples(self) -> dict[Sample, float]:
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in self.manager.registry.collect()
            for s in family.samples
        }

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


class OwnProcess:
    """``draplane controller-manager`` as its own OS process; ready when its /healthz answers 200."""

    def __init__(self, url: str, workers: int) -> None:
        self.url = url
        self.workers = workers
        self.port = free_port()
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        data = tempfile.mkdtemp(prefix="draplane-bench-cm-")
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "services.cli",
            "controller-manager",
            "--bus",
            self.url,
            "--data",
            data,
            "--workers",
            str(self.workers),
            "--metrics-listen",
            f"127.0.0.1:{self.port}",
            "--log-level",
            "WARNING",
            cwd=REPO,
        )
        async with aiohttp.ClientSession() as http:
            while True:
                if self.proc.returncode is not None:
                    raise RuntimeError(f"controller-manager exited with status {self.proc.returncode}")
                with contextlib.suppress(aiohttp.ClientError):
                    async with http.get(f"http://127.0.0.1:{self.port}/healthz") as response:
                        if response.status == 200:
                            return
                await asyncio.sleep(0.05)

    async def samples(self) -> dict[Sample, float]:
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{self.port}/metrics") as response:
            text = await response.text()
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }

    def cpu_seconds(self) -> float | None:
        """User + system CPU of the controller-manager process so far (Linux /proc), or None."""
        return None if self.proc is None else cpu_seconds(self.proc.pid)

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()


async def run(args: argparse.Namespace) -> int:
    url = args.bus or f"sqlite://{Path(tempfile.mkdtemp(prefix='draplane-bench-')) / 'bus.db'}"
    async with LogHarness.running(url) as log:
        admin = await log.client(timeout=60)
        progress = Recorded(args.pods)
        assert admin.informer is not None
        admin.informer.add_handler("", "pods", progress)
        await admin.create(RG, "resourceclaimtemplates", TEMPLATE)
        controller: InProcess | OwnProcess = (
            OwnProcess(url, args.workers)
            if args.process
            else InProcess(ControllerManager(log.bus, claim_workers=args.workers, gc_workers=4, client_timeout=60))
        )
        if args.live:
            await controller.start()
            started, cpu_started = time.monotonic(), time.process_time()
            pods_s = await create_pods(admin, args.pods, args.in_flight)
        else:
            pods_s = await create_pods(admin, args.pods, args.in_flight)
            await controller.start()
            started, cpu_started = time.monotonic(), time.process_time()
        child_started = controller.cpu_seconds() if isinstance(controller, OwnProcess) else None
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(args.timeout):
                    await progress.all_done.wait()
            elapsed = time.monotonic() - started
            cpu = time.process_time() - cpu_started
            child_now = controller.cpu_seconds() if isinstance(controller, OwnProcess) else None
            child_cpu = child_now - child_started if child_now is not None and child_started is not None else None
            done = len(progress.names)
            samples = await controller.samples()
            attempts = samples.get(("resourceclaim_controller_create_attempts_total", ()), 0.0)
            failures = samples.get(("resourceclaim_controller_create_failures_total", ()), 0.0)
            errors = samples.get(SYNC_ERRORS, 0.0)
        finally:
            await controller.stop()
        good, dupes, stray = check(admin, args.pods)
        claims = len(admin.list(RG, "resourceclaims", NS))
        mode = "live (pods arriving)" if args.live else "backlog (pods created first)"
        mode += ", controller-manager in its own process" if args.process else ", everything in one process"
        print(f"resourceclaim controller on {url.split('?')[0]}")
        print(f"  mode                  {mode}, {args.workers} workers")
        print(f"  pods created          {args.pods} in {pods_s:.2f}s = {args.pods / pods_s:,.0f} pods/s")
        print(f"  claims recorded       {done}/{args.pods} in {elapsed:.2f}s = {done / elapsed:,.0f} claims/s")
        print(f"  target                >= 1,000 claims/s: {'met' if done / elapsed >= 1000 else 'NOT met'}")
        where = "committer and informers here" if args.process else "committer, informers and controllers"
        print(
            f"  process CPU           {cpu:.2f}s over {elapsed:.2f}s wall ({cpu / elapsed:.0%} of one core) = "
            f"{done / cpu:,.0f} claims per CPU-second ({where} in this one process)"
        )
        if child_cpu is not None:
            print(
                f"  controller CPU        {child_cpu:.2f}s ({child_cpu / elapsed:.0%} of one core) = "
                f"{done / child_cpu:,.0f} claims per CPU-second (the controller-manager process)"
            )
        print(f"  machine load          {os.getloadavg()[0]:.1f} (1-min load average) on {os.cpu_count()} CPUs")
        print(f"  create attempts       {attempts:.0f} (failures {failures:.0f}, sync errors/retries {errors:.0f})")
        print(f"  claims in the log     {claims}")
        print(f"  exactly one, recorded {good}/{args.pods}")
        counts = Counter({"duplicates": dupes, "stray claims": stray, "missing": args.pods - good - dupes})
        for what, n in counts.items():
            print(f"  {what:<21} {n}")
        if dupes or stray or good != args.pods:
            print("FAIL: not exactly one recorded claim per pod")
            return 1
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument(
        "--workers", type=int, default=DEFAULT_CLAIM_WORKERS, help="resourceclaim controller workers (the default)"
    )
    parser.add_argument("--in-flight", type=int, default=500, help="concurrent pod creates")
    parser.add_argument("--live", action="store_true", help="run the controller while the pods are created")
    parser.add_argument("--bus", help="bus URL (default: a fresh embedded log in a temp dir)")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--process", action="store_true", help="run the controller-manager as its own OS process")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    gc_pause.tune_for_a_long_lived_heap()  # as `draplane` does for every component
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
