"""SchedulerPopFromBackoffQ (kube-scheduler 1.33+): an empty activeQ pops the head of backoffQ.

With the gate off the queue is 1.31's: a pod in backoffQ waits for its backoff
to expire even when nothing else is waiting. With it on, ``pop`` takes it at
once, unless its attempt failed with an error; backoff expiries are aligned to
1 s windows, inside which backoffQ is ordered by priority; PreEnqueue runs
when a pod enters backoffQ.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from services.kube.feature_gates import FeatureGates
from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import QueueingHint
from services.scheduler.metrics import SchedulerMetrics
from services.scheduler.queue import ACTIVE_Q, BACKOFF_Q, GATED, UNSCHEDULABLE_PODS, PriorityQueue, QueuedPodInfo
from services.scheduler.service import SchedulerConfig, build_core
from services.scheduler.status import Code, new_status

from .builders import FakeClock, make_pod
from .fake_client import FakeClient
from .test_queue import FakePlugin, FakeProfile, GatingPlugin, always, fail, make_queue, pop

CLAIM_UPDATE = ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.UPDATE, "ResourceClaimUpdate")


def dra() -> FakePlugin:
    return FakePlugin("DynamicResources", {CLAIM_UPDATE: always(QueueingHint.QUEUE)})


def gating_plugin(gated: dict[str, bool]) -> GatingPlugin:
    """A PreEnqueue plugin that gates every pod while ``gated["on"]``."""
    return GatingPlugin("Gate", gate=lambda pod: new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE) if gated["on"] else None)


def rejected_then_requeued(queue: PriorityQueue, name: str = "a", priority: int = 0) -> QueuedPodInfo:
    """A pod rejected by DynamicResources; a claim update then moves it to backoffQ (it is still backing off)."""
    queue.add(make_pod(name, priority=priority))
    pinfo = pop(queue)
    assert fail(queue, pinfo, "DynamicResources") == UNSCHEDULABLE_PODS
    queue.move_all_to_active_or_backoff_queue(CLAIM_UPDATE, None, None)
    assert queue.where(pinfo.pod) == BACKOFF_Q
    return pinfo


@pytest.mark.parametrize("gate", [True, False])
def test_empty_active_q_pops_the_backoff_head_only_with_the_gate(gate: bool) -> None:
    queue, clock = make_queue(dra(), pop_from_backoff_q=gate)
    pinfo = rejected_then_requeued(queue)
    got = queue.pop_nowait()
    if gate:
        assert got is pinfo and got.attempts == 2
        assert queue.where(pinfo.pod) is None
    else:  # 1.31: it waits out its 1 s backoff
        assert got is None
        clock.step(1.0)
        assert queue.pop_nowait() is pinfo


def test_active_q_goes_first() -> None:
    queue, _ = make_queue(dra(), pop_from_backoff_q=True)
    backing_off = rejected_then_requeued(queue, "backing-off", priority=100)
    queue.add(make_pod("new", priority=1))
    assert pop(queue).pod["metadata"]["name"] == "new"
    assert pop(queue) is backing_off


def test_a_rejector_event_during_the_attempt_retries_the_pod_at_once() -> None:
    """Issue 21's case: the claim that frees a device is released while the pod is being scheduled."""
    queue, _ = make_queue(dra(), pop_from_backoff_q=True)
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    queue.move_all_to_active_or_backoff_queue(CLAIM_UPDATE, None, None)  # recorded for the in-flight pod
    assert fail(queue, pinfo, "DynamicResources") == BACKOFF_Q
    assert queue.pop_nowait() is pinfo


def test_a_pod_that_failed_with_an_error_waits_out_its_aligned_backoff() -> None:
    queue, clock = make_queue(dra(), pop_from_backoff_q=True)  # FakeClock starts at 1000.0
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    assert fail(queue, pinfo) == BACKOFF_Q  # no rejector: an error
    assert queue.pop_nowait() is None
    # Expiry 1001.0 is aligned to the window [1001, 1002): the pod leaves when that window is over.
    assert queue.next_deadline() == pytest.approx(1002.0)
    clock.step(1.5)
    assert queue.pop_nowait() is None
    clock.step(0.5)
    assert queue.pop_nowait() is pinfo


def test_error_pods_are_not_popped_but_rejected_ones_behind_them_are() -> None:
    queue, clock = make_queue(dra(), pop_from_backoff_q=True)
    queue.add(make_pod("error"))
    errored = pop(queue)
    assert fail(queue, errored) == BACKOFF_Q
    clock.step(0.5)
    rejected = rejected_then_requeued(queue, "rejected")
    assert queue.pending_counts()[BACKOFF_Q] == 2
    assert queue.pop_nowait() is rejected
    assert queue.pop_nowait() is None
    assert queue.where(errored.pod) == BACKOFF_Q


def test_backoff_q_orders_by_window_then_priority() -> None:
    queue, clock = make_queue(dra(), clock=FakeClock(999.5), pop_from_backoff_q=True)
    names = []
    for name, priority, step in [("early-low", 0, 0.7), ("low", 1, 0.5), ("high", 100, 0.0)]:
        queue.add(make_pod(name, priority=priority))
        assert fail(queue, pop(queue), "DynamicResources") == UNSCHEDULABLE_PODS
        clock.step(step)
    # Failed at 999.5, 1000.2 and 1000.7: expiries 1000.5 -> window 1000, 1001.2 and 1001.7 -> window 1001.
    queue.move_all_to_active_or_backoff_queue(CLAIM_UPDATE, None, None)
    while (pinfo := queue.pop_nowait()) is not None:
        names.append(pinfo.pod["metadata"]["name"])
    assert names == ["early-low", "high", "low"]


@pytest.mark.parametrize("gate", [True, False])
def test_a_whole_window_leaves_backoff_q_at_its_end(gate: bool) -> None:
    queue, clock = make_queue(dra(), clock=FakeClock(1000.2), pop_from_backoff_q=gate)
    queue.add(make_pod("a"))
    queue.add(make_pod("b"))
    first, second = pop(queue), pop(queue)
    fail(queue, first)  # errors: never popped early, so they show when backoff ends
    clock.now = 1000.8
    fail(queue, second)
    clock.now = 1001.7  # the first pod's 1 s is over, the second's not
    queue.flush()
    where = [queue.where(first.pod), queue.where(second.pod)]
    if gate:  # both expiries (1001.2, 1001.8) lie in window 1001, which ends at 1002
        assert where == [BACKOFF_Q, BACKOFF_Q]
        assert queue.next_deadline() == pytest.approx(1002.0)
        clock.now = 1002.0
        queue.flush()
        assert [queue.where(first.pod), queue.where(second.pod)] == [ACTIVE_Q, ACTIVE_Q]
    else:
        assert where == [ACTIVE_Q, BACKOFF_Q]


def test_pre_enqueue_runs_when_a_pod_enters_backoff_q() -> None:
    """A pod popped from backoffQ skips PreEnqueue, so a gated one must never get in."""
    gated = {"on": False}
    gate = gating_plugin(gated)
    queue, _ = make_queue(dra(), gate, pop_from_backoff_q=True)
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    fail(queue, pinfo, "DynamicResources")
    gated["on"] = True
    queue.move_all_to_active_or_backoff_queue(CLAIM_UPDATE, None, None)
    assert queue.where(pinfo.pod) == GATED
    assert queue.pop_nowait() is None


def test_without_the_gate_pre_enqueue_runs_when_backoff_ends() -> None:
    gated = {"on": False}
    gate = gating_plugin(gated)
    queue, clock = make_queue(dra(), gate)
    pinfo = rejected_then_requeued(queue)
    gated["on"] = True
    clock.step(1.0)
    assert queue.pop_nowait() is None
    assert queue.where(pinfo.pod) == GATED


@pytest.mark.parametrize("gate", [True, False])
def test_a_gated_pod_queued_immediately_stays_only_in_the_gated_pool(gate: bool) -> None:
    """QueueImmediately for a gated pod that is still backing off: the pool, not backoffQ as well."""
    gated = {"on": False}
    plugin = gating_plugin(gated)
    queue, _ = make_queue(dra(), plugin, pop_from_backoff_q=gate)
    queue.add(make_pod("a"))
    pinfo = pop(queue)
    assert fail(queue, pinfo, pending=("DynamicResources",)) == UNSCHEDULABLE_PODS
    gated["on"] = True
    queue.move_all_to_active_or_backoff_queue(CLAIM_UPDATE, None, None)  # pending plugin: QueueImmediately
    assert queue.where(pinfo.pod) == GATED
    assert queue.pending_counts() == {ACTIVE_Q: 0, BACKOFF_Q: 0, UNSCHEDULABLE_PODS: 0, GATED: 1}
    assert queue.pop_nowait() is None


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def test_pending_and_incoming_metrics_follow_a_pop_from_backoff_q() -> None:
    registry = CollectorRegistry()
    queue, _ = make_queue(dra(), metrics=SchedulerMetrics(registry), pop_from_backoff_q=True)
    pinfo = rejected_then_requeued(queue)
    assert sample(registry, "scheduler_pending_pods", queue="backoff") == 1
    assert queue.pop_nowait() is pinfo
    pending = {q: sample(registry, "scheduler_pending_pods", queue=q) for q in ("active", "backoff", "unschedulable")}
    assert pending == {"active": 0, "backoff": 0, "unschedulable": 0}
    assert queue.pending_counts() == {ACTIVE_Q: 0, BACKOFF_Q: 0, UNSCHEDULABLE_PODS: 0, GATED: 0}
    assert sample(registry, "scheduler_queue_incoming_pods_total", queue="active", event="PopFromBackoffQ") == 1


@pytest.mark.looptime
@pytest.mark.parametrize(("gate", "popped_at"), [(True, 0.5), (False, 1.0)])
async def test_a_waiting_pop_takes_a_pod_put_into_backoff_q(gate: bool, popped_at: float) -> None:
    loop = asyncio.get_running_loop()
    kwargs: dict[str, Any] = {"pop_from_backoff_q": gate}
    queue = PriorityQueue(clock=loop.time, profiles={"default-scheduler": FakeProfile([dra()])}, **kwargs)
    queue.add(make_pod("a"))
    pinfo = await queue.pop()
    assert pinfo is not None
    fail(queue, pinfo, "DynamicResources")
    waiter = asyncio.create_task(queue.pop())
    await asyncio.sleep(0.5)  # the pop waits for the 5-minute unschedulable timeout
    queue.move_all_to_active_or_backoff_queue(CLAIM_UPDATE, None, None)
    assert await asyncio.wait_for(waiter, 5) is pinfo
    assert loop.time() == pytest.approx(popped_at, abs=0.01)  # gate on: at once; off: when its 1 s backoff ends


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        (FeatureGates(release="1.37"), True),  # beta, on since 1.33
        (FeatureGates.parse("SchedulerPopFromBackoffQ=false", release="1.37"), False),
        (FeatureGates(release="1.31"), False),  # the gate does not exist yet
    ],
)
def test_the_scheduler_follows_the_gate(gates: FeatureGates, want: bool) -> None:
    core, _ = build_core(SchedulerConfig(gates=gates), api=FakeClient(), clock=FakeClock())
    assert core.queue.pop_from_backoff_q is want
