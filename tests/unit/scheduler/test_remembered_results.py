"""Property test: remembering results across cycles never changes a scheduling decision.

Two scheduler cores see the same cluster and the same operations. One
remembers (node-local memo, allocation memo, equivalence classes); the other
runs every plugin on every node for every pod. Whatever the sequence — pods of
a few specs, bindings, releases that free devices without touching a node,
node label and taint changes, a ResourceSlice republished — every attempt must
come out the same: the node, the message and the whole decision record.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from services.scheduler.client import PODS, RESOURCE_CLAIMS
from services.scheduler.cluster_events import Resource
from services.scheduler.equivalence_cache import MAX_VERDICTS, EquivalenceCache
from services.scheduler.status import Code, Status

from .builders import make_node, make_pod
from .dra_fixtures import CLASS_NAME, DEVICE_CLASS, DRIVER, NAMESPACE
from .test_dra_scheduling import World

NODES = 6
MODEL_X_CLASS = "model-x"
Obj = dict[str, Any]

# Pod kinds: (cpu request, node selector, device class); pods of one kind differ only in name, uid and the
# claim generated from their template, so the remembering core treats them as one equivalence class.
KINDS: tuple[tuple[str | None, str | None, str], ...] = (
    (None, None, CLASS_NAME),
    ("1", None, CLASS_NAME),
    (None, "a", CLASS_NAME),
    (None, None, MODEL_X_CLASS),
    ("1", "b", MODEL_X_CLASS),
)


def node(i: int, *, zone: str, tainted: bool) -> Obj:
    taints = [{"key": "maintenance", "effect": "NoSchedule"}] if tainted else None
    return make_node(
        f"n{i}",
        labels={"kubernetes.io/hostname": f"n{i}", "zone": zone},
        taints=taints,
        allocatable={"cpu": str(1 + i % 3), "memory": "8Gi", "pods": "110"},
    )


def node_slice(i: int, devices: int, generation: int) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceSlice",
        "metadata": {"name": f"n{i}-{DRIVER}", "resourceVersion": str(generation)},
        "spec": {
            "driver": DRIVER,
            "nodeName": f"n{i}",
            "pool": {"name": f"n{i}", "generation": generation, "resourceSliceCount": 1},
            "devices": [
                {"name": f"dev-{d}", "basic": {"attributes": {"model": {"string": "x" if (i + d) % 2 else "y"}}}}
                for d in range(devices)
            ],
        },
    }


MODEL_X: Obj = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "DeviceClass",
    "metadata": {"name": MODEL_X_CLASS},
    "spec": {"selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "x"'}}]},
}


class Cluster:
    """One core and what the test knows of its objects."""

    def __init__(self, *, remember: bool) -> None:
        self.world = World(remember=remember)
        self.nodes: dict[int, Obj] = {}
        self.slices: dict[int, Obj] = {}
        self.bound: list[tuple[Obj, str]] = []  # (pod as the informer has it, its claim's name)
        self.external: list[Obj] = []  # claims allocated by someone else
        for i in range(NODES):
            self.nodes[i] = node(i, zone="ab"[i % 2], tainted=False)
            self.world.apply(Resource.NODE, None, self.nodes[i])
            self.slices[i] = node_slice(i, devices=1 + i % 3, generation=1)
            self.world.apply(Resource.RESOURCE_SLICE, None, self.slices[i])
        self.world.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
        self.world.apply(Resource.DEVICE_CLASS, None, MODEL_X)

    async def pod(self, serial: int, kind: int) -> tuple[Any, ...]:
        cpu, zone, device_class = KINDS[kind]
        w = self.world
        name = f"p{serial}"
        # What the claim controller makes of a pod with a claim template: an owned claim, named in the status.
        owner = {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": f"uid-{name}", "controller": True}
        claim = {
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "ResourceClaim",
            "metadata": {
                "name": f"{name}-gpu",
                "namespace": NAMESPACE,
                "uid": f"uid-{name}-gpu",
                "ownerReferences": [owner],
            },
            "spec": {"devices": {"requests": [{"name": "req", "deviceClassName": device_class}]}},
        }
        w.create_claim(claim)
        pod = w.create_pod(
            make_pod(
                name,
                uid=f"uid-{name}",
                requests={"cpu": cpu} if cpu else None,
                node_selector={"zone": zone} if zone else None,
                resource_claims=[{"name": "gpu", "resourceClaimTemplateName": f"template-{kind}"}],
                resource_claim_statuses=[{"name": "gpu", "resourceClaimName": f"{name}-gpu"}],
            )
        )
        attempt = await w.core.schedule_one()
        assert attempt is not None
        outcome = (attempt.succeeded, attempt.outcome.node, attempt.message, attempt.decision)
        if attempt.succeeded:
            assert (await w.core.bind(attempt)).succeeded
            w.sync_claim(f"{name}-gpu", None)
            stored = w.client.stored(PODS, name, NAMESPACE)
            assert stored is not None
            w.apply(Resource.POD, pod, stored)
            self.bound.append((stored, f"{name}-gpu"))
        else:
            # Not retried: the queue's backoff is not what this test compares.
            w.core.queue.delete(pod)
        return outcome

    async def cpu_pod(self, serial: int) -> tuple[Any, ...]:
        """A pod without claims that takes a CPU: its node changes, no pool does."""
        w = self.world
        pod = w.create_pod(make_pod(f"cpu{serial}", uid=f"uid-cpu{serial}", requests={"cpu": "1"}))
        attempt = await w.core.schedule_one()
        assert attempt is not None
        if attempt.succeeded:
            assert (await w.core.bind(attempt)).succeeded
            stored = w.client.stored(PODS, f"cpu{serial}", NAMESPACE)
            w.apply(Resource.POD, pod, stored)
        else:
            w.core.queue.delete(pod)
        return attempt.succeeded, attempt.outcome.node, attempt.message, attempt.decision

    def take_device(self, serial: int, i: int, device: int) -> None:
        """Someone else allocates a device (a claim no pod of this scheduler has): a pool changes, no node does."""
        claim = {
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "ResourceClaim",
            "metadata": {"name": f"external-{serial}", "namespace": NAMESPACE, "uid": f"uid-external-{serial}"},
            "spec": {"devices": {"requests": [{"name": "req", "deviceClassName": CLASS_NAME}]}},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [{"request": "req", "driver": DRIVER, "pool": f"n{i}", "device": f"dev-{device}"}]
                    }
                }
            },
        }
        self.world.create_claim(claim)
        self.external.append(claim)

    def free_device(self, index: int) -> None:
        if self.external:
            claim = self.external.pop(index % len(self.external))
            self.world.apply(Resource.RESOURCE_CLAIM, claim, None)

    def release(self, index: int) -> None:
        """The pod goes away and its claim is deallocated: devices free up, no node object changes."""
        if not self.bound:
            return
        pod, claim_name = self.bound.pop(index % len(self.bound))
        w = self.world
        w.apply(Resource.POD, pod, None)
        stored = w.client.stored(RESOURCE_CLAIMS, claim_name, NAMESPACE)
        assert stored is not None
        released = copy.deepcopy(stored)
        released["status"] = {}
        w.apply(Resource.RESOURCE_CLAIM, stored, w.client.put(RESOURCE_CLAIMS, released))

    def relabel(self, i: int) -> None:
        old = self.nodes[i]
        new = copy.deepcopy(old)
        labels = new["metadata"]["labels"]
        labels["zone"] = "b" if labels["zone"] == "a" else "a"
        self.nodes[i] = new
        self.world.apply(Resource.NODE, old, new)

    def taint(self, i: int) -> None:
        old = self.nodes[i]
        new = node(i, zone=old["metadata"]["labels"]["zone"], tainted=not old["spec"].get("taints"))
        self.nodes[i] = new
        self.world.apply(Resource.NODE, old, new)

    def republish(self, i: int, devices: int) -> None:
        old = self.slices[i]
        new = node_slice(i, devices=devices, generation=old["spec"]["pool"]["generation"] + 1)
        self.slices[i] = new
        self.world.apply(Resource.RESOURCE_SLICE, old, new)


# Pods most often, and the changes that invalidate remembered verdicts in different ways.
OPS = ("pod",) * 5 + ("cpu", "take", "take", "free", "release", "relabel", "taint", "republish")
operations = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, NODES * 4 - 1)), min_size=1, max_size=60)


async def compare(ops: list[tuple[str, int]]) -> None:
    remembering, plain = Cluster(remember=True), Cluster(remember=False)
    for serial, (op, arg) in enumerate(ops):
        if op == "pod":
            kind = arg % len(KINDS)
            assert await remembering.pod(serial, kind) == await plain.pod(serial, kind), f"attempt {serial} differs"
            continue
        if op == "cpu":
            assert await remembering.cpu_pod(serial) == await plain.cpu_pod(serial), f"attempt {serial} differs"
            continue
        for cluster in (remembering, plain):
            if op == "take":
                cluster.take_device(serial, arg % NODES, arg // NODES % 3)
            elif op == "free":
                cluster.free_device(arg)
            elif op == "release":
                cluster.release(arg)
            elif op == "relabel":
                cluster.relabel(arg % NODES)
            elif op == "taint":
                cluster.taint(arg % NODES)
            else:
                cluster.republish(arg % NODES, devices=arg // NODES)


@settings(max_examples=200, deadline=None)
@given(operations)
def test_remembering_changes_no_decision(ops: list[tuple[str, int]]) -> None:
    asyncio.run(compare(ops))


def test_a_run_of_identical_pods_reuses_verdicts_and_still_fills_every_device() -> None:
    async def run() -> None:
        remembering, plain = Cluster(remember=True), Cluster(remember=False)
        devices = sum(1 + i % 3 for i in range(NODES))
        for serial in range(devices + 2):
            assert await remembering.pod(serial, 0) == await plain.pod(serial, 0)
        profile = remembering.world.core.profiles["default-scheduler"]
        assert profile.equivalence.hits > profile.equivalence.misses > 0
        assert len(remembering.bound) == devices == len(plain.bound)
        # No device handed out twice: the allocations the remembering core wrote are all distinct.
        used = []
        for _, claim_name in remembering.bound:
            stored = remembering.world.client.stored(RESOURCE_CLAIMS, claim_name, NAMESPACE)
            assert stored is not None
            used += [(r["pool"], r["device"]) for r in stored["status"]["allocation"]["devices"]["results"]]
        assert len(used) == len(set(used)) == devices

    asyncio.run(run())


def test_entries_of_nodes_that_went_away_are_dropped() -> None:
    async def run() -> None:
        w = World()
        nodes = [make_node(f"m{i}") for i in range(80)]
        for n in nodes:
            w.apply(Resource.NODE, None, n)
        profile = w.core.profiles["default-scheduler"]

        async def schedule(name: str) -> None:
            w.create_pod(make_pod(name, uid=f"uid-{name}", requests={"cpu": "1"}))
            attempt = await w.core.schedule_one()
            assert attempt is not None and attempt.succeeded
            assert (await w.core.bind(attempt)).succeeded

        await schedule("first")
        tables = list(profile.equivalence._tables.values())
        assert len(tables) == 1 and len(tables[0]) == 80
        for n in nodes[1:]:
            w.apply(Resource.NODE, n, None)
        await schedule("second")
        assert set(tables[0]) == {"m0"}

    asyncio.run(run())


def test_equal_rejections_are_kept_as_one_status() -> None:
    """The cache shares equal verdicts (so a cycle's diagnosis and record group them), never a status with an error."""
    cache = EquivalenceCache()
    first = Status(Code.UNSCHEDULABLE, ("cannot allocate all claims",), "DynamicResources")
    again = Status(Code.UNSCHEDULABLE, ("cannot allocate all claims",), "DynamicResources")
    assert cache.shared(first) is first and cache.shared(again) is first
    other_code = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot allocate all claims",), "DynamicResources")
    other_plugin = Status(Code.UNSCHEDULABLE, ("cannot allocate all claims",), "NodeResourcesFit")
    assert cache.shared(other_code) is other_code and cache.shared(other_plugin) is other_plugin
    failed = Status(Code.UNSCHEDULABLE, ("cannot allocate all claims",), "DynamicResources", error=ValueError("x"))
    assert cache.shared(failed) is failed
    for i in range(MAX_VERDICTS + 1):  # bounded: it starts over, and equal verdicts are shared again after
        cache.shared(Status(Code.UNSCHEDULABLE, (f"reason {i}",), "P"))
    fresh = Status(Code.UNSCHEDULABLE, ("cannot allocate all claims",), "DynamicResources")
    assert cache.shared(fresh) is fresh and cache.shared(again) is fresh
