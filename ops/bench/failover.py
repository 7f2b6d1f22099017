"""Failover benchmark: kill the active scheduler under a stream of pods; how long until the next pod is bound.

    .venv/bin/python ops/bench/failover.py [--kill scheduler] [--backend embedded|kafka] [--kafka HOST:PORT]
        [--rate 4] [--before 10] [--after 30] [--lease-duration 15s ...] [--json FILE]

Why: with two schedulers (``--leader-elect``, on by default) a killed leader is
replaced when its Lease expires; this measures what that costs a user. It
runs the apiserver (with its committer), one controller-manager and two
schedulers as separate ``draplane`` processes on a fresh log, creates nodes,
ResourceSlices and a claim template as admin (no driver or node agent: a pod's
life ends at its binding), and creates pods from the template at ``--rate``
per second. After ``--before`` seconds it SIGKILLs the target and goes on for
``--after`` seconds, then waits until every pod is bound. Figures, all from
the log's own append times (milliseconds) and the Lease's records:

- ``kill → next pod bound``: from the SIGKILL to the first binding committed after it that the
  successor made (its decision record names it; bindings the killed leader had already sent
  are committed after the kill too, and are not a recovery);
- ``kill → next committed write``: to the first ``objects`` record after it (any writer);
- ``lease handover``: the successor's ``acquireTime`` minus the killed leader's last
  ``renewTime`` (leaseDuration plus up to a jittered retry period, by design);
- ``create → bound`` p50/p99/max over every pod of the run (across the failover),
  and over the pods created before the kill (the steady state).

Targets: ``--kill scheduler`` SIGKILLs the scheduler that holds the
``kube-system/kube-scheduler`` Lease (found from ``leader_election_master_status``
on its ``/metrics``). Other targets register in ``TARGETS``: an ``async``
function given the `Run` (processes, bus URL, work directory) that kills
something and returns. A broker target (``--kill broker`` on a multi-broker
Kafka cluster, the partition leader of ``objects``) only needs that function;
its figure is ``kill → next committed write``, printed for every target.

It prints figures and never asserts on them; the machine's load is the
reader's to state (docs/decisions/latency.md, "Failover").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import math
import os
import signal
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

SELF = Path(__file__).resolve()
REPO = SELF.parents[2]
if importlib.util.find_spec("services") is None:  # run from a checkout without `pip install -e`
    sys.path.insert(0, str(REPO))
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from ops.bench.fresh_logs import BACKENDS, dropped_after, fresh_url  # noqa: E402
from ops.bench.latency import Child, free_port, percentile, spawn, wait_healthy  # noqa: E402
from services.bus import open_bus  # noqa: E402
from services.kube.leader_election import SCHEDULER_LEASE  # noqa: E402
from services.kube.times import parse_micro_time  # noqa: E402
from services.runtime.client import Client  # noqa: E402
from services.runtime.informer import Change, Informer  # noqa: E402
from services.scheduler.decisions import read_decisions  # noqa: E402
from services.testing.harness import ADMIN  # noqa: E402

RG = "resource.k8s.io"
DRIVER = "gpu.example.com"
NS = "failover"
TEMPLATE = "single-gpu"
DEVICES_PER_NODE = 64
nan = math.nan


# -- objects -------------------------------------------------------------------------------------


def node(name: str) -> dict[str, Any]:
    resources = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def resource_slice(node_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}", "basic": {}} for i in range(DEVICES_PER_NODE)],
        },
    }


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


# -- what the log says ---------------------------------------------------------------------------


@dataclass
class Observer:
    """An informer listener: each pod's create and bind commit times, every Lease version, the last write."""

    created_ms: dict[str, int] = field(default_factory=dict)
    bound_ms: dict[str, int] = field(default_factory=dict)
    leases: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    writes_ms: list[int] = field(default_factory=list)
    bound: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, change: Change) -> None:
        self.writes_ms.append(change.timestamp_ms)
        if change.resource == "leases" and change.namespace == "kube-system" and change.name == SCHEDULER_LEASE:
            self.leases.append((change.timestamp_ms, dict(change.object.get("spec") or {})))
        if change.resource != "pods" or change.namespace != NS:
            return
        self.created_ms.setdefault(change.name, change.timestamp_ms)
        if (change.object.get("spec") or {}).get("nodeName") and change.name not in self.bound_ms:
            self.bound_ms[change.name] = change.timestamp_ms
            self.bound.set()


# -- the run -------------------------------------------------------------------------------------


@dataclass
class Run:
    """What a kill target may use: the processes by name, their /metrics ports, the bus URL, the work dir."""

    url: str
    work: Path
    children: dict[str, Child] = field(default_factory=dict)
    metrics_ports: dict[str, int] = field(default_factory=dict)


def leader_status(port: int) -> float | None:
    """``leader_election_master_status{name="kube-scheduler"}`` on a process's /metrics, None if unreadable."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("leader_election_master_status{") and f'name="{SCHEDULER_LEASE}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return None


async def active_scheduler(run: Run, *, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name in ("scheduler-a", "scheduler-b"):
            if await asyncio.to_thread(leader_status, run.metrics_ports[name]) == 1:
                return name
        await asyncio.sleep(0.2)
    raise RuntimeError("no scheduler reports leader_election_master_status 1")


async def kill_active_scheduler(run: Run) -> None:
    name = await active_scheduler(run)
    print(f"killing {name} (the leader)", flush=True)
    run.children[name].proc.send_signal(signal.SIGKILL)


# The hook for other failovers: name → coroutine that kills something of the Run and returns.
TARGETS: dict[str, Callable[[Run], Awaitable[None]]] = {"scheduler": kill_active_scheduler}


async def start(run: Run, election: Sequence[str]) -> None:
    common = ["--bus", run.url, "--log-level", "WARNING", "--log-format", "text"]
    topics = await spawn("topics", ["topics", "--bus", run.url], log_dir=run.work)
    if await topics.proc.wait() != 0:
        raise RuntimeError(f"draplane topics failed: see {run.work / 'topics.log'}")

    async def component(name: str, argv: Sequence[str]) -> None:
        port = free_port()
        data = run.work / name
        data.mkdir()
        child = await spawn(
            name, [*argv, *common, "--data", str(data), "--metrics-listen", f"127.0.0.1:{port}"], log_dir=run.work
        )
        run.children[name] = child
        run.metrics_ports[name] = port
        await wait_healthy(child, port)

    await component("apiserver", ["apiserver", "--listen", f"127.0.0.1:{free_port()}", "--anonymous"])
    await component("controller-manager", ["controller-manager", *election])
    await component("scheduler-a", ["scheduler", *election])
    await component("scheduler-b", ["scheduler", *election])


@dataclass
class Result:
    target: str
    backend: str
    lease_duration_s: float
    pods: int
    kill_to_next_bound_ms: float
    kill_to_next_write_ms: float
    lease_handover_ms: float
    create_to_bound_ms: dict[str, float]
    before_kill_create_to_bound_ms: dict[str, float]


def summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": percentile(values, 50),
        "p99": percentile(values, 99),
        "max": max(values, default=float("nan")),
    }


def handover(leases: Sequence[tuple[int, dict[str, Any]]], killed_holder: str) -> tuple[str, float]:
    """The successor, and its acquireTime minus the killed holder's last renewTime (the Lease's own records)."""
    last_renewal = None
    for _, spec in leases:
        holder = spec.get("holderIdentity") or ""
        if holder == killed_holder:
            last_renewal = parse_micro_time(spec["renewTime"])
        elif holder and last_renewal is not None:
            return holder, (parse_micro_time(spec["acquireTime"]) - last_renewal).total_seconds() * 1000
    return "", float("nan")


async def measure(args: argparse.Namespace, run: Run) -> Result:
    bus = open_bus(run.url)
    await bus.start()
    informer = Informer(bus, name="failover-bench")
    observer = Observer()
    informer.add_listener(observer)
    await informer.start()
    await informer.wait_synced(120)
    client = Client(bus, user=ADMIN, informer=informer, timeout=60.0)
    await client.start()
    creating: set[asyncio.Task[Any]] = set()
    try:
        await client.create("", "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        await client.create(RG, "deviceclasses", device_class())
        total = int(args.rate * (args.before + args.after)) + 1
        for i in range(total // DEVICES_PER_NODE + 1):  # a device for every pod: none waits for another
            await client.create("", "nodes", node(f"node-{i}"))
            await client.create(RG, "resourceslices", resource_slice(f"node-{i}"))
        await client.create(RG, "resourceclaimtemplates", claim_template())
        await client.create("", "pods", pod("warm-up"))
        await asyncio.wait_for(observer.bound.wait(), 120)
        observer.created_ms.clear()
        observer.bound_ms.clear()

        async def stream(seconds: float, first: int) -> int:
            count = int(seconds * args.rate)
            begin = time.monotonic()
            for i in range(count):
                await asyncio.sleep(max(0.0, begin + i / args.rate - time.monotonic()))
                task = asyncio.create_task(client.create("", "pods", pod(f"pod-{first + i:05d}")))
                creating.add(task)
                task.add_done_callback(creating.discard)
            return first + count

        made = await stream(args.before, 0)
        killed_holder = (observer.leases[-1][1].get("holderIdentity") or "") if observer.leases else ""
        kill_ms = time.time() * 1000
        await TARGETS[args.kill](run)
        made = await stream(args.after, made)
        if creating:
            await asyncio.gather(*list(creating))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(180):
                while True:
                    observer.bound.clear()
                    if len(observer.bound_ms) >= made:
                        break
                    await observer.bound.wait()
        if len(observer.bound_ms) < made:
            print(f"warning: {made - len(observer.bound_ms)} pods not bound after 180 s", flush=True)
        successor, handover_ms = handover(observer.leases, killed_holder) if args.kill == "scheduler" else ("", nan)
        by_successor = {
            d.pod.partition("/")[2]
            for d in await read_decisions(bus)
            if (d.record.get("binding") or {}).get("result") == "bound"
            and (not successor or d.record.get("scheduler") == successor)
        }
        after_kill = [t for p, t in observer.bound_ms.items() if t >= kill_ms and p in by_successor]
        writes = [t for t in observer.writes_ms if t >= kill_ms]
        latencies = [
            observer.bound_ms[p] - observer.created_ms[p] for p in observer.bound_ms if p in observer.created_ms
        ]
        before = [
            observer.bound_ms[p] - observer.created_ms[p]
            for p in observer.bound_ms
            if p in observer.created_ms and observer.created_ms[p] < kill_ms
        ]
        return Result(
            target=args.kill,
            backend=args.backend,
            lease_duration_s=args.lease_duration,
            pods=made,
            kill_to_next_bound_ms=(min(after_kill) - kill_ms) if after_kill else float("nan"),
            kill_to_next_write_ms=(min(writes) - kill_ms) if writes else float("nan"),
            lease_handover_ms=handover_ms,
            create_to_bound_ms=summary(latencies),
            before_kill_create_to_bound_ms=summary(before),
        )
    finally:
        for task in list(creating):
            task.cancel()
        await client.close()
        await informer.stop()
        await bus.close()


def report(result: Result) -> str:
    def ms(value: float) -> str:
        return f"{value / 1000:7.2f} s"

    lines = [
        f"failover: kill {result.target} ({result.backend}, leaseDuration {result.lease_duration_s:g} s, "
        f"{result.pods} pods)",
        f"  kill → next pod bound        {ms(result.kill_to_next_bound_ms)}",
        f"  kill → next committed write  {ms(result.kill_to_next_write_ms)}",
        f"  lease handover (records)     {ms(result.lease_handover_ms)}",
    ]
    for label, figures in (
        ("create → bound, whole run   ", result.create_to_bound_ms),
        ("create → bound, before kill ", result.before_kill_create_to_bound_ms),
    ):
        lines.append(f"  {label} p50 {ms(figures['p50'])}  p99 {ms(figures['p99'])}  max {ms(figures['max'])}")
    return "\n".join(lines)


def parse_seconds(text: str) -> float:
    return float(text[:-1]) if text.endswith("s") else float(text)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--kill", choices=sorted(TARGETS), default="scheduler", help="what to kill (default scheduler)")
    p.add_argument("--backend", choices=BACKENDS, default="embedded")
    p.add_argument("--kafka", help="Kafka bootstrap servers for --backend kafka (default: $KAFKA_BOOTSTRAP_SERVERS)")
    p.add_argument("--rate", type=float, default=4.0, help="pods created per second (default 4)")
    p.add_argument("--before", type=float, default=10.0, help="seconds of pods before the kill (default 10)")
    p.add_argument("--after", type=float, default=30.0, help="seconds of pods after the kill (default 30)")
    p.add_argument("--lease-duration", type=parse_seconds, default=15.0, help="--leader-elect-lease-duration (15s)")
    p.add_argument("--renew-deadline", type=parse_seconds, default=10.0, help="--leader-elect-renew-deadline (10s)")
    p.add_argument("--retry-period", type=parse_seconds, default=2.0, help="--leader-elect-retry-period (2s)")
    p.add_argument("--json", help="write the result as JSON to this file")
    return p.parse_args(argv)


def bus_url(args: argparse.Namespace, work: Path) -> str:
    if args.backend == "kafka":
        servers = args.kafka or os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092")
        return fresh_url("kafka", kafka=servers, stem="failover")
    return f"sqlite://{work / 'bus.db'}"


async def main_async(args: argparse.Namespace) -> Result:
    election = [
        f"--leader-elect-lease-duration={args.lease_duration:g}s",
        f"--leader-elect-renew-deadline={args.renew_deadline:g}s",
        f"--leader-elect-retry-period={args.retry_period:g}s",
    ]
    with tempfile.TemporaryDirectory(prefix="bench-failover-") as tmp:
        run = Run(bus_url(args, Path(tmp)), Path(tmp))
        async with dropped_after(run.url):
            try:
                await start(run, election)
                result = await measure(args, run)
            finally:
                for child in reversed(list(run.children.values())):
                    with contextlib.suppress(Exception):
                        await child.stop()
    print(report(result), flush=True)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    result = asyncio.run(main_async(args))
    if args.json:
        Path(args.json).write_bytes(orjson.dumps(asdict(result), option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
