"""Two pods race for the last device: one binds, the other waits until the device is released."""

from __future__ import annotations

import asyncio

from scheduler_scenario import NS, RG, claim, device_class, pod, running_stack

from services.scheduler import rejections
from services.scheduler.queue import UNSCHEDULABLE_PODS
from tests.conftest import BusUrl
from tests.support.eventually import eventually


async def test_two_pods_race_for_the_last_device(bus_url: BusUrl) -> None:
    async with running_stack(bus_url()) as stack:
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.node_with_devices("node-1", devices=1)
        await stack.admin.create(RG, "resourceclaims", claim("claim-a"))
        await stack.admin.create(RG, "resourceclaims", claim("claim-b"))
        pods = await asyncio.gather(
            stack.admin.create("", "pods", pod("racer-a", claim_name="claim-a")),
            stack.admin.create("", "pods", pod("racer-b", claim_name="claim-b")),
        )
        by_name = {p["metadata"]["name"]: p for p in pods}

        winner = await eventually(lambda: next((n for n in by_name if stack.node_of(n)), None), what="one racer bound")
        loser = "racer-b" if winner == "racer-a" else "racer-a"
        await eventually(lambda: stack.attempts("unschedulable") >= 1, what="the loser's attempt")
        await stack.scheduler.flush()
        queue = stack.scheduler.core.queue
        assert queue.where(by_name[loser]) == UNSCHEDULABLE_PODS
        assert stack.node_of(loser) is None
        (lost,) = await stack.decisions(loser)
        assert lost.record["result"] == "unschedulable"
        assert rejections.by_node(lost.record)["node-1"]["reasons"] == ["cannot allocate all claims"]
        assert lost.record["message"].startswith("0/1 nodes are available: 1 cannot allocate all claims.")

        winner_claim = "claim-a" if winner == "racer-a" else "claim-b"
        loser_claim = "claim-b" if winner == "racer-a" else "claim-a"
        won = stack.admin.get(RG, "resourceclaims", NS, winner_claim)
        assert won is not None
        (device,) = won["status"]["allocation"]["devices"]["results"]
        assert device["device"] == "gpu-0"

        # The winner goes away; its claim is released as the claim controller would do it.
        unschedulable_before = stack.attempts("unschedulable")
        await stack.admin.delete("", "pods", NS, winner, gracePeriodSeconds=0)
        await eventually(lambda: stack.pod(winner) is None, what="winner deleted")
        assert stack.node_of(loser) is None  # deleting the pod alone frees nothing: the claim still holds the device
        await stack.release(winner_claim)

        assert await eventually(lambda: stack.node_of(loser), what="loser bound") == "node-1"
        taken = await eventually(
            lambda: (
                (c := stack.admin.get(RG, "resourceclaims", NS, loser_claim)) and c.get("status", {}).get("allocation")
            ),
            what="loser's claim allocated",
        )
        assert [r["device"] for r in taken["devices"]["results"]] == ["gpu-0"]
        decisions = await stack.decisions(loser)
        assert [d.record["result"] for d in decisions][-1] == "scheduled"
        # Woken by the claim's deallocation alone: the pod delete did not requeue it (no plugin that
        # rejected it registers for it), so there was no failed attempt in between.
        assert stack.attempts("unschedulable") == unschedulable_before
        assert [d.record["result"] for d in decisions] == ["unschedulable", "scheduled"]
