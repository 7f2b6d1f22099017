"""Publishing ResourceSlices on the log, NodeRestriction, and decommissioning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from driver_fixtures import DRIVER, RG, running_driver

from services.api.admission.authorization import node_user
from services.api.machinery import status as st
from services.driver.inventory import default_inventory
from services.driver.slices import desired_slices
from services.runtime.client import Client
from services.testing.harness import LogHarness
from tests.support.eventually import eventually


def slices_of(client: Client, node: str) -> list[dict[str, Any]]:
    return sorted(
        (s for s in client.list(RG, "resourceslices") if s["spec"].get("nodeName") == node),
        key=lambda s: s["metadata"]["name"],
    )


async def test_the_default_inventory_is_published_as_one_pool_named_after_the_node(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    node = await admin.create("", "nodes", {"metadata": {"name": "node-a"}})
    async with running_driver(log, "node-a", state_dir) as service:
        (published,) = await eventually(lambda: slices_of(admin, "node-a"), what="the slice")
        assert published["metadata"]["name"] == f"node-a-{DRIVER}-0"
        assert published["spec"]["pool"] == {"name": "node-a", "generation": 1, "resourceSliceCount": 1}
        assert published["spec"]["driver"] == DRIVER
        assert published["spec"]["devices"] == default_inventory("node-a")
        assert published["metadata"]["ownerReferences"] == [
            {"apiVersion": "v1", "kind": "Node", "name": "node-a", "uid": node["metadata"]["uid"], "controller": True}
        ]
        creates = service.metrics.slice_writes.labels(DRIVER, "create")
        await eventually(lambda: creates._value.get() == 1, what="the create counted")


async def test_beyond_128_devices_the_pool_is_split_and_changes_bump_the_generation(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    async with running_driver(log, "node-a", state_dir, devices=default_inventory("node-a", count=300)) as service:

        def three() -> list[dict[str, Any]] | None:
            now = slices_of(admin, "node-a")
            return now if len(now) == 3 else None

        published = await eventually(three, what="three slices")
        assert [len(s["spec"]["devices"]) for s in published] == [128, 128, 44]
        assert {(s["spec"]["pool"]["generation"], s["spec"]["pool"]["resourceSliceCount"]) for s in published} == {
            (1, 3)
        }

        assert service.publisher is not None
        service.publisher.set_devices(default_inventory("node-a", count=100))

        def shrunk() -> list[dict[str, Any]] | None:
            now = slices_of(admin, "node-a")
            return now if len(now) == 1 and now[0]["spec"]["pool"]["generation"] == 2 else None

        (only,) = await eventually(shrunk, what="one slice at generation 2")
        assert only["spec"]["pool"]["resourceSliceCount"] == 1 and len(only["spec"]["devices"]) == 100


async def test_a_slice_deleted_by_someone_else_is_published_again(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    async with running_driver(log, "node-a", state_dir):
        (first,) = await eventually(lambda: slices_of(admin, "node-a"))
        await admin.delete(RG, "resourceslices", "", first["metadata"]["name"])
        (again,) = await eventually(
            lambda: [s for s in slices_of(admin, "node-a") if s["metadata"]["uid"] != first["metadata"]["uid"]],
            what="the slice re-created",
        )
        assert again["spec"]["pool"]["generation"] == 2  # a new pool content version


async def test_decommission_deletes_the_nodes_slices_and_only_those(
    log: LogHarness, admin: Client, state_dir: Path, tmp_path: Path
) -> None:
    async with running_driver(log, "node-b", tmp_path / "b"):
        async with running_driver(log, "node-a", state_dir) as service:
            await eventually(lambda: slices_of(admin, "node-a") and slices_of(admin, "node-b"))
        # Stopped without --decommission-on-exit: the slices stay.
        assert slices_of(admin, "node-a")
        await service.decommission()
        await eventually(lambda: not slices_of(admin, "node-a"), what="node-a's slices gone")
        assert slices_of(admin, "node-b"), "another node's slices are not touched"


async def test_decommission_on_exit(log: LogHarness, admin: Client, state_dir: Path) -> None:
    async with running_driver(log, "node-a", state_dir, decommission_on_exit=True):
        await eventually(lambda: slices_of(admin, "node-a"))
    await eventually(lambda: not slices_of(admin, "node-a"), what="slices deleted on exit")


@pytest.mark.parametrize("op", ["create", "update", "delete"])
async def test_node_a_cannot_write_node_bs_slices(log: LogHarness, admin: Client, op: str) -> None:
    node_a = await log.client(node_user("node-a"))
    (theirs,) = desired_slices(node="node-b", driver=DRIVER, devices=default_inventory("node-b", count=2), generation=1)
    if op == "create":
        write = node_a.create(RG, "resourceslices", theirs)
        message = "can only create ResourceSlice with the same NodeName as the requesting node"
    else:
        stored = await admin.create(RG, "resourceslices", theirs)
        if op == "update":
            write = node_a.update(RG, "resourceslices", {**stored, "spec": {**stored["spec"], "devices": []}})
            message = "no relationship found between node 'node-a' and this object"
        else:
            write = node_a.delete(RG, "resourceslices", "", stored["metadata"]["name"])
            message = "can only delete ResourceSlice with the same NodeName as the requesting node"
    with pytest.raises(st.StatusError) as err:
        await write
    assert err.value.code == 403
    assert message in str(err.value)


async def test_node_a_may_write_its_own_slices(log: LogHarness) -> None:
    node_a = await log.client(node_user("node-a"))
    (mine,) = desired_slices(node="node-a", driver=DRIVER, devices=default_inventory("node-a", count=1), generation=1)
    created = await node_a.create(RG, "resourceslices", mine)
    await node_a.delete(RG, "resourceslices", "", created["metadata"]["name"])
