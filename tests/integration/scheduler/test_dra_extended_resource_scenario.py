"""A pod asking for ``example.com/gpu: 1`` on a running stack at 1.37 (DRAExtendedResource, GA and on).

The DeviceClass names ``example.com/gpu`` in ``spec.extendedResourceName``;
the node does not advertise it, one GPU is published in a ResourceSlice. The
scheduler allocates the GPU in a claim it creates itself (annotation
``resource.kubernetes.io/extended-resource-claim: "true"``, the pod as
controlling owner) and records it in ``pod.status.extendedResourceClaimStatus``.
With the real controller-manager running, deleting the pod removes the claim
(released by the resourceclaim controller, deleted by the garbage collector),
and a second pod waiting for the only GPU then gets it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from scheduler_scenario import CLASS, DRIVER, NS, RG
from test_dra_1_37_scheduling import stack_1_37

from services.controllers.manager import ControllerManager
from tests.conftest import BusUrl
from tests.support.eventually import eventually

GPU = "example.com/gpu"


def gpu_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": CLASS},
        "spec": {
            "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
            "extendedResourceName": GPU,
        },
    }


def gpu_pod(name: str) -> dict[str, Any]:
    wanted = {GPU: "1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "containers": [
                {
                    "name": "ctr",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": wanted, "limits": wanted},
                }
            ]
        },
    }


async def test_pod_asking_for_an_extended_resource_gets_a_claim_that_goes_with_the_pod(bus_url: BusUrl) -> None:
    async with stack_1_37(bus_url()) as stack:
        manager = ControllerManager(stack.log.bus)
        running = asyncio.create_task(manager.run())
        try:
            await asyncio.wait_for(manager.ready.wait(), 60)
            await stack.node_with_devices("node-1", devices=1)
            await stack.admin.create(RG, "deviceclasses", gpu_class())
            first = await stack.admin.create("", "pods", gpu_pod("first"))
            assert await eventually(lambda: stack.node_of("first"), timeout=30, what="first bound") == "node-1"

            status = (stack.pod("first") or {}).get("status") or {}
            extended = status["extendedResourceClaimStatus"]
            claim_name = extended["resourceClaimName"]
            assert claim_name.startswith("first-extended-resources-")
            assert extended["requestMappings"] == [
                {"containerName": "ctr", "resourceName": GPU, "requestName": "container-0-request-0"}
            ]
            claim = stack.admin.get(RG, "resourceclaims", NS, claim_name)
            assert claim is not None
            assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
            [owner] = claim["metadata"]["ownerReferences"]
            assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
                "Pod",
                "first",
                first["metadata"]["uid"],
                True,
            )
            [request] = claim["spec"]["devices"]["requests"]
            assert (request["name"], request["deviceClassName"], request["count"]) == (
                "container-0-request-0",
                CLASS,
                1,
            )
            results = claim["status"]["allocation"]["devices"]["results"]
            assert [(r["request"], r["device"]) for r in results] == [("container-0-request-0", "gpu-0")]
            assert [r["name"] for r in claim["status"]["reservedFor"]] == ["first"]

            # The only GPU is taken: the second pod waits.
            await stack.admin.create("", "pods", gpu_pod("second"))
            await eventually(lambda: stack.attempts("unschedulable") >= 1, timeout=30, what="second rejected")
            assert stack.node_of("second") is None

            await stack.admin.delete("", "pods", NS, "first", gracePeriodSeconds=0)
            await eventually(
                lambda: stack.admin.get(RG, "resourceclaims", NS, claim_name) is None, timeout=60, what="claim gone"
            )
            assert await eventually(lambda: stack.node_of("second"), timeout=60, what="second bound") == "node-1"
            second = (stack.pod("second") or {}).get("status") or {}
            assert second["extendedResourceClaimStatus"]["resourceClaimName"].startswith("second-extended-resources-")
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
