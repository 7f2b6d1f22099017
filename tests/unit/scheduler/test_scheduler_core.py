"""SchedulerCore: informer changes in, attempts out, binding and kube's failure handling."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from services.scheduler.client import PODS
from services.scheduler.cluster_events import Resource
from services.scheduler.framework import CycleState, Pod
from services.scheduler.metrics import SchedulerMetrics
from services.scheduler.plugins.default_binder import DefaultBinder
from services.scheduler.profile import Profile, default_plugins
from services.scheduler.queue import ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_PODS
from services.scheduler.scheduler import SchedulerCore
from services.scheduler.status import Code, Status, new_status

from .builders import FakeClock, make_node, make_pod
from .fake_client import FakeClient


def core_with(*extra: Any, client: FakeClient | None = None) -> tuple[SchedulerCore, FakeClient, FakeClock]:
    client = client or FakeClient()
    clock = FakeClock()
    profile = Profile([*default_plugins(binder=DefaultBinder(client)), *extra])
    return SchedulerCore(profiles=[profile], clock=clock, metrics=SchedulerMetrics(CollectorRegistry())), client, clock


async def test_pod_is_scheduled_and_bound_through_the_client() -> None:
    core, client, _ = core_with()
    node = make_node("n1")
    pod = make_pod("web", requests={"cpu": "1"}, resource_version="1")
    client.put(PODS, pod)
    core.on_object_change(Resource.NODE, None, node)
    core.on_object_change(Resource.POD, None, pod)
    attempt = await core.schedule_one()
    assert attempt is not None and attempt.succeeded and attempt.outcome.node == "n1"
    assert attempt.decision["result"] == "scheduled"
    result = await core.bind(attempt)
    assert result.succeeded
    assert client.verbs() == ["create pods/binding"]
    assert client.stored(PODS, "web", "default")["spec"]["nodeName"] == "n1"  # type: ignore[index]
    assert core.queue.in_flight_pod_count() == 0
    registry = core.metrics.registry  # type: ignore[union-attr]
    assert (
        registry.get_sample_value(
            "scheduler_schedule_attempts_total", {"result": "scheduled", "profile": "default-scheduler"}
        )
        == 1
    )


async def test_unschedulable_pod_waits_for_a_node() -> None:
    core, _, clock = core_with()
    core.on_object_change(
        Resource.NODE, None, make_node("small", allocatable={"cpu": "1", "memory": "1Gi", "pods": "9"})
    )
    pod = make_pod("big", requests={"cpu": "2"})
    core.on_object_change(Resource.POD, None, pod)
    attempt = await core.schedule_one()
    assert attempt is not None and not attempt.succeeded
    assert attempt.queue == UNSCHEDULABLE_PODS and attempt.reason == "Unschedulable"
    assert attempt.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    # A new node too small for the pod: NodeResourcesFit's hint says QueueSkip, the pod stays.
    core.on_object_change(
        Resource.NODE, None, make_node("tiny", allocatable={"cpu": "500m", "memory": "1Gi", "pods": "9"})
    )
    assert core.queue.where(pod) == UNSCHEDULABLE_PODS
    clock.step(2)
    core.on_object_change(Resource.NODE, None, make_node("large"))
    assert core.queue.where(pod) == ACTIVE_Q
    attempt = await core.schedule_one()
    assert attempt is not None and attempt.outcome.node == "large"


class FailingPreBind:
    name = "FailingPreBind"

    def __init__(self, status: Status) -> None:
        self.status = status

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self.status


async def test_binding_error_requeues_with_backoff_and_frees_the_node() -> None:
    core, _, _ = core_with(FailingPreBind(new_status(Code.ERROR, "apiserver down")))
    core.on_object_change(Resource.NODE, None, make_node("n1"))
    pod = make_pod("a")
    core.on_object_change(Resource.POD, None, pod)
    attempt = await core.schedule_one()
    assert attempt is not None and attempt.succeeded
    assert core.cache.is_assumed(pod)
    result = await core.bind(attempt)
    assert not result.succeeded
    assert result.message() == 'running PreBind plugin "FailingPreBind": apiserver down'
    assert not core.cache.is_assumed(pod)
    assert core.queue.where(pod) == BACKOFF_Q


async def test_binding_rejection_waits_for_the_plugin() -> None:
    plugin = FailingPreBind(new_status(Code.PENDING, "waiting for resource driver"))
    core, _, _ = core_with(plugin)
    core.on_object_change(Resource.NODE, None, make_node("n1"))
    pod = make_pod("a")
    core.on_object_change(Resource.POD, None, pod)
    attempt = await core.schedule_one()
    assert attempt is not None
    result = await core.bind(attempt)
    assert result.rejectors() == ({"FailingPreBind"}, {"FailingPreBind"})
    assert result.message() == "0/1 nodes are available: 1 waiting for resource driver."
    assert core.queue.where(pod) == UNSCHEDULABLE_PODS


async def test_second_pod_sees_the_first_ones_resources_while_binding() -> None:
    core, _, _ = core_with()
    core.on_object_change(Resource.NODE, None, make_node("n1", allocatable={"cpu": "1", "memory": "1Gi", "pods": "9"}))
    core.on_object_change(Resource.NODE, None, make_node("n2", allocatable={"cpu": "1", "memory": "1Gi", "pods": "9"}))
    for name in ("a", "b"):
        core.on_object_change(Resource.POD, None, make_pod(name, requests={"cpu": "1"}))
    first = await core.schedule_one()
    second = await core.schedule_one()
    assert first is not None and second is not None
    assert {first.outcome.node, second.outcome.node} == {"n1", "n2"}
