"""Pool gathering (GatherPools); node selector matching itself is tested in tests/unit/kube."""

from __future__ import annotations

from typing import Any

import pytest

from services.kube.structured import PoolError, gather_pools

Obj = dict[str, Any]


def node(name: str, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": labels}}


def slice_(
    name: str,
    *,
    pool: str = "pool-1",
    driver: str = "driver-a",
    generation: int = 1,
    count: int = 1,
    devices: tuple[str, ...] = ("device-1",),
    **selection: Any,
) -> Obj:
    spec: Obj = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
        "devices": [{"name": d, "basic": {}} for d in devices],
        **selection,
    }
    return {"metadata": {"name": name}, "spec": spec}


def expr(key: str, operator: str, *values: str) -> Obj:
    req: Obj = {"key": key, "operator": operator}
    if values:
        req["values"] = list(values)
    return req


def selector(*exprs: Obj, fields: tuple[Obj, ...] = ()) -> Obj:
    term: Obj = {}
    if exprs:
        term["matchExpressions"] = list(exprs)
    if fields:
        term["matchFields"] = list(fields)
    return {"nodeSelectorTerms": [term]}


def summary(pools: list[Any]) -> list[tuple[str, str, int, list[str], bool, bool, str]]:
    return [
        (
            p.driver,
            p.name,
            p.generation,
            [s["metadata"]["name"] for s in p.slices],
            p.is_incomplete,
            p.is_invalid,
            p.invalid_reason,
        )
        for p in pools
    ]


GATHER_CASES: dict[str, tuple[list[Obj], Obj | None, list[tuple[str, str, int, list[str], bool, bool, str]]]] = {
    "node-local-for-this-node": (
        [slice_("a", nodeName="node-1"), slice_("b", pool="pool-2", nodeName="node-2")],
        node("node-1"),
        [("driver-a", "pool-1", 1, ["a"], False, False, "")],
    ),
    "all-nodes": (
        [slice_("a", allNodes=True)],
        node("node-9"),
        [("driver-a", "pool-1", 1, ["a"], False, False, "")],
    ),
    "newest-generation-wins": (
        [
            slice_("old", generation=1, count=2, nodeName="node-1"),
            slice_("new", generation=2, count=1, nodeName="node-1"),
            slice_("older", generation=0, nodeName="node-1"),
        ],
        node("node-1"),
        [("driver-a", "pool-1", 2, ["new"], False, False, "")],
    ),
    "incomplete-at-newest-generation": (
        [
            slice_("a", generation=1, count=1, allNodes=True),
            slice_("b", generation=2, count=2, devices=("device-2",), allNodes=True),
        ],
        node("node-1"),
        [("driver-a", "pool-1", 2, ["b"], True, False, "")],
    ),
    "complete-with-two-slices": (
        [
            slice_("a", count=2, allNodes=True),
            slice_("b", count=2, devices=("device-2",), allNodes=True),
        ],
        node("node-1"),
        [("driver-a", "pool-1", 1, ["a", "b"], False, False, "")],
    ),
    "duplicate-device-names": (
        [slice_("a", count=2, allNodes=True), slice_("b", count=2, allNodes=True)],
        node("node-1"),
        [("driver-a", "pool-1", 1, ["a", "b"], False, True, "duplicate device name device-1")],
    ),
    "same-pool-name-other-driver-is-another-pool": (
        [slice_("a", allNodes=True), slice_("b", driver="driver-b", allNodes=True)],
        node("node-1"),
        [
            ("driver-a", "pool-1", 1, ["a"], False, False, ""),
            ("driver-b", "pool-1", 1, ["b"], False, False, ""),
        ],
    ),
    "node-selector-matches": (
        [slice_("a", nodeSelector=selector(expr("region", "In", "r1")))],
        node("node-1", region="r1"),
        [("driver-a", "pool-1", 1, ["a"], False, False, "")],
    ),
    "node-selector-does-not-match": (
        [slice_("a", nodeSelector=selector(expr("region", "In", "r1")))],
        node("node-1", region="r2"),
        [],
    ),
    "unknown-selection-is-skipped": ([slice_("a")], node("node-1"), []),
    "no-node": (
        [
            slice_("a", nodeName="node-1"),
            slice_("b", pool="p2", allNodes=True),
            slice_("c", pool="p3", nodeSelector=selector(expr("x", "Exists"))),
        ],
        None,
        [("driver-a", "p2", 1, ["b"], False, False, "")],
    ),
}


@pytest.mark.parametrize("name", list(GATHER_CASES))
def test_gather_pools(name: str) -> None:
    slices, the_node, expected = GATHER_CASES[name]
    assert summary(gather_pools(slices, the_node)) == expected


def test_unparsable_node_selector_is_an_error() -> None:
    bad = slice_("bad", nodeSelector=selector(expr("count", "Gt", "many")))
    with pytest.raises(PoolError, match=r"node selector in resource slice bad: .*must be an integer"):
        gather_pools([bad], node("node-1"))
