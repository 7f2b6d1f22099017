"""A pod whose claim comes from a template waits, unattempted, until its claim exists (PreEnqueue)."""

from __future__ import annotations

from scheduler_scenario import CLASS, NS, RG, device_class, pod, running_stack

from services.scheduler.queue import GATED
from tests.conftest import BusUrl
from tests.support.eventually import eventually


async def test_pod_is_never_attempted_before_its_claim_exists_and_binds_on_attempt_one(bus_url: BusUrl) -> None:
    async with running_stack(bus_url()) as stack:
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.node_with_devices("node-1", devices=2)

        created = await stack.admin.create("", "pods", pod("web-0", template="gpu-template"))
        await stack.seen_by_scheduler(created)
        # The scheduler has the pod, but PreEnqueue keeps it gated: no attempt, no decision, no event.
        assert stack.scheduler.core.queue.where(created) == GATED
        assert stack.attempts("unschedulable") == stack.attempts("scheduled") == stack.attempts("error") == 0
        assert await stack.decisions("web-0") == []

        generated = await stack.give_generated_claim(created, "web-0-gpu-x7k2q")
        node = await eventually(lambda: stack.node_of("web-0"), what="web-0 bound")
        assert node == "node-1"

        decisions = await stack.decisions("web-0")
        assert [(d.record["attempt"], d.record["result"], d.record["binding"]["result"]) for d in decisions] == [
            (1, "scheduled", "bound")
        ]
        assert stack.attempts("scheduled") == 1
        assert stack.attempts("unschedulable") == stack.attempts("error") == 0
        assert stack.sample("scheduler_pod_scheduling_attempts_count") == 1
        assert stack.sample("scheduler_pod_scheduling_attempts_sum") == 1

        # PreBind wrote finalizer, allocation and reservation; the decision names the same device.
        allocated = await eventually(
            lambda: (
                (c := stack.admin.get(RG, "resourceclaims", NS, "web-0-gpu-x7k2q"))
                and c.get("status", {}).get("reservedFor")
                and c
            ),
            what="claim reserved",
        )
        assert allocated["metadata"]["uid"] == generated["metadata"]["uid"]
        assert allocated["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        assert allocated["status"]["reservedFor"] == [
            {"resource": "pods", "name": "web-0", "uid": created["metadata"]["uid"]}
        ]
        results = allocated["status"]["allocation"]["devices"]["results"]
        assert [(r["request"], r["driver"], r["pool"]) for r in results] == [("gpu", CLASS, "node-1")]
        recorded = decisions[0].record["plugins"]["DynamicResources"]
        assert recorded["node"] == "node-1"
        assert recorded["allocations"][f"{NS}/web-0-gpu-x7k2q"]["devices"]["results"] == results

        # kube's Scheduled event, from default-scheduler.
        (event,) = await stack.events("web-0")
        assert (event["type"], event["reason"], event["message"]) == (
            "Normal",
            "Scheduled",
            "Successfully assigned default/web-0 to node-1",
        )
        assert event["source"]["component"] == "default-scheduler"
        assert event["involvedObject"]["uid"] == created["metadata"]["uid"]
