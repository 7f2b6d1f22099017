"""Latency benchmark: every hop of one pod's life through the log, p50/p99 per hop.

    .venv/bin/python ops/bench/latency.py [--backend embedded|kafka] [--kafka HOST:PORT]
        [--mode processes|up ...] [--pods 30] [--at-once 1] [--kubectl-apply N] [--bus-options K=V&...] [--json FILE]

Why: on bulk work the log's batching hides its hops, but with few pods in
flight every hop of a pod's cycle is paid in sequence. This benchmark runs one
pod at a time (a GPU claim from a template, as ``examples/gpu-test1.yaml``)
from create to Running and splits its life into the hops below, each from the
log's own timestamps (milliseconds, the time a record was appended) and the
requests that caused them (every object record carries its request's id; the
request's own record in ``requests`` has its append time):

- ``create → pod committed``: this process sends the create, the committer commits it;
- per write of the claim controller (claim, the pod's ``resourceClaimStatuses``),
  the scheduler (the claim's allocation, the binding) and the node agent (Running):
  ``<previous commit> → <writer> request`` (the writer saw the previous commit, did its
  work, waited for its earlier replies and sent the request) and
  ``request → committed`` (the committer read the request and committed its batch).
  The scheduler's first hop is split at the start of its successful attempt (its
  decision record), and the attempts per pod are counted.
- ``commit → seen by another process``: every object record's append time to the
  moment this process's informer applied it (a separate process from the
  committer in both modes): the cross-process wake-up of the log. The append
  time is whole milliseconds, truncated, and taken before the transaction's
  end, so this reads high; on the embedded log ``commit → seen, µs stamps``
  is exact: the committing process stamps the moment it announces each commit
  (right after ``COMMIT``) with ``time.time_ns()``, this one the moment its
  informer applies each record (``commit_trace.py``, installed in the child
  processes; the product's code is unchanged).

``--kubectl-apply N`` adds, in ``up`` mode, the time from starting
``kubectl apply -f examples/gpu-test1.yaml`` to both of its pods Running (the
later pod's Running record), N times after one uncounted warm-up, deleting the
namespace in between: what a user waits for at a terminal.

``--at-once N`` creates N pods together in each round (each with its own claim
from the template) instead of one: the hops of pods that meet on their path, as
the two of ``gpu-test1.yaml`` do. ``--pods`` then counts rounds.

Modes: ``processes`` runs the apiserver (with its committer), controller-manager,
scheduler, one driver and one node agent as separate ``draplane`` processes, as in
compose; ``up`` runs ``draplane up --nodes 1`` (everything in one process). Both
use a fresh log (a temporary SQLite file, or a fresh topic prefix on Kafka). It
prints figures and never asserts on them; the machine's load is the reader's to
state (``docs/decisions/latency.md``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import math
import os
import signal
import socket
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

SELF = Path(__file__).resolve()
REPO = SELF.parents[2]
if importlib.util.find_spec("services") is None:  # run from a checkout without `pip install -e`
    sys.path.insert(0, str(REPO))
if str(REPO) not in sys.path:  # for ops.bench.commit_trace (ops/ is a namespace package, not installed)
    sys.path.append(str(REPO))

from ops.bench import commit_trace  # noqa: E402
from ops.bench.fresh_logs import BACKENDS, dropped_after, fresh_url  # noqa: E402
from services.bus import open_bus  # noqa: E402
from services.bus.port import BEGINNING, Bus  # noqa: E402
from services.runtime.client import Client  # noqa: E402
from services.runtime.informer import Change, Informer  # noqa: E402
from services.scheduler.decisions import attempt_started_ms, read_decisions  # noqa: E402
from services.testing.harness import ADMIN  # noqa: E402
from topics.declarations import REQUESTS  # noqa: E402
from topics.envelope import MalformedRecord, decode_request  # noqa: E402

RG = "resource.k8s.io"
DRIVER = "gpu.example.com"
NODE = "node-1"
NS = "latency"
TEMPLATE = "single-gpu"

# The steps of a pod's life, in order: (name, writer of the step).
STEPS = (
    ("pod committed", "load generator"),
    ("claim committed", "claim controller"),
    ("pod claim status committed", "claim controller"),
    ("allocation committed", "scheduler"),
    ("binding committed", "scheduler"),
    ("Running committed", "node agent"),
)
DELIVERY = "commit → seen by another process"
EXACT_DELIVERY = "commit → seen, µs stamps (announce → applied)"


# -- objects ---------------------------------------------------------------------------------


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def claim_template() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE, "namespace": NS},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": DRIVER}]}}},
    }


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "containers": [{"name": "ctr", "image": "ubuntu:22.04", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": TEMPLATE}],
        },
    }


# -- what the informer sees --------------------------------------------------------------------


@dataclass
class Stamp:
    """One step: its record's append time and the id of the request that wrote it."""

    ts_ms: int
    request_id: str | None


@dataclass
class Life:
    sent_ms: float = math.nan
    steps: dict[str, Stamp] = field(default_factory=dict)
    claim: str | None = None
    attempts: int = 0
    cycle_started_ms: float = math.nan  # the scheduler's successful attempt
    running: asyncio.Event = field(default_factory=asyncio.Event)
    claim_gone: asyncio.Event = field(default_factory=asyncio.Event)


class Observer:
    """Stamps the steps of every pod's life and every record's delivery to this process."""

    def __init__(self) -> None:
        self.seen = commit_trace.Seen()  # the exact commit → seen, matched to the commits' stamps at the end
        self.lives: dict[str, Life] = {}
        self.claim_owner: dict[str, str] = {}
        self.delivery_ms: list[float] = []
        self.measuring = False

    def __call__(self, change: Change) -> None:
        if self.measuring:
            self.seen(change.offset)
            self.delivery_ms.append(time.time() * 1000 - change.timestamp_ms)
        if change.namespace != NS:
            return
        if change.group == "" and change.resource == "pods":
            self._pod(change)
        elif change.group == RG and change.resource == "resourceclaims":
            self._claim(change)

    def _step(self, life: Life, step: str, change: Change) -> None:
        life.steps.setdefault(step, Stamp(change.timestamp_ms, change.request_id))

    def _pod(self, change: Change) -> None:
        life = self.lives.get(change.name)
        if life is None:
            return
        obj = change.object
        if change.type == "ADDED":
            self._step(life, "pod committed", change)
        status = obj.get("status") or {}
        if status.get("resourceClaimStatuses"):
            self._step(life, "pod claim status committed", change)
        if (obj.get("spec") or {}).get("nodeName"):
            self._step(life, "binding committed", change)
        if status.get("phase") == "Running":
            self._step(life, "Running committed", change)
            life.running.set()

    def _claim(self, change: Change) -> None:
        refs = change.object["metadata"].get("ownerReferences") or ()
        owner = next((r["name"] for r in refs if r.get("kind") == "Pod"), None)
        if owner is None:
            return
        life = self.lives.get(owner)
        if life is None:
            return
        life.claim = change.name
        if change.type == "DELETED":
            life.claim_gone.set()
            return
        if change.type == "ADDED":
            self._step(life, "claim committed", change)
        if (change.object.get("status") or {}).get("allocation"):
            self._step(life, "allocation committed", change)


# -- processes ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Child:
    name: str
    proc: asyncio.subprocess.Process

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


async def spawn(name: str, argv: Sequence[str], *, log_dir: Path, trace: Path | None = None) -> Child:
    """A ``draplane`` child; with ``trace``, stamping its commits there (`commit_trace`)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if trace is not None:
        env = commit_trace.child_env(env, trace)
    out = (log_dir / f"{name}.log").open("wb")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", *argv, stdout=out, stderr=out, env=env, cwd=str(REPO)
    )
    out.close()
    return Child(name, proc)


async def wait_healthy(child: Child, port: int, *, timeout: float = 120.0) -> None:
    """Poll the child's /healthz until it answers 200 (its informer synced and it works)."""
    url = f"http://127.0.0.1:{port}/healthz"

    def probe() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(probe):
        if child.proc.returncode is not None:
            raise RuntimeError(f"{child.name} exited with status {child.proc.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{child.name} not healthy after {timeout:.0f} s")
        await asyncio.sleep(0.1)


async def start_components(mode: str, url: str, work: Path, *, trace: Path | None = None) -> list[Child]:
    common = ["--bus", url, "--log-level", "WARNING", "--log-format", "text"]
    children: list[Child] = []
    topics = await spawn("topics", ["topics", "--bus", url], log_dir=work)
    if await topics.proc.wait() != 0:
        raise RuntimeError(f"draplane topics failed: see {work / 'topics.log'}")

    async def component(name: str, argv: Sequence[str]) -> None:
        port = free_port()
        data = work / name
        data.mkdir()
        child = await spawn(
            name,
            [*argv, *common, "--data", str(data), "--metrics-listen", f"127.0.0.1:{port}"],
            log_dir=work,
            trace=trace,
        )
        children.append(child)
        await wait_healthy(child, port)

    try:
        if mode == "up":
            await component("up", ["up", "--nodes", "1", "--listen", f"127.0.0.1:{free_port()}"])
            return children
        await component("apiserver", ["apiserver", "--listen", f"127.0.0.1:{free_port()}", "--anonymous"])
        state = work / "node-1-state"
        node = ["--node", NODE, "--state-dir", str(state)]
        await component("driver", ["driver", *node, "--no-nvidia-smi"])
        await component("nodeagent", ["nodeagent", *node])
        await component("controller-manager", ["controller-manager"])
        await component("scheduler", ["scheduler"])
    except BaseException:
        for child in reversed(children):
            await child.stop()
        raise
    return children


# -- the measurement -----------------------------------------------------------------------------


async def request_times(bus: Bus) -> dict[str, int]:
    """Append time of every request in the log, by request id."""
    end = await bus.end_offset(REQUESTS)
    consumer = await bus.consumer(REQUESTS, start=BEGINNING)
    times: dict[str, int] = {}
    try:
        while consumer.position() < end:
            for record in await consumer.getmany(timeout_ms=500):
                if record.value is None:
                    continue
                with contextlib.suppress(MalformedRecord):
                    times[decode_request(record.value).id] = record.timestamp_ms
    finally:
        await consumer.close()
    return times


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class Result:
    backend: str
    mode: str
    pods: int
    at_once: int
    hops_ms: dict[str, dict[str, float]]  # hop -> {p50, p99}
    order: list[str]


def hops(lives: Sequence[Life], requests: dict[str, int], delivery: Sequence[float]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        out.setdefault(name, []).append(value)

    for life in lives:
        if len(life.steps) < len(STEPS):
            continue
        previous: float = life.sent_ms
        for step, writer in STEPS:
            stamp = life.steps[step]
            sent = requests.get(stamp.request_id or "")
            if step == "pod committed":
                add("create sent → pod committed", stamp.ts_ms - previous)
            elif step == "allocation committed" and sent is not None and not math.isnan(life.cycle_started_ms):
                add("→ scheduler attempt started (the successful one)", life.cycle_started_ms - previous)
                add("  attempt started → scheduler request (allocation)", sent - life.cycle_started_ms)
                add(f"  request → {step}", stamp.ts_ms - sent)
            elif sent is not None:
                add(f"→ {writer} request ({step.removesuffix(' committed')})", sent - previous)
                add(f"  request → {step}", stamp.ts_ms - sent)
            else:
                add(f"→ {step}", stamp.ts_ms - previous)
            previous = stamp.ts_ms
        add("create sent → Running committed", life.steps["Running committed"].ts_ms - life.sent_ms)
        add("create sent → binding committed", life.steps["binding committed"].ts_ms - life.sent_ms)
        add("scheduling attempts per pod", life.attempts)
    out[DELIVERY] = list(delivery)
    return out


async def measure(
    url: str, *, pods: int, at_once: int = 1
) -> tuple[list[Life], dict[str, int], list[float], commit_trace.Seen]:
    bus = open_bus(url)
    await bus.start()
    informer = Informer(bus, name="latency-bench")
    observer = Observer()
    informer.add_listener(observer)
    await informer.start()
    await informer.wait_synced(120)
    client = Client(bus, user=ADMIN, informer=informer, timeout=60.0)
    await client.start()
    lives: list[Life] = []
    try:
        await client.create("", "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        if client.get(RG, "deviceclasses", "", DRIVER) is None:
            await client.create(RG, "deviceclasses", device_class())
        await client.create(RG, "resourceclaimtemplates", claim_template())
        for i in range(pods + 1):  # the first round warms every component up and is not counted
            names = [f"pod-{i:04d}-{j}" if at_once > 1 else f"pod-{i:04d}" for j in range(at_once)]
            round_lives = [observer.lives.setdefault(name, Life()) for name in names]
            observer.measuring = i > 0

            async def create(name: str, life: Life) -> None:
                life.sent_ms = time.time() * 1000
                await client.create("", "pods", pod(name))

            await asyncio.gather(*(create(name, life) for name, life in zip(names, round_lives, strict=True)))
            for life in round_lives:
                await asyncio.wait_for(life.running.wait(), 60)
            observer.measuring = False
            for name in names:
                await client.delete("", "pods", NS, name, gracePeriodSeconds=0)
            for life in round_lives:
                await asyncio.wait_for(life.claim_gone.wait(), 60)  # its GPU is free for the next pod
            if i > 0:
                lives.extend(round_lives)
        requests = await request_times(bus)
        await asyncio.sleep(0.5)  # the scheduler records its last decision after the binding
        for decision in await read_decisions(bus):
            namespace, _, name = decision.pod.partition("/")
            attempted = observer.lives.get(name)
            if namespace != NS or attempted is None:
                continue
            attempted.attempts += 1
            started = attempt_started_ms(decision.record)
            if (decision.record.get("binding") or {}).get("result") == "bound" and started is not None:
                attempted.cycle_started_ms = started
    finally:
        await client.close()
        await informer.stop()
        await bus.close()
    return lives, requests, observer.delivery_ms, observer.seen


EXAMPLE = REPO / "examples" / "gpu-test1.yaml"
EXAMPLE_NS = "gpu-test1"
APPLY = "kubectl apply gpu-test1.yaml → both pods Running"
APPLY_COMMAND = "  of which the kubectl apply command"
APPLY_ATTEMPTS = "  scheduling attempts per gpu-test1 pod"


async def kubectl(kubeconfig: Path, cache: Path, *argv: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        str(kubeconfig),
        "--cache-dir",
        str(cache),
        *argv,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(argv)} failed: {err.decode(errors='replace').strip()}")


async def measure_apply(url: str, *, kubeconfig: Path, runs: int) -> dict[str, list[float]]:
    """``kubectl apply -f examples/gpu-test1.yaml`` → both pods Running, ms per run (after one warm-up);
    the kubectl command alone; the scheduler's attempts per pod."""
    bus = open_bus(url)
    await bus.start()
    informer = Informer(bus, name="latency-apply")
    running: dict[str, int] = {}
    both = asyncio.Event()
    gone = asyncio.Event()

    def listen(change: Change) -> None:
        if change.namespace == EXAMPLE_NS and change.group == "" and change.resource == "pods":
            if (change.object.get("status") or {}).get("phase") == "Running":
                running.setdefault(change.name, change.timestamp_ms)
                if len(running) == 2:
                    both.set()
        elif change.resource == "namespaces" and change.name == EXAMPLE_NS and change.type == "DELETED":
            gone.set()

    informer.add_listener(listen)
    await informer.start()
    await informer.wait_synced(120)
    out: dict[str, list[float]] = {APPLY: [], APPLY_COMMAND: [], APPLY_ATTEMPTS: []}
    try:
        with tempfile.TemporaryDirectory(prefix="kubectl-cache-") as cache:
            for i in range(runs + 1):
                running.clear()
                both.clear()
                gone.clear()
                sent = time.time() * 1000
                await kubectl(kubeconfig, Path(cache), "apply", "-f", str(EXAMPLE))
                returned = time.time() * 1000
                await asyncio.wait_for(both.wait(), 60)
                if i > 0:
                    out[APPLY].append(max(running.values()) - sent)
                    out[APPLY_COMMAND].append(returned - sent)
                    await asyncio.sleep(0.5)  # the scheduler records its decisions after the bindings
                    since = int(sent)
                    for pod_name in ("pod0", "pod1"):
                        attempts = await read_decisions(bus, pod=f"{EXAMPLE_NS}/{pod_name}", since_ms=since)
                        out[APPLY_ATTEMPTS].append(len(attempts))
                await kubectl(kubeconfig, Path(cache), "delete", "namespace", EXAMPLE_NS, "--wait=false")
                await asyncio.wait_for(gone.wait(), 120)
    finally:
        await informer.stop()
        await bus.close()
    return out


async def run_one(args: argparse.Namespace, mode: str, work: Path) -> Result:
    kafka = args.kafka or os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "")
    url = fresh_url(args.backend, kafka=kafka, workdir=work, stem="lat")
    if args.bus_options:
        url += ("&" if "?" in url else "?") + args.bus_options
    run_dir = Path(tempfile.mkdtemp(prefix=f"{mode}-", dir=work))
    trace = run_dir / "commit-trace" if args.backend == "embedded" else None
    if trace is not None:
        trace.mkdir()
    async with dropped_after(url):
        children = await start_components(mode, url, run_dir, trace=trace)
        try:
            lives, requests, delivery, seen = await measure(url, pods=args.pods, at_once=args.at_once)
            applied: dict[str, list[float]] = {}
            if args.kubectl_apply and mode == "up":
                applied = await measure_apply(url, kubeconfig=run_dir / "up" / "kubeconfig", runs=args.kubectl_apply)
        finally:
            for child in reversed(children):
                await child.stop()
    values = hops(lives, requests, delivery)
    if trace is not None:  # the children wrote their stamps as they exited
        values[EXACT_DELIVERY] = seen.delivery_ms(commit_trace.announced(trace))
    values.update(applied)
    return Result(
        backend=args.backend,
        mode=mode,
        pods=len(lives),
        at_once=args.at_once,
        hops_ms={k: {"p50": percentile(v, 50), "p99": percentile(v, 99), "n": len(v)} for k, v in values.items()},
        order=list(values),
    )


def report(result: Result) -> str:
    together = "one at a time" if result.at_once == 1 else f"{result.at_once} at a time"
    lines = [f"one pod's life on {result.backend}, {result.mode} ({result.pods} pods, {together})"]
    for hop in result.order:
        figures = result.hops_ms[hop]
        if "attempts" in hop:
            lines.append(f"  {hop:<58} p50 {figures['p50']:7.1f}     p99 {figures['p99']:7.1f}")
            continue
        lines.append(f"  {hop:<58} p50 {figures['p50']:7.1f} ms  p99 {figures['p99']:7.1f} ms")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--backend", choices=BACKENDS, default="embedded")
    p.add_argument("--kafka", help="Kafka bootstrap servers for --backend kafka (default: $KAFKA_BOOTSTRAP_SERVERS)")
    p.add_argument("--mode", action="append", choices=["processes", "up"], help="repeat for both (default: both)")
    p.add_argument(
        "--bus-options",
        default="",
        help="bus URL options for every process, to measure a setting (e.g. fetch_max_wait_ms=10&linger_ms=0)",
    )
    p.add_argument(
        "--kubectl-apply",
        type=int,
        default=0,
        metavar="N",
        help="in up mode: also time kubectl apply -f examples/gpu-test1.yaml to both pods Running, N times",
    )
    p.add_argument("--pods", type=int, default=30, help="measured pods, one at a time (default 30)")
    p.add_argument(
        "--at-once",
        type=int,
        default=1,
        help="create this many pods together in each round (as kubectl apply of gpu-test1.yaml does: 2); "
        "--pods rounds are measured",
    )
    p.add_argument("--json", help="write the results as JSON to this file")
    return p.parse_args(argv)


async def main_async(args: argparse.Namespace) -> list[Result]:
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        for mode in args.mode or ["processes", "up"]:
            result = await run_one(args, mode, Path(tmp))
            print(report(result), flush=True)
            results.append(result)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results = asyncio.run(main_async(args))
    if args.json:
        Path(args.json).write_bytes(orjson.dumps([asdict(r) for r in results], option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
