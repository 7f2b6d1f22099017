"""A missing DeviceClass makes a pod unschedulable until the class appears; its Add event wakes the pod.

That the event (and no timer) woke it is read from the order of things — the
attempts' positions in the log around the class, the queue's move counters —
never from the wall clock."""

from __future__ import annotations

from scheduler_scenario import RG, claim, device_class, pod, running_stack

from services.scheduler import rejections
from services.scheduler.queue import UNSCHEDULABLE_PODS
from tests.conftest import BusUrl
from tests.support.eventually import eventually

MISSING_CLASS_MESSAGE = (
    "0/1 nodes are available: request gpu: device class gpu.example.com does not exist. "
    "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
)


async def test_pod_waits_for_its_device_class_without_retries_and_the_class_add_wakes_it(bus_url: BusUrl) -> None:
    async with running_stack(bus_url()) as stack:
        await stack.node_with_devices("node-1", devices=1)
        await stack.admin.create(RG, "resourceclaims", claim("train-gpu"))
        created = await stack.admin.create("", "pods", pod("train", claim_name="train-gpu"))

        await eventually(lambda: stack.attempts("unschedulable") == 1, what="the first attempt")
        queue = stack.scheduler.core.queue
        assert queue.where(created) == UNSCHEDULABLE_PODS
        # The FailedScheduling Event and the pod's condition carry kube's message.
        await stack.scheduler.flush()
        (event,) = await stack.events("train")
        assert (event["type"], event["reason"], event["message"]) == (
            "Warning",
            "FailedScheduling",
            MISSING_CLASS_MESSAGE,
        )
        condition = await eventually(
            lambda: next(
                (
                    c
                    for c in (stack.pod("train") or {}).get("status", {}).get("conditions", [])
                    if c["type"] == "PodScheduled"
                ),
                None,
            ),
            what="PodScheduled condition",
        )
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "False",
            "Unschedulable",
            MISSING_CLASS_MESSAGE,
        )

        # Let the pod's 1 s backoff run out: from here on only an event can bring it back.
        pinfo = queue.get(created)
        assert pinfo is not None
        await eventually(lambda: not queue.is_backing_off(pinfo), timeout=5, what="backoff expired")
        # Writing the condition (a status-only pod update) did not requeue it.
        assert queue.where(created) == UNSCHEDULABLE_PODS
        assert stack.attempts("unschedulable") == 1

        made = await stack.admin.create(RG, "deviceclasses", device_class())
        await eventually(lambda: stack.node_of("train"), timeout=30, what="train bound")

        # Woken by the class's Add event, not by a timer: the second attempt is the next one, it began
        # after the scheduler had seen the class (the first had not), and the pod moved to the active
        # queue once, for DeviceClassAdd, never for the unschedulable-pods timeout.
        decisions = await stack.decisions("train")
        assert [(d.record["attempt"], d.record["result"]) for d in decisions] == [
            (1, "unschedulable"),
            (2, "scheduled"),
        ]
        class_at = int(made["metadata"]["resourceVersion"])
        assert decisions[0].record["objectsPosition"] <= class_at < decisions[1].record["objectsPosition"]
        assert stack.sample("scheduler_queue_incoming_pods_total", queue="active", event="UnschedulableTimeout") == 0
        assert decisions[0].record["message"] == MISSING_CLASS_MESSAGE
        assert rejections.by_node(decisions[0].record)["node-1"] == {
            "plugin": "DynamicResources",
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["request gpu: device class gpu.example.com does not exist"],
        }
        assert decisions[1].record["binding"]["result"] == "bound"
        assert stack.attempts("unschedulable") == 1 and stack.attempts("scheduled") == 1
        assert stack.sample("scheduler_queue_incoming_pods_total", queue="active", event="DeviceClassAdd") == 1
