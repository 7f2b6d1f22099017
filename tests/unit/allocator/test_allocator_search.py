"""Allocator behaviour beyond the Kubernetes table: caching, reuse, search."""

from __future__ import annotations

import copy
from typing import Any

from services.kube.structured import Allocator, SelectorCache

Obj = dict[str, Any]


def device_class(name: str, expression: str) -> Obj:
    return {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def claim(name: str, *requests: Obj, constraints: list[Obj] | None = None) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


def exact(name: str, class_name: str, count: int = 1, *selectors: str) -> Obj:
    req: Obj = {"name": name, "deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
    if selectors:
        req["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return req


def all_of(name: str, class_name: str) -> Obj:
    return {"name": name, "deviceClassName": class_name, "allocationMode": "All"}


def gpu(name: str, **attributes: Any) -> Obj:
    attrs = {k: ({"int": v} if isinstance(v, int) else {"string": v}) for k, v in attributes.items()}
    return {"name": name, "basic": {"attributes": attrs, "capacity": {"memory": "40Gi"}}}


def slice_(name: str, *devices: Obj, generation: int = 1, pool: str = "pool", **selection: Any) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": pool, "generation": generation, "resourceSliceCount": 1},
            "devices": list(devices),
            **(selection or {"allNodes": True}),
        },
    }


def node(name: str) -> Obj:
    return {"metadata": {"name": name, "labels": {}}}


GPU_CLASS = device_class("gpu", 'device.driver == "gpu.example.com"')


def test_selector_results_are_cached_across_nodes_and_pods() -> None:
    slices = [slice_("s", gpu("g0", model="a"), gpu("g1", model="b"))]
    cache = SelectorCache()
    pod_claim = claim("c", exact("r", "gpu", 1, 'device.attributes["gpu.example.com"].model == "b"'))
    first = Allocator([pod_claim], frozenset(), [GPU_CLASS], slices, cache=cache)
    assert first.allocate(node("n1")) is not None
    evaluations = cache.evaluations
    assert evaluations == 4  # class and request selector, two devices
    assert first.allocate(node("n2")) is not None
    second_pod = Allocator([copy.deepcopy(pod_claim)], frozenset(), [GPU_CLASS], slices, cache=cache)
    result = second_pod.allocate(node("n3"))
    assert cache.evaluations == evaluations
    assert result is not None
    assert result[0]["devices"]["results"][0]["device"] == "g1"


def test_a_new_pool_generation_is_evaluated_again() -> None:
    cache = SelectorCache()
    selector = 'device.attributes["gpu.example.com"].model == "b"'
    pod_claim = claim("c", exact("r", "gpu", 1, selector))
    old = [slice_("s", gpu("g0", model="a"))]
    assert Allocator([pod_claim], frozenset(), [GPU_CLASS], old, cache=cache).allocate(node("n")) is None
    new = [slice_("s", gpu("g0", model="b"), generation=2)]
    result = Allocator([pod_claim], frozenset(), [GPU_CLASS], new, cache=cache).allocate(node("n"))
    assert result is not None
    assert result[0]["devices"]["results"] == [
        {"request": "r", "driver": "gpu.example.com", "pool": "pool", "device": "g0"}
    ]


def test_unsatisfiable_constraint_over_many_devices_returns_none() -> None:
    # Three NUMA groups of seven: no group can serve eight devices.
    devices = [gpu(f"g{i}", numa=i % 3) for i in range(21)]
    pod_claim = claim("c", exact("r", "gpu", 8), constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    allocator = Allocator([pod_claim], frozenset(), [GPU_CLASS], [slice_("s", *devices)])
    assert allocator.allocate(node("n")) is None


def test_constraint_picks_a_group_that_fits() -> None:
    devices = [gpu(f"g{i}", numa=i % 3) for i in range(9)]
    pod_claim = claim("c", exact("r", "gpu", 3), constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    allocated = frozenset({("gpu.example.com", "pool", "g3")})  # breaks NUMA group 0
    result = Allocator([pod_claim], allocated, [GPU_CLASS], [slice_("s", *devices)]).allocate(node("n"))
    assert result is not None
    assert [r["device"] for r in result[0]["devices"]["results"]] == ["g1", "g4", "g7"]


def test_backtracking_through_an_all_request_frees_its_devices() -> None:
    """The earlier claim must move to g1 so that the All request can take g0.

    Kubernetes' Go allocator stops at the first conflict here; draplane keeps
    searching (documented difference, never fewer solutions).
    """
    only_g0 = device_class("only-g0", 'device.attributes["gpu.example.com"].model == "a"')
    claims = [claim("first", exact("r", "gpu", 1)), claim("second", all_of("r", "only-g0"))]
    slices = [slice_("s", gpu("g0", model="a"), gpu("g1", model="b"))]
    result = Allocator(claims, frozenset(), [GPU_CLASS, only_g0], slices).allocate(node("n"))
    assert result is not None
    assert [r["devices"]["results"][0]["device"] for r in result] == ["g1", "g0"]


def test_allocated_devices_are_skipped() -> None:
    slices = [slice_("s", gpu("g0"), gpu("g1"))]
    allocated = {("gpu.example.com", "pool", "g0")}
    result = Allocator([claim("c", exact("r", "gpu"))], allocated, [GPU_CLASS], slices).allocate(node("n"))
    assert result is not None
    assert result[0]["devices"]["results"][0]["device"] == "g1"


def test_classes_may_be_given_by_name() -> None:
    slices = [slice_("s", gpu("g0"))]
    result = Allocator([claim("c", exact("r", "gpu"))], frozenset(), {"gpu": GPU_CLASS}, slices).allocate(node("n"))
    assert result is not None


def test_two_requests_of_one_claim_never_share_a_device() -> None:
    slices = [slice_("s", gpu("g0"), gpu("g1"))]
    pod_claim = claim("c", exact("a", "gpu", 1), exact("b", "gpu", 1))
    result = Allocator([pod_claim], frozenset(), [GPU_CLASS], slices).allocate(node("n"))
    assert result is not None
    assert sorted(r["device"] for r in result[0]["devices"]["results"]) == ["g0", "g1"]
    three = claim("c", exact("a", "gpu", 2), exact("b", "gpu", 1))
    assert Allocator([three], frozenset(), [GPU_CLASS], slices).allocate(node("n")) is None
