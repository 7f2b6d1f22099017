"""Classic DRA (``spec.controller``) with DRAControlPlaneController off in the scheduler.

The apiserver kept the field (its gate was on when the claim was created);
the scheduler, with the gate off, must neither read PodSchedulingContexts nor
schedule the pod, and says why in kube's exact words.
"""

from __future__ import annotations

from scheduler_scenario import RG, claim, device_class, pod, running_stack

from services.scheduler.queue import UNSCHEDULABLE_PODS
from tests.conftest import BusUrl
from tests.support.eventually import eventually

CLASSIC_MESSAGE = (
    "0/1 nodes are available: resourceclaim depends on disabled DRAControlPlaneController feature. "
    "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
)


async def test_classic_claim_with_the_gate_off_fails_with_kubes_message(bus_url: BusUrl) -> None:
    async with running_stack(bus_url(), apiserver_gates="DRAControlPlaneController=true") as stack:
        scheduler = stack.scheduler
        # No PodSchedulingContext informer handler, lister or event registration at all.
        assert ("resource.k8s.io", "podschedulingcontexts") not in {(g, p) for g, p, _ in scheduler.watched()}
        assert scheduler.dynamic_resources.scheduling_contexts is None
        assert "PodSchedulingContext" not in {
            e.event.resource for e in scheduler.dynamic_resources.events_to_register()
        }

        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.node_with_devices("node-1", devices=1)
        stored = await stack.admin.create(RG, "resourceclaims", claim("legacy", controller="driver.example.com"))
        assert stored["spec"]["controller"] == "driver.example.com"
        created = await stack.admin.create("", "pods", pod("legacy-user", claim_name="legacy"))

        await eventually(lambda: stack.attempts("unschedulable") == 1, what="the first attempt")
        assert scheduler.core.queue.where(created) == UNSCHEDULABLE_PODS
        await scheduler.flush()
        (event,) = await stack.events("legacy-user")
        assert (event["type"], event["reason"], event["message"]) == ("Warning", "FailedScheduling", CLASSIC_MESSAGE)
        assert event["source"] == {"component": "default-scheduler"}
        (decision,) = await stack.decisions("legacy-user")
        assert decision.record["result"] == "unschedulable"
        assert decision.record["message"] == CLASSIC_MESSAGE
        assert decision.record["unschedulablePlugins"] == ["DynamicResources"]
        condition = await eventually(
            lambda: next(
                (
                    c
                    for c in (stack.pod("legacy-user") or {}).get("status", {}).get("conditions", [])
                    if c["type"] == "PodScheduled"
                ),
                None,
            ),
            what="PodScheduled condition",
        )
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "False",
            "Unschedulable",
            CLASSIC_MESSAGE,
        )
        assert not (stack.pod("legacy-user") or {})["spec"].get("nodeName")
        # Nothing was written for the claim: no allocation, no reservation, no scheduling context.
        legacy = stack.admin.get(RG, "resourceclaims", "default", "legacy")
        assert legacy is not None and not legacy.get("status")
        assert stack.admin.list(RG, "podschedulingcontexts") == []
