"""DynamicResources with binding conditions (1.37 gates) over a fake API: PreBind waits, Filter/PostFilter recover.

The flow of kube 1.37's dynamicresources.go: the allocator copies the
device's bindingConditions into the result; PreBind writes allocation
(with ``allocationTimestamp``) and reservedFor, then waits until the
conditions are True in ``status.devices``. A failure condition (or the
timeout) makes PreBind fail; Unreserve drops the reservation; the next
attempt's Filter finds the claim unavailable on every node
(``resourceclaim not available on the node``) and PostFilter deallocates it
(``deallocation of ResourceClaim completed``), which requeues the pod.
Here the informer is played by ``World.apply``; the wait ends on the claim
update it delivers, never on a timer.
"""

from __future__ import annotations

import asyncio
import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from services.kube.feature_gates import FeatureGates
from services.kube.structured import Features
from services.scheduler.client import PODS, RESOURCE_CLAIMS
from services.scheduler.cluster_events import Resource
from services.scheduler.dra.binding_wait import BindingConditions
from services.scheduler.dra.stores import ObjectStore
from services.scheduler.framework import QueueingHint
from services.scheduler.metrics import SchedulerMetrics
from services.scheduler.plugins.default_binder import DefaultBinder
from services.scheduler.plugins.dynamic_resources import DynamicResources
from services.scheduler.profile import Profile, default_plugins
from services.scheduler.queue import ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_PODS
from services.scheduler.scheduler import Attempt, SchedulerCore
from services.scheduler.service import SchedulerConfig, build_core

from .builders import FakeClock, make_pod
from .dra_fixtures import CLASS_NAME, DEVICE_CLASS, DRIVER, NODE_NAME, WORKER_NODE, no_sleep
from .fake_client import FakeClient

Obj = dict[str, Any]
GATES = FeatureGates(release="1.37")
NOW = datetime(2026, 12, 2, 7, 0, 0, tzinfo=UTC)


class World:
    def __init__(self, *, gates: FeatureGates = GATES, timeout: float = 600.0) -> None:
        self.client = FakeClient()
        self.clock = FakeClock()
        features = Features.from_gates(gates)
        self.binding = BindingConditions(enabled=features.binding_conditions, timeout=timeout, now=lambda: NOW)
        self.dra = DynamicResources(
            client=self.client,
            classes=ObjectStore(),
            slices=ObjectStore(),
            features=features,
            conflict_retry_delays=(0.0,) * 4,
            sleep=no_sleep,
            binding_conditions=self.binding,
        )
        profile = Profile(default_plugins(binder=DefaultBinder(self.client), dynamic_resources=self.dra))
        self.core = SchedulerCore(profiles=[profile], clock=self.clock, metrics=SchedulerMetrics(CollectorRegistry()))
        self.apply(Resource.NODE, None, WORKER_NODE)
        self.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
        self.apply(Resource.RESOURCE_SLICE, None, fabric_slice())
        self.claim_obj = self.client.put(
            RESOURCE_CLAIMS,
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "claim-a", "namespace": "default", "uid": "uid-claim-a"},
                "spec": {"devices": {"requests": [{"name": "req", "deviceClassName": CLASS_NAME}]}},
            },
        )
        self.apply(Resource.RESOURCE_CLAIM, None, self.claim_obj)
        self.pod = self.client.put(
            PODS, make_pod("a", uid="uid-a", resource_claims=[{"name": "r", "resourceClaimName": "claim-a"}])
        )
        self.apply(Resource.POD, None, self.pod)

    def apply(self, resource: str, old: Obj | None, new: Obj | None) -> None:
        self.core.on_object_change(resource, old, new)

    def claim(self) -> Obj:
        stored = self.client.stored(RESOURCE_CLAIMS, "claim-a", "default")
        assert stored is not None
        return stored

    def sync_claim(self) -> Obj:
        """The informer delivers the claim as stored now."""
        new = self.claim()
        self.apply(Resource.RESOURCE_CLAIM, self.claim_obj, new)
        self.claim_obj = new
        return new

    def driver_reports(self, **conditions: str) -> Obj:
        """The driver's controller writes the device's conditions into status.devices; the informer delivers it."""
        current = self.claim()
        current["status"]["devices"] = [
            {
                "driver": DRIVER,
                "pool": NODE_NAME,
                "device": "instance-1",
                "conditions": [
                    {"type": t, "status": s, "reason": "Test", "message": f"{t} {s}", "lastTransitionTime": "x"}
                    for t, s in conditions.items()
                ],
            }
        ]
        self.client.put(RESOURCE_CLAIMS, current)
        return self.sync_claim()

    async def schedule(self) -> Attempt:
        attempt = await self.core.schedule_one()
        assert attempt is not None
        return attempt


def fabric_slice() -> Obj:
    """kube's fabricSlice: one device with a binding condition, a failure condition and bindsToNode."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{NODE_NAME}-{DRIVER}", "resourceVersion": "1"},
        "spec": {
            "driver": DRIVER,
            "nodeName": NODE_NAME,
            "pool": {"name": NODE_NAME, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "instance-1",
                    "basic": {
                        "bindsToNode": True,
                        "bindingConditions": ["condition"],
                        "bindingFailureConditions": ["failed"],
                    },
                }
            ],
        },
    }


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_bind_claim_with_binding_conditions_waits_until_the_driver_sets_them_true() -> None:
    w = World()
    attempt = await w.schedule()
    assert attempt.succeeded and attempt.outcome.node == NODE_NAME
    binding = asyncio.create_task(w.core.bind(attempt))
    await settle()
    # PreBind wrote allocation and reservation, and waits: the pod is not bound.
    assert not binding.done()
    assert w.binding.waiting() == 1
    claim = w.claim()
    alloc = claim["status"]["allocation"]
    assert alloc["allocationTimestamp"] == "2026-12-02T07:00:00Z"
    [result] = alloc["devices"]["results"]
    assert result["bindingConditions"] == ["condition"] and result["bindingFailureConditions"] == ["failed"]
    assert [r["uid"] for r in claim["status"]["reservedFor"]] == ["uid-a"]
    assert "bind pods/binding" not in [f"{v} {w_}" for v, w_, _ in w.client.calls]
    assert (w.client.stored(PODS, "a", "default") or {}).get("spec", {}).get("nodeName") is None

    w.sync_claim()  # the informer's copy of our own write: not ready yet
    await settle()
    assert not binding.done()
    w.driver_reports(condition="False")
    await settle()
    assert not binding.done()
    w.driver_reports(condition="True", failed="False")
    outcome = await asyncio.wait_for(binding, 5)
    assert outcome.succeeded
    assert w.client.stored(PODS, "a", "default")["spec"]["nodeName"] == NODE_NAME  # type: ignore[index]
    assert w.binding.waiting() == 0


async def test_bound_claim_with_failed_binding_is_deallocated_and_the_pod_retried() -> None:
    w = World()
    attempt = await w.schedule()
    binding = asyncio.create_task(w.core.bind(attempt))
    await settle()
    w.sync_claim()
    w.driver_reports(condition="False", failed="True")
    outcome = await asyncio.wait_for(binding, 5)
    assert not outcome.succeeded
    assert outcome.message() == (
        'running PreBind plugin "DynamicResources": device binding failed: '
        'claim=claim-a, reason=Test, message="failed True"'
    )
    # Unreserve dropped the reservation; the allocation stays until the next attempt's PostFilter.
    claim = w.sync_claim()
    assert claim["status"].get("reservedFor") in (None, [])
    assert claim["status"]["allocation"]
    assert w.core.queue.where(w.pod) == BACKOFF_Q

    w.clock.step(20)  # past the backoff
    w.core.queue.flush_backoff_completed()
    retry = await w.schedule()
    assert not retry.succeeded
    assert retry.message == (
        "0/1 nodes are available: 1 resourceclaim not available on the node. "
        "deallocation of ResourceClaim completed, preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    )
    freed = w.claim()
    assert "allocation" not in freed["status"] and "devices" not in freed["status"]
    assert w.core.queue.where(w.pod) == UNSCHEDULABLE_PODS
    w.sync_claim()  # the deallocation, seen by the informer, requeues the pod
    assert w.core.queue.where(w.pod) in (ACTIVE_Q, BACKOFF_Q)


async def test_a_wait_that_times_out_fails_pre_bind_and_filter_then_finds_the_claim_timed_out() -> None:
    w = World(timeout=1.0)
    attempt = await w.schedule()
    outcome = await asyncio.wait_for(w.core.bind(attempt), 5)  # one 1 s timer, nothing polls
    assert outcome.message() == (
        'running PreBind plugin "DynamicResources": device binding timeout: context deadline exceeded'
    )
    claim = w.sync_claim()
    # The allocation is a second old for Filter once the wall clock moves on.
    w.binding.now = lambda: datetime(2026, 12, 2, 7, 0, 2, tzinfo=UTC)
    assert w.binding.unavailable(claim)


def hint(w: World, old: Obj | None, new: Obj | None) -> QueueingHint:
    return w.dra.is_schedulable_after_claim_change(w.pod, old, new)


async def test_a_condition_update_on_the_pods_claim_queues_it() -> None:
    w = World()
    old = copy.deepcopy(w.claim_obj)
    old["status"] = {"allocation": {"devices": {"results": []}}}
    new = copy.deepcopy(old)
    new["status"]["devices"] = [{"driver": DRIVER, "pool": NODE_NAME, "device": "instance-1", "conditions": []}]
    new["metadata"]["resourceVersion"] = "999"
    assert hint(w, old, new) is QueueingHint.QUEUE
    assert hint(w, old, {**old, "metadata": {**old["metadata"], "resourceVersion": "1000"}}) is QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize("release", ["1.31", "1.37"])
def test_the_wait_is_on_only_with_the_gate(release: str) -> None:
    _, dra = build_core(SchedulerConfig(gates=FeatureGates(release=release)), api=FakeClient(), clock=FakeClock())
    assert dra.binding.enabled is (release == "1.37")
    assert dra.binding.timeout == 600.0
    _, dra = build_core(
        SchedulerConfig(gates=FeatureGates(release="1.37"), binding_timeout=5.0), api=FakeClient(), clock=FakeClock()
    )
    assert dra.binding.timeout == 5.0


async def test_at_1_31_no_timestamp_is_written_and_nothing_waits() -> None:
    """1.31 knows no binding conditions: the device is allocated like any other and the pod binds at once."""
    w = World(gates=FeatureGates(release="1.31"))
    attempt = await w.schedule()
    assert attempt.succeeded
    assert (await asyncio.wait_for(w.core.bind(attempt), 5)).succeeded
    alloc = w.claim()["status"]["allocation"]
    assert "allocationTimestamp" not in alloc
    assert [sorted(r) for r in alloc["devices"]["results"]] == [["device", "driver", "pool", "request"]]
