"""A waiting ``pop`` must notice deadlines that appear while it waits.

``pop`` sleeps until the earliest backoff expiry or unschedulable timeout it
knows of. A pod that an event moves from the unschedulable pool into backoffQ
(or a pod newly put into the pool) creates an earlier deadline; the waiting
``pop`` has to recompute, or the pod waits for the next unrelated wakeup.
"""

from __future__ import annotations

import asyncio

import pytest

from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import QueueingHint
from services.scheduler.queue import BACKOFF_Q, PriorityQueue

from .builders import make_pod
from .test_queue import FakePlugin, FakeProfile, always, fail

CLAIM_UPDATE = ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.UPDATE, "ResourceClaimUpdate")


@pytest.mark.looptime
async def test_pop_wakes_when_an_event_moves_a_pod_into_backoff() -> None:
    loop = asyncio.get_running_loop()
    plugin = FakePlugin("DynamicResources", {CLAIM_UPDATE: always(QueueingHint.QUEUE)})
    queue = PriorityQueue(clock=loop.time, profiles={"default-scheduler": FakeProfile([plugin])})
    queue.add(make_pod("loser"))
    pinfo = await queue.pop()
    assert pinfo is not None
    fail(queue, pinfo, "DynamicResources")
    waiter = asyncio.create_task(queue.pop())
    await asyncio.sleep(0.5)  # the pop now waits for the 5-minute unschedulable timeout
    queue.move_all_to_active_or_backoff_queue(CLAIM_UPDATE, None, None)
    assert queue.where(pinfo.pod) == BACKOFF_Q
    again = await asyncio.wait_for(waiter, 5)
    assert again is pinfo
    assert loop.time() == pytest.approx(1.0, abs=0.01)  # at the end of its 1 s backoff, not 300 s later


@pytest.mark.looptime
async def test_pop_wakes_for_the_unschedulable_timeout_of_a_pod_failed_meanwhile() -> None:
    loop = asyncio.get_running_loop()
    queue = PriorityQueue(
        clock=loop.time,
        profiles={"default-scheduler": FakeProfile([FakePlugin("P")])},
        pod_max_in_unschedulable_pods_duration=30.0,
    )
    queue.add(make_pod("a"))
    pinfo = await queue.pop()
    assert pinfo is not None
    waiter = asyncio.create_task(queue.pop())  # nothing queued: waits without a deadline
    await asyncio.sleep(1)
    fail(queue, pinfo, "P")
    again = await asyncio.wait_for(waiter, 60)
    assert again is pinfo
    assert loop.time() == pytest.approx(31.0, abs=0.01)
