"""Kubernetes 1.37's DRA on a running stack: admin access, partitionable devices, consumable capacity.

API server (the committer with the real admission chain), scheduler and
controller-manager all run with the gates of release 1.37, as in
``test_dra_1_37_scheduling.py`` (whose stack and helpers these tests share),
plus the controller-manager, which releases a deleted pod's claim as
Kubernetes' resourceclaim controller does. Slices are created through the API
in the hub form (v1beta1's layout). Each test runs on both backends.

Expectations come from 1.37.2's ``k8s.io/dynamic-resource-allocation/structured``
(admin access ignores and does not add in-use state; counters are subtracted
across the pool; a shared device's capacity is summed over its allocations,
each request rounded up by the ``requestPolicy``, each result with a
``shareID``) and ``pkg/registry/resource/utils.go`` (the namespace label).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from scheduler_scenario import CLASS, DRIVER, NS, RG, Stack, device_class, node, pod
from test_dra_1_37_scheduling import GATES, allocation_results, one_gpu, setup, stack_1_37, v1beta1_claim

from services.api.machinery.status import StatusError
from services.controllers.manager import ControllerManager
from services.scheduler.queue import UNSCHEDULABLE_PODS
from tests.conftest import BusUrl
from tests.support.eventually import eventually

ADMIN_LABEL = "resource.kubernetes.io/admin-access"


@contextlib.asynccontextmanager
async def stack_with_controllers(url: str) -> AsyncIterator[Stack]:
    """The 1.37 stack of the pattern module with a controller-manager at the same release."""
    async with stack_1_37(url) as stack:
        manager = ControllerManager(stack.log.bus, gates=GATES)
        running = asyncio.create_task(manager.run(), name="controller-manager")
        try:
            await asyncio.wait_for(manager.ready.wait(), 60)
            yield stack
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running


async def bound_pod(stack: Stack, name: str, claim_name: str) -> str:
    """Create a pod using ``claim_name`` and wait until it is bound; its node."""
    await stack.admin.create("", "pods", pod(name, claim_name=claim_name))
    node_name = await eventually(lambda: stack.node_of(name), timeout=30, what=f"{name} bound")
    assert isinstance(node_name, str)
    return node_name


async def pending_pod(stack: Stack, name: str, claim_name: str, *, rejections: int) -> dict[str, Any]:
    """Create a pod using ``claim_name``; wait until it is the ``rejections``-th unschedulable attempt and parked."""
    created = await stack.admin.create("", "pods", pod(name, claim_name=claim_name))
    await eventually(lambda: stack.attempts("unschedulable") == rejections, timeout=30, what=f"{name} rejected")
    queue = stack.scheduler.core.queue
    await eventually(lambda: queue.where(created) == UNSCHEDULABLE_PODS, timeout=30, what=f"{name} parked")
    assert stack.node_of(name) is None
    return created


async def rejected_by(stack: Stack, pod_name: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """The (plugin, reasons, nodes) verdicts of the pod's first attempt, from its decision record."""
    first = (await stack.decisions(pod_name))[0]
    assert first.record["result"] == "unschedulable"
    return [(g["plugin"], tuple(g["reasons"]), tuple(g["nodes"])) for g in first.record["rejected"]]


CANNOT_ALLOCATE = [("DynamicResources", ("cannot allocate all claims",), ("node-1",))]


async def delete_pod_and_claim(stack: Stack, pod_name: str, claim_name: str) -> None:
    """Delete a pod and its claim; the controller-manager releases the claim, and the scheduler sees it gone."""
    await stack.admin.delete("", "pods", NS, pod_name, gracePeriodSeconds=0)
    await stack.admin.delete(RG, "resourceclaims", NS, claim_name)
    claims = stack.scheduler.informer.store(RG, "resourceclaims")
    await eventually(lambda: claims.get(NS, claim_name) is None, timeout=30, what=f"{claim_name} gone")


# -- admin access ----------------------------------------------------------------------------------

ADMIN_DETAIL = f"admin access to devices requires the `{ADMIN_LABEL}: true` label on the containing namespace"


def admin_claim(name: str) -> dict[str, Any]:
    return v1beta1_claim(name, [{"name": "gpu", "deviceClassName": CLASS, "adminAccess": True}])


async def label_namespace(stack: Stack, labels: dict[str, str]) -> None:
    current = stack.admin.get("", "namespaces", "", NS)
    if current is None:
        meta = {"name": NS, "labels": labels}
        await stack.admin.create("", "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
        return
    meta = {**current["metadata"], "labels": {**(current["metadata"].get("labels") or {}), **labels}}
    await stack.admin.update("", "namespaces", {**current, "metadata": meta})


async def test_admin_access_claim_shares_the_in_use_gpu_and_is_refused_in_an_unlabelled_namespace(
    bus_url: BusUrl,
) -> None:
    async with stack_with_controllers(bus_url()) as stack:
        await setup(stack, devices=1)
        await label_namespace(stack, {})  # the namespace exists, without the label
        await stack.admin.create(RG, "resourceclaims", one_gpu("a-gpu"))
        assert await bound_pod(stack, "a", "a-gpu") == "node-1"

        with pytest.raises(StatusError) as refused:
            await stack.admin.create(RG, "resourceclaims", admin_claim("monitor-gpu"))
        assert refused.value.code == 422 and refused.value.reason == "Invalid"
        assert str(refused.value) == (
            'ResourceClaim.resource.k8s.io "monitor-gpu" is invalid: '
            f"spec.devices.requests[0].adminAccess: Forbidden: {ADMIN_DETAIL}"
        )
        assert stack.admin.get(RG, "resourceclaims", NS, "monitor-gpu") is None

        await label_namespace(stack, {ADMIN_LABEL: "true"})
        await stack.admin.create(RG, "resourceclaims", admin_claim("monitor-gpu"))
        assert await bound_pod(stack, "monitor", "monitor-gpu") == "node-1"
        [result] = allocation_results(stack, "monitor-gpu")
        assert (result["request"], result["device"], result.get("adminAccess")) == ("gpu", "gpu-0", True)

        # The admin claim does not count as using gpu-0: once pod a and its claim are gone, a plain claim gets
        # gpu-0 while the monitor still holds it.
        await delete_pod_and_claim(stack, "a", "a-gpu")
        await stack.admin.create(RG, "resourceclaims", one_gpu("b-gpu"))
        assert await bound_pod(stack, "b", "b-gpu") == "node-1"
        assert [r["device"] for r in allocation_results(stack, "b-gpu")] == ["gpu-0"]
        assert [r["device"] for r in allocation_results(stack, "monitor-gpu")] == ["gpu-0"]
        assert stack.node_of("monitor") == "node-1"


# -- partitionable devices -------------------------------------------------------------------------


def partitioned_gpu_slices(node_name: str) -> list[dict[str, Any]]:
    """One pool, two slices: the GPU's counters, and the whole GPU beside its two halves that consume them."""

    def device(name: str, kind: str, memory: str) -> dict[str, Any]:
        return {
            "name": name,
            "basic": {
                "attributes": {"kind": {"string": kind}},
                "capacity": {"memory": {"value": memory}},
                "consumesCounters": [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": memory}}}],
            },
        }

    def resource_slice(name: str, **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{name}"},
            "spec": {
                "driver": DRIVER,
                "nodeName": node_name,
                "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 2},
                **spec,
            },
        }

    counters = resource_slice(
        "counters", sharedCounters=[{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}}}]
    )
    devices = resource_slice(
        "devices",
        devices=[
            device("gpu-0", "whole", "80Gi"),
            device("gpu-0-half-0", "half", "40Gi"),
            device("gpu-0-half-1", "half", "40Gi"),
        ],
    )
    return [counters, devices]


def gpu_claim(name: str, kind: str) -> dict[str, Any]:
    selector = {"cel": {"expression": f'device.attributes["{DRIVER}"].kind == "{kind}"'}}
    return v1beta1_claim(name, [{"name": "gpu", "deviceClassName": CLASS, "selectors": [selector]}])


async def test_two_partitions_use_the_gpus_counters_and_a_whole_gpu_waits_for_them(bus_url: BusUrl) -> None:
    async with stack_with_controllers(bus_url()) as stack:
        await stack.admin.create("", "nodes", node("node-1"))
        await stack.create_all(RG, "resourceslices", partitioned_gpu_slices("node-1"))
        await stack.admin.create(RG, "deviceclasses", device_class())
        for name in ("half-a", "half-b"):
            await stack.admin.create(RG, "resourceclaims", gpu_claim(name, "half"))
            await bound_pod(stack, name, name)
        halves = {r["device"] for name in ("half-a", "half-b") for r in allocation_results(stack, name)}
        assert halves == {"gpu-0-half-0", "gpu-0-half-1"}

        # Both halves took all 80Gi of the counter set: the whole GPU (not itself in use) does not fit.
        await stack.admin.create(RG, "resourceclaims", gpu_claim("whole", "whole"))
        whole = await pending_pod(stack, "whole", "whole", rejections=1)
        assert await rejected_by(stack, "whole") == CANNOT_ALLOCATE
        queue = stack.scheduler.core.queue

        # One half freed: 40Gi is not enough. The release wakes the pod, which is tried and parked again.
        await delete_pod_and_claim(stack, "half-a", "half-a")
        await eventually(lambda: queue.where(whole) == UNSCHEDULABLE_PODS, timeout=30, what="whole parked")
        assert stack.attempts("unschedulable") >= 2
        assert stack.node_of("whole") is None

        # Both freed: the whole GPU is allocated.
        await delete_pod_and_claim(stack, "half-b", "half-b")
        await eventually(lambda: stack.node_of("whole"), timeout=30, what="whole bound")
        assert [r["device"] for r in allocation_results(stack, "whole")] == ["gpu-0"]
        decisions = await stack.decisions("whole")
        results = [d.record["result"] for d in decisions]
        assert results[-1] == "scheduled" and set(results[:-1]) == {"unschedulable"} and len(results) >= 3


# -- consumable capacity ---------------------------------------------------------------------------


def shared_nic_slice(node_name: str) -> dict[str, Any]:
    """One network device shared by claims: 10G of bandwidth, requests rounded up to whole 1G steps."""
    policy = {"default": "1G", "validRange": {"min": "1G", "step": "1G"}}
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-nic"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "nic-0",
                    "basic": {
                        "allowMultipleAllocations": True,
                        "capacity": {"bandwidth": {"value": "10G", "requestPolicy": policy}},
                    },
                }
            ],
        },
    }


def bandwidth_claim(name: str, bandwidth: str) -> dict[str, Any]:
    request = {"name": "nic", "deviceClassName": CLASS, "capacity": {"requests": {"bandwidth": bandwidth}}}
    return v1beta1_claim(name, [request])


async def test_two_claims_share_a_network_devices_bandwidth_and_a_third_does_not_fit(bus_url: BusUrl) -> None:
    async with stack_with_controllers(bus_url()) as stack:
        await stack.admin.create("", "nodes", node("node-1"))
        await stack.admin.create(RG, "resourceslices", shared_nic_slice("node-1"))
        await stack.admin.create(RG, "deviceclasses", device_class())
        # 4500M is rounded up to the next 1G step: 5G; with 4G that is 9G of 10G.
        await stack.admin.create(RG, "resourceclaims", bandwidth_claim("a-net", "4500M"))
        await bound_pod(stack, "a", "a-net")
        await stack.admin.create(RG, "resourceclaims", bandwidth_claim("b-net", "4G"))
        await bound_pod(stack, "b", "b-net")

        [a] = allocation_results(stack, "a-net")
        [b] = allocation_results(stack, "b-net")
        assert (a["device"], b["device"]) == ("nic-0", "nic-0")
        assert a["consumedCapacity"] == {"bandwidth": "5G"}
        assert b["consumedCapacity"] == {"bandwidth": "4G"}
        assert a["shareID"] and b["shareID"] and a["shareID"] != b["shareID"]

        # 2G more would be 11G: the third claim stays pending.
        await stack.admin.create(RG, "resourceclaims", bandwidth_claim("c-net", "2G"))
        await pending_pod(stack, "c", "c-net", rejections=1)
        assert await rejected_by(stack, "c") == CANNOT_ALLOCATE
        claim = stack.admin.get(RG, "resourceclaims", NS, "c-net")
        assert claim is not None and not (claim.get("status") or {}).get("allocation")
