"""``draplane explain pod`` names an untolerated device taint: "taint not tolerated" (issue 15).

The only device of the cluster carries a NoSchedule DeviceTaintRule, so the
pod's request has a free, matching device it may not take. Runs the
scheduler on its own log and then the real command line on that log.
"""

from __future__ import annotations

from scheduler_scenario import DRIVER, RG, claim, device_class, pod, running_stack
from test_explain_pending import explain

from tests.conftest import BusUrl
from tests.support.eventually import eventually


async def test_taint_not_tolerated(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.node_with_devices("node-1", devices=1)
        rule = await stack.admin.create(
            RG,
            "devicetaintrules",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceTaintRule",
                "metadata": {"name": "maintenance"},
                "spec": {
                    "deviceSelector": {"driver": DRIVER, "device": "gpu-0"},
                    "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"},
                },
            },
        )
        await stack.seen_by_scheduler(rule)
        await stack.admin.create(RG, "resourceclaims", claim("p-gpu"))
        await stack.admin.create("", "pods", pod("p", claim_name="p-gpu"))
        await eventually(lambda: stack.attempts("unschedulable") >= 1, what="p unschedulable")
        await stack.scheduler.flush()

        status, out, _ = await explain(url, "default/p")
    assert status == 0
    assert "1 device(s) match the class and selectors on 1 node(s); 1 free on 1 node(s)" in out
    assert (
        "taint not tolerated on 1 node(s) (node-1): claim default/p-gpu, request gpu: "
        f"1 of 1 free device(s) have a taint it does not tolerate ({DRIVER}/node-1/gpu-0)"
    ) in out
