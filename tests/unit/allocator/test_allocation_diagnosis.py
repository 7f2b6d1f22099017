"""Why claims cannot be allocated on a node, in counts and named constraints (services.kube.structured.diagnosis)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from services.kube.structured import SliceIndex
from services.kube.structured.diagnosis import (
    CONSTRAINT,
    COUNT,
    ERROR,
    FITS,
    TOGETHER,
    diagnose_node,
    summarize,
)

Obj = dict[str, Any]
DRIVER = "gpu.example.com"
CLASSES = {
    "gpu": {
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
}


def gpu(name: str, model: str) -> Obj:
    return {"name": name, "basic": {"attributes": {"model": {"string": model}}}}


def node_slice(node: str, *devices: Obj) -> Obj:
    return {
        "metadata": {"name": f"{node}-slice"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": list(devices),
        },
    }


def request(name: str, count: int = 1, selector: str = "", class_name: str = "gpu") -> Obj:
    req: Obj = {"name": name, "deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
    if selector:
        req["selectors"] = [{"cel": {"expression": selector}}]
    return req


def claim(name: str, *requests: Obj, match: str = "") -> Obj:
    devices: Obj = {"requests": list(requests)}
    if match:
        devices["constraints"] = [{"matchAttribute": match}]
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


def node(name: str) -> Obj:
    return {"metadata": {"name": name, "labels": {}}}


NODE_1 = node_slice("node-1", gpu("gpu-0", "a"), gpu("gpu-1", "b"))


@dataclass(frozen=True)
class Case:
    id: str
    claims: list[Obj]
    in_use: frozenset[tuple[str, str, str]]
    verdict: str
    detail: str


CASES = [
    Case("fits", [claim("c", request("r"))], frozenset(), FITS, ""),
    Case(
        "devices run out",
        [claim("c", request("r"))],
        frozenset({(DRIVER, "node-1", "gpu-0"), (DRIVER, "node-1", "gpu-1")}),
        COUNT,
        "claim default/c, request r: count 1 > free 0 (2 matching)",
    ),
    Case(
        "count too high",
        [claim("c", request("r", count=3))],
        frozenset(),
        COUNT,
        "claim default/c, request r: count 3 > free 2 (2 matching)",
    ),
    Case(
        "selector matches nothing",
        [claim("c", request("r", selector=f'device.attributes["{DRIVER}"].model == "z"'))],
        frozenset(),
        COUNT,
        "claim default/c, request r: count 1 > free 0 (0 matching)",
    ),
    Case(
        "matchAttribute fails",
        [claim("c", request("r", count=2), match=f"{DRIVER}/model")],
        frozenset(),
        CONSTRAINT,
        f"claim default/c: matchAttribute {DRIVER}/model",
    ),
    Case(
        "two requests compete",
        [claim("c", request("a", count=2), request("b"))],
        frozenset(),
        TOGETHER,
        "claim default/c: its requests do not fit at once",
    ),
    Case(
        "two claims compete",
        [claim("c", request("r", count=2)), claim("d", request("r"))],
        frozenset(),
        TOGETHER,
        "the claims do not fit at once",
    ),
    Case(
        "unknown class: the allocator's own words",
        [claim("c", request("r", class_name="nope"))],
        frozenset(),
        ERROR,
        'claim default/c, request r: could not retrieve device class nope: deviceclass.resource.k8s.io "nope" not found',
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_verdict_per_node(case: Case) -> None:
    fit = diagnose_node(
        case.claims, node("node-1"), allocated_devices=case.in_use, classes=CLASSES, slices=SliceIndex([NODE_1])
    )
    assert (fit.node, fit.verdict, fit.detail) == ("node-1", case.verdict, case.detail)


def test_summary_counts_distinct_devices_over_nodes() -> None:
    slices = SliceIndex([NODE_1, node_slice("node-2", gpu("gpu-0", "a"))])
    in_use = frozenset({(DRIVER, "node-1", "gpu-0")})
    claims = [claim("c", request("r", count=2))]
    fits = [
        diagnose_node(claims, node(n), allocated_devices=in_use, classes=CLASSES, slices=slices)
        for n in ("node-1", "node-2", "node-3")
    ]
    assert [f.verdict for f in fits] == [COUNT, COUNT, COUNT]
    [summary] = summarize(fits)
    assert (summary.claim, summary.request, summary.class_name, summary.count) == ("default/c", "r", "gpu", 2)
    assert (summary.matching, summary.matching_nodes) == (3, 2)
    assert (summary.free, summary.free_nodes, summary.most_free_on_one_node) == (2, 2, 1)
