"""Classic DRA: the driver as control-plane controller, through the PodSchedulingContext handshake."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from driver_fixtures import (
    DEVICE_CLASS,
    DRIVER,
    NS,
    RG,
    by_name,
    claim,
    pod,
    running_driver,
)

from services.apiserver.admission_chain import build_admission
from services.driver.inventory import default_inventory
from services.driver.service import DriverService
from services.kube.feature_gates import FeatureGates
from services.runtime.client import Client
from services.testing.harness import LogHarness
from tests.support.eventually import eventually

FINALIZER = f"{DRIVER}/deletion-protection"


@pytest.fixture
async def log(tmp_path: Path) -> AsyncIterator[LogHarness]:
    """The log with DRAControlPlaneController on: without it the apiserver drops ``spec.controller``."""
    gates = FeatureGates.parse("DRAControlPlaneController=true")
    async with LogHarness.running(f"sqlite://{tmp_path / 'bus.db'}", admission=build_admission(gates=gates)) as harness:
        yield harness


@pytest.fixture
async def controller(log: LogHarness, admin: Client, state_dir: Path, tmp_path: Path) -> AsyncIterator[DriverService]:
    """node-a's driver publishes two GPUs; a controller-only driver serves classic claims."""
    await admin.create(RG, "deviceclasses", DEVICE_CLASS)
    async with running_driver(log, "node-a", state_dir, devices=default_inventory("node-a", count=2)):
        await eventually(lambda: admin.list(RG, "resourceslices"), what="node-a's slice")
        async with running_driver(log, "", tmp_path / "cp", control_plane=True) as service:
            yield service


async def scheduling_context(admin: Client, p: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """The pod's PodSchedulingContext, as the scheduler creates it."""
    owner = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": p["metadata"]["name"],
        "uid": p["metadata"]["uid"],
        "controller": True,
    }
    body = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "PodSchedulingContext",
        "metadata": {"name": p["metadata"]["name"], "namespace": NS, "ownerReferences": [owner]},
        "spec": spec,
    }
    return await admin.create(RG, "podschedulingcontexts", body)


def ctx_status(admin: Client, name: str) -> list[dict[str, Any]] | None:
    ctx = admin.get(RG, "podschedulingcontexts", NS, name)
    return ((ctx or {}).get("status") or {}).get("resourceClaims")


def get_claim(admin: Client, name: str) -> dict[str, Any]:
    found = admin.get(RG, "resourceclaims", NS, name)
    assert found is not None
    return found


async def select(admin: Client, name: str, node: str) -> None:
    ctx = admin.get(RG, "podschedulingcontexts", NS, name)
    assert ctx is not None
    await admin.update(RG, "podschedulingcontexts", {**ctx, "spec": {**ctx["spec"], "selectedNode": node}})


async def test_potential_nodes_selected_node_allocation_and_deallocation(
    controller: DriverService, admin: Client
) -> None:
    await admin.create(RG, "resourceclaims", claim("classic", controller=DRIVER))
    p = await admin.create("", "pods", pod("user", by_name("gpu", "classic"), node=""))
    await scheduling_context(admin, p, potentialNodes=["node-a", "node-b"])

    # potentialNodes -> unsuitableNodes: node-b has no devices of this driver.
    status = await eventually(lambda: ctx_status(admin, "user"), what="unsuitable nodes")
    assert status == [{"name": "gpu", "unsuitableNodes": ["node-b"]}]
    assert get_claim(admin, "classic").get("status") is None, "no allocation before a node is selected"

    # selectedNode -> allocation for that node, reserved for the pod, protected by the driver's finalizer.
    await select(admin, "user", "node-a")
    allocated = await eventually(
        lambda: (get_claim(admin, "classic").get("status") or {}).get("allocation") and get_claim(admin, "classic"),
        what="the allocation",
    )
    allocation = allocated["status"]["allocation"]
    assert allocation["controller"] == DRIVER
    (result,) = allocation["devices"]["results"]
    assert result["driver"] == DRIVER and result["pool"] == "node-a" and result["device"] in ("gpu-0", "gpu-1")
    assert allocation["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]
    }
    assert allocated["status"]["reservedFor"] == [{"resource": "pods", "name": "user", "uid": p["metadata"]["uid"]}]
    assert FINALIZER in allocated["metadata"]["finalizers"]
    allocations = controller.metrics.allocations.labels(DRIVER, "allocated")
    await eventually(lambda: allocations._value.get() == 1, what="the allocation counted")

    # deallocationRequested (set once the claim is no longer reserved) -> deallocated, finalizer removed.
    current = get_claim(admin, "classic")
    await admin.update_status(
        RG,
        "resourceclaims",
        {**current, "status": {"allocation": allocation, "deallocationRequested": True}},
    )

    def released() -> dict[str, Any] | None:
        c = get_claim(admin, "classic")
        return c if not c.get("status") and FINALIZER not in (c["metadata"].get("finalizers") or ()) else None

    await eventually(released, what="the claim deallocated and unprotected")


async def test_an_unsuitable_selected_node_is_reported_and_not_allocated(
    controller: DriverService, admin: Client
) -> None:
    await admin.create(RG, "resourceclaims", claim("too-big", count=3, controller=DRIVER))
    p = await admin.create("", "pods", pod("greedy", by_name("gpu", "too-big"), node=""))
    await scheduling_context(admin, p, potentialNodes=["node-a"], selectedNode="node-a")
    status = await eventually(lambda: ctx_status(admin, "greedy"), what="unsuitable nodes")
    assert status == [{"name": "gpu", "unsuitableNodes": ["node-a"]}], "the selected node must be listed"
    assert get_claim(admin, "too-big").get("status") is None
    assert FINALIZER not in (get_claim(admin, "too-big")["metadata"].get("finalizers") or ())


async def test_structured_claims_and_other_controllers_are_left_alone(controller: DriverService, admin: Client) -> None:
    await admin.create(RG, "resourceclaims", claim("structured"))
    await admin.create(RG, "resourceclaims", claim("someone-elses", controller="other.example.com"))
    p = await admin.create("", "pods", pod("user", by_name("a", "structured"), by_name("b", "someone-elses"), node=""))
    await scheduling_context(admin, p, potentialNodes=["node-a"], selectedNode="node-a")
    mine = await admin.create(RG, "resourceclaims", claim("mine", controller=DRIVER))
    p2 = await admin.create("", "pods", pod("marker", by_name("gpu", "mine"), node=""))
    await scheduling_context(admin, p2, potentialNodes=["node-a"], selectedNode="node-a")
    await eventually(lambda: (get_claim(admin, "mine").get("status") or {}).get("allocation"), what="marker allocated")
    assert mine["metadata"]["uid"]
    assert ctx_status(admin, "user") is None, "no pending claim of this driver: nothing to report"
    assert get_claim(admin, "structured").get("status") is None
    assert get_claim(admin, "someone-elses").get("status") is None


async def test_a_deleted_claim_is_deallocated_and_released(controller: DriverService, admin: Client) -> None:
    await admin.create(RG, "resourceclaims", claim("doomed", controller=DRIVER))
    p = await admin.create("", "pods", pod("user", by_name("gpu", "doomed"), node=""))
    await scheduling_context(admin, p, potentialNodes=["node-a"], selectedNode="node-a")
    await eventually(lambda: (get_claim(admin, "doomed").get("status") or {}).get("allocation"), what="allocated")
    current = get_claim(admin, "doomed")
    await admin.update_status(
        RG, "resourceclaims", {**current, "status": {"allocation": current["status"]["allocation"]}}
    )
    await admin.delete(RG, "resourceclaims", NS, "doomed")
    await eventually(lambda: admin.get(RG, "resourceclaims", NS, "doomed") is None, what="the claim gone")
