"""Scheduler benchmark: kube's scheduler_perf DRA workloads, end to end through the log.

    .venv/bin/python ops/bench/scheduler.py [--bus URL | --kafka HOST:PORT] [--workload NAME ...]
        [--nodes 500] [--pods 2500] [--duration 10] [--json FILE] [--profile DIR] [--claim-controller]
        [--claim-cleanup apart|inline] [--scheduler draplane|kube|both] [--kube-version 1.31.14|1.37.2]
        [--kube-wire json|protobuf]

Workloads (``test/integration/scheduler_perf`` of Kubernetes 1.31, structured parameters):

- ``claim-template`` — SchedulingWithResourceClaimTemplate(Structured) 5000pods_500nodes:
  500 nodes with 10 devices each, 2,500 init pods (scheduled, not measured), then
  2,500 measured pods, each with one claim from a template.
- ``extended-resource`` — 1.37's ExtendedResource Explicit_25classes (``extended_resource.py``): pods ask for
  ``example.com/gpu-<i mod 25>`` and no claim; the scheduler creates one claim per pod. Printed beside
  its CI threshold (120 pods/s).
- ``steady-empty`` / ``steady-half`` / ``steady-full`` — SteadyStateClusterResourceClaimTemplate:
  10 pods with template claims are kept pending for ``--duration`` seconds; a
  bound pod is deleted and replaced at once, as scheduler_perf's
  ``createPodsSteadily`` does; its claim is released and deleted beside that,
  as the claim controller would (``--claim-cleanup inline``: before the next
  pod's create, as this benchmark did until issue 21).
  Before that, 0, half of all, or all but 10 devices are taken by allocated
  claims (``allocResourceClaims``: node after node).
- ``selector``, ``match``, ``partitionable``, ``partitionable-backtracking``,
  ``consumable-capacity`` — 1.37's DRA workloads, steady state on 500 nodes
  with their own slices, class and claim (``ops/bench/dra_workloads.py``);
  each prints kube-scheduler's CI threshold beside its pods/s.

What runs, each in its own process, as in the compose stack:

- the **committer** (``--role committer`` of this script: the bus, the committer
  and the real admission chain);
- the **scheduler**, exactly ``draplane scheduler --bus URL`` (optionally under
  pyinstrument with ``--profile DIR``);
- this process, the **load generator and observer**. It does the claim
  controller's part itself (claim from the template, owned by the pod, then the
  pod's ``status.resourceClaimStatuses``; in steady state: release and delete
  the claim of a deleted pod), because the claim controller is measured on its
  own (``ops/bench/claims.py``). ``--claim-controller`` runs the real
  controller-manager in a fourth process instead.

``--scheduler kube`` runs unmodified kube-scheduler (from ``ops/upstream``'s
cache, ``.cache/upstream/v<version>/kube-scheduler``) in place of draplane's,
on claim-template and the three steady-state workloads; ``--scheduler both``
runs draplane's and then kube-scheduler on each workload, each on a fresh log,
and prints both figures and their ratio. In these modes the committer is a
``draplane apiserver`` (kube-scheduler talks HTTP to it) for both schedulers,
so the two stacks differ only in the scheduler; the stack runs at the
kube-scheduler's release (``--emulated-version 1.31`` for 1.31.14, where the
objects are resource.k8s.io/v1alpha3; 1.37 and v1 for 1.37.2). How
kube-scheduler is configured: ``ops/bench/kube_scheduler.py``.

Figures: pods/s (average over the measured phase, and percentiles of 1-s
buckets of binding times, as scheduler_perf's throughput collector samples
them), create→bound latency p50/p90/p99 (log timestamps of the pod's create
and binding records), scheduling attempts per pod (decision records), and
CPU-seconds per measured pod of each process, and the committer's batches
in the window per pod with the requests appended in it per batch (its role
writes its batch count to a file when the bench sends it SIGUSR1 at the
window's edges; not with ``--scheduler
kube|both``, where the committer is an apiserver's). In steady state also the
objects records committed per bound pod and create→bound taken apart hop by
hop (``Steps``: each write's request and commit append times, from the pod's
create to its binding, and from the bound pod it replaced to its create
request). It prints figures and never
asserts on them. Without ``--bus``/``--kafka`` the embedded log in a temporary
directory is used.

On Kafka the broker's JVM takes about a minute of transactional load to warm
up: five steady-empty runs one after another on a just-started broker gave
57, 86, 115, 139 and 129 pods/s (docs/decisions/latency.md, "The issue's
targets"). Run a workload once, unmeasured, before the figures that count.
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
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

SELF = Path(__file__).resolve()
REPO = SELF.parents[2]
if importlib.util.find_spec("services") is None:  # run from a checkout without `pip install -e`
    sys.path.insert(0, str(REPO))
if str(REPO) not in sys.path:  # for ops.bench.dra_workloads (ops/ is a namespace package, not installed)
    sys.path.append(str(REPO))

from ops.bench import dra_workloads as dra137  # noqa: E402
from ops.bench import extended_resource, kube_scheduler, machine_speed  # noqa: E402
from ops.bench.fresh_logs import BACKENDS, dropped_after, fresh_prefix, fresh_url  # noqa: E402
from ops.bench.latency import request_times  # noqa: E402
from services.api.machinery.status import StatusError  # noqa: E402
from services.apiserver.certs import self_signed  # noqa: E402
from services.bus import open_bus  # noqa: E402
from services.bus.port import Bus  # noqa: E402
from services.bus.urls import parse_bus_url, with_query  # noqa: E402
from services.kube.generated_names import generate_name  # noqa: E402
from services.kube.resourceclaim import FINALIZER, generate_name_prefix  # noqa: E402
from services.runtime import gc_pause  # noqa: E402
from services.runtime.atomic_files import write_atomically  # noqa: E402
from services.runtime.client import Client  # noqa: E402
from services.runtime.informer import Change, Informer  # noqa: E402
from services.scheduler.decisions import attempt_started_ms, read_decisions  # noqa: E402
from services.testing.harness import ADMIN, LogHarness  # noqa: E402
from services.testing.ports import free_port  # noqa: E402
from services.testing.proc import cpu_seconds  # noqa: E402

RG = "resource.k8s.io"
DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"
TEMPLATE = "test-claim-template"
POD_CLAIM = "resource"
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
STEADY_PENDING = 10  # scheduler_perf's steady-state createPods count


# -- workloads -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    nodes: int
    devices_per_node: int = 10
    init_pods: int = 0
    measure_pods: int = 0
    steady: bool = False
    init_claims: int = 0  # steady state: allocated claims taking devices before the measurement
    duration: float = 10.0
    objects: dra137.DraObjects | None = None  # a 1.37 workload's slices, class and claim (ops/bench/dra_workloads.py)
    extended_classes: int = 0  # ExtendedResource: DeviceClasses with extended resource names; pods use those
    ci_threshold: float | None = None  # kube-scheduler's scheduler_perf CI threshold (pods/s)

    @property
    def devices(self) -> int:
        return self.nodes * self.devices_per_node


def workloads(nodes: int, pods: int | None, duration: float) -> dict[str, Workload]:
    devices = nodes * 10
    measure = pods if pods is not None else devices // 2
    init = min(measure, devices - measure)
    return {
        "claim-template": Workload(
            "claim-template",
            "SchedulingWithResourceClaimTemplate",
            nodes,
            init_pods=init,
            measure_pods=measure,
        ),
        "extended-resource": Workload(
            "extended-resource",
            extended_resource.TITLE,
            nodes,
            init_pods=init,
            measure_pods=measure,
            extended_classes=extended_resource.CLASSES,
            ci_threshold=extended_resource.CI_THRESHOLD,
        ),
        "steady-empty": Workload(
            "steady-empty", "SteadyStateClusterResourceClaimTemplate/empty", nodes, steady=True, duration=duration
        ),
        "steady-half": Workload(
            "steady-half",
            "SteadyStateClusterResourceClaimTemplate/half",
            nodes,
            steady=True,
            init_claims=devices // 2,
            duration=duration,
        ),
        "steady-full": Workload(
            "steady-full",
            "SteadyStateClusterResourceClaimTemplate/full",
            nodes,
            steady=True,
            init_claims=devices - STEADY_PENDING,
            duration=duration,
        ),
        **{
            name: Workload(
                name, o.upstream(nodes), nodes, dra137.devices_per_node(o), steady=True, duration=duration, objects=o
            )
            for name, o in dra137.DRA_1_37.items()
        },
    }


# -- objects (scheduler_perf's templates, in the storage form components write) -----------------------


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def node(name: str) -> dict[str, Any]:
    capacity = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": [{"type": "Ready", "status": "True"}],
            "phase": "Running",
        },
    }


def resource_slice(node_name: str, devices: int) -> dict[str, Any]:
    """The test driver's slice: one pool per node, ``instance-<i>`` devices with A100 attributes."""
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"instance-{i}",
                    "basic": {
                        "attributes": {
                            "model": {"string": "A100"},
                            "family": {"string": "GPU"},
                            "driverVersion": {"version": "1.2.3"},
                            "dra.example.com/numa": {"int": i},
                        },
                        "capacity": {"memory": {"value": "1Gi"}},
                    },
                }
                for i in range(devices)
            ],
        },
    }


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceClass",
        "metadata": {"name": CLASS},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def claim_spec() -> dict[str, Any]:
    return {"devices": {"requests": [{"name": "req-0", "deviceClassName": CLASS}]}}


def claim_template(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE, "namespace": ns},
        "spec": {"spec": claim_spec()},
    }


def pod(ns: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "containers": [
                {"name": "pause", "image": "registry.k8s.io/pause:3.9", "resources": {"claims": [{"name": POD_CLAIM}]}}
            ],
            "resourceClaims": [{"name": POD_CLAIM, "resourceClaimTemplateName": TEMPLATE}],
        },
    }


def generated_claim(p: dict[str, Any]) -> dict[str, Any]:
    """What the claim controller creates for the pod's template claim (1.28+ generated names)."""
    meta = p["metadata"]
    prefix = generate_name_prefix(meta["name"], POD_CLAIM)
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {
            "name": generate_name(prefix),
            "generateName": prefix,
            "namespace": meta["namespace"],
            "annotations": {POD_CLAIM_NAME_ANNOTATION: POD_CLAIM},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": claim_spec(),
    }


def allocation(node_name: str, device: str) -> dict[str, Any]:
    return {
        "devices": {"results": [{"request": "req-0", "driver": DRIVER, "pool": node_name, "device": device}]},
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
        },
    }


# -- the committer role ----------------------------------------------------------------------


BATCH_COUNT_WAIT = 2.0  # how long the bench waits for the committer role to write its batch count (s)


def no_fsync(_fd: int) -> None:
    """The batch count is read while the committer runs and never after a crash: no fsync."""


async def run_committer(url: str, batch_count: str | None = None) -> None:
    """The log's committer; with ``batch_count``, the file it writes its committed batches to on SIGUSR1.

    Asked for, not written on a timer: the count is only read at the measured
    window's two edges, and a timer's writes would be work inside the process
    being measured.
    """
    async with LogHarness.running(url) as harness:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if batch_count is not None:
            path = Path(batch_count)
            loop.add_signal_handler(
                signal.SIGUSR1,
                lambda: write_atomically(path, str(harness.committer.batches).encode(), fsync=no_fsync),
            )
        print("committer ready", flush=True)
        await stop.wait()


def take_count(path: Path) -> float | None:
    """The count the committer role wrote to ``path``, removing the file; None while there is none."""
    try:
        count = float(path.read_text())
    except (OSError, ValueError):
        return None
    path.unlink(missing_ok=True)
    return count


async def run_controller_manager(url: str) -> None:
    from services.controllers.manager import ControllerManager

    bus = open_bus(url)
    await bus.start()
    manager = ControllerManager(bus, garbage_collector=True)
    task = asyncio.create_task(manager.run())
    await manager.ready.wait()
    print("controller-manager ready", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await bus.close()


# -- processes -------------------------------------------------------------------------------


@dataclass
class Process:
    """A child process of the benchmark, with its CPU time from /proc."""

    name: str
    proc: asyncio.subprocess.Process
    ready_line: str = ""

    @classmethod
    async def start(cls, name: str, argv: Sequence[str], ready: str, *, timeout: float = 120.0) -> Process:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=None, env=env, cwd=str(REPO)
        )
        child = cls(name, proc)
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                await child.stop()
                raise RuntimeError(f"{name} did not get ready in {timeout:.0f} s")
            line = await asyncio.wait_for(proc.stdout.readline(), remaining)
            if not line:
                raise RuntimeError(f"{name} exited before it was ready (status {await proc.wait()})")
            if ready in line.decode(errors="replace"):
                child.ready_line = line.decode(errors="replace").strip()
                return child

    @classmethod
    async def spawn(cls, name: str, argv: Sequence[str], *, log: Path) -> Process:
        """A process that prints no ready line (kube-scheduler), its output to ``log``."""
        with log.open("ab") as out:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out, cwd=str(REPO)
            )
        return cls(name, proc)

    def cpu_seconds(self) -> float:
        seconds = cpu_seconds(self.proc.pid)
        return math.nan if seconds is None else seconds

    async def stop(self, timeout: float = 30.0) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


def self_cpu_seconds() -> float:
    return time.process_time()


# -- the observer and load generator ------------------------------------------------------------


@dataclass
class Observer:
    """Log timestamps of every pod's create and binding, from an informer listener."""

    created_ms: dict[str, int] = field(default_factory=dict)
    bound_ms: dict[str, int] = field(default_factory=dict)
    bound_event: asyncio.Event = field(default_factory=asyncio.Event)
    on_bound: Callable[[dict[str, Any]], None] | None = None

    def __call__(self, change: Change) -> None:
        if change.resource != "pods" or change.group != "":
            return
        key = f"{change.namespace}/{change.name}"
        if change.type == "ADDED":
            self.created_ms.setdefault(key, change.timestamp_ms)
        elif change.type == "MODIFIED" and key not in self.bound_ms:
            if (change.object.get("spec") or {}).get("nodeName"):
                self.bound_ms[key] = change.timestamp_ms
                self.bound_event.set()
                if self.on_bound is not None:
                    self.on_bound(change.object)


STEPS = ("pod", "claim", "pod claim status", "finalizer", "allocation", "binding")
"""A steady-state pod's writes from create to bound, in order: the load generator's three (as the claim
controller: the claim, then the pod's ``status.resourceClaimStatuses``), then the scheduler's three (as
kube's bindClaim and Bind: the claim's finalizer, its allocation and reservation, the binding)."""


@dataclass
class Steps:
    """Informer listener: the append time and request id of each step of every ``test`` pod's life."""

    steps: dict[str, dict[str, tuple[int, str | None]]] = field(default_factory=dict)
    claim_pod: dict[str, str] = field(default_factory=dict)  # claim key -> owning pod key
    appended_ms: list[int] = field(default_factory=list)  # every objects record's append time

    def __call__(self, change: Change) -> None:
        self.appended_ms.append(change.timestamp_ms)
        if change.namespace != "test" or change.type == "DELETED":
            return
        obj = change.object
        key = f"{change.namespace}/{change.name}"
        if change.resource == "pods" and change.group == "":
            if change.type == "ADDED":
                self._step(key, "pod", change)
            if (obj.get("status") or {}).get("resourceClaimStatuses"):
                self._step(key, "pod claim status", change)
            if (obj.get("spec") or {}).get("nodeName"):
                self._step(key, "binding", change)
        elif change.resource == "resourceclaims" and change.group == RG:
            owners = (obj.get("metadata") or {}).get("ownerReferences") or []
            pod_key = self.claim_pod.setdefault(key, f"{change.namespace}/{owners[0]['name']}" if owners else "")
            if not pod_key:
                return
            self._step(pod_key, "claim", change)
            if FINALIZER in ((obj.get("metadata") or {}).get("finalizers") or ()):
                self._step(pod_key, "finalizer", change)
            if (obj.get("status") or {}).get("allocation"):
                self._step(pod_key, "allocation", change)

    def _step(self, pod_key: str, step: str, change: Change) -> None:
        self.steps.setdefault(pod_key, {}).setdefault(step, (change.timestamp_ms, change.request_id))

    def writes_in(self, start_ms: int, end_ms: int) -> int:
        return sum(1 for t in self.appended_ms if start_ms <= t <= end_ms)

    def hops(
        self,
        keys: Sequence[str],
        requests: dict[str, int],
        bound_ms: dict[str, int],
        replaces: dict[str, str],
        attempt_started: dict[str, int],
    ) -> dict[str, list[float]]:
        """Per hop, its duration for every measured pod that has both ends (ms); ``attempt_started``: when the
        scheduling attempt that bound each pod started, which splits the scheduler's hop in two."""
        out: dict[str, list[float]] = {}

        def add(name: str, value: float | None) -> None:
            if value is not None:
                out.setdefault(name, []).append(value)

        for key in keys:
            steps = self.steps.get(key, {})
            if any(step not in steps for step in STEPS):
                continue
            sent = {step: requests.get(steps[step][1] or "") for step in STEPS}
            previous = bound_ms.get(replaces.get(key, ""))
            add("previous pod bound → pod create request", _minus(sent["pod"], previous))
            committed_before: int | None = None
            sent_before: int | None = None
            for step in STEPS:
                committed = steps[step][0]
                if committed_before is not None:
                    # A request chained to the one before it was sent with it, before that one's commit.
                    request_ms = sent[step]
                    chained = request_ms is not None and request_ms < committed_before
                    add(f"→ {step} request", _minus(sent[step], sent_before if chained else committed_before))
                add(f"request → {step} committed", _minus(committed, sent[step]))
                committed_before, sent_before = committed, sent[step]
            add("pod committed → binding committed", steps["binding"][0] - steps["pod"][0])
            started = attempt_started.get(key)
            add("(in it) pod claim status committed → attempt started", _minus(started, steps["pod claim status"][0]))
            add("(in it) attempt started → finalizer request", _minus(sent["finalizer"], started))
        return out


def _minus(a: int | None, b: int | None) -> float | None:
    return None if a is None or b is None else float(a - b)


class Loader:
    """Creates objects as admin, concurrently, and plays the claim controller for template pods."""

    def __init__(
        self,
        client: Client,
        *,
        parallel: int,
        claim_controller: bool,
        objects: dra137.DraObjects | None = None,
        extended_classes: int = 0,
        claim_cleanup: str = "apart",
    ) -> None:
        self.client = client
        self.claim_cleanup = claim_cleanup
        self.claim_form = objects.stored_claim_form() if objects else None
        self.gate = asyncio.Semaphore(parallel)
        self.claim_controller = claim_controller
        self.extended_classes = extended_classes
        self.claims: dict[str, str] = {}  # pod key -> claim name
        self.cleanups: set[asyncio.Task[None]] = set()  # claims of deleted pods being released and deleted

    async def create_all(self, group: str, plural: str, objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        async def one(obj: dict[str, Any]) -> dict[str, Any]:
            async with self.gate:
                return await self.client.create(group, plural, obj)

        return list(await asyncio.gather(*(one(o) for o in objects)))

    async def create_pod(self, ns: str, name: str, *, replacing: tuple[str, str] | None = None) -> None:
        """Create a pod (and, as the claim controller, its claim); ``replacing``: the namespace and name of a
        done pod to delete first, in the same chain of requests (the steady state's delete, then create)."""
        if self.extended_classes:
            if replacing is not None:
                await self.delete_pod(*replacing)
            index = extended_resource.index_of(name)
            body = extended_resource.pod(ns, name, index=index, classes=self.extended_classes)
            async with self.gate:
                await self.client.create("", "pods", body)
            return
        async with self.gate:
            if replacing is None:
                created = await self.client.create("", "pods", pod(ns, name))
            else:
                created = await self.replace_pod(*replacing, pod(ns, name))
            if self.claim_controller:
                return
            claim = generated_claim(created)
            if self.claim_form is not None:  # a 1.37 workload's claim
                claim.update(self.claim_form)
            # As the resourceclaim controller does: it names the claim itself, so the claim's create and
            # the pod status naming it go as one chain of requests (services/controllers/resourceclaim.py).
            claim_name = claim["metadata"]["name"]
            self.claims[f"{ns}/{name}"] = claim_name
            status = {"resourceClaimStatuses": [{"name": POD_CLAIM, "resourceClaimName": claim_name}]}
            for result in await self.client.write_chain(
                [
                    self.client.request("create", RG, "resourceclaims", ns, claim_name, obj=claim),
                    self.client.request(
                        "patch",
                        "",
                        "pods",
                        ns,
                        name,
                        patch={"status": status},
                        patch_type="merge",
                        options={"subresource": "status"},
                    ),
                ]
            ):
                if isinstance(result, StatusError):
                    raise result

    async def create_pods(self, ns: str, names: Sequence[str]) -> None:
        await asyncio.gather(*(self.create_pod(ns, n) for n in names))

    async def replace_pod(self, ns: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """Delete a done pod and create the next one as one chain: the create is applied only if the delete
        was, as scheduler_perf creates the next pod only once the delete returned."""
        meta = body["metadata"]
        results = await self.client.write_chain(
            [
                self.client.request("delete", "", "pods", ns, name, options={"gracePeriodSeconds": 0}),
                self.client.request("create", "", "pods", meta["namespace"], meta["name"], obj=body),
            ]
        )
        for result in results:
            if isinstance(result, StatusError):
                raise result
        self.release_claim(ns, name)
        created = results[-1]
        assert isinstance(created, dict)
        return created

    async def delete_pod(self, ns: str, name: str) -> None:
        """A steady-state pod is done: delete it; (as the claim controller) release and delete its claim.

        scheduler_perf's steady state deletes the pod and at once creates the next one; the claim
        controller cleans the claim up on its own, concurrently. So by default (``claim_cleanup``
        "apart") the claim's three writes (release, drop the finalizer, delete) run as a task of
        their own (``settle`` waits for them), not in the chain before the next pod's create;
        "inline" keeps them in that chain, as this benchmark did before.
        """
        async with self.gate:
            await self.client.delete("", "pods", ns, name, gracePeriodSeconds=0)
        if self.claim_cleanup == "inline":
            claim_name = self.claims.pop(f"{ns}/{name}", None)
            if not self.claim_controller and claim_name is not None:
                await self.delete_claim(ns, claim_name)
            return
        self.release_claim(ns, name)

    def release_claim(self, ns: str, name: str) -> None:
        """As the claim controller, once the pod is deleted: release and delete its claim, as a task of its own."""
        claim_name = self.claims.pop(f"{ns}/{name}", None)
        if self.claim_controller or claim_name is None:
            return
        task = asyncio.create_task(self.delete_claim(ns, claim_name))
        self.cleanups.add(task)
        task.add_done_callback(self.cleanups.discard)

    async def delete_claim(self, ns: str, claim_name: str) -> None:
        async with self.gate:
            current = self.client.get(RG, "resourceclaims", ns, claim_name)
            if current is None:
                return
            # Release, drop the finalizer, delete: one chain of requests, each applied only if the one
            # before it was (the finalizer's on the version the release wrote).
            unversioned = {k: v for k, v in current["metadata"].items() if k != "resourceVersion"}
            results = await self.client.write_chain(
                [
                    self.client.request(
                        "update_status", RG, "resourceclaims", ns, claim_name, obj={**current, "status": {}}
                    ),
                    self.client.request(
                        "update",
                        RG,
                        "resourceclaims",
                        ns,
                        claim_name,
                        obj={**current, "metadata": {**unversioned, "finalizers": []}, "status": {}},
                        after_version=True,
                    ),
                    self.client.request("delete", RG, "resourceclaims", ns, claim_name),
                ]
            )
            for result in results:
                if isinstance(result, StatusError):
                    raise result

    async def settle(self) -> None:
        """Wait for the claim clean-ups begun so far (their errors are raised)."""
        while self.cleanups:
            await asyncio.gather(*list(self.cleanups))


@dataclass
class Result:
    workload: str
    title: str
    bus: str
    nodes: int
    devices: int
    measured_pods: int
    seconds: float
    pods_per_s: float
    bucket_pods_per_s: dict[str, float]
    latency_ms: dict[str, float]
    attempts_per_pod: float
    attempts_histogram: dict[str, int]
    cpu_s_per_pod: dict[str, float]
    cpu_s: dict[str, float]
    setup_s: float
    threshold: str = ""  # kube-scheduler's CI threshold for the workload (scheduler_perf workloads)
    hops_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # steady state: create→bound, hop by hop
    writes_per_pod: float = math.nan  # steady state: objects records committed in the window per bound pod
    committer_batches_per_pod: float = math.nan  # the committer's batches in the window per bound pod
    requests_per_batch: float = math.nan  # requests appended in the window per committer batch in it
    scheduler: str = "draplane"  # which scheduler bound the pods, with its settings
    machine_reference_ms: dict[str, float] = field(default_factory=dict)  # ops/bench/machine_speed.py


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def throughput_buckets(start_ms: int, bound_ms: Sequence[int]) -> list[int]:
    """Pods bound in each whole second after ``start_ms`` (the last, partial second is dropped)."""
    if not bound_ms:
        return []
    seconds = (max(bound_ms) - start_ms) // 1000
    counts = Counter((t - start_ms) // 1000 for t in bound_ms)
    return [counts.get(i, 0) for i in range(max(seconds, 1))]


@dataclass
class Bench:
    url: str
    workload: Workload
    args: argparse.Namespace
    workdir: str
    scheduler: str = "draplane"  # or "kube": unmodified kube-scheduler through a draplane apiserver
    procs: dict[str, Process] = field(default_factory=dict)
    replaces: dict[str, str] = field(default_factory=dict)  # steady state: new pod -> the bound pod it replaced
    batch_counts: tuple[float, float] = (math.nan, math.nan)  # the committer's batches at the last two window edges
    probe: machine_speed.Probe = field(default_factory=machine_speed.Probe)  # times the machine during the window
    speed_during: float = math.nan  # its median (ops/bench/machine_speed.py)

    @property
    def through_apiserver(self) -> bool:
        """Whether the committer is a `draplane apiserver` (``--scheduler kube|both``: for both schedulers)."""
        return bool(self.args.scheduler != "draplane")

    async def start_processes(self) -> None:
        me = [sys.executable, str(SELF)]
        if self.through_apiserver:
            server, token, ca_file = await self.start_apiserver()
        else:
            self.procs["committer"] = await Process.start(
                "committer",
                [*me, "--role", "committer", "--bus", self.url, "--batch-count", self.batch_count_file],
                "committer ready",
            )
        if self.scheduler == "kube":
            await self.start_kube_scheduler(server, token, ca_file)
        else:
            await self.start_draplane_scheduler()
        if self.args.claim_controller:
            self.procs["controller-manager"] = await Process.start(
                "controller-manager",
                [*me, "--role", "controller-manager", "--bus", self.url],
                "controller-manager ready",
            )

    async def start_apiserver(self) -> tuple[str, str, Path]:
        """`draplane apiserver` (HTTPS) on a free port, the log's committer: its URL, kube-scheduler's token, CA."""
        data = Path(tempfile.mkdtemp(prefix="apiserver-", dir=self.workdir))
        token = uuid.uuid4().hex
        tokens = data / "tokens.csv"
        tokens.write_text(kube_scheduler.token_file_line(token))
        cert, key = self_signed(data / "pki")
        argv = [sys.executable, "-m", "services.cli", "apiserver", "--bus", self.url, "--data", str(data)]
        argv += ["--listen", "127.0.0.1:0", "--token-auth-file", str(tokens)]
        argv += ["--tls-cert-file", str(cert), "--tls-private-key-file", str(key)]
        argv += ["--log-level", "WARNING", "--plain-logs", "--emulated-version", self.args.emulated_version]
        proc = await Process.start("apiserver", argv, "apiserver ready on")
        self.procs["apiserver"] = proc
        return f"https://127.0.0.1:{proc.ready_line.rsplit(' ', 1)[-1]}", token, cert

    async def start_kube_scheduler(self, server: str, token: str, ca_file: Path) -> None:
        version = self.args.kube_version
        path, why = kube_scheduler.binary(version)
        if path is None:
            raise RuntimeError(why)
        workdir = Path(tempfile.mkdtemp(prefix="kube-scheduler-", dir=self.workdir))
        config = kube_scheduler.write_config(
            workdir, server=server, token=token, ca_file=ca_file, wire=self.args.kube_wire
        )
        port = free_port()
        log = workdir / "kube-scheduler.log"
        argv = [str(path), *kube_scheduler.scheduler_args(version, config=config, port=port)]
        proc = await Process.spawn("kube-scheduler", argv, log=log)
        self.procs["kube-scheduler"] = proc
        try:
            await kube_scheduler.wait_ready(port, timeout=120.0, alive=proc.proc)
        except RuntimeError as exc:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
            raise RuntimeError(f"{exc}; the end of its log ({log}):\n{tail}") from None

    async def start_draplane_scheduler(self) -> None:
        scheduler = [sys.executable]
        if self.args.profile:
            if self.args.profiler == "cprofile":
                out = Path(self.args.profile) / f"scheduler-{self.workload.name}.prof"
                scheduler += ["-m", "cProfile", "-o", str(out)]
            else:
                out = Path(self.args.profile) / f"scheduler-{self.workload.name}.txt"
                scheduler += ["-m", "pyinstrument", "--renderer", "text", "--outfile", str(out), "-i", "0.005"]
        data = tempfile.mkdtemp(prefix="scheduler-", dir=self.workdir)  # its informer snapshot: fresh per run
        scheduler += ["-m", "services.cli", "scheduler", "--bus", self.url, "--data", data]
        scheduler += ["--log-level", "WARNING", "--plain-logs", "--emulated-version", self.args.emulated_version]
        self.procs["scheduler"] = await Process.start("scheduler", scheduler, "scheduler ready")

    async def stop_processes(self) -> None:
        for proc in reversed(list(self.procs.values())):
            # A profiled scheduler renders its profile on the way out: give it time.
            await proc.stop(timeout=600.0 if self.args.profile and proc.name == "scheduler" else 30.0)

    @property
    def batch_count_file(self) -> str:
        return str(Path(self.workdir) / f"committer-batches-{self.workload.name}")

    async def window_edge(self) -> dict[str, float]:
        """At the measured window's start or end: each process's CPU seconds (returned) and the
        committer's batch count (kept in ``batch_counts``; NaN when the committer is an apiserver's)."""
        out = {name: proc.cpu_seconds() for name, proc in self.procs.items()}
        out["load generator"] = self_cpu_seconds()
        self.batch_counts = (self.batch_counts[1], await self.committer_batches())
        return out

    async def committer_batches(self) -> float:
        """The committer role's batches so far: it writes them to a file when sent SIGUSR1."""
        committer = self.procs.get("committer")
        if committer is None or committer.proc.returncode is not None:
            return math.nan
        path = Path(self.batch_count_file)
        take_count(path)  # a stale count must not answer this request
        committer.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + BATCH_COUNT_WAIT
        while time.monotonic() < deadline:
            count = take_count(path)
            if count is not None:
                return count
            await asyncio.sleep(0.001)
        return math.nan

    async def run(self) -> Result:
        try:
            await self.start_processes()
            bus = open_bus(self.url)
            await bus.start()
            try:
                return await self.measure(bus)
            finally:
                await bus.close()
        finally:
            await self.probe.stop()  # when the window did not close (nothing when it did)
            await self.stop_processes()

    async def measure(self, bus: Bus) -> Result:
        w = self.workload
        informer = Informer(bus, name="bench")
        observer = Observer()
        informer.add_listener(observer)
        await informer.start()
        await informer.wait_synced(120)
        client = Client(bus, user=ADMIN, informer=informer, timeout=60.0)
        await client.start()
        loader = Loader(
            client,
            parallel=self.args.parallel,
            claim_controller=self.args.claim_controller,
            objects=w.objects,
            extended_classes=w.extended_classes,
            claim_cleanup=self.args.claim_cleanup,
        )
        steps = Steps()
        if w.steady:
            informer.add_listener(steps)
        try:
            setup_started = time.monotonic()
            await self.setup(loader)
            speed_before = machine_speed.reference_ms()
            if w.steady:
                measured, started_ms, ended_ms, cpu0, cpu1 = await self.steady(loader, observer)
            else:
                measured, started_ms, ended_ms, cpu0, cpu1 = await self.batch(loader, observer, setup_started)
            speed_after = machine_speed.reference_ms()
            setup_s = time.monotonic() - setup_started - (ended_ms - started_ms) / 1000
            # Decision records are draplane's scheduler's; kube-scheduler's attempts are not counted.
            attempts, started = await self.attempts(bus, measured) if self.scheduler == "draplane" else ({}, {})
            breakdown = {}
            batches = self.batch_counts[1] - self.batch_counts[0]
            requests = await request_times(bus) if w.steady or not math.isnan(batches) else {}
            if w.steady:
                breakdown = steps.hops(measured, requests, observer.bound_ms, self.replaces, started)
            in_window = sum(1 for t in requests.values() if started_ms <= t <= ended_ms)
        finally:
            await client.close()
            await informer.stop()
        bound = [observer.bound_ms[k] for k in measured if k in observer.bound_ms]
        latencies = [observer.bound_ms[k] - observer.created_ms[k] for k in measured if k in observer.bound_ms]
        buckets = throughput_buckets(started_ms, bound)
        seconds = (ended_ms - started_ms) / 1000
        n = len(bound)
        cpu = {name: cpu1[name] - cpu0.get(name, 0.0) for name in cpu1}
        histogram = Counter(attempts.values())
        return Result(
            workload=w.name,
            title=w.title,
            bus=self.url.split("://", 1)[0],
            nodes=w.nodes,
            devices=w.devices,
            measured_pods=n,
            seconds=seconds,
            pods_per_s=n / seconds if seconds > 0 else math.nan,
            bucket_pods_per_s={f"p{q}": percentile([float(b) for b in buckets], q) for q in (50, 90, 95, 99)},
            latency_ms={f"p{q}": percentile([float(v) for v in latencies], q) for q in (50, 90, 99)},
            attempts_per_pod=sum(attempts.values()) / len(attempts) if attempts else math.nan,
            attempts_histogram={str(k): v for k, v in sorted(histogram.items())},
            cpu_s_per_pod={name: value / n if n else math.nan for name, value in cpu.items()},
            cpu_s=cpu,
            setup_s=setup_s,
            threshold=threshold_text(w),
            hops_ms={name: {"p50": percentile(v, 50), "p99": percentile(v, 99)} for name, v in breakdown.items()},
            writes_per_pod=steps.writes_in(started_ms, ended_ms) / n if n and w.steady else math.nan,
            committer_batches_per_pod=batches / n if n else math.nan,
            requests_per_batch=in_window / batches if batches > 0 else math.nan,
            scheduler=self.scheduler_label(),
            machine_reference_ms={"before": speed_before, "during": self.speed_during, "after": speed_after},
        )

    def scheduler_label(self) -> str:
        if self.scheduler == "kube":
            return kube_scheduler.label(self.args.kube_version, wire=self.args.kube_wire)
        stack = ", committer in a draplane apiserver" if self.through_apiserver else ""
        return f"draplane (emulated {self.args.emulated_version}{stack})"

    async def setup(self, loader: Loader) -> None:
        w = self.workload
        await loader.create_all("", "namespaces", [namespace("init"), namespace("test")])
        names = [f"scheduler-perf-dra-{i:04d}" for i in range(w.nodes)]
        await loader.create_all("", "nodes", [node(n) for n in names])
        if w.objects is not None:
            o = w.objects
            slices = [s for i, n in enumerate(names) for s in o.stored_slices(i, n)]
            await loader.create_all(RG, "resourceslices", slices)
            await loader.create_all(RG, "deviceclasses", [o.stored_class()])
            templates = [o.stored_template(ns) for ns in ("init", "test")]
            await loader.create_all(RG, "resourceclaimtemplates", templates)
            return
        await loader.create_all(RG, "resourceslices", [resource_slice(n, w.devices_per_node) for n in names])
        await loader.create_all(RG, "deviceclasses", [device_class()])
        if w.extended_classes:
            await loader.create_all(RG, "deviceclasses", extended_resource.device_classes(w.extended_classes))
        await loader.create_all(RG, "resourceclaimtemplates", [claim_template("init"), claim_template("test")])
        if w.init_claims:
            await self.allocate_init_claims(loader, names)

    async def allocate_init_claims(self, loader: Loader, names: Sequence[str]) -> None:
        """allocResourceClaims: claims in ``init`` allocated node after node, device after device."""
        w = self.workload
        slots = [(n, f"instance-{d}") for n in names for d in range(w.devices_per_node)][: w.init_claims]

        async def one(i: int, where: tuple[str, str]) -> None:
            async with loader.gate:
                obj = {
                    "apiVersion": "resource.k8s.io/v1alpha3",
                    "kind": "ResourceClaim",
                    "metadata": {"name": f"init-claim-{i:05d}", "namespace": "init"},
                    "spec": claim_spec(),
                }
                created = await loader.client.create(RG, "resourceclaims", obj)
                await loader.client.update_status(
                    RG, "resourceclaims", {**created, "status": {"allocation": allocation(*where)}}
                )

        await asyncio.gather(*(one(i, s) for i, s in enumerate(slots)))

    async def wait_bound(self, observer: Observer, keys: Sequence[str], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not all(k in observer.bound_ms for k in keys):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                missing = sum(1 for k in keys if k not in observer.bound_ms)
                raise RuntimeError(f"{missing} of {len(keys)} pods not bound after {timeout:.0f} s")
            observer.bound_event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(observer.bound_event.wait(), min(remaining, 1.0))

    async def batch(
        self, loader: Loader, observer: Observer, setup_started: float
    ) -> tuple[list[str], int, int, dict[str, float], dict[str, float]]:
        w = self.workload
        init = [f"init-{i:05d}" for i in range(w.init_pods)]
        await loader.create_pods("init", init)
        await self.wait_bound(observer, [f"init/{n}" for n in init], timeout=self.args.timeout)
        names = [f"test-{i:05d}" for i in range(w.measure_pods)]
        keys = [f"test/{n}" for n in names]
        await self.probe.start()
        cpu0 = await self.window_edge()
        started_ms = int(time.time() * 1000)
        creating = asyncio.create_task(loader.create_pods("test", names))
        await self.wait_bound(observer, keys, timeout=self.args.timeout)
        await creating
        cpu1 = await self.window_edge()
        self.speed_during = await self.probe.stop()
        ended_ms = max(observer.bound_ms[k] for k in keys)
        first_created = min(observer.created_ms[k] for k in keys)
        return keys, min(started_ms, first_created), ended_ms, cpu0, cpu1

    async def steady(
        self, loader: Loader, observer: Observer
    ) -> tuple[list[str], int, int, dict[str, float], dict[str, float]]:
        w = self.workload
        counter = 0
        measured: list[str] = []
        replacing: set[asyncio.Task[None]] = set()
        stopping = False

        def next_name() -> str:
            nonlocal counter
            counter += 1
            return f"steady-{counter:06d}"

        async def replace(bound_pod: dict[str, Any]) -> None:
            meta = bound_pod["metadata"]
            done = (meta["namespace"], meta["name"])
            inline = loader.claim_cleanup == "inline"  # the claim's clean-up between the delete and the create
            if stopping or inline:
                await loader.delete_pod(*done)
            if stopping:
                return
            name = next_name()
            measured.append(f"test/{name}")
            self.replaces[f"test/{name}"] = f"{meta['namespace']}/{meta['name']}"
            await loader.create_pod("test", name, replacing=None if inline else done)

        def on_bound(obj: dict[str, Any]) -> None:
            if obj["metadata"]["namespace"] != "test":
                return
            task = asyncio.create_task(replace(obj))
            replacing.add(task)
            task.add_done_callback(replacing.discard)

        observer.on_bound = on_bound
        await self.probe.start()
        cpu0 = await self.window_edge()
        started_ms = int(time.time() * 1000)
        first = [next_name() for _ in range(STEADY_PENDING)]
        measured += [f"test/{n}" for n in first]
        await loader.create_pods("test", first)
        await asyncio.sleep(w.duration)
        stopping = True
        ended_ms = int(time.time() * 1000)
        cpu1 = await self.window_edge()
        self.speed_during = await self.probe.stop()
        observer.on_bound = None
        while replacing:
            await asyncio.gather(*list(replacing), return_exceptions=True)
        await loader.settle()
        in_window = [k for k in measured if observer.bound_ms.get(k, ended_ms + 1) <= ended_ms]
        return in_window, started_ms, ended_ms, cpu0, cpu1

    async def attempts(self, bus: Bus, keys: Sequence[str]) -> tuple[dict[str, int], dict[str, int]]:
        """Attempts per measured pod from the decision records (waiting for the last ones to land), and when
        (ms since the epoch) the attempt that bound it started."""
        wanted = set(keys)
        deadline = time.monotonic() + 30
        while True:
            counts: Counter[str] = Counter()
            bound: set[str] = set()
            started: dict[str, int] = {}
            for decision in await read_decisions(bus):
                if decision.pod in wanted:
                    counts[decision.pod] += 1
                    if (decision.record.get("binding") or {}).get("result") == "bound":
                        bound.add(decision.pod)
                        at = attempt_started_ms(decision.record)  # services/scheduler/decisions.py
                        if at is not None:
                            started[decision.pod] = at
            if bound >= wanted or time.monotonic() > deadline:
                return {k: counts.get(k, 0) for k in keys}, started
            await asyncio.sleep(0.5)


# -- reporting ------------------------------------------------------------------------------------


def threshold_text(w: Workload) -> str:
    """kube-scheduler's CI threshold for the workload, for the report ("" when it is not a scheduler_perf one)."""
    if w.objects is not None:
        return dra137.threshold_text(w.objects, w.nodes)
    if w.ci_threshold is not None:
        return f"{w.ci_threshold:g} pods/s (scheduler_perf)"
    return ""


def report(result: Result) -> str:
    b = result.bucket_pods_per_s
    lat = result.latency_ms
    cpu = ", ".join(f"{name} {value * 1000:.2f} ms" for name, value in result.cpu_s_per_pod.items())
    lines = [
        f"{result.title} on {result.bus}: {result.nodes} nodes, {result.devices} devices",
        f"  scheduler          {result.scheduler}",
        f"  measured pods      {result.measured_pods} in {result.seconds:.2f} s (setup {result.setup_s:.1f} s)",
        f"  pods/s             average {result.pods_per_s:.1f}; 1-s buckets p50 {b['p50']:.0f}, p90 {b['p90']:.0f}, "
        f"p95 {b['p95']:.0f}, p99 {b['p99']:.0f}",
        f"  create→bound       p50 {lat['p50']:.0f} ms, p90 {lat['p90']:.0f} ms, p99 {lat['p99']:.0f} ms",
        f"  attempts per pod   {attempts_text(result)}",
        f"  CPU per pod        {cpu}",
    ]
    if result.machine_reference_ms:
        speed = result.machine_reference_ms
        lines.append(f"  machine speed      {machine_speed.text(speed['before'], speed['after'], speed['during'])}")
    if not math.isnan(result.committer_batches_per_pod):
        lines.append(
            f"  committer batches  {result.committer_batches_per_pod:.2f} per pod, "
            f"{result.requests_per_batch:.1f} requests per batch (requests appended in the window / batches)"
        )
    if result.threshold:
        lines.insert(4, f"  CI threshold       {result.threshold}")
    if result.hops_ms:
        lines.append(f"  objects writes     {result.writes_per_pod:.1f} per bound pod")
        lines.append(
            "  hops (p50 / p99 ms, log append times; a request's hop is from the commit before it, or from the"
            " request before it when sent with it in one chain)"
        )
        lines += [f"    {name:<44} {v['p50']:7.1f} / {v['p99']:7.1f}" for name, v in result.hops_ms.items()]
    return "\n".join(lines)


def attempts_text(result: Result) -> str:
    if not result.attempts_histogram:
        return "n/a (only draplane's scheduler writes decision records)"
    return f"{result.attempts_per_pod:.3f} (histogram {result.attempts_histogram})"


def bus_url(args: argparse.Namespace, workdir: Path) -> str:
    """A fresh log per workload: a new topic prefix on Kafka, a new file for the embedded log (`fresh_logs`)."""
    if args.bus:
        if args.bus.startswith("kafka://"):  # within the user's prefix
            return with_query(args.bus, prefix=parse_bus_url(args.bus).prefix + fresh_prefix())
        return str(args.bus)
    kafka = args.kafka or os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "")
    return fresh_url(args.backend, kafka=kafka, workdir=workdir)


@asynccontextmanager
async def run_log(args: argparse.Namespace, workdir: Path) -> AsyncIterator[str]:
    """`bus_url`, deleted after the run when the benchmark chose it: an embedded ``--bus`` file is kept."""
    url = bus_url(args, workdir)
    if url == args.bus:
        yield url
        return
    async with dropped_after(url):
        yield url


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument(
        "--role", choices=["bench", "committer", "controller-manager"], default="bench", help=argparse.SUPPRESS
    )
    p.add_argument("--batch-count", help=argparse.SUPPRESS)  # the committer role: where it writes its batch count
    p.add_argument("--bus", help="a bus URL (kafka://…?prefix=… or sqlite:///…); default: a fresh log per workload")
    p.add_argument("--backend", choices=BACKENDS, default="embedded", help="where fresh logs live")
    p.add_argument("--kafka", help="Kafka bootstrap servers for --backend kafka (default: $KAFKA_BOOTSTRAP_SERVERS)")
    p.add_argument(
        "--workload",
        action="append",
        choices=["claim-template", "extended-resource", "steady-empty", "steady-half", "steady-full", *dra137.DRA_1_37],
        help="repeat for several (default: all)",
    )
    p.add_argument("--nodes", type=int, default=500, help="nodes with 10 devices each (default 500)")
    p.add_argument(
        "--emulated-version",
        help="the stack's release: 1.37 (default) or 1.31 (the seeds'); with --scheduler kube|both, kube-scheduler's",
    )
    p.add_argument(
        "--scheduler",
        choices=["draplane", "kube", "both"],
        default="draplane",
        help="which scheduler binds the pods; both: draplane's, then kube-scheduler, and their ratio",
    )
    p.add_argument(
        "--kube-version",
        choices=kube_scheduler.VERSIONS,
        help="kube-scheduler's version (default: the newest built one, else 1.31.14)",
    )
    p.add_argument(
        "--kube-wire",
        choices=sorted(kube_scheduler.CONTENT_TYPES),
        default="json",
        help="kube-scheduler's content type: json (default, as the recorded figures) or protobuf (kube's default)",
    )
    p.add_argument("--pods", type=int, help="measured pods of claim-template (default: half the devices)")
    p.add_argument("--duration", type=float, default=10.0, help="seconds of steady state (default 10)")
    p.add_argument(
        "--warmup",
        type=float,
        default=0.0,
        help="seconds of steady-empty run first on a log of its own and not counted (a fresh Kafka broker); default 0",
    )
    p.add_argument("--parallel", type=int, default=256, help="concurrent writes of the load generator")
    p.add_argument("--timeout", type=float, default=900.0, help="give up when pods are not bound after this long")
    p.add_argument("--claim-controller", action="store_true", help="run the controller-manager instead of faking it")
    p.add_argument(
        "--claim-cleanup",
        choices=["apart", "inline"],
        default="apart",
        help="steady state: release and delete a bound pod's claim beside (default) or before the next pod's create",
    )
    p.add_argument("--profile", help="directory for a profile of the scheduler process per workload")
    p.add_argument(
        "--profiler",
        choices=["pyinstrument", "cprofile"],
        default="pyinstrument",
        help="pyinstrument (wall-clock call tree, .txt) or cProfile (CPU per function, .prof for pstats)",
    )
    p.add_argument("--json", help="write the results as JSON to this file")
    args = p.parse_args(argv)
    settle_versions(p, args)
    return args


KUBE_WORKLOADS = ("claim-template", "steady-empty", "steady-half", "steady-full")


def settle_versions(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """kube-scheduler's version and the stack's release; a stack kube-scheduler cannot run on is refused."""
    if args.scheduler == "draplane":
        args.emulated_version = args.emulated_version or "1.37"
        return
    args.kube_version = args.kube_version or kube_scheduler.default_version()
    release = kube_scheduler.release_of(args.kube_version)
    if args.emulated_version not in (None, release):
        p.error(f"kube-scheduler {args.kube_version} needs the stack at --emulated-version {release}")
    args.emulated_version = release
    other = sorted(set(args.workload or ()) - set(KUBE_WORKLOADS))
    if other:
        p.error(f"--scheduler {args.scheduler} runs {', '.join(KUBE_WORKLOADS)}; not {', '.join(other)}")
    if args.profile:
        p.error("--profile profiles draplane's scheduler; use it with --scheduler draplane")


async def main_async(args: argparse.Namespace) -> int:
    if args.role == "committer":
        await run_committer(args.bus, args.batch_count)
        return 0
    if args.role == "controller-manager":
        await run_controller_manager(args.bus)
        return 0
    chosen = workloads(args.nodes, args.pods, args.duration)
    names = args.workload or (list(chosen) if args.scheduler == "draplane" else list(KUBE_WORKLOADS))
    schedulers = ["draplane", "kube"] if args.scheduler == "both" else [args.scheduler]
    if "kube" in schedulers and kube_scheduler.binary(args.kube_version)[0] is None:
        raise SystemExit(kube_scheduler.binary(args.kube_version)[1])
    runs = len(names) * len(schedulers)
    if args.bus and not args.bus.startswith("kafka://") and (runs > 1 or args.warmup > 0):
        raise SystemExit(
            "an embedded --bus holds one run; pick one --workload and one --scheduler, no --warmup, or use --backend"
        )
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-scheduler-") as tmp:
        if args.warmup > 0:
            await warm_up(args, Path(tmp), schedulers[0])
        for name in names:
            pair: dict[str, Result] = {}
            for scheduler in schedulers:
                async with run_log(args, Path(tmp)) as url:
                    result = await Bench(url, chosen[name], args, tmp, scheduler=scheduler).run()
                print(report(result), flush=True)
                results.append(result)
                pair[scheduler] = result
            if len(pair) == 2:
                print(compare(pair["kube"], pair["draplane"]), flush=True)
    if args.json:
        write_json(args.json, results)
    return 0


async def warm_up(args: argparse.Namespace, tmp: Path, scheduler: str) -> None:
    """``--warmup``: the steady-empty workload for that many seconds on a log of its own, not counted.

    Why: a broker started minutes ago still runs interpreted and cold code: the first steady-empty run on
    a fresh broker gave 34-36 pods/s where runs minutes later gave 56-107 (docs/decisions/latency.md,
    "Fourteenth pass"). A warm-up on another prefix (another file on the embedded log) leaves the
    measured run's log fresh.
    """
    workload = workloads(args.nodes, None, args.warmup)["steady-empty"]
    async with run_log(args, tmp) as url:
        result = await Bench(url, workload, args, str(tmp), scheduler=scheduler).run()
    print(
        f"warm-up: {workload.title}, {args.warmup:g} s, {result.pods_per_s:.1f} pods/s (not counted)",
        flush=True,
    )


def compare(kube: Result, draplane: Result) -> str:
    """The ratio line of one workload run by both schedulers."""
    return kube_scheduler.comparison(
        kube.title,
        kube=kube_scheduler.Figures(kube.pods_per_s, kube.latency_ms["p50"]),
        draplane=kube_scheduler.Figures(draplane.pods_per_s, draplane.latency_ms["p50"]),
        kube_label=kube.scheduler,
    )


def write_json(path: str, results: Sequence[Result]) -> None:
    Path(path).write_bytes(orjson.dumps([asdict(r) for r in results], option=orjson.OPT_INDENT_2))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    gc_pause.tune_for_a_long_lived_heap()  # this process runs the committer: tuned as `draplane` tunes it
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
