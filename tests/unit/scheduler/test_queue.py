"""The scheduling queue: ordering, backoff, gating, hint-driven moves, in-flight events, timeout."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from services.scheduler import cluster_events as ce
from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import ClusterEventWithHint, Obj, Pod, QueueingHint
from services.scheduler.metrics import SchedulerMetrics
from services.scheduler.plugins.scheduling_gates import SchedulingGates
from services.scheduler.queue import ACTIVE_Q, BACKOFF_Q, GATED, UNSCHEDULABLE_PODS, PriorityQueue, QueuedPodInfo
from services.scheduler.queueing_hints import QueueingHintMap
from services.scheduler.status import Code, Status, new_status

from .builders import FakeClock, make_node, make_pod

NODE_LABEL = ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
CLAIM_ADD = ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.ADD, "ResourceClaimAdd")
CLASS_ADD = ClusterEvent(Resource.DEVICE_CLASS, ActionType.ADD, "DeviceClassAdd")

Hint = Callable[[Pod, Obj | None, Obj | None], QueueingHint]


def always(hint: QueueingHint) -> Hint:
    return lambda pod, old, new: hint


@dataclass
class FakePlugin:
    """A plugin registering ``events`` (event -> hint) and optionally gating pods in PreEnqueue."""

    name: str
    events: dict[ClusterEvent, Hint | None] = field(default_factory=dict)
    gate: Callable[[Pod], Status | None] | None = None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(e.resource, e.action_type), h) for e, h in self.events.items()]


@dataclass
class GatingPlugin(FakePlugin):
    def pre_enqueue(self, pod: Pod) -> Status | None:
        return self.gate(pod) if self.gate else None


@dataclass
class FakeProfile:
    plugins: list[Any]

    @property
    def pre_enqueue_plugins(self) -> list[Any]:
        return [p for p in self.plugins if hasattr(p, "pre_enqueue")]

    @property
    def hint_map(self) -> QueueingHintMap:
        return QueueingHintMap.from_plugins(self.plugins)


def make_queue(*plugins: Any, clock: FakeClock | None = None, **kwargs: Any) -> tuple[PriorityQueue, FakeClock]:
    clock = clock or FakeClock()
    return PriorityQueue(clock=clock, profiles={"default-scheduler": FakeProfile(list(plugins))}, **kwargs), clock


def fail(queue: PriorityQueue, pinfo: QueuedPodInfo, *unschedulable: str, pending: tuple[str, ...] = ()) -> str:
    pinfo.unschedulable_plugins = set(unschedulable)
    pinfo.pending_plugins = set(pending)
    return queue.add_unschedulable_if_not_present(pinfo)


def pop(queue: PriorityQueue) -> QueuedPodInfo:
    pinfo = queue.pop_nowait()
    assert pinfo is not None
    return pinfo


# ---------------------------------------------------------------- ordering


def test_active_q_orders_by_priority_then_fifo() -> None:
    queue, clock = make_queue()
    queue.add(make_pod("low-early", priority=1))
    clock.step(1)
    queue.add(make_pod("high", priority=100))
    clock.step(1)
    queue.add(make_pod("low-late", priority=1))
    queue.add(make_pod("mid", priority=50))
    queue.add(make_pod("default"))
    order = [pop(queue).pod["metadata"]["name"] for _ in range(5)]
    assert order == ["high", "mid", "low-early", "low-late", "default"]
    assert queue.pop_nowait() is None


def test_update_in_active_q_reorders_by_new_priority() -> None:
    queue, clock = make_queue()
    queue.add(make_pod("a", priority=10))
    clock.step(1)
    old = make_pod("b", priority=1)
    queue.add(old)
    queue.update(old, make_pod("b", priority=20))
    assert pop(queue).pod["metadata"]["name"] == "b"
    assert pop(queue).pod["metadata"]["name"] == "a"


def test_pop_counts_attempts_and_scheduling_cycles() -> None:
    queue, _ = make_queue()
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    assert pinfo.attempts == 1 and queue.scheduling_cycle == 1
    assert pinfo.initial_attempt_timestamp is not None


# ------------------------------------------------------------------ backoff


@pytest.mark.parametrize(("attempts", "want"), [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)])
def test_backoff_doubles_from_one_to_ten_seconds(attempts: int, want: float) -> None:
    queue, _ = make_queue()
    pinfo = QueuedPodInfo(pod=make_pod(), timestamp=0.0, attempts=attempts)
    assert queue.backoff_duration(pinfo) == want


def test_error_goes_to_backoff_then_active_after_expiry() -> None:
    queue, clock = make_queue(FakePlugin("A", {NODE_LABEL: None}))
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    assert fail(queue, pinfo) == BACKOFF_Q  # no rejector plugins: an error
    clock.step(0.999)
    assert queue.pop_nowait() is None
    assert queue.where(pinfo.pod) == BACKOFF_Q
    assert queue.next_deadline() == pytest.approx(clock.now + 0.001)
    clock.step(0.001)
    assert pop(queue) is pinfo
    assert pinfo.attempts == 2


def test_second_failure_backs_off_two_seconds() -> None:
    queue, clock = make_queue()
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    fail(queue, pinfo)
    clock.step(1)
    pinfo = pop(queue)
    fail(queue, pinfo)
    clock.step(1.5)
    assert queue.pop_nowait() is None
    clock.step(0.5)
    assert pop(queue) is pinfo


# ------------------------------------------------------- unschedulable moves


def test_rejected_pod_waits_for_a_matching_event() -> None:
    queue, clock = make_queue(
        FakePlugin("A", {NODE_LABEL: always(QueueingHint.QUEUE)}),
        FakePlugin("B", {CLAIM_ADD: always(QueueingHint.QUEUE)}),
    )
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    assert fail(queue, pinfo, "A") == UNSCHEDULABLE_PODS
    clock.step(60)
    assert queue.pop_nowait() is None  # no periodic flush
    queue.move_all_to_active_or_backoff_queue(CLAIM_ADD, None, {})  # only B cares
    assert queue.where(pinfo.pod) == UNSCHEDULABLE_PODS
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL, {}, {})
    assert queue.where(pinfo.pod) == ACTIVE_Q  # backoff (1 s) long over


def test_hint_queue_skip_keeps_pod() -> None:
    queue, _ = make_queue(FakePlugin("A", {NODE_LABEL: always(QueueingHint.QUEUE_SKIP)}))
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    fail(queue, pinfo, "A")
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL, {}, {})
    assert queue.where(pinfo.pod) == UNSCHEDULABLE_PODS


def test_event_while_backing_off_goes_to_backoff() -> None:
    queue, clock = make_queue(FakePlugin("A", {NODE_LABEL: None}))
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    fail(queue, pinfo, "A")
    clock.step(0.5)
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL, {}, {})
    assert queue.where(pinfo.pod) == BACKOFF_Q
    clock.step(0.5)
    assert pop(queue) is pinfo


def test_pending_plugin_queue_skips_backoff() -> None:
    queue, _ = make_queue(FakePlugin("A", {CLAIM_ADD: always(QueueingHint.QUEUE)}))
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    fail(queue, pinfo, "A", pending=("A",))
    queue.move_all_to_active_or_backoff_queue(CLAIM_ADD, None, {})
    assert queue.where(pinfo.pod) == ACTIVE_Q  # no backoff wait although it just failed


def test_unschedulable_and_pending_plugins_combine() -> None:
    """A Queue from an Unschedulable plugin is not enough to skip backoff when a Pending plugin exists."""
    queue, _ = make_queue(
        FakePlugin("A", {CLAIM_ADD: always(QueueingHint.QUEUE)}),
        FakePlugin("P", {CLAIM_ADD: always(QueueingHint.QUEUE_SKIP)}),
    )
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    fail(queue, pinfo, "A", pending=("P",))
    queue.move_all_to_active_or_backoff_queue(CLAIM_ADD, None, {})
    assert queue.where(pinfo.pod) == BACKOFF_Q


def test_failing_hint_counts_as_queue() -> None:
    def broken(pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        raise RuntimeError("boom")

    queue, _ = make_queue(FakePlugin("A", {NODE_LABEL: broken}))
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    fail(queue, pinfo, "A")
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL, {}, {})
    assert queue.where(pinfo.pod) == BACKOFF_Q


def test_hint_sees_pod_and_objects() -> None:
    seen: list[tuple[str, Any, Any]] = []

    def hint(pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        seen.append((pod["metadata"]["name"], old, new))
        return QueueingHint.QUEUE_SKIP

    queue, _ = make_queue(FakePlugin("A", {NODE_LABEL: hint}))
    queue.add(make_pod("a"))
    fail(queue, pop(queue), "A")
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL, {"old": 1}, {"new": 2})
    assert seen == [("a", {"old": 1}, {"new": 2})]


def test_update_of_unschedulable_pod_runs_pod_hints() -> None:
    event = ClusterEvent(Resource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    queue, _ = make_queue(FakePlugin("A", {event: lambda pod, old, new: QueueingHint.QUEUE}))
    old = make_pod("a", resource_claim_statuses=[])
    queue.add(old)
    fail(queue, pop(queue), "A")
    queue.update(old, make_pod("a", resource_version="2"))  # no claim status change: "other" update
    assert queue.where(old) == UNSCHEDULABLE_PODS
    new = make_pod("a", resource_claim_statuses=[{"name": "gpu", "resourceClaimName": "a-gpu-x"}])
    queue.update(old, new)
    assert queue.where(old) == BACKOFF_Q
    assert queue.get(old).pod is new  # type: ignore[union-attr]


def test_pod_unknown_to_queue_is_added_on_update() -> None:
    queue, _ = make_queue()
    pod = make_pod("a")
    queue.update(pod, pod)
    assert queue.where(pod) == ACTIVE_Q


def test_delete_removes_from_every_queue() -> None:
    queue, _ = make_queue(FakePlugin("A", {NODE_LABEL: None}))
    a, b, c = make_pod("a"), make_pod("b"), make_pod("c")
    queue.add(a)
    queue.add(b)
    queue.add(c)
    fail(queue, pop(queue), "A")  # a unschedulable
    fail(queue, pop(queue))  # b backoff
    for pod in (a, b, c):
        queue.delete(pod)
        assert queue.where(pod) is None
    assert queue.pending_counts() == {ACTIVE_Q: 0, BACKOFF_Q: 0, UNSCHEDULABLE_PODS: 0, GATED: 0}


def test_duplicate_requeue_is_rejected() -> None:
    queue, _ = make_queue()
    pod = make_pod("a")
    queue.add(pod)
    pinfo = pop(queue)
    queue.add(pod)
    with pytest.raises(Exception, match="already present in the active queue"):
        fail(queue, pinfo)


# ------------------------------------------------------------------- gating


def test_pre_enqueue_gates_until_event_lets_it_pass() -> None:
    claims: set[str] = set()

    def gate(pod: Pod) -> Status | None:
        if "claim" in claims:
            return None
        return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for resource claim "c" to be created')

    plugin = GatingPlugin("DRA", {CLAIM_ADD: always(QueueingHint.QUEUE)}, gate)
    queue, _ = make_queue(plugin)
    pod = make_pod("a")
    queue.add(pod)
    assert queue.where(pod) == GATED
    pinfo = queue.get(pod)
    assert pinfo is not None and pinfo.attempts == 0
    assert pinfo.gating_status is not None and pinfo.gating_status.plugin == "DRA"
    assert queue.pop_nowait() is None

    queue.move_all_to_active_or_backoff_queue(CLAIM_ADD, None, {})  # hint says Queue but still gated
    assert queue.where(pod) == GATED

    claims.add("claim")
    queue.move_all_to_active_or_backoff_queue(CLASS_ADD, None, {})  # not registered: nothing happens
    assert queue.where(pod) == GATED
    queue.move_all_to_active_or_backoff_queue(CLAIM_ADD, None, {})
    assert queue.where(pod) == ACTIVE_Q  # never attempted, so no backoff
    assert pop(queue).attempts == 1


def test_scheduling_gates_only_released_by_pod_update() -> None:
    queue, _ = make_queue(SchedulingGates(), FakePlugin("A", {ce.WILDCARD_EVENT: None}))
    pod = make_pod("a", scheduling_gates=["example.com/gate"])
    queue.add(pod)
    assert queue.where(pod) == GATED
    assert queue.get(pod).gating_status.message() == "waiting for scheduling gates: [example.com/gate]"  # type: ignore[union-attr]
    queue.move_all_to_active_or_backoff_queue(ce.NODE_ADD, None, make_node())
    assert queue.where(pod) == GATED
    ungated = make_pod("a", resource_version="2")
    queue.update(pod, ungated)
    assert queue.where(pod) == ACTIVE_Q


# ---------------------------------------------------------- in-flight events


def test_event_during_attempt_is_replayed() -> None:
    queue, _ = make_queue(FakePlugin("A", {NODE_LABEL: always(QueueingHint.QUEUE)}))
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL, {}, {})  # arrives while "a" is being scheduled
    assert queue.in_flight_event_count() == 1
    assert fail(queue, pinfo, "A") == BACKOFF_Q  # not parked in unschedulable
    assert queue.in_flight_pod_count() == 0 and queue.in_flight_event_count() == 0


def test_unrelated_event_during_attempt_does_not_requeue() -> None:
    queue, _ = make_queue(
        FakePlugin("A", {NODE_LABEL: always(QueueingHint.QUEUE)}),
        FakePlugin("B", {CLAIM_ADD: always(QueueingHint.QUEUE)}),
    )
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    queue.move_all_to_active_or_backoff_queue(CLAIM_ADD, None, {})
    assert fail(queue, pinfo, "A") == UNSCHEDULABLE_PODS


def test_event_before_pop_is_not_replayed() -> None:
    queue, _ = make_queue(FakePlugin("A", {NODE_LABEL: always(QueueingHint.QUEUE)}))
    queue.add(make_pod("a"))
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL, {}, {})
    assert queue.in_flight_event_count() == 0  # nothing in flight: not recorded
    pinfo = pop(queue)
    assert fail(queue, pinfo, "A") == UNSCHEDULABLE_PODS


def test_pending_plugin_event_in_flight_requeues_immediately() -> None:
    queue, _ = make_queue(FakePlugin("A", {CLAIM_ADD: always(QueueingHint.QUEUE)}))
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    queue.move_all_to_active_or_backoff_queue(CLAIM_ADD, None, {})
    assert fail(queue, pinfo, "A", pending=("A",)) == ACTIVE_Q


def test_events_only_kept_for_pods_that_saw_them() -> None:
    queue, _ = make_queue(FakePlugin("A", {NODE_LABEL: always(QueueingHint.QUEUE)}))
    queue.add(make_pod("a"))
    a = pop(queue)
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL, {}, {})  # seen by a only
    queue.add(make_pod("b"))
    b = pop(queue)
    assert queue.in_flight_event_count() == 1
    queue.done(a.uid)  # a bound: its events are pruned up to b's marker
    assert queue.in_flight_event_count() == 0
    assert fail(queue, b, "A") == UNSCHEDULABLE_PODS


def test_update_of_in_flight_pod_is_recorded() -> None:
    event = ClusterEvent(Resource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    queue, _ = make_queue(FakePlugin("A", {event: always(QueueingHint.QUEUE)}))
    pod = make_pod("a")
    queue.add(pod)
    pinfo = pop(queue)
    queue.update(pod, make_pod("a", resource_version="2"))
    assert queue.where(pod) is None
    assert fail(queue, pinfo, "A") == BACKOFF_Q


def test_pod_deleted_during_attempt_is_not_requeued() -> None:
    queue, _ = make_queue()
    pod = make_pod("a")
    queue.add(pod)
    pinfo = pop(queue)
    queue.delete(pod)
    assert fail(queue, pinfo, "A") == ""
    assert queue.where(pod) is None
    assert queue.in_flight_pod_count() == 0


# ----------------------------------------------------------------- timeout


def test_unschedulable_timeout_moves_pod_after_five_minutes() -> None:
    queue, clock = make_queue(FakePlugin("A", {NODE_LABEL: always(QueueingHint.QUEUE_SKIP)}))
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    fail(queue, pinfo, "A")
    assert queue.next_deadline() == pytest.approx(clock.now + 300)
    clock.step(299)
    assert queue.pop_nowait() is None
    clock.step(1)
    assert pop(queue) is pinfo


def test_unschedulable_timeout_is_configurable() -> None:
    queue, clock = make_queue(pod_max_in_unschedulable_pods_duration=30.0)
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    fail(queue, pinfo, "A")
    clock.step(30)
    assert pop(queue) is pinfo


def test_gated_pod_restarts_its_timeout() -> None:
    plugin = GatingPlugin("G", {}, lambda pod: new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no"))
    queue, clock = make_queue(plugin)
    pod = make_pod("a")
    queue.add(pod)
    clock.step(300)
    assert queue.pop_nowait() is None
    assert queue.where(pod) == GATED
    assert queue.next_deadline() == pytest.approx(clock.now + 300)


# ----------------------------------------------------------------- routing


def test_on_object_change_routes_pods_and_events() -> None:
    queue, _ = make_queue(
        FakePlugin(
            "A",
            {ClusterEvent(Resource.POD, ActionType.DELETE): None, ClusterEvent(Resource.NODE, ActionType.ADD): None},
        )
    )
    pod = make_pod("a", resource_version="1")
    queue.on_object_change(Resource.POD, None, pod)
    assert queue.where(pod) == ACTIVE_Q
    queue.on_object_change(Resource.POD, pod, pod)  # same resourceVersion: ignored
    pinfo = pop(queue)
    fail(queue, pinfo, "A")
    other = make_pod("other", node_name="n1")
    queue.on_object_change(Resource.POD, other, None)  # AssignedPodDelete
    assert queue.where(pod) == BACKOFF_Q
    foreign = make_pod("foreign", scheduler_name="other-scheduler")
    queue.on_object_change(Resource.POD, None, foreign)
    assert queue.where(foreign) is None


def test_bound_pod_leaves_the_queue() -> None:
    queue, _ = make_queue()
    pod = make_pod("a", resource_version="1")
    queue.on_object_change(Resource.POD, None, pod)
    queue.on_object_change(Resource.POD, pod, make_pod("a", node_name="n", resource_version="2"))
    assert queue.where(pod) is None


def test_assumed_pods_are_not_requeued_on_update() -> None:
    queue, _ = make_queue()
    pod = make_pod("a", resource_version="1")
    queue.on_object_change(Resource.POD, None, pod)
    pinfo = pop(queue)
    queue.done(pinfo.uid)  # bound, informer has not caught up yet
    queue.on_object_change(Resource.POD, pod, make_pod("a", resource_version="2"), is_assumed=lambda p: True)
    assert queue.where(pod) is None


# ----------------------------------------------------------------- metrics


def test_metrics_use_kube_names() -> None:
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)
    queue, clock = make_queue(FakePlugin("A", {NODE_LABEL: None}), metrics=metrics)
    queue.add(make_pod("a"))
    queue.add(make_pod("b"))
    fail(queue, pop(queue), "A")

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert value("scheduler_queue_incoming_pods_total", queue="active", event="PodAdd") == 2
    assert value("scheduler_queue_incoming_pods_total", queue="unschedulable", event="ScheduleAttemptFailure") == 1
    assert value("scheduler_pending_pods", queue="active") == 1
    assert value("scheduler_pending_pods", queue="unschedulable") == 1
    assert value("scheduler_unschedulable_pods", plugin="A", profile="default-scheduler") == 1
    clock.step(1)  # past the 1 s backoff
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL, {}, {})
    assert value("scheduler_queue_incoming_pods_total", queue="active", event="NodeLabelChange") == 1
    assert value("scheduler_pending_pods", queue="unschedulable") == 0


def test_gauges_follow_every_change_of_the_sizes() -> None:
    """Sizes are set only when they changed; each new value still reaches the gauge, also back to an old one."""
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)

    def sizes() -> list[float | None]:
        pending = [registry.get_sample_value("scheduler_pending_pods", {"queue": q}) for q in ("active", "gated")]
        cache = [
            registry.get_sample_value("scheduler_scheduler_cache_size", {"type": t}) for t in ("nodes", "assumed_pods")
        ]
        return pending + cache

    metrics.set_pending(3, 0, 0, 1)
    metrics.set_cache_size(500, 10, 2)
    assert sizes() == [3, 1, 500, 2]
    metrics.set_pending(3, 0, 0, 1)  # unchanged
    metrics.set_pending(2, 0, 0, 1)
    metrics.set_cache_size(500, 10, 1)
    assert sizes() == [2, 1, 500, 1]
    metrics.set_pending(3, 0, 0, 1)  # back to the first values
    metrics.set_cache_size(500, 10, 2)
    assert sizes() == [3, 1, 500, 2]


# ----------------------------------------------------------------- async pop


@pytest.mark.looptime
async def test_async_pop_waits_for_backoff_without_sleeping() -> None:
    loop = asyncio.get_running_loop()
    queue = PriorityQueue(clock=loop.time, profiles={"default-scheduler": FakeProfile([])})
    queue.add(make_pod("a"))
    pinfo = await queue.pop()
    assert pinfo is not None
    start = loop.time()
    fail(queue, pinfo)
    again = await queue.pop()
    assert again is pinfo
    assert loop.time() - start == pytest.approx(1.0)


@pytest.mark.looptime
async def test_async_pop_wakes_on_add_and_close() -> None:
    loop = asyncio.get_running_loop()
    queue = PriorityQueue(clock=loop.time, profiles={"default-scheduler": FakeProfile([])})
    waiter = asyncio.create_task(queue.pop())
    await asyncio.sleep(5)
    assert not waiter.done()
    queue.add(make_pod("a"))
    pinfo = await waiter
    assert pinfo is not None and pinfo.pod["metadata"]["name"] == "a"
    closing = asyncio.create_task(queue.pop())
    await asyncio.sleep(1)
    queue.close()
    assert await closing is None
