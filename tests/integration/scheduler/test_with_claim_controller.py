"""The scheduler with the real controller-manager: template claims made by the controller, released by it.

Two pods from one template race for the only device. The resourceclaim
controller generates both claims; the scheduler binds one pod. When that pod
is deleted, the controller drops its reservation, deallocates and deletes the
claim — and the deallocation wakes the waiting pod, which then gets the device.
"""

from __future__ import annotations

import asyncio
import contextlib

from scheduler_scenario import NS, RG, device_class, pod, running_stack

from services.controllers.manager import ControllerManager
from tests.conftest import BusUrl
from tests.support.eventually import eventually


def template() -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu-template", "namespace": NS},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}},
    }


async def test_released_device_goes_to_the_waiting_pod(bus_url: BusUrl) -> None:
    async with running_stack(bus_url()) as stack:
        manager = ControllerManager(stack.log.bus)
        running = asyncio.create_task(manager.run())
        try:
            await asyncio.wait_for(manager.ready.wait(), 60)
            await stack.admin.create(RG, "deviceclasses", device_class())
            await stack.node_with_devices("node-1", devices=1)
            await stack.admin.create(RG, "resourceclaimtemplates", template())
            for name in ("first", "second"):
                await stack.admin.create("", "pods", pod(name, template="gpu-template"))

            winner = await eventually(
                lambda: next((n for n in ("first", "second") if stack.node_of(n)), None), what="one pod bound"
            )
            loser = "second" if winner == "first" else "first"
            await eventually(lambda: stack.attempts("unschedulable") >= 1, what="the other pod's attempt")
            assert stack.node_of(loser) is None

            def claim_of(pod_name: str) -> str | None:
                p = stack.pod(pod_name) or {}
                statuses = (p.get("status") or {}).get("resourceClaimStatuses") or []
                return statuses[0].get("resourceClaimName") if statuses else None

            winner_claim = claim_of(winner)
            assert winner_claim is not None
            await stack.admin.delete("", "pods", NS, winner, gracePeriodSeconds=0)
            assert await eventually(lambda: stack.node_of(loser), timeout=60, what="the waiting pod bound") == "node-1"
            # The winner's generated claim is gone, the loser's holds the device.
            await eventually(
                lambda: stack.admin.get(RG, "resourceclaims", NS, winner_claim) is None, what="claim deleted"
            )
            loser_claim = claim_of(loser)
            assert loser_claim is not None
            held = stack.admin.get(RG, "resourceclaims", NS, loser_claim)
            assert held is not None
            assert [r["device"] for r in held["status"]["allocation"]["devices"]["results"]] == ["gpu-0"]
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
