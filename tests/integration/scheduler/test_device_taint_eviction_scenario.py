"""Kubernetes 1.37's device-taint-eviction on a running stack: scheduler and controller-manager on one log.

(a) A NoExecute DeviceTaintRule evicts a running pod once its claim's
toleration (``tolerationSeconds: 2``) runs out: the rule's status says
``EvictionInProgress=True`` (PodsPendingEviction) while the pod still runs,
then the pod gets the ``DisruptionTarget`` condition and is deleted, the
``DeviceTaintManagerEviction`` Event is recorded, and the rule ends at
``EvictionInProgress=False`` (Completed, 1 pod evicted). The order is read
from the log's offsets, never from the wall clock.

(b) A NoSchedule rule keeps a new pod off the tainted device while the
running pod stays: its status says ``OtherEffect`` and nothing is deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from scheduler_scenario import CLASS, DRIVER, NS, RG, Stack, device_class, pod

from services.apiserver.admission_chain import build_admission
from services.controllers.manager import ControllerManager
from services.kube.feature_gates import FeatureGates
from services.runtime.informer import Change
from services.scheduler.service import SchedulerConfig, SchedulerService
from services.testing.harness import LogHarness
from tests.conftest import BusUrl
from tests.support.eventually import eventually

GATES = FeatureGates(release="1.37")
TAINT_KEY = "example.com/maintenance"


@contextlib.asynccontextmanager
async def stack_with_controllers(url: str) -> AsyncIterator[tuple[Stack, ControllerManager]]:
    async with LogHarness.running(url, admission=build_admission(gates=GATES)) as log:
        admin = await log.client(timeout=30.0)
        scheduler = SchedulerService(log.bus, config=SchedulerConfig(gates=GATES))
        manager = ControllerManager(log.bus, gates=GATES)
        tasks = [
            asyncio.create_task(scheduler.run(), name="scheduler"),
            asyncio.create_task(manager.run(), name="controller-manager"),
        ]
        try:
            await asyncio.wait_for(scheduler.ready.wait(), 60)
            await asyncio.wait_for(manager.ready.wait(), 60)
            yield Stack(log, admin, scheduler, tasks[0]), manager
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task


def claim(name: str, *, tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"name": "gpu", "deviceClassName": CLASS}
    if tolerations:
        request["tolerations"] = tolerations
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": [request]}},
    }


def rule(name: str, effect: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"driver": DRIVER, "pool": "node-1"},
            "taint": {"key": TAINT_KEY, "effect": effect},
        },
    }


def condition(stack: Stack, rule_name: str) -> dict[str, Any] | None:
    current = stack.admin.get(RG, "devicetaintrules", "", rule_name)
    for c in ((current or {}).get("status") or {}).get("conditions") or ():
        if c.get("type") == "EvictionInProgress":
            found: dict[str, Any] = c
            return found
    return None


async def bound(stack: Stack, manager: ControllerManager, name: str) -> None:
    await eventually(lambda: stack.node_of(name), timeout=30, what=f"{name} bound")
    claim_name = f"{name}-gpu"
    await eventually(
        lambda: (stack.admin.get(RG, "resourceclaims", NS, claim_name) or {}).get("status", {}).get("reservedFor"),
        timeout=30,
        what=f"{claim_name} reserved",
    )
    current = stack.admin.get(RG, "resourceclaims", NS, claim_name)
    assert current is not None
    await manager.informer.wait_for(int(current["metadata"]["resourceVersion"]), timeout=30)


async def test_no_execute_rule_evicts_the_running_pod_after_its_toleration(bus_url: BusUrl) -> None:
    async with stack_with_controllers(bus_url()) as (stack, manager):
        changes: list[Change] = []
        stack.admin.informer.add_listener(changes.append)
        await stack.node_with_devices("node-1", devices=1)
        await stack.admin.create(RG, "deviceclasses", device_class())
        toleration = {"key": TAINT_KEY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 2}
        await stack.admin.create(RG, "resourceclaims", claim("a-gpu", tolerations=[toleration]))
        created = await stack.admin.create("", "pods", pod("a", claim_name="a-gpu"))
        await bound(stack, manager, "a")

        await stack.admin.create(RG, "devicetaintrules", rule("gpu-broken", "NoExecute"))
        pending = await eventually(
            lambda: condition(stack, "gpu-broken"),
            until=lambda c: c is not None and c["status"] == "True",
            what="eviction in progress",
        )
        assert (pending["reason"], pending["message"]) == (
            "PodsPendingEviction",
            "1 pod needs to be evicted in 1 namespace.",
        )

        def deleted() -> bool:
            current = stack.pod("a")
            return current is None or bool(current["metadata"].get("deletionTimestamp"))

        await eventually(deleted, timeout=30, what="pod a deleted")
        done = await eventually(
            lambda: condition(stack, "gpu-broken"),
            until=lambda c: c is not None and c["status"] == "False",
            timeout=60,
            what="done",
        )
        assert (done["reason"], done["message"]) == ("Completed", "1 pod evicted since starting the controller.")
        current_rule = stack.admin.get(RG, "devicetaintrules", "", "gpu-broken") or {}
        assert done["observedGeneration"] == current_rule["metadata"].get("generation", 0)

        # In log order: the rule said "pending" while the pod still ran, then the pod got its
        # condition, then it was deleted.
        pod_changes = [c for c in changes if c.resource == "pods" and c.name == "a"]
        pending_at = min(
            c.offset
            for c in changes
            if c.resource == "devicetaintrules"
            and any(x.get("status") == "True" for x in (c.object.get("status") or {}).get("conditions") or ())
        )
        conditioned = [
            c
            for c in pod_changes
            if any(
                (x.get("type"), x.get("reason")) == ("DisruptionTarget", "DeletionByDeviceTaintManager")
                for x in (c.object.get("status") or {}).get("conditions") or ()
            )
        ]
        assert conditioned, "the pod never got the DisruptionTarget condition"
        condition_at = conditioned[0].offset
        deleted_at = min(
            c.offset for c in pod_changes if c.type == "DELETED" or c.object["metadata"].get("deletionTimestamp")
        )
        assert pending_at < condition_at < deleted_at
        assert conditioned[0].object["metadata"]["uid"] == created["metadata"]["uid"]

        registry = manager.registry
        assert registry.get_sample_value("device_taint_eviction_controller_pod_deletions_total") == 1
        assert registry.get_sample_value("device_taint_eviction_controller_pod_deletion_duration_seconds_count") == 1

        events = [e for e in await stack.events("a") if e["reason"] == "DeviceTaintManagerEviction"]
        assert [(e["message"], e["source"]["component"], e["type"]) for e in events] == [
            ("Marking for deletion", "device-taint-eviction-controller", "Normal")
        ]


async def test_no_schedule_rule_keeps_new_pods_off_while_the_running_pod_stays(bus_url: BusUrl) -> None:
    async with stack_with_controllers(bus_url()) as (stack, manager):
        await stack.node_with_devices("node-1", devices=2)
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.admin.create(RG, "resourceclaims", claim("a-gpu"))
        running = await stack.admin.create("", "pods", pod("a", claim_name="a-gpu"))
        await bound(stack, manager, "a")

        await stack.admin.create(RG, "devicetaintrules", rule("maintenance", "NoSchedule"))
        other = await eventually(lambda: condition(stack, "maintenance"), what="rule status")
        assert (other["status"], other["reason"], other["message"]) == (
            "False",
            "OtherEffect",
            "Eviction only happens for the NoExecute effect.",
        )
        await stack.seen_by_scheduler(stack.admin.get(RG, "devicetaintrules", "", "maintenance") or {})
        await stack.admin.create(RG, "resourceclaims", claim("b-gpu"))
        await stack.admin.create("", "pods", pod("b", claim_name="b-gpu"))
        await eventually(lambda: stack.attempts("unschedulable") >= 1, timeout=30, what="b rejected")
        assert stack.node_of("b") is None

        # The controller has seen everything up to now and left pod a alone.
        end = await stack.log.bus.end_offset("objects")
        await manager.informer.wait_for(end - 1, timeout=30)
        assert manager.taint_eviction is not None
        assert manager.taint_eviction.state.delete_pod_at == {}
        current = stack.pod("a")
        assert current is not None and current["metadata"]["uid"] == running["metadata"]["uid"]
        assert not current["metadata"].get("deletionTimestamp")
        assert stack.node_of("a") == "node-1"
        assert [e for e in await stack.events("a") if e["reason"] == "DeviceTaintManagerEviction"] == []
