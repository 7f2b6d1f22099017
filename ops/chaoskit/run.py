"""``ops/chaos``: the chaos run from start-up to the last line.

Why this module exists: it puts the pieces together in four phases and
reports them:

1. **start-up** — a Kafka broker on a data directory the run keeps (with
   ``--brokers 3`` a three-node cluster, ``ops/kafka/start --brokers 3``; or
   an embedded SQLite log), then every component as its own process: two
   apiservers (so the committer fails over), the scheduler, the
   controller-manager, and per node a DRA driver and a node agent; then the
   namespace, the DeviceClass and the claim template.
2. **churn** — the workload (`ops.chaoskit.workload`) paced over the run's
   duration and kept within the cluster's GPUs, while a random component is
   SIGKILLed and restarted every few seconds and the broker is restarted
   (clean stop, or SIGKILL for every second restart). On a cluster the
   component kills go on while single nodes are SIGKILLed and started again
   — every second one the partition leader of the busiest topic — and the
   time to that topic's next committed write is reported. On Kafka a probe
   producer (`ops.chaoskit.acks`) writes steadily on a topic of its own.
3. **settle** — the kills stop, every component is brought back, and the run
   waits until every pod has finished or is gone and every claim of a
   finished pod is released.
4. **check** — `objects` is read from the beginning and every invariant
   (`ops.chaoskit.invariants`) is checked; each violation is printed with
   the offsets involved. On Kafka the probe's topic is read back too: every
   write the producer had acknowledged must be there (``acks-kept``).

The last line is exactly ``chaos: kills=<n> broker_restarts=<n> violations=<n>``;
the exit status is 0 only when violations is 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from ops.chaoskit import workload
from ops.chaoskit.acks import ACKS_SPEC, AckProbe, read_back
from ops.chaoskit.broker import Broker, BrokerError, Cluster
from ops.chaoskit.invariants import ACKS_KEPT, INVARIANTS, Listed, Violation, check_acks_kept, check_all, check_views
from ops.chaoskit.processes import Component, ComponentSpec, Supervisor
from ops.chaoskit.records import MALFORMED, read_objects
from ops.chaoskit.view import LiveView
from ops.chaoskit.workload import NAMESPACE, Item
from ops.chaoskit.writer import ListFailed, WriteFailed, Writer
from services.bus import open_bus
from services.bus.port import Bus, BusError
from services.testing.ports import free_port
from topics.declarations import declarations

log = logging.getLogger(__name__)

WRITES_ACKNOWLEDGED = "writes-acknowledged"  # a workload write that never got through counts as a violation
RUN_COMPLETED = "run-completed"  # a run that could not finish its phases counts as one
TERMINAL = frozenset({"Succeeded", "Failed"})
# What the apiservers' views are compared with the log on at the end.
VIEWED = (("", "pods"), ("", "nodes"), ("resource.k8s.io", "resourceclaims"), ("resource.k8s.io", "resourceslices"))
CHECK_RESERVE_S = 10.0  # of a budget, kept for reading the log, the checks and shutting down
UNREACHABLE = "Kafka is not reachable"  # a component that starts while the broker is away exits with it


@dataclass
class Options:
    bus: Literal["kafka", "embedded"] = "kafka"
    brokers: int = 1  # Kafka nodes; more than one: a cluster that loses one node at a time
    nodes: int = 50
    devices: int = 8  # GPUs per node
    pods: int = 2000
    minutes: float = 30.0  # length of the churn phase
    kill_interval: float = 5.0  # mean seconds between two kills
    max_restart_delay: float = 1.0  # a killed component is started again after 0..this many seconds
    broker_restart_interval: float = 300.0  # seconds between broker restarts (Kafka)
    broker_downtime: float = 1.0  # seconds the broker stays away
    run_seconds: tuple[float, float] = (2.0, 20.0)
    lifetime: tuple[float, float] = (5.0, 60.0)
    overcommit: float = 1.25  # pods may ask for this many times the cluster's GPUs at once
    settle_timeout: float = 240.0
    startup_timeout: float = 120.0
    budget: float | None = None  # seconds for the whole run; the churn and the settling shrink to fit
    writes: tuple[Literal["rest", "log"], ...] = ("rest", "log")
    seed: int = 0
    work: Path | None = None
    keep: bool = True
    verbose: bool = False

    @classmethod
    def short(cls) -> Options:
        """The CI size: it fits 3 minutes on 2 cores, start-up included."""
        return cls(
            nodes=2,
            pods=40,
            minutes=1.25,
            kill_interval=5.0,
            broker_restart_interval=30.0,
            run_seconds=(1.0, 4.0),
            lifetime=(2.0, 8.0),
            settle_timeout=40.0,
            startup_timeout=60.0,
            budget=170.0,
            keep=False,
        )

    def on_cluster(self, brokers: int) -> None:
        """Run on ``brokers`` nodes; a short run gets the time their JVMs take to start (and one to restart)."""
        self.brokers = brokers
        if self.budget is not None:
            self.budget += 180.0
            self.startup_timeout += 60.0


@dataclass
class Figures:
    """What the run counts, for the summary."""

    kills: Counter[str] = field(default_factory=Counter)
    leader_kills: int = 0
    broker_restarts: list[tuple[str, float]] = field(default_factory=list)  # (clean|kill, seconds away)
    # per node killed on a cluster: (what was killed, the busiest topic, seconds to its next committed write)
    failovers: list[tuple[str, str, float | None]] = field(default_factory=list)
    pods_created: int = 0
    pods_deleted: int = 0
    claims_created: int = 0
    claims_deleted: int = 0
    write_failures: list[str] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    records: int = 0
    malformed: int = 0
    exits_broker_down: int = 0  # components that exited on their own while the broker was away
    skipped_kills: int = 0  # ticks with no component fit to kill (all starting, or the broker away)


class ChaosRun:
    def __init__(self, options: Options, *, out: Callable[[str], None] = print) -> None:
        self.o = options
        self.out = out
        self.rng = random.Random(options.seed)
        self.figures = Figures()
        self.started = time.monotonic()
        self.deadline = self.started + options.budget if options.budget else None
        self.work = options.work or Path(tempfile.mkdtemp(prefix="draplane-chaos-"))
        self.supervisor = Supervisor(logs=self.work / "logs")
        self.supervisor.on_crash = self._on_crash
        self.broker: Broker | None = None
        self.cluster: Cluster | None = None
        self.probe: AckProbe | None = None
        self.probe_task: asyncio.Task[None] | None = None
        self.probe_read: dict[int, bytes | None] | None = None
        self.bus: Bus | None = None
        self.view: LiveView | None = None
        self.writer: Writer | None = None
        self.apiservers: list[str] = []
        self.active: dict[int, Item] = {}
        self.items: list[Item] = []
        self.created_pods: set[str] = set()  # acknowledged
        self.deleted_pods: set[str] = set()  # deletion requested
        self.item_tasks: list[asyncio.Task[None]] = []
        self._churn_over = asyncio.Event()
        self._broker_away = False

    def _on_crash(self, component: Component, status: int | None) -> None:
        reason = component.crashes[-1][2] if component.crashes else ""
        unreachable = self._broker_away or UNREACHABLE in reason
        if unreachable:
            self.figures.exits_broker_down += 1
        why = " (it could not reach the broker)" if unreachable else f": {reason}"
        self.say(f"{component.spec.name} exited on its own with status {status}{why}; restarting it")

    # -- output -----------------------------------------------------------------

    def say(self, message: str) -> None:
        self.out(f"chaos [{time.monotonic() - self.started:7.1f}s] {message}")

    # -- the run ------------------------------------------------------------------

    async def run(self) -> list[Violation]:
        violations: list[Violation] = []
        try:
            phase = time.monotonic()
            await self._start_up()
            self.figures.phases["start-up"] = time.monotonic() - phase
            phase = time.monotonic()
            await self._churn()
            self.figures.phases["churn"] = time.monotonic() - phase
            phase = time.monotonic()
            await self._settle()
            self.figures.phases["settle"] = time.monotonic() - phase
            phase = time.monotonic()
            violations = await self._check()
            self.figures.phases["check"] = time.monotonic() - phase
        except (BrokerError, TimeoutError, OSError) as exc:
            self.say(f"the run could not complete: {exc}")
            violations.append(Violation(RUN_COMPLETED, f"the run could not complete: {exc}"))
        finally:
            await self._shut_down()
        violations += [Violation(WRITES_ACKNOWLEDGED, f) for f in self.figures.write_failures]
        return violations

    async def _start_up(self) -> None:
        o = self.o
        self.say(f"work directory {self.work} (component logs in {self.work / 'logs'})")
        if o.bus == "kafka" and o.brokers > 1:
            self.cluster = Cluster(self.work / "kafka", o.brokers)
            took = await self.cluster.start()
            url = f"kafka://{self.cluster.bootstrap}"
            self.say(f"Kafka cluster of {o.brokers} nodes on {self.cluster.bootstrap} in {took:.1f}s")
        elif o.bus == "kafka":
            self.broker = Broker(self.work / "kafka", free_port())
            took = await self.broker.start()
            url = f"kafka://{self.broker.bootstrap}"
            self.say(f"Kafka broker on {self.broker.bootstrap} in {took:.1f}s (data {self.broker.data})")
        else:
            url = f"sqlite:///{(self.work / 'bus.db').resolve()}"
            self.say(f"embedded log {url}")
        self.bus = open_bus(url)
        await self.bus.start()
        await self.bus.ensure_topics(declarations())
        if o.bus == "kafka":
            await self.bus.ensure_topics([ACKS_SPEC])
            self.probe = AckProbe(self.bus)
            self.probe_task = asyncio.create_task(self.probe.run(), name="acks-probe")
        specs = self._specs(url)
        await self.supervisor.start_all(specs)
        self.say(f"started {len(specs)} component processes: {', '.join(s.name for s in specs)}")
        waiting = await self.supervisor.wait_ready([s.name for s in specs], timeout=o.startup_timeout)
        if waiting:
            raise TimeoutError(f"components not ready after {o.startup_timeout:.0f}s: {', '.join(waiting)}")
        self.view = LiveView(self.bus)
        await self.view.start()
        self.writer = Writer(self.bus, self.apiservers, paths=o.writes, seed=o.seed)
        await self.writer.start()
        for group, plural, obj in (
            ("", "namespaces", workload.namespace()),
            ("resource.k8s.io", "deviceclasses", workload.device_class()),
            ("resource.k8s.io", "resourceclaimtemplates", workload.template()),
        ):
            await self.writer.create(group, plural, obj, exist_ok=True)
        await self._wait_until(self._nodes_ready, o.startup_timeout, "nodes and their ResourceSlices")
        self.say(f"ready: {o.nodes} nodes with {o.nodes * o.devices} GPUs")

    def _specs(self, url: str) -> list[ComponentSpec]:
        o, work = self.o, self.work
        common = ("--bus", url, "--log-level", "DEBUG" if o.verbose else "INFO")
        specs = []
        for i in (1, 2):
            port = free_port()
            self.apiservers.append(f"http://127.0.0.1:{port}")
            specs.append(
                ComponentSpec(
                    f"apiserver-{i}",
                    "apiserver",
                    (
                        "apiserver",
                        *common,
                        "--data",
                        str(work / f"apiserver-{i}"),
                        "--listen",
                        f"127.0.0.1:{port}",
                        "--anonymous",
                    ),
                    f"http://127.0.0.1:{port}/readyz",
                )
            )

        def metrics() -> tuple[tuple[str, ...], str]:
            port = free_port()
            return ("--metrics-listen", f"127.0.0.1:{port}"), f"http://127.0.0.1:{port}/healthz"

        flags, health = metrics()
        specs.append(
            ComponentSpec(
                "scheduler", "scheduler", ("scheduler", *common, "--data", str(work / "scheduler"), *flags), health
            )
        )
        flags, health = metrics()
        specs.append(
            ComponentSpec(
                "controller-manager",
                "controller-manager",
                ("controller-manager", *common, "--data", str(work / "controller-manager"), *flags),
                health,
            )
        )
        for n in range(1, o.nodes + 1):
            node = f"node-{n}"
            node_args = ("--data", str(work), "--node", node)
            flags, health = metrics()
            specs.append(
                ComponentSpec(
                    f"driver-{node}",
                    "driver",
                    ("driver", *common, *node_args, "--no-nvidia-smi", "--num-devices", str(o.devices), *flags),
                    health,
                )
            )
            flags, health = metrics()
            specs.append(
                ComponentSpec(f"nodeagent-{node}", "nodeagent", ("nodeagent", *common, *node_args, *flags), health)
            )
        return specs

    def _nodes_ready(self) -> bool:
        assert self.view is not None
        nodes = self.view.list("", "nodes")
        slices = self.view.list("resource.k8s.io", "resourceslices")
        return (
            len(nodes) >= self.o.nodes and len({(s.get("spec") or {}).get("nodeName") for s in slices}) >= self.o.nodes
        )

    async def _wait_until(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        if not await poll(condition, timeout=timeout):
            raise TimeoutError(f"{what} not there after {timeout:.0f}s")

    # -- churn --------------------------------------------------------------------

    async def _churn(self) -> None:
        o = self.o
        self.items = workload.plan(o.pods, seed=o.seed, run_seconds=o.run_seconds, lifetime=o.lifetime)
        seconds = o.minutes * 60
        if self.deadline is not None:
            # Leave the settling and the check their share of the budget.
            seconds = max(10.0, min(seconds, self.deadline - time.monotonic() - o.settle_timeout - CHECK_RESERVE_S))
        self.say(
            f"churn for {seconds:.0f}s: {o.pods} pods in {len(self.items)} items "
            f"({', '.join(f'{k} {n}' for k, n in Counter(i.kind for i in self.items).items())}), "
            f"a kill every ~{o.kill_interval:g}s"
            + (f", a broker restart every {o.broker_restart_interval:g}s" if self.broker is not None else "")
            + (f", a node of {o.brokers} killed every {o.broker_restart_interval:g}s" if self.cluster else "")
        )
        chaos = [
            asyncio.create_task(self._kills(), name="kills"),
            asyncio.create_task(self._progress(), name="progress"),
        ]
        broker = None
        if self.cluster is not None:
            broker = asyncio.create_task(self._node_kills(seconds), name="broker")
        elif o.bus == "kafka":
            broker = asyncio.create_task(self._broker_restarts(seconds), name="broker")
        try:
            await self._feed(seconds)
        finally:
            self._churn_over.set()
            for task in chaos:
                task.cancel()
            for task in chaos:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if broker is not None:
                await broker  # a restart under way finishes: the broker must be back for the settling

    async def _feed(self, seconds: float) -> None:
        """Start the items evenly over ``seconds``, never asking for more GPUs than the overcommit allows."""
        began = time.monotonic()
        capacity = self.o.nodes * self.o.devices * self.o.overcommit
        hard_stop = began + seconds * 1.2
        if self.deadline is not None:
            hard_stop = min(hard_stop, self.deadline - min(self.o.settle_timeout, 30.0) - CHECK_RESERVE_S)
        for n, item in enumerate(self.items):
            due = began + seconds * n / max(len(self.items), 1)
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            await poll(lambda: self._gpus_in_use() + item.gpus <= capacity, timeout=hard_stop - time.monotonic())  # noqa: B023
            if time.monotonic() >= hard_stop:
                self.say(f"churn: time is up; {len(self.items) - n} items not started")
                self.items = self.items[:n]
                break
            self.active[item.index] = item
            self.item_tasks.append(asyncio.create_task(self._run_item(item), name=f"item-{item.index}"))
        await asyncio.sleep(max(0.0, min(began + seconds, hard_stop) - time.monotonic()))

    def _gpus_in_use(self) -> int:
        for index, item in list(self.active.items()):
            if self._item_done(item):
                del self.active[index]
        return sum(item.gpus for item in self.active.values())

    def _item_done(self, item: Item) -> bool:
        assert self.view is not None
        for name in item.pods:
            pod = self.view.get("", "pods", NAMESPACE, name)
            if pod is None:
                # Gone only when this run deleted it: a create the API acknowledged may not
                # have reached this run's view yet (counting it as done once deleted the
                # shared claim of two pods before they were scheduled).
                if name not in self.deleted_pods:
                    return False
                continue
            if ((pod.get("status") or {}).get("phase")) not in TERMINAL:
                return False
        return True

    def _pending_create(self, name: str) -> bool:
        return name not in self.created_pods

    async def _run_item(self, item: Item) -> None:
        assert self.writer is not None
        try:
            objs = workload.manifests(item)
            uids: dict[str, str | None] = {}
            for obj in objs:
                if obj["kind"] == "ResourceClaim":
                    await self.writer.create("resource.k8s.io", "resourceclaims", obj)
                    self.figures.claims_created += 1
                else:
                    ack = await self.writer.create("", "pods", obj)
                    uids[obj["metadata"]["name"]] = ack.uid
                    self.created_pods.add(obj["metadata"]["name"])
                    self.figures.pods_created += 1
            if item.kind == "service":
                await asyncio.sleep(item.lifetime)
                name = item.pods[0]
                self.deleted_pods.add(name)
                await self.writer.delete("", "pods", NAMESPACE, name, uid=uids.get(name))
                self.figures.pods_deleted += 1
            elif item.kind == "shared" and item.claim is not None:
                await poll(lambda: self._item_done(item), interval=0.5)
                await self.writer.delete("resource.k8s.io", "resourceclaims", NAMESPACE, item.claim, uid=None)
                self.figures.claims_deleted += 1
        except WriteFailed as exc:
            self.say(f"write failed: {exc}")
            self.figures.write_failures.append(str(exc))

    async def _killable(self, name: str) -> bool:
        """Ready (back from its last kill), the broker there, and never both apiservers down at once."""
        if self._broker_away or not await self.supervisor.ready(name):
            return False
        if name.startswith("apiserver-"):
            others = [n for n in self.supervisor.components if n.startswith("apiserver-") and n != name]
            return all([await self.supervisor.ready(n) for n in others])
        return True

    async def _kills(self) -> None:
        """SIGKILL a random ready component every few seconds: each one once per (shuffled) round."""
        order: list[str] = []
        names = list(self.supervisor.components)
        while True:
            await asyncio.sleep(self.o.kill_interval * self.rng.uniform(0.5, 1.5))
            if not order:
                order = self.rng.sample(names, len(names))
            candidates = [n for n in reversed(order) if await self._killable(n)]
            if not candidates:
                self.figures.skipped_kills += 1
                continue
            name = candidates[0]
            order.remove(name)
            leader = name.startswith("apiserver") and self.supervisor.was_leader(name)
            self.figures.kills[name] += 1
            self.figures.leader_kills += leader
            delay = self.rng.uniform(0, self.o.max_restart_delay)
            self.say(f"SIGKILL {name}{' (the committer leader)' if leader else ''}; restart in {delay:.1f}s")
            await kill_and_restart(self.supervisor, name, delay)

    async def _broker_restarts(self, seconds: float) -> None:
        assert self.broker is not None
        interval = min(self.o.broker_restart_interval, seconds * 0.4)
        last_start = time.monotonic() + seconds * 0.75  # a restart late in the churn would eat the settling
        n = 0
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval):
                    await self._churn_over.wait()
                return
            if time.monotonic() > last_start:
                await self._churn_over.wait()
                return
            hard = n % 2 == 1
            how = "SIGKILL" if hard else "clean stop"
            self.say(f"broker restart #{n + 1} ({how}, {self.o.broker_downtime:g}s away)")
            self._broker_away = True
            try:
                away = await self.broker.restart(hard=hard, downtime=self.o.broker_downtime)
            finally:
                self._broker_away = False
            self.figures.broker_restarts.append(("kill" if hard else "clean", away))
            self.say(f"broker back on {self.broker.bootstrap} after {away:.1f}s")
            n += 1

    async def _node_kills(self, seconds: float) -> None:
        """SIGKILL one node of the cluster at a time and start it again; every second one leads the busiest topic."""
        assert self.cluster is not None
        interval = min(self.o.broker_restart_interval, seconds * 0.4)
        last_start = time.monotonic() + seconds * 0.75  # a restart late in the churn would eat the settling
        n = 0
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval):
                    await self._churn_over.wait()
                return
            if time.monotonic() > last_start:
                await self._churn_over.wait()
                return
            topic, end = await self._busiest_topic()
            leader = await self.cluster.leader(topic) if topic else None
            if n % 2 == 0 and leader is not None:
                node, what = leader, f"node {leader} (leader of {topic})"
            else:
                node = self.rng.randint(1, self.cluster.nodes)
                what = f"node {node}" + (f" (leader of {topic})" if node == leader else "")
            self.say(f"SIGKILL Kafka {what}; back in {self.o.broker_downtime:g}s")
            killed = time.monotonic()
            gap = asyncio.create_task(self._next_write(topic, end, killed)) if topic else None
            away = await self.cluster.restart_node(node, hard=True, downtime=self.o.broker_downtime)
            to_next = await gap if gap is not None else None
            self.figures.broker_restarts.append((f"kill node {node}", away))
            self.figures.failovers.append((what, topic or "-", to_next))
            after = f"{to_next:.1f}s" if to_next is not None else "not within 60s"
            self.say(f"Kafka node {node} back after {away:.1f}s; the next write on {topic} came {after} after the kill")
            n += 1

    async def _busiest_topic(self) -> tuple[str | None, int]:
        """The declared topic with the most records so far, and its end offset (None when none answers)."""
        assert self.bus is not None
        ends = {}
        for spec in declarations():
            with contextlib.suppress(BusError):
                ends[spec.name] = await self.bus.end_offset(spec.name)
        if not ends:
            return None, 0
        topic = max(ends, key=lambda name: ends[name])
        return topic, ends[topic]

    async def _next_write(self, topic: str, end: int, since: float, *, timeout: float = 60.0) -> float | None:
        """Seconds from ``since`` until ``topic``'s end offset passes ``end`` (a write committed there)."""
        assert self.bus is not None
        while time.monotonic() - since < timeout:
            with contextlib.suppress(BusError):
                if await self.bus.end_offset(topic) > end:
                    return time.monotonic() - since
            await asyncio.sleep(0.05)
        return None

    async def _progress(self) -> None:
        while True:
            await asyncio.sleep(10.0)
            self.say(self._status())

    def _status(self) -> str:
        assert self.view is not None
        phases = Counter(
            ((p.get("status") or {}).get("phase") or "Pending") for p in self.view.list("", "pods", NAMESPACE)
        )
        claims = self.view.list("resource.k8s.io", "resourceclaims", NAMESPACE)
        allocated = sum(1 for c in claims if (c.get("status") or {}).get("allocation"))
        f = self.figures
        return (
            f"pods created={f.pods_created} deleted={f.pods_deleted} "
            + " ".join(f"{k.lower()}={v}" for k, v in sorted(phases.items()))
            + f" claims={len(claims)} allocated={allocated} kills={sum(f.kills.values())}"
            f" broker_restarts={len(f.broker_restarts)} log_offset={self.view.position}"
        )

    # -- settle -------------------------------------------------------------------

    async def _settle(self) -> None:
        o = self.o
        began = time.monotonic()
        deadline = began + o.settle_timeout
        if self.deadline is not None:
            deadline = min(deadline, self.deadline - CHECK_RESERVE_S)
        self.say("settle: no more kills; waiting for every component and for the workload to finish")
        last = 0.0
        while True:
            names = list(self.supervisor.components)
            answers = await asyncio.gather(*map(self.supervisor.ready, names))
            down = [n for n, ok in zip(names, answers, strict=True) if not ok]
            left = [f"{n} (not ready)" for n in down] + self._unsettled()
            pending = [t for t in self.item_tasks if not t.done()]
            if pending:
                left.append(f"{len(pending)} workload items still writing")
            if not left:
                self.say("settle: every pod finished or gone, every claim of a finished pod released")
                return
            if time.monotonic() >= deadline:
                break
            if time.monotonic() - last >= 10.0:
                last = time.monotonic()
                self.say(f"settle: waiting for {len(left)}: {', '.join(left[:6])}{' ...' if len(left) > 6 else ''}")
            await asyncio.sleep(0.5)
        self.say(f"settle: gave up after {time.monotonic() - began:.0f}s; the checks will say what is left")
        for task in self.item_tasks:
            task.cancel()

    def _unsettled(self) -> list[str]:
        """What is not finished yet: pods not Succeeded (or deleted and not gone), claims not released."""
        assert self.view is not None
        left = []
        pods = {(p["metadata"]["name"]): p for p in self.view.list("", "pods", NAMESPACE)}
        for item in self.items:
            for name in item.pods:
                pod = pods.get(name)
                if name in self.deleted_pods:
                    if pod is not None:
                        left.append(f"pod {name} (deleting)")
                elif pod is None:
                    if self._pending_create(name):
                        left.append(f"pod {name} (not created)")
                elif (pod.get("status") or {}).get("phase") not in TERMINAL:
                    left.append(f"pod {name} ({(pod.get('status') or {}).get('phase') or 'Pending'})")
        for claim in self.view.list("resource.k8s.io", "resourceclaims", NAMESPACE):
            owner = next((r for r in claim["metadata"].get("ownerReferences") or () if r.get("controller")), None)
            if owner is None:
                if (claim.get("status") or {}).get("reservedFor"):
                    left.append(f"claim {claim['metadata']['name']} (reserved)")
                continue
            pod = pods.get(str(owner.get("name")))
            if (
                pod is None
                or pod["metadata"].get("uid") != owner.get("uid")
                or (pod.get("status") or {}).get("phase") in TERMINAL
            ):
                left.append(f"claim {claim['metadata']['name']} (pod finished)")
        return left

    # -- check --------------------------------------------------------------------

    async def _check(self) -> list[Violation]:
        assert self.bus is not None and self.writer is not None
        lists = []
        for n, server in enumerate(self.apiservers, 1):
            for group, plural in VIEWED:
                view = f"apiserver-{n}"
                try:
                    rv, items = await self.writer.list_from(server, group, plural)
                except ListFailed as exc:
                    self.say(f"check: {view} did not list {plural}: {exc}")
                    lists.append(Listed(view, group, plural, error=str(exc)))
                    continue
                lists.append(Listed(view, group, plural, resource_version=rv, items=items))
        records = await read_objects(self.bus)
        self.figures.records = len(records)
        self.figures.malformed = sum(1 for r in records if r.type == MALFORMED)
        self.say(f"check: read {len(records)} records of objects; checking {len(INVARIANTS)} invariants")
        found = check_all(records, self.writer.acknowledged) + check_views(records, lists)
        if self.probe is not None:
            await self._stop_probe()
            self.probe_read = await read_back(self.bus)
            self.say(
                f"check: read {len(self.probe_read)} records of {ACKS_SPEC.name}; "
                f"{len(self.probe.acked)} were acknowledged"
            )
            found += check_acks_kept(self.probe.acked, self.probe_read)
        return found

    async def _stop_probe(self) -> None:
        if self.probe_task is not None:
            self.probe_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.probe_task
            self.probe_task = None

    async def _shut_down(self) -> None:
        await self._stop_probe()
        if self.view is not None:
            with contextlib.suppress(Exception):
                await self.view.stop()
        if self.writer is not None:
            with contextlib.suppress(Exception):
                await self.writer.close()
        with contextlib.suppress(Exception):
            await self.supervisor.stop()
        if self.bus is not None:
            with contextlib.suppress(Exception):
                await self.bus.close()
        if self.broker is not None:
            with contextlib.suppress(Exception):
                await self.broker.stop()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                await self.cluster.stop()

    # -- the report ---------------------------------------------------------------

    def summary(self, violations: Sequence[Violation]) -> list[str]:
        f, o = self.figures, self.o
        lines = ["chaos: summary"]
        total = time.monotonic() - self.started
        lines.append(f"  time {total:.1f}s (" + ", ".join(f"{k} {v:.1f}s" for k, v in f.phases.items()) + ")")
        bus = f"{o.bus} ({o.brokers} brokers)" if o.bus == "kafka" else o.bus
        lines.append(f"  bus {bus}; {o.nodes} nodes x {o.devices} GPUs; seed {o.seed}; work directory {self.work}")
        lines.append(
            f"  workload: {len(self.items)} items, pods created {f.pods_created}, deleted {f.pods_deleted}; "
            f"shared claims created {f.claims_created}, deleted {f.claims_deleted}"
        )
        if self.writer is not None:
            s = self.writer.stats
            acks = len(self.writer.acknowledged)
            lines.append(
                f"  writes: {acks} acknowledged (rest {s.by_path['rest']}, log {s.by_path['log']}), "
                f"{s.retries} retries" + (f", errors {dict(sorted(s.errors.items()))}" if s.errors else "")
            )
        kills = ", ".join(f"{name} {n}" for name, n in sorted(f.kills.items()))
        lines.append(f"  kills: {sum(f.kills.values())} ({kills}); committer leader killed {f.leader_kills} times")
        restarts = ", ".join(f"{how} {away:.1f}s away" for how, away in f.broker_restarts)
        lines.append(f"  broker restarts: {len(f.broker_restarts)}" + (f" ({restarts})" if restarts else ""))
        for what, topic, to_next in f.failovers:
            after = f"{to_next:.1f}s" if to_next is not None else "none within 60s"
            lines.append(f"    killed {what}: next committed write on {topic} {after} after the kill")
        if self.probe is not None:
            read = "not read back" if self.probe_read is None else f"{len(self.probe_read)} read back"
            lines.append(
                f"  acks probe: {len(self.probe.acked)} writes acknowledged, {self.probe.failures} not; {read}"
            )
        crashed = {n: c.crashes for n, c in self.supervisor.components.items() if c.crashes}
        lines.append(
            f"  components that exited on their own: {sum(len(c) for c in crashed.values())} "
            f"({f.exits_broker_down} because the broker was away); ticks without a component fit to kill: "
            f"{f.skipped_kills}"
        )
        for name, crashes in sorted(crashed.items()):
            lines.append(f"    {name} (log {self.work / 'logs' / name}.log):")
            lines += [f"      status {status}: {why}" for _, status, why in crashes]
        lines.append(f"  log: {f.records} records, {f.malformed} malformed")
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        runner = own.ru_utime + own.ru_stime
        components = children.ru_utime + children.ru_stime
        broker = self.broker.cpu_seconds if self.broker is not None else 0.0
        broker += self.cluster.cpu_seconds if self.cluster is not None else 0.0
        cpu = runner + components + broker
        lines.append(
            f"  cpu: {cpu:.0f}s in all = {cpu / max(total, 1e-9):.2f} cores on average "
            f"(components {components:.0f}s, broker {broker:.0f}s, this run {runner:.0f}s)"
        )
        by = Counter(v.invariant for v in violations)
        names = [*INVARIANTS, *([ACKS_KEPT] if self.probe is not None else []), WRITES_ACKNOWLEDGED]
        names += [RUN_COMPLETED] if by[RUN_COMPLETED] else []
        lines.append("  invariants: " + ", ".join(f"{n} {'ok' if not by[n] else by[n]}" for n in names))
        if violations:
            lines.append("  violations:")
            lines += [f"    {v}" for v in violations]
        return lines


async def poll(condition: Callable[[], bool], *, timeout: float | None = None, interval: float = 0.2) -> bool:
    """Wait until ``condition()`` holds (True) or ``timeout`` seconds passed (False)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if condition():
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        await asyncio.sleep(interval)


# -- the command line ------------------------------------------------------------------------------------


class Killer(Protocol):
    async def kill(self, name: str, *, restart_after: float = 0.0) -> None: ...


async def kill_and_restart(supervisor: Killer, name: str, delay: float) -> None:
    """SIGKILL ``name`` and start it again after ``delay``, even when the caller is cancelled meanwhile.

    The kills task is cancelled when the churn ends; a component killed just
    before must still come back, or the settling waits for it in vain.
    """
    kill = asyncio.create_task(supervisor.kill(name, restart_after=delay), name=f"kill-{name}")
    try:
        await asyncio.shield(kill)
    except asyncio.CancelledError:
        await kill
        raise


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ops/chaos",
        description="Run a DRA workload with churn while components are SIGKILLed and the broker restarts; "
        "then check the invariants from the log.",
    )
    p.add_argument("--short", action="store_true", help="the CI size: 2 nodes, 40 pods, about 2 minutes in all")
    p.add_argument("--bus", choices=("kafka", "embedded"), default="kafka", help="Kafka (default) or the embedded log")
    p.add_argument(
        "--brokers",
        type=int,
        default=1,
        help="Kafka nodes (default 1); 3: a cluster that loses one node at a time (the busiest topic's leader too) "
        "every --broker-restart-interval seconds",
    )
    p.add_argument("--nodes", type=int, help="nodes, each with a driver and a node agent process (default 50)")
    p.add_argument("--devices", type=int, help="GPUs per node (default 8)")
    p.add_argument("--pods", type=int, help="pods created over the run (default 2000)")
    p.add_argument("--minutes", type=float, help="length of the churn phase (default 30)")
    p.add_argument("--kill-interval", type=float, help="mean seconds between two SIGKILLs (default 5)")
    p.add_argument("--broker-restart-interval", type=float, help="seconds between broker restarts (default 300)")
    p.add_argument("--broker-downtime", type=float, help="seconds the broker stays away at a restart (default 1)")
    p.add_argument("--settle-timeout", type=float, help="seconds to wait for the workload to finish after the churn")
    p.add_argument("--startup-timeout", type=float, help="seconds for the components to become ready")
    p.add_argument(
        "--budget",
        type=float,
        help="seconds for the whole run, start-up included; churn and settling shrink to fit (--short: 170; 0: none)",
    )
    p.add_argument("--writes", choices=("mixed", "rest", "log"), default="mixed", help="how the workload writes")
    p.add_argument("--seed", type=int, help="seed of the workload and of the kills (default: random)")
    p.add_argument("--work", type=Path, help="work directory (default: a new one under $TMPDIR)")
    p.add_argument("--keep", action="store_true", help="keep the work directory even when the run passes")
    p.add_argument("--verbose", action="store_true", help="components log at DEBUG")
    return p


def options_from(args: argparse.Namespace) -> Options:
    o = Options.short() if args.short else Options()
    for name in ("nodes", "devices", "pods", "minutes", "kill_interval", "broker_restart_interval", "broker_downtime"):
        value = getattr(args, name)
        if value is not None:
            setattr(o, name, value)
    if args.settle_timeout is not None:
        o.settle_timeout = args.settle_timeout
    if args.startup_timeout is not None:
        o.startup_timeout = args.startup_timeout
    if args.budget is not None:
        o.budget = args.budget or None
    o.bus = args.bus
    if args.brokers < 1:
        raise SystemExit("ops/chaos: --brokers must be at least 1")
    if args.brokers > 1:
        if args.bus != "kafka":
            raise SystemExit("ops/chaos: --brokers is for --bus kafka")
        o.on_cluster(args.brokers)
    o.writes = ("rest", "log") if args.writes == "mixed" else (args.writes,)
    o.seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    o.work = args.work
    o.keep = o.keep or args.keep or args.work is not None
    o.verbose = args.verbose
    return o


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    options = options_from(args)
    run = ChaosRun(options, out=lambda line: print(line, flush=True))
    (run.work / "logs").mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        filename=run.work / "logs" / "chaos.log",
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    violations: list[Violation] = []

    async def go() -> None:
        nonlocal violations
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: task.cancel() if task is not None else None)
        violations = await run.run()

    interrupted = False
    try:
        asyncio.run(go())
    except (KeyboardInterrupt, asyncio.CancelledError):
        interrupted = True
        violations.append(Violation(RUN_COMPLETED, "interrupted"))
    for line in run.summary(violations):
        print(line, flush=True)
    if not violations and not options.keep:
        shutil.rmtree(run.work, ignore_errors=True)
    kills = sum(run.figures.kills.values())
    print(
        f"chaos: kills={kills} broker_restarts={len(run.figures.broker_restarts)} violations={len(violations)}",
        flush=True,
    )
    if interrupted:
        return 130
    return 1 if violations else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
