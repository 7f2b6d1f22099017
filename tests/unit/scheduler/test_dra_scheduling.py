"""DynamicResources inside the whole scheduler core: the issue's scenarios without a broker."""

from __future__ import annotations

import copy
from typing import Any

from prometheus_client import CollectorRegistry

from services.scheduler.client import PODS, RESOURCE_CLAIMS
from services.scheduler.cluster_events import Resource
from services.scheduler.dra.stores import ObjectStore
from services.scheduler.metrics import SchedulerMetrics
from services.scheduler.plugins.default_binder import DefaultBinder
from services.scheduler.plugins.dynamic_resources import DynamicResources
from services.scheduler.profile import Profile, default_plugins
from services.scheduler.queue import ACTIVE_Q, BACKOFF_Q, GATED, UNSCHEDULABLE_PODS
from services.scheduler.scheduler import SchedulerCore

from .builders import FakeClock, make_pod
from .dra_fixtures import (
    CLAIM_NAME,
    CLASSIC_CLAIM,
    DEVICE_CLASS,
    PENDING_CLAIM,
    POD_NAME,
    POD_UID,
    POD_WITH_CLAIM_NAME,
    POD_WITH_CLAIM_TEMPLATE,
    POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
    WORKER_NODE,
    WORKER_NODE_SLICE,
    make_claim,
    no_sleep,
    owned,
)
from .fake_client import FakeClient


class World:
    """A scheduler core with DynamicResources over a fake API; ``apply`` plays an informer."""

    def __init__(self, *, gate: bool = False, remember: bool = True) -> None:
        self.client = FakeClient()
        self.clock = FakeClock()
        self.dra = DynamicResources(
            client=self.client,
            classes=ObjectStore(),
            slices=ObjectStore(),
            scheduling_contexts=ObjectStore(),
            control_plane_controller=gate,
            conflict_retry_delays=(0.0,) * 4,
            sleep=no_sleep,
            remember=remember,
        )
        profile = Profile(
            default_plugins(binder=DefaultBinder(self.client), dynamic_resources=self.dra), remember=remember
        )
        self.registry = CollectorRegistry()
        self.core = SchedulerCore(profiles=[profile], clock=self.clock, metrics=SchedulerMetrics(self.registry))

    def with_one_device(self) -> World:
        """The worker node, its slice with one device and the device class."""
        self.apply(Resource.NODE, None, WORKER_NODE)
        self.apply(Resource.RESOURCE_SLICE, None, WORKER_NODE_SLICE)
        self.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
        return self

    def apply(self, resource: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        self.core.on_object_change(resource, old, new)

    def create_pod(self, pod: dict[str, Any]) -> dict[str, Any]:
        stored = self.client.put(PODS, pod)
        self.apply(Resource.POD, None, stored)
        return stored

    def create_claim(self, claim: dict[str, Any]) -> dict[str, Any]:
        stored = self.client.put(RESOURCE_CLAIMS, claim)
        self.apply(Resource.RESOURCE_CLAIM, None, stored)
        return stored

    def sync_claim(self, name: str, old: dict[str, Any] | None) -> dict[str, Any]:
        """Deliver the stored claim to the informer (after a write by the scheduler or a controller)."""
        stored = self.client.stored(RESOURCE_CLAIMS, name, "default")
        assert stored is not None
        self.apply(Resource.RESOURCE_CLAIM, old, stored)
        return stored


async def test_classic_claim_with_gate_off_has_the_exact_message() -> None:
    w = World(gate=False)
    w.apply(Resource.NODE, None, WORKER_NODE)
    w.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
    w.create_claim(CLASSIC_CLAIM)
    w.create_pod(POD_WITH_CLAIM_NAME)
    attempt = await w.core.schedule_one()
    assert attempt is not None and not attempt.succeeded
    assert attempt.message == (
        "0/1 nodes are available: resourceclaim depends on disabled DRAControlPlaneController feature. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert attempt.queue == UNSCHEDULABLE_PODS
    assert attempt.decision["preFilterMessage"] == "resourceclaim depends on disabled DRAControlPlaneController feature"


async def test_missing_device_class_wakes_on_class_add_without_retries() -> None:
    w = World()
    w.apply(Resource.NODE, None, WORKER_NODE)
    w.apply(Resource.RESOURCE_SLICE, None, WORKER_NODE_SLICE)
    w.create_claim(PENDING_CLAIM)
    pod = w.create_pod(POD_WITH_CLAIM_NAME)
    attempt = await w.core.schedule_one()
    assert attempt is not None and attempt.queue == UNSCHEDULABLE_PODS
    assert attempt.message.startswith(
        "0/1 nodes are available: request req-1: device class my-resource-class does not exist."
    )
    w.clock.step(3600)  # no retries in between: nothing but the timeout could move it
    w.apply(
        Resource.NODE, WORKER_NODE, {**WORKER_NODE, "metadata": {**WORKER_NODE["metadata"], "annotations": {"a": "b"}}}
    )
    assert w.core.queue.where(pod) == UNSCHEDULABLE_PODS
    w.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
    assert w.core.queue.where(pod) == ACTIVE_Q
    attempt = await w.core.schedule_one()
    assert attempt is not None and attempt.succeeded
    assert (await w.core.bind(attempt)).succeeded


async def test_class_created_within_the_backoff_second() -> None:
    w = World()
    w.apply(Resource.NODE, None, WORKER_NODE)
    w.create_claim(PENDING_CLAIM)
    pod = w.create_pod(POD_WITH_CLAIM_NAME)
    await w.core.schedule_one()
    w.clock.step(0.3)
    w.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
    assert w.core.queue.where(pod) == BACKOFF_Q
    assert w.core.queue.next_deadline() == w.clock.now + 0.7  # due 1 s after the failed attempt


async def test_claim_template_pod_is_not_attempted_before_its_claim_exists() -> None:
    w = World().with_one_device()
    pod = w.create_pod(POD_WITH_CLAIM_TEMPLATE)
    assert w.core.queue.where(pod) == GATED
    assert w.core.queue.pop_nowait() is None
    # The claim controller creates the claim, then records its name in the pod status.
    w.create_claim(PENDING_CLAIM)
    assert w.core.queue.where(pod) == GATED
    updated = copy.deepcopy(pod)
    updated["status"] = POD_WITH_CLAIM_TEMPLATE_IN_STATUS["status"]
    updated = w.client.put(PODS, updated)
    w.apply(Resource.POD, pod, updated)
    assert w.core.queue.where(pod) == ACTIVE_Q
    attempt = await w.core.schedule_one()
    assert attempt is not None and attempt.succeeded and attempt.pinfo.attempts == 1
    result = await w.core.bind(attempt)
    assert result.succeeded
    claim = w.client.stored(RESOURCE_CLAIMS, CLAIM_NAME, "default")
    assert claim is not None and claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": POD_NAME, "uid": POD_UID}
    ]


async def test_status_first_then_claim_also_ungates() -> None:
    w = World()
    w.apply(Resource.NODE, None, WORKER_NODE)
    w.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
    pod = w.create_pod(POD_WITH_CLAIM_TEMPLATE_IN_STATUS)
    assert w.core.queue.where(pod) == GATED
    w.create_claim(PENDING_CLAIM)
    assert w.core.queue.where(pod) == ACTIVE_Q


async def test_two_pods_race_for_the_last_device() -> None:
    w = World()
    w.apply(Resource.NODE, None, WORKER_NODE)
    w.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
    w.apply(Resource.RESOURCE_SLICE, None, WORKER_NODE_SLICE)
    claim_a = w.create_claim(owned(make_claim("claim-a"), "uid-a"))
    w.create_claim(owned(make_claim("claim-b"), "uid-b"))
    pod_a = w.create_pod(make_pod("a", uid="uid-a", resource_claims=[{"name": "r", "resourceClaimName": "claim-a"}]))
    pod_b = w.create_pod(make_pod("b", uid="uid-b", resource_claims=[{"name": "r", "resourceClaimName": "claim-b"}]))

    first = await w.core.schedule_one()
    second = await w.core.schedule_one()  # while the first is still binding
    assert first is not None and first.succeeded
    assert second is not None and not second.succeeded
    assert second.message.startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    assert (await w.core.bind(first)).succeeded
    claim_a = w.sync_claim("claim-a", claim_a)
    assert w.core.queue.where(pod_b) == UNSCHEDULABLE_PODS  # the allocation is no reason to retry

    # Pod a goes away; the claim controller deallocates its claim.
    bound_a = w.client.stored(PODS, "a", "default")
    w.apply(Resource.POD, bound_a, None)
    assert w.core.queue.where(pod_b) == UNSCHEDULABLE_PODS
    freed = copy.deepcopy(claim_a)
    freed["status"] = {}
    w.client.put(RESOURCE_CLAIMS, freed)
    w.clock.step(2)
    w.sync_claim("claim-a", claim_a)
    assert w.core.queue.where(pod_b) == ACTIVE_Q
    attempt = await w.core.schedule_one()
    assert attempt is not None and attempt.succeeded
    assert (await w.core.bind(attempt)).succeeded
    assert w.core.queue.where(pod_a) is None


async def test_many_pods_never_share_a_device() -> None:
    w = World()
    slices = []
    for n in range(5):
        node = {**WORKER_NODE, "metadata": {"name": f"node-{n}", "labels": {"kubernetes.io/hostname": f"node-{n}"}}}
        w.apply(Resource.NODE, None, node)
        sl = copy.deepcopy(WORKER_NODE_SLICE)
        sl["metadata"]["name"] = f"slice-{n}"
        sl["spec"]["nodeName"] = f"node-{n}"
        sl["spec"]["pool"]["name"] = f"node-{n}"
        sl["spec"]["devices"] = [{"name": f"gpu-{d}", "basic": {}} for d in range(2)]
        slices.append(sl)
        w.apply(Resource.RESOURCE_SLICE, None, sl)
    w.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
    for i in range(10):
        w.create_claim(owned(make_claim(f"c{i}"), f"u{i}"))
        w.create_pod(make_pod(f"p{i}", uid=f"u{i}", resource_claims=[{"name": "r", "resourceClaimName": f"c{i}"}]))
    attempts = [await w.core.schedule_one() for _ in range(10)]
    for attempt in attempts:
        assert attempt is not None and attempt.succeeded
    for attempt in attempts:
        assert attempt is not None and (await w.core.bind(attempt)).succeeded
    devices = []
    for i in range(10):
        claim = w.client.stored(RESOURCE_CLAIMS, f"c{i}", "default")
        assert claim is not None
        result = claim["status"]["allocation"]["devices"]["results"][0]
        devices.append((result["pool"], result["device"]))
    assert len(set(devices)) == 10
    eleventh = make_pod("p10", uid="u10", resource_claims=[{"name": "r", "resourceClaimName": "c10"}])
    w.create_claim(owned(make_claim("c10"), "u10"))
    w.create_pod(eleventh)
    attempt = await w.core.schedule_one()
    assert attempt is not None and not attempt.succeeded
    assert attempt.message.startswith("0/5 nodes are available: 5 cannot allocate all claims.")


async def test_reserve_and_prebind_leave_the_informers_claim_untouched() -> None:
    """The plugin works on copies: the object the informer delivered is shared with every other reader."""
    w = World().with_one_device()
    delivered = w.create_claim(PENDING_CLAIM)
    before = copy.deepcopy(delivered)
    w.create_pod(POD_WITH_CLAIM_NAME)
    attempt = await w.core.schedule_one()
    assert attempt is not None and attempt.succeeded
    assert w.dra.claims.in_flight_count() == 1  # Reserve made its own version
    assert (await w.core.bind(attempt)).succeeded
    written = w.client.stored(RESOURCE_CLAIMS, CLAIM_NAME, "default")
    assert written is not None and written["status"]["allocation"] and written["status"]["reservedFor"]
    assert delivered == before
