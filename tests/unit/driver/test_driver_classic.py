"""Classic DRA decisions: truncating unsuitable nodes, the scheduling status update, allocation on a node."""

from __future__ import annotations

from typing import Any

import pytest

from services.driver import classic
from services.driver.inventory import default_inventory
from services.driver.slices import desired_slices

DRIVER = "gpu.example.com"
CLASS = {
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
}
CLASSES = {"gpu.example.com": CLASS}


def nodes(n: int) -> list[str]:
    return [f"node-{i:03d}" for i in range(n)]


@pytest.mark.parametrize(
    ("given", "selected", "expected"),
    [
        (nodes(3), "node-001", nodes(3)),
        (nodes(128), "node-000", nodes(128)),
        # one too many and the selected node first: drop the last
        (nodes(129), "node-000", nodes(128)),
        # one too many otherwise: drop the first
        (nodes(129), "node-128", nodes(129)[1:]),
        (nodes(129), "", nodes(129)[1:]),
    ],
)
def test_truncate_nodes_keeps_the_selected_node(given: list[str], selected: str, expected: list[str]) -> None:
    result = classic.truncate_nodes(given, selected)
    assert result == expected and len(result) <= 128
    if selected:
        assert selected in result


def test_nodes_to_check_add_the_selected_node() -> None:
    assert classic.nodes_to_check({"potentialNodes": ["a", "b"], "selectedNode": "c"}) == ["a", "b", "c"]
    assert classic.nodes_to_check({"potentialNodes": ["a", "b"], "selectedNode": "b"}) == ["a", "b"]
    assert classic.nodes_to_check({"selectedNode": "c"}) == ["c"]


def pending(name: str = "gpu") -> classic.PendingClaim:
    return classic.PendingClaim(name, {"metadata": {"name": f"pod-{name}"}})


def test_unsuitable_nodes_mark_nodes_where_not_all_claims_fit() -> None:
    claims = [pending("a"), pending("b")]
    classic.unsuitable_nodes(claims, ["n1", "n2", "n3"], fits=lambda node: node != "n2")
    assert [c.unsuitable_nodes for c in claims] == [["n2"], ["n2"]]


def test_scheduling_status_is_added_updated_or_left_alone() -> None:
    ctx: dict[str, Any] = {"metadata": {"name": "pod"}, "spec": {}}
    claim = pending("gpu")
    claim.unsuitable_nodes = ["n2"]
    status = classic.scheduling_status_update(ctx, [claim], "")
    assert status == {"resourceClaims": [{"name": "gpu", "unsuitableNodes": ["n2"]}]}
    ctx["status"] = status
    assert classic.scheduling_status_update(ctx, [claim], "") is None
    claim.unsuitable_nodes = []
    assert classic.scheduling_status_update(ctx, [claim], "") == {
        "resourceClaims": [{"name": "gpu", "unsuitableNodes": []}]
    }


def test_scheduling_status_is_truncated_with_the_selected_node_kept() -> None:
    claim = pending("gpu")
    claim.unsuitable_nodes = nodes(129)
    status = classic.scheduling_status_update({"spec": {}}, [claim], "node-000")
    assert status is not None
    (entry,) = status["resourceClaims"]
    assert len(entry["unsuitableNodes"]) == 128 and entry["unsuitableNodes"][0] == "node-000"


def slices_for(*node_counts: tuple[str, int]) -> list[dict[str, Any]]:
    result = []
    for node, count in node_counts:
        result += desired_slices(node=node, driver=DRIVER, devices=default_inventory(node, count=count), generation=1)
    return result


def classic_claim(name: str, count: int = 1) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "controller": DRIVER,
            "devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com", "count": count}]},
        },
    }


def test_allocate_on_picks_free_devices_of_the_node_and_sets_the_controller() -> None:
    slices = slices_for(("node-a", 2), ("node-b", 2))
    used = {(DRIVER, "node-a", "gpu-0")}
    results = classic.allocate_on(
        [classic_claim("c")],
        classic.minimal_node("node-a"),
        driver=DRIVER,
        slices=slices,
        classes=CLASSES,
        allocated=used,
    )
    assert results is not None
    (result,) = results
    assert result["controller"] == DRIVER
    assert result["devices"]["results"] == [{"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-1"}]
    assert result["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]
    }


def test_allocate_on_a_full_node_is_none() -> None:
    slices = slices_for(("node-a", 1))
    got = classic.allocate_on(
        [classic_claim("c", count=2)],
        classic.minimal_node("node-a"),
        driver=DRIVER,
        slices=slices,
        classes=CLASSES,
        allocated=set(),
    )
    assert got is None


def test_allocate_on_ignores_other_drivers_slices() -> None:
    other = desired_slices(node="node-a", driver="other.example.com", devices=default_inventory("node-a"), generation=1)
    got = classic.allocate_on(
        [classic_claim("c")],
        classic.minimal_node("node-a"),
        driver=DRIVER,
        slices=other,
        classes=CLASSES,
        allocated=set(),
    )
    assert got is None


def test_allocated_device_ids_come_from_all_allocations() -> None:
    claims: list[dict[str, Any]] = [
        {"status": {"allocation": {"devices": {"results": [{"driver": DRIVER, "pool": "a", "device": "gpu-0"}]}}}},
        {"status": {}},
    ]
    assert classic.allocated_device_ids(claims) == {(DRIVER, "a", "gpu-0")}


def test_finalizer_and_status_helpers() -> None:
    fin = classic.finalizer_for(DRIVER)
    assert fin == "gpu.example.com/deletion-protection"
    claim = {"metadata": {"name": "c", "finalizers": ["other"]}, "status": {"reservedFor": [{"uid": "x"}]}}
    added = classic.with_finalizer(claim, fin)
    assert added["metadata"]["finalizers"] == ["other", fin]
    assert classic.without_finalizer(added, fin)["metadata"]["finalizers"] == ["other"]
    assert "finalizers" not in classic.without_finalizer({"metadata": {"finalizers": [fin]}}, fin)["metadata"]
    pod = {"metadata": {"name": "p", "uid": "pu"}}
    status = classic.allocated_status(claim, {"controller": DRIVER}, classic.pod_consumer(pod))
    assert status["reservedFor"] == [{"uid": "x"}, {"resource": "pods", "name": "p", "uid": "pu"}]
    assert classic.deallocated_status({"status": {"allocation": {}, "deallocationRequested": True}}) == {}
