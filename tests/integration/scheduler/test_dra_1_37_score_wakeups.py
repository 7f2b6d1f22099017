"""Kubernetes 1.37's DRA Score and event-driven wake-ups on a running scheduler, both backends.

- Score: a prioritized-list claim goes to the node where its first subrequest
  fits, though the other node would come first in filter order and fits the
  second subrequest (1.37's DynamicResources Score, weight 2).
- Wake-ups: a pod rejected because a partitionable GPU's shared counters are
  used up, or because a shared network device's bandwidth is, waits in the
  unschedulable pods (its backoff over, no attempt) until the claim that holds
  them is deallocated; that ResourceClaimUpdate moves it, and its second
  attempt binds it. Read from the decision log (attempt numbers) and the
  queue's move counters, never from the wall clock.
- reservedFor: the 257th consumer fails PreBind with validation's message.
- ``draplane explain``: the subrequest a claim got, and "counters exhausted".
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from scheduler_scenario import CLASS, DRIVER, NS, RG, Stack, device_class, node, pod
from test_dra_1_37_scheduling import stack_1_37

from services.scheduler.queue import UNSCHEDULABLE_PODS
from tests.conftest import BusUrl
from tests.support.eventually import eventually

Obj = dict[str, Any]
REPO = Path(__file__).resolve().parents[3]


def claim(name: str, requests: list[Obj]) -> Obj:
    """The hub layout (v1beta1's): class and selectors beside ``firstAvailable``, ``capacity`` on the request."""
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": requests}},
    }


def kind_request(name: str, kind: str, *, count: int = 1) -> Obj:
    return {
        "name": name,
        "deviceClassName": CLASS,
        "allocationMode": "ExactCount",
        "count": count,
        "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].kind == "{kind}"'}}],
    }


def device_slice(node_name: str, devices: list[Obj], *, name: str = "", slices: int = 1) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node_name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": slices},
            "devices": devices,
        },
    }


def gpus(count: int) -> list[Obj]:
    return [{"name": f"gpu-{i}", "basic": {"attributes": {"kind": {"string": "gpu"}}}} for i in range(count)]


async def wait_rejected_and_parked(stack: Stack, created: Obj, *, rejected: int) -> None:
    """The pod's attempt failed; its backoff ran out and it still waits for an event among the unschedulable."""
    await eventually(lambda: stack.attempts("unschedulable") == rejected, timeout=30, what="pod rejected")
    queue = stack.scheduler.core.queue
    assert queue.where(created) == UNSCHEDULABLE_PODS
    pinfo = queue.get(created)
    assert pinfo is not None
    await eventually(lambda: not queue.is_backing_off(pinfo), timeout=5, what="backoff expired")
    assert queue.where(created) == UNSCHEDULABLE_PODS


async def assert_woken_once_by_claim_update(stack: Stack, pod_name: str) -> None:
    decisions = await stack.decisions(pod_name)
    assert [(d.record["attempt"], d.record["result"]) for d in decisions] == [(1, "unschedulable"), (2, "scheduled")]
    moved = stack.sample("scheduler_queue_incoming_pods_total", queue="active", event="ResourceClaimUpdate")
    assert moved == 1
    assert stack.sample("scheduler_queue_incoming_pods_total", queue="active", event="UnschedulableTimeout") == 0


def results(stack: Stack, claim_name: str) -> list[tuple[str, str]]:
    current = stack.admin.get(RG, "resourceclaims", NS, claim_name)
    assert current is not None
    return [(r["request"], r["device"]) for r in current["status"]["allocation"]["devices"]["results"]]


async def test_score_picks_the_node_where_the_first_subrequest_fits(bus_url: BusUrl) -> None:
    async with stack_1_37(bus_url()) as stack:
        # node-1 comes first in filter order and fits only the second choice; node-2 fits the first.
        for name, count in (("node-1", 1), ("node-2", 2)):
            await stack.admin.create("", "nodes", node(name))
            await stack.admin.create(RG, "resourceslices", device_slice(name, gpus(count)))
        await stack.admin.create(RG, "deviceclasses", device_class())
        first_available = [
            {"name": "two", "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 2},
            {"name": "one", "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1},
        ]
        await stack.admin.create(
            RG, "resourceclaims", claim("train-gpu", [{"name": "gpu", "firstAvailable": first_available}])
        )
        await stack.admin.create("", "pods", pod("train", claim_name="train-gpu"))
        await eventually(lambda: stack.node_of("train"), timeout=30, what="train bound")
        assert stack.node_of("train") == "node-2"
        assert results(stack, "train-gpu") == [("gpu/two", "gpu-0"), ("gpu/two", "gpu-1")]
        [decision] = await stack.decisions("train")
        # Raw 8 (first of the list) and 7 (second), normalized 100 and 87, weight 2.
        assert decision.record["pluginScores"]["DynamicResources"] == {"node-2": 200, "node-1": 174}


def partitionable_gpu(node_name: str) -> list[Obj]:
    """One GPU's 80Gi of memory as a counter set, shared by the whole GPU and its two halves."""
    counters = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-counters"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 2},
            "sharedCounters": [{"name": "gpu-0-memory", "counters": {"memory": {"value": "80Gi"}}}],
        },
    }

    def device(name: str, kind: str, memory: str) -> Obj:
        consumes = [{"counterSet": "gpu-0-memory", "counters": {"memory": {"value": memory}}}]
        return {"name": name, "basic": {"attributes": {"kind": {"string": kind}}, "consumesCounters": consumes}}

    devices = [
        device("gpu-0", "full", "80Gi"),
        device("gpu-0-half-0", "half", "40Gi"),
        device("gpu-0-half-1", "half", "40Gi"),
    ]
    return [counters, device_slice(node_name, devices, slices=2)]


async def test_freed_counters_wake_the_pod_waiting_for_the_whole_gpu(bus_url: BusUrl) -> None:
    async with stack_1_37(bus_url()) as stack:
        await stack.admin.create("", "nodes", node("node-1"))
        for obj in partitionable_gpu("node-1"):
            await stack.admin.create(RG, "resourceslices", obj)
        await stack.admin.create(RG, "deviceclasses", device_class())

        await stack.admin.create(RG, "resourceclaims", claim("halves", [kind_request("gpu", "half", count=2)]))
        await stack.admin.create("", "pods", pod("halves", claim_name="halves"))
        await eventually(lambda: stack.node_of("halves"), timeout=30, what="halves bound")
        assert results(stack, "halves") == [("gpu", "gpu-0-half-0"), ("gpu", "gpu-0-half-1")]

        # The whole GPU is not allocated, but the halves used up its counters.
        await stack.admin.create(RG, "resourceclaims", claim("full", [kind_request("gpu", "full")]))
        created = await stack.admin.create("", "pods", pod("full", claim_name="full"))
        await wait_rejected_and_parked(stack, created, rejected=1)

        await stack.release("halves")  # the claim controller's deallocation once the pod is gone
        await eventually(lambda: stack.node_of("full"), timeout=30, what="full bound")
        assert results(stack, "full") == [("gpu", "gpu-0")]
        await assert_woken_once_by_claim_update(stack, "full")


async def test_freed_shared_capacity_wakes_the_pod_that_did_not_fit(bus_url: BusUrl) -> None:
    async with stack_1_37(bus_url()) as stack:
        await stack.admin.create("", "nodes", node("node-1"))
        nic = {
            "name": "nic-0",
            "basic": {
                "attributes": {"kind": {"string": "nic"}},
                "allowMultipleAllocations": True,
                "capacity": {"bandwidth": {"value": "10Gi"}},
            },
        }
        await stack.admin.create(RG, "resourceslices", device_slice("node-1", [nic]))
        await stack.admin.create(RG, "deviceclasses", device_class())

        def bandwidth_claim(name: str) -> Obj:
            return claim(name, [{**kind_request("net", "nic"), "capacity": {"requests": {"bandwidth": "6Gi"}}}])

        await stack.admin.create(RG, "resourceclaims", bandwidth_claim("a-net"))
        await stack.admin.create("", "pods", pod("a", claim_name="a-net"))
        await eventually(lambda: stack.node_of("a"), timeout=30, what="a bound")

        await stack.admin.create(RG, "resourceclaims", bandwidth_claim("b-net"))
        created = await stack.admin.create("", "pods", pod("b", claim_name="b-net"))
        await wait_rejected_and_parked(stack, created, rejected=1)

        await stack.release("a-net")
        await eventually(lambda: stack.node_of("b"), timeout=30, what="b bound")
        assert results(stack, "b-net") == [("net", "nic-0")]
        await assert_woken_once_by_claim_update(stack, "b")


async def test_the_257th_consumer_is_refused_by_validation_in_prebind(bus_url: BusUrl) -> None:
    """1.37's CanBeReserved is always true: the scheduler tries, and the API's 256 limit refuses the write.

    As in kube's own integration test (test/integration/dra/resourceclaim.go), the pod past the limit
    fails in PreBind with validation's message and is retried by backoff.
    """
    async with stack_1_37(bus_url()) as stack:
        await stack.node_with_devices("node-1", devices=1)
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.admin.create(RG, "resourceclaims", claim("shared", [{"name": "gpu", "deviceClassName": CLASS}]))
        await stack.admin.create("", "pods", pod("first", claim_name="shared"))
        await eventually(lambda: stack.node_of("first"), timeout=30, what="first bound")

        current = stack.admin.get(RG, "resourceclaims", NS, "shared")
        assert current is not None
        others = [{"resource": "pods", "name": f"other-{i}", "uid": f"uid-other-{i}"} for i in range(255)]
        status = {**current["status"], "reservedFor": [*current["status"]["reservedFor"], *others]}
        full = await stack.admin.update_status(RG, "resourceclaims", {**current, "status": status})
        assert len(full["status"]["reservedFor"]) == 256
        await stack.seen_by_scheduler(full)

        await stack.admin.create("", "pods", pod("late", claim_name="shared"))
        await eventually(lambda: stack.attempts("error") >= 1, timeout=30, what="late refused")
        decisions = await stack.decisions("late")
        assert decisions[0].record["result"] == "error"
        assert decisions[0].record["message"] == (
            'running PreBind plugin "DynamicResources": add reservation to claim default/shared: '
            'ResourceClaim.resource.k8s.io "shared" is invalid: status.reservedFor: Too many: 257: '
            "must have at most 256 items"
        )
        assert stack.node_of("late") is None


async def explain(url: str, name: str) -> str:
    """``draplane explain pod NAME --bus URL`` (the real command line); its stdout."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.cli",
        "explain",
        "pod",
        name,
        "--bus",
        url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_explain_says_which_subrequest_a_claim_got_and_that_counters_are_exhausted(bus_url: BusUrl) -> None:
    url = bus_url()
    async with stack_1_37(url) as stack:
        await stack.admin.create("", "nodes", node("node-1"))
        for obj in partitionable_gpu("node-1"):
            await stack.admin.create(RG, "resourceslices", obj)
        await stack.admin.create(RG, "deviceclasses", device_class())
        # Eight halves do not exist; two do: the claim gets its second choice, and the halves use up the counters.
        first_available = [
            kind_request("eight", "half", count=8),
            kind_request("two", "half", count=2),
        ]
        await stack.admin.create(
            RG, "resourceclaims", claim("halves", [{"name": "gpu", "firstAvailable": first_available}])
        )
        await stack.admin.create("", "pods", pod("halves", claim_name="halves"))
        await eventually(lambda: stack.node_of("halves"), timeout=30, what="halves bound")
        await stack.admin.create(RG, "resourceclaims", claim("full", [kind_request("gpu", "full")]))
        await stack.admin.create("", "pods", pod("full", claim_name="full"))
        await eventually(lambda: stack.attempts("unschedulable") == 1, timeout=30, what="full rejected")
        await stack.scheduler.flush()

        bound = await explain(url, "default/halves")
        waiting = await explain(url, "default/full")
    assert "      request gpu/two: gpu.example.com/node-1/gpu-0-half-0 (subrequest chosen: two of gpu)" in bound
    assert (
        "  counters exhausted on 1 node(s) (node-1): claim default/full, request gpu: counters exhausted: "
        "1 of 1 free matching device(s) need more shared counters than are left, "
        "e.g. device gpu.example.com/node-1/gpu-0 needs gpu-0-memory/memory 80Gi, 0 left"
    ) in waiting
