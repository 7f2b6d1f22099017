"""The scheduler's own CPU per pod, in one process and without the log.

``ops/bench/scheduler.py`` measures the whole pipeline (committer, log,
scheduler, load generator in their own processes). This one isolates what the
scheduler core spends per pod — the scheduling cycle (PreFilter … Reserve over
kube's adaptive share of the nodes) and the binding cycle (PreBind, Bind) —
on scheduler_perf's SchedulingWithResourceClaimTemplate shape: ``--nodes``
nodes with 10 devices each, pods with one claim from a template. An
in-memory API stands in for the committer and hands each write back to the
core as the informer would, one cycle later.

    .venv/bin/python ops/bench/scheduling_cycle.py [--nodes 500] [--pods 2500] [--profile FILE]
        [--steady empty|half]

It prints pods/s of the core alone, microseconds per pod for the scheduling
and the binding cycle, and the share of the nodes each cycle examined. It
never asserts a time.

``--steady`` runs SteadyStateClusterResourceClaimTemplate's shape instead:
0 or half of the devices taken by allocated claims, 10 pods kept pending, and
each bound pod replaced at once with the informer changes the log delivers
in ``ops/bench/scheduler.py``'s steady state (the pod's delete, the next
pod's create, its claim and claim status; the old claim released,
unfinalized and deleted), so the core's per-change work (queue, hints,
caches) is counted with its cycles, without the log's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import cProfile
import gc
import importlib.util
import itertools
import pstats
import statistics
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

SELF = Path(__file__).resolve()
REPO = SELF.parents[2]
if importlib.util.find_spec("services") is None:  # run from a checkout without `pip install -e`
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(SELF.parent))

import scheduler as objects  # noqa: E402  (ops/bench/scheduler.py: scheduler_perf's objects)

from services.runtime import gc_pause  # noqa: E402
from services.scheduler.client import Write, WriteResult  # noqa: E402
from services.scheduler.cluster_events import Resource  # noqa: E402
from services.scheduler.scheduler import SchedulerCore  # noqa: E402
from services.scheduler.sequential_chain import write_one_by_one  # noqa: E402
from services.scheduler.service import SchedulerConfig, build_core  # noqa: E402

Obj = dict[str, Any]
RESOURCES = {
    ("", "pods"): Resource.POD,
    ("resource.k8s.io", "resourceclaims"): Resource.RESOURCE_CLAIM,
}


class MemoryAPI:
    """Stores what the plugins write and queues it for the core, as the informer would deliver it."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], Obj] = {}
        self.changes: list[tuple[str, Obj | None, Obj | None]] = []
        self._rv = itertools.count(1_000_000)

    def put(self, resource: str, obj: Obj) -> Obj:
        meta = obj["metadata"]
        meta["resourceVersion"] = str(next(self._rv))
        key = (resource, str(meta.get("namespace", "")), str(meta["name"]))
        old = self.objects.get(key)
        self.objects[key] = obj
        self.changes.append((resource, old, obj))
        return copy.deepcopy(obj)

    def remove(self, resource: str, namespace: str, name: str) -> None:
        old = self.objects.pop((resource, namespace, name))
        self.changes.append((resource, old, None))

    def _store(self, ref: tuple[str, str], obj: Mapping[str, Any]) -> Obj:
        return self.put(RESOURCES[ref], copy.deepcopy(dict(obj)))

    async def create(
        self, resource: tuple[str, str], obj: Mapping[str, Any], *, namespace: str = "", subresource: str = ""
    ) -> Obj:
        if subresource == "binding":
            pod = copy.deepcopy(self.objects[(Resource.POD, namespace, str(obj["metadata"]["name"]))])
            pod["spec"]["nodeName"] = obj["target"]["name"]
            self.put(Resource.POD, pod)
            return dict(obj)
        return self._store(resource, obj)

    async def get(self, resource: tuple[str, str], name: str, *, namespace: str = "") -> Obj:
        return copy.deepcopy(self.objects[(RESOURCES[resource], namespace, name)])

    async def update(self, resource: tuple[str, str], obj: Mapping[str, Any]) -> Obj:
        return self._store(resource, obj)

    async def update_status(self, resource: tuple[str, str], obj: Mapping[str, Any]) -> Obj:
        return self._store(resource, obj)

    async def patch(self, resource: tuple[str, str], name: str, patch: Mapping[str, Any], **_: Any) -> Obj:
        raise NotImplementedError("the structured workload does not patch")

    async def delete(self, resource: tuple[str, str], name: str, *, namespace: str = "") -> None:
        raise NotImplementedError("the structured workload does not delete")

    async def write_chain(self, writes: Sequence[Write]) -> list[WriteResult]:
        return await write_one_by_one(self, writes)

    def deliver(self, core: SchedulerCore) -> None:
        changes, self.changes = self.changes, []
        for resource, old, new in changes:
            core.on_object_change(resource, old, new)


@contextlib.contextmanager
def profiled(path: str | None) -> Iterator[None]:
    """Profile the block with cProfile when ``path`` is given: stats saved there and the top 40 printed."""
    if not path:
        yield
        return
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        profiler.dump_stats(path)
        pstats.Stats(path).sort_stats("cumulative").print_stats(40)


def create_pod_steadily(api: MemoryAPI, ns: str, name: str) -> None:
    """As the steady-state load generator: the pod, then its claim, then the claim's name in its status."""
    p = objects.pod(ns, name)
    p["metadata"]["uid"] = str(uuid.uuid4())
    api.put(Resource.POD, p)
    claim = objects.generated_claim(p)
    claim["metadata"]["uid"] = str(uuid.uuid4())
    api.put(Resource.RESOURCE_CLAIM, claim)
    named = {"name": objects.POD_CLAIM, "resourceClaimName": claim["metadata"]["name"]}
    api.put(Resource.POD, {**copy.deepcopy(p), "status": {"resourceClaimStatuses": [named]}})


def release_claim(api: MemoryAPI, ns: str, name: str) -> None:
    """The claim controller's part for a deleted pod: release and deallocate, drop the finalizer, delete."""
    claim = copy.deepcopy(api.objects[(Resource.RESOURCE_CLAIM, ns, name)])
    claim["status"] = {}
    api.put(Resource.RESOURCE_CLAIM, claim)
    claim = copy.deepcopy(claim)
    claim["metadata"]["finalizers"] = []
    api.put(Resource.RESOURCE_CLAIM, claim)
    api.remove(Resource.RESOURCE_CLAIM, ns, name)


async def steady(args: argparse.Namespace, api: MemoryAPI, core: SchedulerCore, names: list[str]) -> None:
    """``--steady``: 10 pods pending, each bound pod replaced at once; CPU per replaced pod."""
    if args.steady == "half":  # allocResourceClaims: node after node, device after device
        for i, (n, d) in enumerate([(n, d) for n in names for d in range(10)][: len(names) * 5]):
            claim = {
                "apiVersion": "resource.k8s.io/v1alpha3",
                "kind": "ResourceClaim",
                "metadata": {"name": f"init-claim-{i:05d}", "namespace": "init", "uid": str(uuid.uuid4())},
                "spec": objects.claim_spec(),
                "status": {"allocation": objects.allocation(n, f"instance-{d}")},
            }
            api.put(Resource.RESOURCE_CLAIM, claim)
    serial = itertools.count()
    for _ in range(10):
        create_pod_steadily(api, "test", f"test-{next(serial):05d}")
    api.deliver(core)

    async def replace_one() -> None:
        attempt = await core.schedule_one()
        assert attempt is not None and attempt.succeeded, attempt and attempt.message
        result = await core.bind(attempt)
        assert result.succeeded, result.message()
        api.deliver(core)
        pod = attempt.pinfo.pod
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        api.remove(Resource.POD, ns, name)
        create_pod_steadily(api, "test", f"test-{next(serial):05d}")
        release_claim(api, ns, pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"])
        api.deliver(core)

    for _ in range(args.init if args.init is not None else 200):  # warm: every node's verdicts once
        await replace_one()
    gc.freeze()
    with profiled(args.profile):
        started = time.process_time()
        for _ in range(args.pods):
            await replace_one()
        cpu = time.process_time() - started
    print(f"steady state ({args.steady}), {args.nodes} nodes x 10 devices, 10 pods pending, {args.pods} pods replaced")
    print(f"  pods/s (core alone)   {args.pods / cpu:.0f} ({cpu / args.pods * 1e6:.0f} us CPU per replaced pod)")


def add_pod(api: MemoryAPI, ns: str, name: str) -> None:
    """A pod with its generated claim, and the claim's name in the pod status (the claim controller's part)."""
    p = objects.pod(ns, name)
    p["metadata"]["uid"] = str(uuid.uuid4())
    claim = objects.generated_claim(p)
    claim["metadata"]["uid"] = str(uuid.uuid4())
    api.put(Resource.RESOURCE_CLAIM, claim)
    named = {"name": objects.POD_CLAIM, "resourceClaimName": claim["metadata"]["name"]}
    p["status"] = {"resourceClaimStatuses": [named]}
    api.put(Resource.POD, p)


async def run(args: argparse.Namespace) -> None:
    gc_pause.tune_for_a_long_lived_heap()  # as every draplane component does
    api = MemoryAPI()
    core, _ = build_core(SchedulerConfig(), api=api, clock=time.monotonic)
    names = [f"node-{i:04d}" for i in range(args.nodes)]
    for n in names:
        core.on_object_change(Resource.NODE, None, objects.node(n))
        slice_ = objects.resource_slice(n, 10)
        slice_["metadata"]["resourceVersion"] = "1"
        core.on_object_change(Resource.RESOURCE_SLICE, None, slice_)
    device_class = objects.device_class()
    device_class["metadata"]["resourceVersion"] = "1"
    core.on_object_change(Resource.DEVICE_CLASS, None, device_class)
    if args.steady:
        await steady(args, api, core, names)
        return

    async def schedule(count: int, ns: str) -> tuple[list[float], list[float], list[int]]:
        for i in range(count):
            add_pod(api, ns, f"{ns}-{i:05d}")
        api.deliver(core)
        cycle_s: list[float] = []
        bind_s: list[float] = []
        evaluated: list[int] = []
        for _ in range(count):
            t0 = time.perf_counter()
            attempt = await core.schedule_one()
            t1 = time.perf_counter()
            assert attempt is not None and attempt.succeeded, attempt and attempt.message
            result = await core.bind(attempt)
            t2 = time.perf_counter()
            assert result.succeeded, result.message()
            api.deliver(core)
            cycle_s.append(t1 - t0)
            bind_s.append(t2 - t1)
            evaluated.append(attempt.outcome.result.evaluated_nodes if attempt.outcome.result else 0)
        return cycle_s, bind_s, evaluated

    init = args.init if args.init is not None else args.pods
    await schedule(init, "init")
    gc.freeze()  # what the scheduler's catch-up freezes: the views built so far
    with profiled(args.profile):
        started = time.process_time()
        cycle_s, bind_s, evaluated = await schedule(args.pods, "test")
        cpu = time.process_time() - started
    print(f"scheduling cycle, {args.nodes} nodes x 10 devices, {init} init pods, {args.pods} measured pods")
    per_pod = cpu / args.pods * 1e6
    print(f"  pods/s (core alone)   {args.pods / cpu:.0f} ({per_pod:.0f} us CPU per pod, adding the pods included)")
    print(
        f"  scheduling cycle      median {statistics.median(cycle_s) * 1e6:.0f} us, "
        f"p90 {statistics.quantiles(cycle_s, n=10)[-1] * 1e6:.0f} us"
    )
    print(f"  binding cycle         median {statistics.median(bind_s) * 1e6:.0f} us")
    print(f"  nodes evaluated       median {statistics.median(evaluated):.0f} of {args.nodes}")
    profile = core.profiles["default-scheduler"]
    hits, misses = profile.equivalence.hits, profile.equivalence.misses
    print(f"  remembered verdicts   {hits / max(hits + misses, 1):.1%} of {hits + misses} (init pods included)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--nodes", type=int, default=500)
    p.add_argument("--pods", type=int, default=2500, help="measured pods (default 2500)")
    p.add_argument("--init", type=int, help="pods scheduled before the measurement (default: --pods)")
    p.add_argument("--profile", help="write a cProfile of the measured pods to this file and print its top")
    p.add_argument(
        "--steady", choices=["empty", "half"], help="steady state: 10 pods pending, each bound pod replaced at once"
    )
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
