"""The structured allocator against the cases of Kubernetes' allocator_test.go.

Each case mirrors one of ``TestAllocator`` in
``k8s.io/dynamic-resource-allocation/structured/allocator_test.go`` (1.31, plus
the 1.32 additions that apply to v1alpha3: admin access gate, invalid pools,
All backtracking, class configs per class, too many devices, CEL errors).
Objects are wire-form dicts as they appear in the API.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from services.kube.structured import AllocationError, Allocator, Features

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2 = "req-0", "req-1", "req-2"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2 = "slice-1", "slice-2"
DEVICE0, DEVICE1, DEVICE2, DEVICE3 = "device-0", "device-1", "device-2", "device-3"
REGION_KEY, PLANET_KEY, EARTH = "region", "planet", "earth"

Obj = dict[str, Any]


# -- object generators (as in allocator_test.go) ------------------------------


def node(name: str, region: str) -> Obj:
    return {"metadata": {"name": name, "labels": {REGION_KEY: region, PLANET_KEY: EARTH}}}


def device_class(name: str, driver: str) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def device_configuration(driver: str, attribute: str) -> Obj:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def class_with_config(name: str, driver: str, attribute: str) -> Obj:
    obj = device_class(name, driver)
    obj["spec"]["config"] = [device_configuration(driver, attribute)]
    return obj


def request(name: str, class_name: str, count: int = 1, *selectors: str) -> Obj:
    req: Obj = {
        "name": name,
        "deviceClassName": class_name,
        "allocationMode": "ExactCount",
        "count": count,
    }
    if selectors:
        req["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return req


def all_request(name: str, class_name: str) -> Obj:
    return {"name": name, "deviceClassName": class_name, "allocationMode": "All"}


def claim_with_requests(name: str, constraints: list[Obj] | None, *requests: Obj) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"metadata": {"name": name}, "spec": {"devices": devices}}


def claim(name: str, req: str, class_name: str, *constraints: Obj) -> Obj:
    return claim_with_requests(name, list(constraints), request(req, class_name, 1))


def claim_with_device_config(name: str, req: str, class_name: str, driver: str, attribute: str) -> Obj:
    obj = claim(name, req, class_name)
    obj["spec"]["devices"]["config"] = [device_configuration(driver, attribute)]
    return obj


def device(name: str, capacity: Obj | None = None, attributes: Obj | None = None) -> Obj:
    basic: Obj = {}
    if attributes:
        basic["attributes"] = attributes
    if capacity:
        basic["capacity"] = capacity
    return {"name": name, "basic": basic}


def slice_(name: str, node_selection: Any, pool: str, driver: str, *devices: Obj) -> Obj:
    spec: Obj = {
        "driver": driver,
        "pool": {"name": pool, "resourceSliceCount": 1, "generation": 1},
        "devices": list(devices),
    }
    if node_selection is True:
        spec["allNodes"] = True
    elif isinstance(node_selection, str):
        spec["nodeName"] = node_selection
    else:
        spec["nodeSelector"] = node_selection
    return {"metadata": {"name": name}, "spec": spec}


def slice_with_one_device(name: str, node_selection: Any, pool: str, driver: str) -> Obj:
    return slice_(name, node_selection, pool, driver, device(DEVICE1))


def slice_with_devices(name: str, node_selection: Any, pool: str, driver: str, count: int) -> Obj:
    return slice_(name, node_selection, pool, driver, *(device(f"device-{i}") for i in range(count)))


def node_label_selector(key: str, *values: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def local_node_selector(node_name: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def result(req: str, driver: str, pool: str, dev: str) -> Obj:
    return {"request": req, "driver": driver, "pool": pool, "device": dev}


def allocation(selector: Obj | None, *results: Obj, config: list[Obj] | None = None) -> Obj:
    devices: Obj = {"results": list(results)}
    if config:
        devices["config"] = config
    out: Obj = {"devices": devices}
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def with_slice(obj: Obj, **changes: Any) -> Obj:
    obj = copy.deepcopy(obj)
    for key, value in changes.items():
        if key in ("generation", "resourceSliceCount"):
            obj["spec"]["pool"][key] = value
        elif key == "name":
            obj["metadata"]["name"] = value
    return obj


def memory_selector(size: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{size}")) >= 0'


INT_ATTR, VERSION_ATTR, STRING_ATTR, BOOL_ATTR = "numa", "driverVersion", "stringAttribute", "boolAttribute"


def attr_claim(attribute: str, count: int) -> Obj:
    return claim_with_requests(CLAIM0, [{"matchAttribute": attribute}], request(REQ0, CLASS_A, count))


# -- normalization: results are compared ignoring order, like gomega.ConsistOf --


def _norm_selector(selector: Obj | None) -> Any:
    if selector is None:
        return None
    terms = []
    for term in selector["nodeSelectorTerms"]:
        terms.append(
            {
                kind: sorted((r["key"], r["operator"], tuple(sorted(r.get("values", ())))) for r in term.get(kind, ()))
                for kind in ("matchExpressions", "matchFields")
            }
        )
    return terms


def normalize(allocations: list[Obj] | None) -> Any:
    if allocations is None:
        return None
    out = []
    for a in allocations:
        results = sorted(tuple(sorted(r.items())) for r in a["devices"]["results"])
        out.append((results, a["devices"].get("config"), _norm_selector(a.get("nodeSelector")), sorted(a)))
    return out


# -- the table ------------------------------------------------------------------


@dataclass
class Case:
    claims: list[Obj] = field(default_factory=list)
    allocated: set[tuple[str, str, str]] = field(default_factory=set)
    classes: list[Obj] = field(default_factory=list)
    slices: list[Obj] = field(default_factory=list)
    node: Obj | None = None
    admin_access: bool = True
    expect: list[Obj] | None = None
    error: str | None = None


def _with_constraint_attrs(**overrides: Any) -> Obj:
    attrs = {
        VERSION_ATTR: {"version": "1.0.0"},
        INT_ATTR: {"int": 1},
        STRING_ATTR: {"string": "stringAttributeValue"},
        BOOL_ATTR: {"bool": True},
    }
    attrs.update(overrides)
    return attrs


CASES: dict[str, Case] = {
    "empty": Case(expect=[]),
    "simple": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "other-node": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
            slice_with_one_device(SLICE2, NODE2, POOL2, DRIVER_A),
        ],
        node=node(NODE2, REGION2),
        expect=[allocation(local_node_selector(NODE2), result(REQ0, DRIVER_A, POOL2, DEVICE1))],
    ),
    "small-and-large": Case(
        claims=[
            claim_with_requests(
                CLAIM0,
                None,
                request(REQ0, CLASS_A, 1, memory_selector("1Gi")),
                request(REQ1, CLASS_A, 1, memory_selector("2Gi")),
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {"memory": "1Gi"}),
                device(DEVICE2, {"memory": "2Gi"}),
            )
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "small-and-large-backtrack-requests": Case(
        claims=[
            claim_with_requests(
                CLAIM0,
                None,
                request(REQ0, CLASS_A, 1, memory_selector("1Gi")),
                request(REQ1, CLASS_A, 1, memory_selector("2Gi")),
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        # The large device is listed first, taken by the small request, and
        # that decision must be undone.
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE2, {"memory": "2Gi"}),
                device(DEVICE1, {"memory": "1Gi"}),
            )
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "small-and-large-backtrack-claims": Case(
        claims=[
            claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, memory_selector("1Gi"))),
            claim_with_requests(CLAIM1, None, request(REQ1, CLASS_A, 1, memory_selector("2Gi"))),
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE2, {"memory": "2Gi"}),
                device(DEVICE1, {"memory": "1Gi"}),
            )
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local_node_selector(NODE1), result(REQ1, DRIVER_A, POOL1, DEVICE2)),
        ],
    ),
    "devices-split-across-different-slices": Case(
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_A),
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
            )
        ],
    ),
    "obsolete-slice": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_with_one_device("slice-1-obsolete", NODE1, POOL1, DRIVER_A),
            with_slice(slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), generation=2),
        ],
        node=node(NODE1, REGION1),
        expect=[allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "duplicate-slice": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            with_slice(slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), resourceSliceCount=2),
            with_slice(slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), resourceSliceCount=2, name="slice-1-2"),
        ],
        node=node(NODE1, REGION1),
        error=f"pool {POOL1} is invalid: duplicate device name {DEVICE1}",
    ),
    "no-slices": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=None,
    ),
    "not-enough-suitable-devices": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A), claim(CLAIM0, REQ1, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=None,
    ),
    "no-classes": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: could not retrieve device class class-a: "
        'deviceclass.resource.k8s.io "class-a" not found',
    ),
    "unknown-class": Case(
        claims=[claim(CLAIM0, REQ0, "unknown-class")],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="could not retrieve device class unknown-class",
    ),
    "empty-class": Case(
        claims=[claim(CLAIM0, REQ0, "")],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: missing device class name (unsupported request type?)",
    ),
    "no-claims-to-allocate": Case(
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[],
    ),
    "all-devices-single": Case(
        claims=[claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "all-devices-many": Case(
        claims=[claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
            )
        ],
    ),
    "all-devices-of-the-incomplete-pool": Case(
        claims=[claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[with_slice(slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), resourceSliceCount=2)],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 "
        "is currently being updated",
    ),
    "all-devices-plus-another": Case(
        claims=[
            claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A)),
            claim_with_requests(CLAIM1, None, request(REQ0, CLASS_B, 1)),
        ],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ],
    ),
    "all-devices-plus-another-reversed": Case(
        claims=[
            claim_with_requests(CLAIM1, None, request(REQ0, CLASS_B, 1)),
            claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A)),
        ],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
        ],
    ),
    "all-devices-many-plus-another": Case(
        claims=[
            claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A)),
            claim_with_requests(CLAIM1, None, request(REQ0, CLASS_B, 1)),
        ],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
            ),
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ],
    ),
    "all-devices-no-solution": Case(
        claims=[
            claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1)),
            claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A)),
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=None,
    ),
    "all-devices-no-solution-reversed": Case(
        claims=[
            claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A)),
            claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1)),
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=None,
    ),
    "all-devices-some-allocated": Case(
        claims=[claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))],
        allocated={(DRIVER_A, POOL1, DEVICE2)},
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        node=node(NODE1, REGION1),
        expect=None,
    ),
    "network-attached-device": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(node_label_selector(REGION_KEY, REGION1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "unsuccessful-allocation-network-attached-device": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)],
        node=node(NODE2, REGION2),
        expect=None,
    ),
    "many-network-attached-devices": Case(
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 4))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, True, POOL2, DRIVER_A),
            slice_with_one_device(SLICE1, node_label_selector(PLANET_KEY, EARTH), POOL3, DRIVER_A),
            slice_with_one_device(SLICE1, local_node_selector(NODE1), POOL4, DRIVER_A),
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                # A union of the individual selectors.
                {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": REGION_KEY, "operator": "In", "values": [REGION1]},
                                {"key": PLANET_KEY, "operator": "In", "values": [EARTH]},
                            ],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}],
                        }
                    ]
                },
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
                result(REQ0, DRIVER_A, POOL3, DEVICE1),
                result(REQ0, DRIVER_A, POOL4, DEVICE1),
            )
        ],
    ),
    "local-and-network-attached-devices": Case(
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                # Once there is any node-local device, the selector is for that node.
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
            )
        ],
    ),
    "all-nodes-only": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, True, POOL1, DRIVER_A)],
        node=node(NODE2, REGION2),
        # Available everywhere: no node selector at all.
        expect=[allocation(None, result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "several-different-drivers": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A), claim(CLAIM0, REQ0, CLASS_B)],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ],
    ),
    "already-allocated-devices": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        allocated={(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)},
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=None,
    ),
    "admin-access-disabled": Case(
        admin_access=False,
        claims=[claim_with_requests(CLAIM0, None, {**request(REQ0, CLASS_A, 1), "adminAccess": True})],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: admin access is requested, but the feature is disabled",
    ),
    "admin-access-enabled": Case(
        admin_access=True,
        claims=[claim_with_requests(CLAIM0, None, {**request(REQ0, CLASS_A, 1), "adminAccess": True})],
        allocated={(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)},
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "admin-access-does-not-mark-in-use": Case(
        # The admin-access request shares the device with the normal one.
        claims=[
            claim_with_requests(CLAIM0, None, {**request(REQ0, CLASS_A, 1), "adminAccess": True}),
            claim(CLAIM1, REQ0, CLASS_A),
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local_node_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
        ],
    ),
    "with-constraint": Case(
        claims=[
            claim_with_requests(
                CLAIM0,
                [
                    {"matchAttribute": INT_ATTR},
                    {"matchAttribute": VERSION_ATTR},
                    {"matchAttribute": STRING_ATTR},
                    {"matchAttribute": BOOL_ATTR},
                ],
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, _with_constraint_attrs()),
                device(DEVICE2, None, _with_constraint_attrs()),
            )
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "with-constraint-non-existent-attribute": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A, {"matchAttribute": "NonExistentAttribute"})],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=None,
    ),
    **{
        f"with-constraint-not-matching-{kind}-attribute": Case(
            claims=[attr_claim(attr, 2)],
            classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device(DEVICE1, None, {attr: {kind: first}}),
                    device(DEVICE2, None, {attr: {kind: second}}),
                )
            ],
            node=node(NODE1, REGION1),
            expect=None,
        )
        for kind, attr, first, second in (
            ("int", INT_ATTR, 1, 2),
            ("string", STRING_ATTR, "stringAttributeValue", "stringAttributeValue2"),
            ("bool", BOOL_ATTR, True, False),
            ("version", VERSION_ATTR, "1.0.0", "2.0.0"),
        )
    },
    "with-constraint-not-matching-int-attribute-all-devices": Case(
        claims=[claim_with_requests(CLAIM0, [{"matchAttribute": INT_ATTR}], all_request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {INT_ATTR: {"int": 1}}),
                device(DEVICE2, None, {INT_ATTR: {"int": 2}}),
            )
        ],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim "
        "constraint would not be satisfied",
    ),
    "with-constraint-for-request": Case(
        claims=[
            claim_with_requests(
                CLAIM0,
                [{"requests": [REQ0], "matchAttribute": VERSION_ATTR}],
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {VERSION_ATTR: {"version": "1.0.0"}}),
                device(DEVICE2, None, {VERSION_ATTR: {"version": "2.0.0"}}),
            )
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "with-constraint-for-request-retry": Case(
        claims=[
            claim_with_requests(
                CLAIM0,
                [{"requests": [REQ0], "matchAttribute": VERSION_ATTR}, {"matchAttribute": STRING_ATTR}],
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                # device-1 does not satisfy the second constraint with anyone:
                # the allocator must backtrack.
                device(DEVICE1, None, {VERSION_ATTR: {"version": "1.0.0"}, STRING_ATTR: {"string": "a"}}),
                device(DEVICE2, None, {VERSION_ATTR: {"version": "2.0.0"}, STRING_ATTR: {"string": "b"}}),
                device(DEVICE3, None, {VERSION_ATTR: {"version": "3.0.0"}, STRING_ATTR: {"string": "b"}}),
            )
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
                result(REQ1, DRIVER_A, POOL1, DEVICE3),
            )
        ],
    ),
    "with-qualified-constraint-on-driver-local-attribute": Case(
        # "driver-a/numa" finds the unqualified "numa" of driver-a's devices.
        claims=[attr_claim(f"{DRIVER_A}/{INT_ATTR}", 2)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {INT_ATTR: {"int": 1}}),
                device(DEVICE2, None, {INT_ATTR: {"int": 2}}),
                device(DEVICE3, None, {f"{DRIVER_A}/{INT_ATTR}": {"int": 1}}),
            )
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE3),
            )
        ],
    ),
    "with-class-device-config": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[class_with_config(CLASS_A, DRIVER_A, "classAttribute")],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                config=[
                    {"source": "FromClass", "requests": [REQ0], **device_configuration(DRIVER_A, "classAttribute")}
                ],
            )
        ],
    ),
    "with-class-device-config-with-multiple-request-and-configs": Case(
        claims=[
            claim_with_requests(
                CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1), request(REQ2, CLASS_B, 1)
            )
        ],
        classes=[
            class_with_config(CLASS_A, DRIVER_A, "classAttribute-A"),
            class_with_config(CLASS_B, DRIVER_B, "classAttribute-B"),
        ],
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, 2),
            slice_with_one_device(SLICE2, NODE1, POOL1, DRIVER_B),
        ],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE0),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                result(REQ2, DRIVER_B, POOL1, DEVICE1),
                config=[
                    {
                        "source": "FromClass",
                        "requests": [REQ0, REQ1],
                        **device_configuration(DRIVER_A, "classAttribute-A"),
                    },
                    {"source": "FromClass", "requests": [REQ2], **device_configuration(DRIVER_B, "classAttribute-B")},
                ],
            )
        ],
    ),
    "claim-with-device-config": Case(
        claims=[claim_with_device_config(CLAIM0, REQ0, CLASS_A, DRIVER_A, "deviceAttribute")],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                config=[{"source": "FromClaim", **device_configuration(DRIVER_A, "deviceAttribute")}],
            )
        ],
    ),
    "claim-config-for-request-after-class-config": Case(
        claims=[
            {
                **claim(CLAIM0, REQ0, CLASS_A),
                "spec": {
                    "devices": {
                        "requests": [request(REQ0, CLASS_A, 1)],
                        "config": [{"requests": [REQ0], **device_configuration(DRIVER_A, "claimAttribute")}],
                    }
                },
            }
        ],
        classes=[class_with_config(CLASS_A, DRIVER_A, "classAttribute")],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[
            allocation(
                local_node_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                config=[
                    {"source": "FromClass", "requests": [REQ0], **device_configuration(DRIVER_A, "classAttribute")},
                    {"source": "FromClaim", "requests": [REQ0], **device_configuration(DRIVER_A, "claimAttribute")},
                ],
            )
        ],
    ),
    "unknown-selector": Case(
        claims=[claim_with_requests(CLAIM0, None, {**request(REQ0, CLASS_A, 1), "selectors": [{}]})],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0, selector #0: CEL expression empty (unsupported selector type?)",
    ),
    "unknown-allocation-mode": Case(
        claims=[claim_with_requests(CLAIM0, None, {**request(REQ0, CLASS_A, 1), "allocationMode": "future-mode"})],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: unsupported count mode future-mode",
    ),
    "unknown-constraint": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A, {})],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0, constraint #0: empty constraint (unsupported constraint type?)",
    ),
    "unknown-device": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, {"name": DEVICE1})],
        node=node(NODE1, REGION1),
        expect=None,
    ),
    "invalid-CEL-one-device": Case(
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, "noSuchVar"))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:1: "
        "undeclared reference to 'noSuchVar'",
    ),
    "invalid-CEL-one-device-class": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[{"metadata": {"name": CLASS_A}, "spec": {"selectors": [{"cel": {"expression": "noSuchVar"}}]}}],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="class class-a: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:1: "
        "undeclared reference to 'noSuchVar'",
    ),
    "invalid-CEL-all-devices": Case(
        claims=[
            claim_with_requests(
                CLAIM0, None, {**all_request(REQ0, CLASS_A), "selectors": [{"cel": {"expression": "noSuchVar"}}]}
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="undeclared reference",
    ),
    "CEL-runtime-error": Case(
        claims=[
            claim_with_requests(
                CLAIM0, None, request(REQ0, CLASS_A, 1, 'device.attributes["no-such-domain"].noSuchAttr')
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0: selector #0: CEL runtime error: no such key: noSuchAttr",
    ),
    "CEL-runtime-error-in-class": Case(
        claims=[claim(CLAIM0, REQ0, CLASS_A)],
        classes=[
            {
                "metadata": {"name": CLASS_A},
                "spec": {"selectors": [{"cel": {"expression": 'device.capacity["x"].y.isGreaterThan(quantity("1"))'}}]},
            }
        ],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="class class-a: selector #0: CEL runtime error: no such key: y",
    ),
    "class-selectors-before-request-selectors": Case(
        # The class rejects the device before the broken request selector runs.
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_B, 1, "1 / 0 == 1"))],
        classes=[device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=None,
    ),
    "too-many-devices-single-request": Case(
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 500))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        error="claim claim-0: number of requested devices 500 exceeds the claim limit of 32",
    ),
    "many-devices-okay": Case(
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 32))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        expect=None,
    ),
    "too-many-devices-total": Case(
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 32), request(REQ1, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        error="claim claim-0: number of requested devices 33 exceeds the claim limit of 32",
    ),
    "namespaced-claim-in-messages": Case(
        claims=[{**claim(CLAIM0, REQ0, "missing"), "metadata": {"name": CLAIM0, "namespace": "default"}}],
        error="claim default/claim-0, request req-0: could not retrieve device class missing",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_allocator(name: str) -> None:
    case = CASES[name]
    inputs = copy.deepcopy((case.claims, case.classes, case.slices))
    allocator = Allocator(
        case.claims,
        frozenset(case.allocated),
        case.classes,
        case.slices,
        features=Features(admin_access=case.admin_access),
    )
    if case.error is not None:
        with pytest.raises(AllocationError) as err:
            allocator.allocate(case.node)
        assert case.error in str(err.value)
        return
    got = allocator.allocate(case.node)
    assert normalize(got) == normalize(case.expect)
    if case.expect is not None:
        # Exact wire form, including the order of results and configs.
        assert got is not None
        assert [a["devices"].get("config") for a in got] == [a["devices"].get("config") for a in case.expect]
    # Objects the allocator had access to are not modified.
    assert (case.claims, case.classes, case.slices) == inputs


def test_results_are_fresh_objects() -> None:
    """Mutating a result must not leak into the next allocation."""
    case = CASES["many-network-attached-devices"]
    allocator = Allocator(case.claims, frozenset(), case.classes, case.slices)
    first = allocator.allocate(case.node)
    assert first is not None
    first[0]["nodeSelector"]["nodeSelectorTerms"][0]["matchExpressions"].clear()
    second = allocator.allocate(case.node)
    assert normalize(second) == normalize(case.expect)
