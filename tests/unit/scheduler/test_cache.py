"""SchedulerCache: assumed pods, confirmation by the informer, incremental snapshots."""

from __future__ import annotations

import pytest

from services.scheduler.cache import CacheError, SchedulerCache
from services.scheduler.node_info import NodeInfo, Snapshot

from .builders import container, make_node, make_pod


def test_assume_then_confirm_then_delete() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n1"))
    pod = make_pod("a", requests={"cpu": "1"})
    assumed = cache.assume_pod(pod, "n1")
    assert assumed["spec"]["nodeName"] == "n1" and "nodeName" not in pod["spec"]
    snap = cache.snapshot()
    assert snap.get("n1").requested.milli_cpu == 1000  # type: ignore[union-attr]
    with pytest.raises(CacheError):
        cache.assume_pod(pod, "n1")
    cache.add_pod(make_pod("a", requests={"cpu": "1"}, node_name="n1"))  # the informer confirms
    assert not cache.is_assumed(pod) and cache.pod_count() == 1
    cache.remove_pod(make_pod("a", node_name="n1"))
    assert cache.update_snapshot(snap).get("n1").requested.milli_cpu == 0  # type: ignore[union-attr]


def test_forget_frees_resources() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n1"))
    pod = make_pod("a", requests={"cpu": "1"})
    assumed = cache.assume_pod(pod, "n1")
    cache.forget_pod(assumed)
    assert cache.snapshot().get("n1").requested.milli_cpu == 0  # type: ignore[union-attr]
    with pytest.raises(CacheError):
        cache.forget_pod(assumed)


def test_snapshot_copies_only_changed_nodes() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    snap = cache.snapshot()
    first_n1, first_n2 = snap.get("n1"), snap.get("n2")
    cache.add_pod(make_pod("a", requests={"cpu": "1"}, node_name="n2"))
    cache.update_snapshot(snap)
    assert snap.get("n1") is first_n1
    assert snap.get("n2") is not first_n2
    assert first_n2.requested.milli_cpu == 0  # type: ignore[union-attr]  # the old snapshot is untouched
    assert snap.get("n2").requested.milli_cpu == 1000  # type: ignore[union-attr]


def test_snapshot_updates_changed_nodes_in_place_by_position() -> None:
    """Few or many changed nodes: each is replaced at its own position, the filter order stays."""
    cache = SchedulerCache()
    for i in range(20):
        cache.add_node(make_node(f"n{i}"))
    snap = cache.snapshot()
    order = [info.name for info in snap.nodes()]
    assert [snap.position(name) for name in order] == list(range(20)) and snap.position("nope") is None
    for changed in (["n3"], [f"n{i}" for i in range(0, 20, 2)]):
        for name in changed:
            cache.add_pod(make_pod(f"p-{name}-{len(changed)}", requests={"cpu": "1"}, node_name=name))
        cache.update_snapshot(snap)
        assert [info.name for info in snap.nodes()] == order
        for name in changed:
            info = snap.get(name)
            assert info is snap.nodes()[order.index(name)] and info is not None
            assert info.requested.milli_cpu == cache._nodes[name].requested.milli_cpu > 0


def test_node_removal_and_pods_of_unknown_nodes() -> None:
    cache = SchedulerCache()
    cache.add_pod(make_pod("a", node_name="ghost"))
    assert cache.snapshot().num_nodes() == 0
    cache.add_node(make_node("ghost"))
    snap = cache.snapshot()
    assert len(snap.get("ghost").pods) == 1  # type: ignore[union-attr]
    cache.remove_node(make_node("ghost"))
    assert cache.update_snapshot(snap).num_nodes() == 0


def test_node_info_accounting() -> None:
    info = NodeInfo(make_node("n", allocatable={"cpu": "2", "memory": "1Gi", "pods": "3", "example.com/gpu": "2"}))
    pod = make_pod("a", containers=[container(requests={"cpu": "500m", "example.com/gpu": "1"})])
    info.add_pod(pod)
    assert info.requested.milli_cpu == 500 and info.requested.scalar == {"example.com/gpu": 1}
    assert info.non_zero_requested.milli_cpu == 500
    assert info.non_zero_requested.memory == 200 * 1024 * 1024  # the default for an unset request
    assert info.allocatable.allowed_pod_number == 3
    info.remove_pod(pod)
    assert info.requested.milli_cpu == 0 and info.non_zero_requested.memory == 0


def test_snapshot_build() -> None:
    snap = Snapshot.build([make_node("n1"), make_node("n2")], [make_pod("a", node_name="n2"), make_pod("b")])
    assert [n.name for n in snap.nodes()] == ["n1", "n2"]
    assert len(snap.get("n2").pods) == 1  # type: ignore[union-attr]
