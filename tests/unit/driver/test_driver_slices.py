"""Desired ResourceSlices (splitting, resourceSliceCount, names) and the plan from existing to desired."""

from __future__ import annotations

from typing import Any

import pytest

from services.api.admission.validation.resource_slice import validate_resource_slice
from services.driver.inventory import default_inventory
from services.driver.slices import (
    SlicePlan,
    desired_slices,
    node_owner,
    plan_slices,
    slice_name,
    split_devices,
)
from services.kube.resource_limits import LIMITS_1_37

NODE, DRIVER = "node-a", "gpu.example.com"


def devices(n: int) -> list[dict[str, Any]]:
    return default_inventory(NODE, count=n)


def stored(slices: list[dict[str, Any]], *, rv: int = 7) -> list[dict[str, Any]]:
    """Slices as an informer holds them: with uid and resourceVersion."""
    return [
        {**s, "metadata": {**s["metadata"], "uid": f"uid-{i}", "resourceVersion": str(rv)}}
        for i, s in enumerate(slices)
    ]


def plan(existing: list[dict[str, Any]], devs: list[dict[str, Any]] | None, **kw: Any) -> SlicePlan:
    return plan_slices(existing=existing, node=NODE, driver=DRIVER, devices=devs, **kw)


@pytest.mark.parametrize(
    ("count", "sizes"),
    [(0, [0]), (1, [1]), (128, [128]), (129, [128, 1]), (300, [128, 128, 44])],
)
def test_split_at_128_devices(count: int, sizes: list[int]) -> None:
    assert [len(chunk) for chunk in split_devices(devices(count))] == sizes


def test_every_slice_carries_the_slice_count_and_generation() -> None:
    result = desired_slices(node=NODE, driver=DRIVER, devices=devices(300), generation=4)
    assert [s["metadata"]["name"] for s in result] == [slice_name(node=NODE, driver=DRIVER, index=i) for i in range(3)]
    assert {s["metadata"]["name"] for s in result} == {f"{NODE}-{DRIVER}-{i}" for i in range(3)}
    for s in result:
        assert s["spec"]["pool"] == {"name": NODE, "generation": 4, "resourceSliceCount": 3}
        assert s["spec"]["nodeName"] == NODE and s["spec"]["driver"] == DRIVER
        assert validate_resource_slice(s, limits=LIMITS_1_37) == []
    names = [d["name"] for s in result for d in s["spec"]["devices"]]
    assert names == [f"gpu-{i}" for i in range(300)]


def test_first_publication_creates_generation_one() -> None:
    p = plan([], devices(8))
    assert p.generation == 1 and not p.updates and not p.deletes
    assert [s["spec"]["pool"]["generation"] for s in p.creates] == [1]


def test_nothing_to_do_when_published_slices_match() -> None:
    existing = stored(desired_slices(node=NODE, driver=DRIVER, devices=devices(8), generation=3))
    assert plan(existing, devices(8)).empty


def test_a_changed_device_bumps_the_generation_of_every_slice() -> None:
    existing = stored(desired_slices(node=NODE, driver=DRIVER, devices=devices(200), generation=3))
    changed = devices(200)
    changed[150]["basic"]["capacity"]["memory"] = {"value": "40Gi"}
    p = plan(existing, changed)
    assert p.generation == 4 and not p.creates and not p.deletes
    assert [s["spec"]["pool"]["generation"] for s in p.updates] == [4, 4]
    # Updates carry the stored metadata, so they are preconditioned on the resourceVersion.
    assert all(s["metadata"]["resourceVersion"] == "7" for s in p.updates)


def test_growing_beyond_128_adds_a_slice_and_updates_the_count() -> None:
    existing = stored(desired_slices(node=NODE, driver=DRIVER, devices=devices(100), generation=1))
    p = plan(existing, devices(130))
    assert p.generation == 2
    assert [s["metadata"]["name"] for s in p.updates] == [f"{NODE}-{DRIVER}-0"]
    assert [s["metadata"]["name"] for s in p.creates] == [f"{NODE}-{DRIVER}-1"]
    assert all(s["spec"]["pool"]["resourceSliceCount"] == 2 for s in p.updates + p.creates)


def test_shrinking_deletes_the_slices_no_longer_needed() -> None:
    existing = stored(desired_slices(node=NODE, driver=DRIVER, devices=devices(300), generation=5))
    p = plan(existing, devices(10))
    assert p.generation == 6
    assert [s["metadata"]["name"] for s in p.updates] == [f"{NODE}-{DRIVER}-0"]
    assert p.deletes == [f"{NODE}-{DRIVER}-1", f"{NODE}-{DRIVER}-2"]


def test_mixed_generations_are_republished() -> None:
    existing = stored(desired_slices(node=NODE, driver=DRIVER, devices=devices(200), generation=2))
    existing[1]["spec"]["pool"]["generation"] = 1
    assert plan(existing, devices(200)).generation == 3


def test_decommission_deletes_everything() -> None:
    existing = stored(desired_slices(node=NODE, driver=DRIVER, devices=devices(200), generation=2))
    p = plan(existing, None)
    assert p.deletes == [f"{NODE}-{DRIVER}-0", f"{NODE}-{DRIVER}-1"] and not p.creates and not p.updates


def test_an_owner_reference_alone_is_updated_without_a_new_generation() -> None:
    existing = stored(desired_slices(node=NODE, driver=DRIVER, devices=devices(8), generation=1))
    owners = node_owner({"metadata": {"name": NODE, "uid": "node-uid"}})
    p = plan(existing, devices(8), owners=owners)
    assert p.generation == 1 and len(p.updates) == 1
    assert p.updates[0]["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": NODE, "uid": "node-uid", "controller": True}
    ]
    assert p.updates[0]["spec"]["pool"]["generation"] == 1


def test_no_owner_without_a_node_uid() -> None:
    assert node_owner(None) == []
    assert node_owner({"metadata": {"name": NODE}}) == []


def test_generations_never_repeat_after_every_slice_was_deleted() -> None:
    assert plan([], devices(8), last_generation=4).generation == 5
    existing = stored(desired_slices(node=NODE, driver=DRIVER, devices=devices(8), generation=2))
    assert plan(existing, devices(9), last_generation=1).generation == 3
