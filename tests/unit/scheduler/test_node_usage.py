"""NodeUsage: a node's version moves exactly when a pool it reaches changes, and never repeats."""

from __future__ import annotations

from services.scheduler.dra.node_usage import NodeUsage

GPU_A = ("gpu", "a")
GPU_B = ("gpu", "b")
SHARED = ("net", "shared")


def test_a_pool_change_moves_only_the_nodes_that_reach_it() -> None:
    usage = NodeUsage()
    usage.learn("n1", (GPU_A, SHARED))
    usage.learn("n2", (GPU_B, SHARED))
    before = dict(usage.versions)
    usage.pool_changed(GPU_A)
    assert usage.versions["n1"] != before["n1"] and usage.versions["n2"] == before["n2"]
    middle = dict(usage.versions)
    usage.pool_changed(SHARED)
    assert all(usage.versions[n] != middle[n] for n in ("n1", "n2"))
    usage.pool_changed(("gpu", "nobody"))
    assert usage.versions == {"n1": usage.versions["n1"], "n2": usage.versions["n2"]}


def test_learning_again_moves_the_node_to_its_new_pools_with_a_fresh_version() -> None:
    usage = NodeUsage()
    usage.learn("n1", (GPU_A,))
    first = usage.versions["n1"]
    usage.learn("n1", (GPU_B,))
    second = usage.versions["n1"]
    assert second != first
    usage.pool_changed(GPU_A)
    assert usage.versions["n1"] == second  # no longer reaches it
    usage.pool_changed(GPU_B)
    assert usage.versions["n1"] not in (first, second)


def test_unreadable_pools_and_clear_leave_no_version_and_versions_never_repeat() -> None:
    usage = NodeUsage()
    seen: list[int] = []
    usage.learn("n1", (GPU_A,))
    seen.append(usage.versions["n1"])
    usage.learn("n1", None)
    assert "n1" not in usage.versions
    usage.pool_changed(GPU_A)
    assert "n1" not in usage.versions
    usage.learn("n1", (GPU_A,))
    seen.append(usage.versions["n1"])
    usage.clear()
    assert dict(usage.versions) == {}
    usage.learn("n1", (GPU_A,))
    seen.append(usage.versions["n1"])
    usage.pool_changed(GPU_A)
    seen.append(usage.versions["n1"])
    assert len(set(seen)) == len(seen)
