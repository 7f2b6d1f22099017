"""Kubernetes 1.37's DRA on a running scheduler: a prioritized list's fallback, and a NoSchedule DeviceTaintRule.

API server and scheduler both run with the gates of release 1.37
(``FeatureGates(release="1.37")``), where DRAPrioritizedList, DRADeviceTaints
and DRADeviceTaintRules are on. That the rule's deletion (and no timer) woke
the waiting pod is read from the queue's move counters and the attempts'
positions in the log, never from the wall clock.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from scheduler_scenario import CLASS, DRIVER, NS, RG, Stack, device_class, pod

from services.apiserver.admission_chain import build_admission
from services.kube.feature_gates import FeatureGates
from services.scheduler.queue import UNSCHEDULABLE_PODS
from services.scheduler.service import SchedulerConfig, SchedulerService
from services.testing.harness import LogHarness
from tests.conftest import BusUrl
from tests.support.eventually import eventually

GATES = FeatureGates(release="1.37")


@contextlib.asynccontextmanager
async def stack_1_37(url: str) -> AsyncIterator[Stack]:
    async with LogHarness.running(url, admission=build_admission(gates=GATES)) as log:
        admin = await log.client(timeout=30.0)
        scheduler = SchedulerService(log.bus, config=SchedulerConfig(gates=GATES))
        task = asyncio.create_task(scheduler.run(), name="scheduler")
        try:
            await asyncio.wait_for(scheduler.ready.wait(), 60)
            yield Stack(log, admin, scheduler, task)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def v1beta1_claim(name: str, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """The client writes the flat request form (v1beta1's: class beside ``firstAvailable``)."""
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": requests}},
    }


def one_gpu(name: str) -> dict[str, Any]:
    return v1beta1_claim(name, [{"name": "gpu", "deviceClassName": CLASS}])


async def setup(stack: Stack, *, devices: int) -> None:
    await stack.node_with_devices("node-1", devices=devices)
    await stack.admin.create(RG, "deviceclasses", device_class())


def allocation_results(stack: Stack, claim_name: str) -> list[dict[str, Any]]:
    claim = stack.admin.get(RG, "resourceclaims", NS, claim_name)
    assert claim is not None
    return list(claim["status"]["allocation"]["devices"]["results"])


async def test_prioritized_list_claim_falls_back_to_its_second_choice(bus_url: BusUrl) -> None:
    async with stack_1_37(bus_url()) as stack:
        await setup(stack, devices=1)
        first_available = [
            {"name": "two", "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 2},
            {"name": "one", "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1},
        ]
        await stack.admin.create(
            RG, "resourceclaims", v1beta1_claim("train-gpu", [{"name": "gpu", "firstAvailable": first_available}])
        )
        await stack.admin.create("", "pods", pod("train", claim_name="train-gpu"))
        await eventually(lambda: stack.node_of("train"), timeout=30, what="train bound")
        assert [(r["request"], r["device"]) for r in allocation_results(stack, "train-gpu")] == [("gpu/one", "gpu-0")]
        decisions = await stack.decisions("train")
        assert [(d.record["attempt"], d.record["result"]) for d in decisions] == [(1, "scheduled")]


async def test_no_schedule_rule_keeps_new_pods_off_and_its_deletion_wakes_the_waiting_pod(bus_url: BusUrl) -> None:
    async with stack_1_37(bus_url()) as stack:
        await setup(stack, devices=2)
        await stack.admin.create(RG, "resourceclaims", one_gpu("a-gpu"))
        await stack.admin.create("", "pods", pod("a", claim_name="a-gpu"))
        await eventually(lambda: stack.node_of("a"), timeout=30, what="a bound")

        # Every device of the pool is tainted NoSchedule: pod a keeps its device, pod b gets none.
        rule = await stack.admin.create(
            RG,
            "devicetaintrules",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceTaintRule",
                "metadata": {"name": "maintenance"},
                "spec": {
                    "deviceSelector": {"driver": DRIVER, "pool": "node-1"},
                    "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"},
                },
            },
        )
        await stack.seen_by_scheduler(rule)
        await stack.admin.create(RG, "resourceclaims", one_gpu("b-gpu"))
        created = await stack.admin.create("", "pods", pod("b", claim_name="b-gpu"))
        await eventually(lambda: stack.attempts("unschedulable") == 1, timeout=30, what="b rejected")
        queue = stack.scheduler.core.queue
        assert queue.where(created) == UNSCHEDULABLE_PODS
        pinfo = queue.get(created)
        assert pinfo is not None
        await eventually(lambda: not queue.is_backing_off(pinfo), timeout=5, what="backoff expired")
        assert queue.where(created) == UNSCHEDULABLE_PODS
        assert stack.node_of("a") == "node-1"  # NoSchedule never evicts

        await stack.admin.delete(RG, "devicetaintrules", "", "maintenance")
        await eventually(lambda: stack.node_of("b"), timeout=30, what="b bound")
        decisions = await stack.decisions("b")
        assert [(d.record["attempt"], d.record["result"]) for d in decisions] == [
            (1, "unschedulable"),
            (2, "scheduled"),
        ]
        assert stack.sample("scheduler_queue_incoming_pods_total", queue="active", event="DeviceTaintRuleDelete") == 1
        assert stack.sample("scheduler_queue_incoming_pods_total", queue="active", event="UnschedulableTimeout") == 0
        devices = {r["device"] for name in ("a-gpu", "b-gpu") for r in allocation_results(stack, name)}
        assert devices == {"gpu-0", "gpu-1"}
