"""The structured allocator with Kubernetes 1.37's features, against v0.37's own test cases.

Each case is one of ``TestAllocator`` in
``k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go``
(v0.37.2), under the same name, translated to hub-form dicts (devices under
``basic``, request fields flat beside ``firstAvailable``, capacity as
``{value}``). Upstream runs every case on the "incubating" allocator with the
features the case names; here that is ``Features(kube_1_37=True, ...)`` with
the same gates. Where a case is adapted, the comment says how.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest

from services.kube.feature_gates import RELEASE_1_37, FeatureGates
from services.kube.structured import AllocatedState, AllocationError, Allocator, Features, PoolMode, gather_pools

REGION1 = "region-1"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2 = "pool-1", "pool-2"
REQ0, REQ1, REQ2, REQ3 = "req-0", "req-1", "req-2", "req-3"
SUB0, SUB1 = "subReq-0", "subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2, SLICE3, SLICE4 = "slice-1", "slice-2", "slice-3", "slice-4"
DEVICE0, DEVICE1, DEVICE2, DEVICE3, DEVICE4 = "device-0", "device-1", "device-2", "device-3", "device-4"
COUNTER_SET1, COUNTER_SET2 = "counter-set-1", "counter-set-2"
CAPACITY0, CAPACITY1 = "capacity-0", "capacity-1"
SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
PER_DEVICE = "perDevice"

Obj = dict[str, Any]

TAINT_NONE = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOLERATION_NO_EXECUTE = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}

# -- object generators (allocator_testing.go's, in hub form) ---------------------


def node(name: str, region: str = REGION1) -> Obj:
    return {"metadata": {"name": name, "labels": {"region": region, "planet": "earth"}}}


def device_class(name: str, driver: str, *, config: str | None = None) -> Obj:
    obj: Obj = {
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }
    if config:
        obj["spec"]["config"] = [device_configuration(driver, config)]
    return obj


def device_configuration(driver: str, attribute: str) -> Obj:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def request(name: str, class_name: str, count: int = 1, *selectors: str, **fields: Any) -> Obj:
    req: Obj = {"name": name, "deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
    if selectors:
        req["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    req.update(fields)
    return req


def all_request(name: str, class_name: str, **fields: Any) -> Obj:
    return {"name": name, "deviceClassName": class_name, "allocationMode": "All", **fields}


def prioritized(name: str, *subrequests: Obj) -> Obj:
    return {"name": name, "firstAvailable": list(subrequests)}


def claim(name: str, *requests: Obj, constraints: list[Obj] | None = None, config: list[Obj] | None = None) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"metadata": {"name": name}, "spec": {"devices": devices}}


def claim_config(requests: list[str], config: Obj) -> Obj:
    return {"requests": requests, **config}


def capacity_request(value: str) -> Obj:
    return {"requests": {CAPACITY0: value}}


def device(name: str, capacity: dict[str, str] | None = None, attributes: Obj | None = None, **basic: Any) -> Obj:
    body: Obj = {}
    if attributes:
        body["attributes"] = attributes
    if capacity:
        body["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    body.update(basic)
    return {"name": name, "basic": body}


def multi(obj: Obj) -> Obj:
    """``withAllowMultipleAllocations()``."""
    obj["basic"]["allowMultipleAllocations"] = True
    return obj


def consumes(counter_set: str, **counters: str) -> list[Obj]:
    return [{"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}]


def from_counters(name: str, counter_set: str, **counters: str) -> Obj:
    """``device(name, fromCounters, nil).withDeviceCounterConsumption(...)``: capacity mirrors the counters."""
    return device(name, dict(counters), consumesCounters=consumes(counter_set, **counters))


def range_policy(value: str) -> Obj:
    """``withCapacityRequestPolicyRange``: default 2, min 2, step 2, max 4."""
    return {
        CAPACITY0: {
            "value": value,
            "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}},
        }
    }


def slice_(name: str, node_selection: Any, pool: str, driver: str, *devices: Obj, count: int = 1) -> Obj:
    spec: Obj = {"driver": driver, "pool": {"name": pool, "resourceSliceCount": count, "generation": 1}}
    if devices:
        spec["devices"] = list(devices)
    if node_selection is True:
        spec["allNodes"] = True
    elif node_selection == PER_DEVICE:
        spec["perDeviceNodeSelection"] = True
    elif isinstance(node_selection, str):
        spec["nodeName"] = node_selection
    else:
        spec["nodeSelector"] = node_selection
    return {"metadata": {"name": name}, "spec": spec}


def counter_slice(name: str, node_selection: Any, pool: str, driver: str, *sets: Obj, count: int = 1) -> Obj:
    obj = slice_(name, node_selection, pool, driver, count=count)
    obj["spec"]["sharedCounters"] = list(sets)
    return obj


def generation(obj: Obj, value: int) -> Obj:
    obj["spec"]["pool"]["generation"] = value
    return obj


def counter_set(name: str, **counters: str) -> Obj:
    return {"name": name, "counters": {k: {"value": v} for k, v in counters.items()}}


def local_node_selector(node_name: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def result(req: str, driver: str, pool: str, dev: str, **fields: Any) -> Obj:
    return {"request": req, "driver": driver, "pool": pool, "device": dev, **fields}


def shared(req: str, driver: str, pool: str, dev: str, consumed: dict[str, str] | None = None) -> Obj:
    out = result(req, driver, pool, dev, shareID=SHARE_ID)
    if consumed:
        out["consumedCapacity"] = consumed
    return out


def allocation(selector: Obj | None, *results: Obj, config: list[Obj] | None = None) -> Obj:
    devices: Obj = {"results": list(results)}
    if config:
        devices["config"] = config
    out: Obj = {"devices": devices}
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def memory(size: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{size}")) >= 0'


def normalize(allocations: list[Obj] | None) -> Any:
    if allocations is None:
        return None
    return [
        (
            sorted(repr(sorted(r.items())) for r in a["devices"]["results"]),
            a["devices"].get("config"),
            a.get("nodeSelector"),
        )
        for a in allocations
    ]


# -- the table ------------------------------------------------------------------


@dataclass
class Case:
    features: Features
    claims: list[Obj] = field(default_factory=list)
    allocated: set[tuple[str, str, str]] = field(default_factory=set)
    allocated_capacity: dict[tuple[str, str, str], dict[str, Fraction]] = field(default_factory=dict)
    shared: set[tuple[str, str, str]] = field(default_factory=set)
    classes: list[Obj] = field(default_factory=list)
    slices: list[Obj] = field(default_factory=list)
    node: Obj | None = None
    expect: list[Obj] | None = None
    error: str | None = None


def gates(**on: bool) -> Features:
    """Upstream's ``Features{...}``: only what the case names, on the 1.37 allocator."""
    return Features(admin_access=on.pop("admin_access", False), kube_1_37=True, **on)


NONE = gates()
PRIORITIZED = gates(prioritized_list=True)
TAINTS = gates(device_taints=True)
PARTITIONABLE = gates(partitionable_devices=True)
CONSUMABLE = gates(consumable_capacity=True)
ADMIN = gates(admin_access=True)

A_CLASS = [device_class(CLASS_A, DRIVER_A)]
AB_CLASSES = [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)]
ONE_DEVICE = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1))]
TWO_DEVICES = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))]
HERE = local_node_selector(NODE1)
VERSION = f"{DRIVER_A}/driverVersion"


def admin(req: Obj) -> Obj:
    return {**req, "adminAccess": True}


CASES: dict[str, Case] = {
    # -- prioritized list (DRAPrioritizedList) --------------------------------------
    "prioritized-list-first-unavailable": Case(
        PRIORITIZED,
        claims=[claim(CLAIM0, prioritized(REQ0, request(SUB0, CLASS_B), request(SUB1, CLASS_A)))],
        classes=AB_CLASSES,
        slices=ONE_DEVICE,
        node=node(NODE1),
        expect=[allocation(HERE, result(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEVICE1))],
    ),
    "prioritized-list-non-available": Case(
        PRIORITIZED,
        claims=[claim(CLAIM0, prioritized(REQ0, request(SUB0, CLASS_B, 2), request(SUB1, CLASS_A, 2)))],
        classes=AB_CLASSES,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1)),
            slice_(SLICE2, NODE1, POOL2, DRIVER_B, device(DEVICE1)),
        ],
        node=node(NODE1),
        expect=None,
    ),
    "prioritized-list-device-config": Case(
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, request(SUB0, CLASS_A, 1), request(SUB1, CLASS_B, 2)),
                config=[
                    claim_config([f"{REQ0}/{SUB0}"], device_configuration(DRIVER_A, "foo")),
                    claim_config([f"{REQ0}/{SUB1}"], device_configuration(DRIVER_B, "bar")),
                ],
            )
        ],
        classes=AB_CLASSES,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2))],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                result(f"{REQ0}/{SUB1}", DRIVER_B, POOL1, DEVICE1),
                result(f"{REQ0}/{SUB1}", DRIVER_B, POOL1, DEVICE2),
                config=[{"source": "FromClaim", **device_configuration(DRIVER_B, "bar")}],
            )
        ],
    ),
    "prioritized-list-class-config": Case(
        PRIORITIZED,
        claims=[claim(CLAIM0, prioritized(REQ0, request(SUB0, CLASS_A, 2), request(SUB1, CLASS_B, 2)))],
        classes=[device_class(CLASS_A, DRIVER_A, config="foo"), device_class(CLASS_B, DRIVER_B, config="bar")],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2)),
            slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE3)),
        ],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                result(f"{REQ0}/{SUB1}", DRIVER_B, POOL1, DEVICE1),
                result(f"{REQ0}/{SUB1}", DRIVER_B, POOL1, DEVICE2),
                config=[{"source": "FromClass", **device_configuration(DRIVER_B, "bar")}],
            )
        ],
    ),
    "claim-config-scoped-to-subrequests-of-one-request": Case(
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, request(SUB0, CLASS_A), request(SUB1, CLASS_B)),
                request(REQ1, CLASS_A),
                config=[claim_config([f"{REQ0}/{SUB0}", f"{REQ0}/{SUB1}"], device_configuration(DRIVER_A, "scoped"))],
            )
        ],
        classes=AB_CLASSES,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE0), device(DEVICE1))],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                result(f"{REQ0}/{SUB0}", DRIVER_A, POOL1, DEVICE0),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                config=[
                    {
                        "source": "FromClaim",
                        "requests": [f"{REQ0}/{SUB0}", f"{REQ0}/{SUB1}"],
                        **device_configuration(DRIVER_A, "scoped"),
                    }
                ],
            )
        ],
    ),
    "claim-config-covering-all-requests-is-cleared": Case(
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, request(SUB0, CLASS_A), request(SUB1, CLASS_B)),
                request(REQ1, CLASS_A),
                config=[claim_config([f"{REQ0}/{SUB0}", REQ1], device_configuration(DRIVER_A, "all"))],
            )
        ],
        classes=AB_CLASSES,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE0), device(DEVICE1))],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                result(f"{REQ0}/{SUB0}", DRIVER_A, POOL1, DEVICE0),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                config=[{"source": "FromClaim", **device_configuration(DRIVER_A, "all")}],
            )
        ],
    ),
    "prioritized-list-subrequests-with-expressions": Case(
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, memory("1Gi")),
                prioritized(REQ1, request(SUB0, CLASS_A, 1, memory("4Gi")), request(SUB1, CLASS_A, 2, memory("2Gi"))),
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {"memory": "2Gi"}),
                device(DEVICE2, {"memory": "2Gi"}),
                device(DEVICE3, {"memory": "1Gi"}),
            )
        ],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                result(REQ0, DRIVER_A, POOL1, DEVICE3),
                result(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, DEVICE1),
                result(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "prioritized-list-subrequests-with-constraints-ref-parent-request": Case(
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, memory("8Gi")),
                prioritized(REQ1, request(SUB0, CLASS_A, 1, memory("2Gi")), request(SUB1, CLASS_A, 1, memory("1Gi"))),
                constraints=[{"requests": [REQ0, REQ1], "matchAttribute": VERSION}],
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {"memory": "8Gi"}, {"driverVersion": {"version": "1.0.0"}}),
            ),
            slice_(
                SLICE2,
                NODE1,
                POOL2,
                DRIVER_A,
                device(DEVICE2, {"memory": "2Gi"}, {"driverVersion": {"version": "2.0.0"}}),
                device(DEVICE3, {"memory": "1Gi"}, {"driverVersion": {"version": "1.0.0"}}),
            ),
        ],
        node=node(NODE1),
        expect=[
            allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(f"{REQ1}/{SUB1}", DRIVER_A, POOL2, DEVICE3))
        ],
    ),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": Case(
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, memory("8Gi")),
                prioritized(REQ1, request(SUB0, CLASS_A, 1, memory("2Gi")), request(SUB1, CLASS_A, 1, memory("1Gi"))),
                constraints=[{"requests": [REQ0, f"{REQ1}/{SUB0}"], "matchAttribute": VERSION}],
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {"memory": "8Gi"}, {"driverVersion": {"version": "1.0.0"}}),
            ),
            slice_(
                SLICE2,
                NODE1,
                POOL2,
                DRIVER_A,
                device(DEVICE2, {"memory": "2Gi"}, {"driverVersion": {"version": "2.0.0"}}),
            ),
        ],
        node=node(NODE1),
        expect=[
            allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(f"{REQ1}/{SUB1}", DRIVER_A, POOL2, DEVICE2))
        ],
    ),
    "prioritized-list-subrequests-with-allocation-mode-all": Case(
        PRIORITIZED,
        claims=[claim(CLAIM0, prioritized(REQ0, all_request(SUB0, CLASS_A), request(SUB1, CLASS_A)))],
        classes=A_CLASS,
        slices=TWO_DEVICES,
        allocated={(DRIVER_A, POOL1, DEVICE1)},
        node=node(NODE1),
        expect=[allocation(HERE, result(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEVICE2))],
    ),
    "prioritized-list-disabled": Case(
        NONE,
        claims=[claim(CLAIM0, prioritized(REQ0, request(SUB0, CLASS_A)))],
        classes=A_CLASS,
        slices=ONE_DEVICE,
        node=node(NODE1),
        error="claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled",
    ),
    "prioritized-list-multi-request": Case(
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                request(REQ1, CLASS_A, 1, memory("8Gi")),
                prioritized(REQ0, request(SUB0, CLASS_A, 1, memory("8Gi")), request(SUB1, CLASS_A, 1, memory("4Gi"))),
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"})),
            slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "4Gi"})),
        ],
        node=node(NODE1),
        expect=[
            allocation(HERE, result(REQ1, DRIVER_A, POOL1, DEVICE1), result(f"{REQ0}/{SUB1}", DRIVER_A, POOL2, DEVICE2))
        ],
    ),
    "prioritized-list-with-backtracking": Case(
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, request(SUB0, CLASS_A, 1, memory("8Gi")), request(SUB1, CLASS_A, 1, memory("4Gi"))),
                request(REQ1, CLASS_A, 1, memory("8Gi")),
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"})),
            slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "4Gi"})),
        ],
        node=node(NODE1),
        expect=[
            allocation(HERE, result(f"{REQ0}/{SUB1}", DRIVER_A, POOL2, DEVICE2), result(REQ1, DRIVER_A, POOL1, DEVICE1))
        ],
    ),
    "prioritized-list-minimum-sum-exceeds-claim-limit": Case(
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 20),
                prioritized(REQ1, request(SUB0, CLASS_A, 20), request(SUB1, CLASS_A, 24)),
            )
        ],
        classes=A_CLASS,
        error="claim claim-0, request req-1: adding 20 devices exceeds the claim limit of 32, with 20 already accounted for",
    ),
    "prioritized-list-max-allocation-limit-request": Case(
        # Taking 32 devices for req-0/subReq-0 leaves no room for req-1: the search backs out of that
        # choice instead of trying every combination of it.
        PRIORITIZED,
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, request(SUB0, CLASS_A, 32), request(SUB1, CLASS_A, 16)),
                prioritized(REQ1, request(SUB0, CLASS_A, 32), request(SUB1, CLASS_A, 16)),
            )
        ],
        classes=A_CLASS,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, *(device(f"device-{i}") for i in range(64)))],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                *(result(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, f"device-{i}") for i in range(16)),
                *(result(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, f"device-{i}") for i in range(16, 32)),
            )
        ],
    ),
    "prioritized-list-allocation-mode-all-multiple-requests": Case(
        PRIORITIZED,
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A), prioritized(REQ1, all_request(SUB0, CLASS_A), request(SUB1, CLASS_A)))
        ],
        classes=A_CLASS,
        slices=TWO_DEVICES,
        node=node(NODE1),
        expect=[
            allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, DEVICE2))
        ],
    ),
    "prioritized-list-too-many-in-first-subrequest": Case(
        PRIORITIZED,
        claims=[claim(CLAIM0, prioritized(REQ0, request(SUB0, CLASS_B, 500), request(SUB1, CLASS_A, 1)))],
        classes=AB_CLASSES,
        slices=ONE_DEVICE,
        node=node(NODE1),
        expect=[allocation(HERE, result(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEVICE1))],
    ),
    # -- admin access (DRAAdminAccess) ----------------------------------------------
    "admin-access-disabled": Case(
        NONE,
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A)))],
        classes=A_CLASS,
        slices=ONE_DEVICE,
        node=node(NODE1),
        error="claim claim-0, request req-0: admin access is requested, but the feature is disabled",
    ),
    "admin-access-enabled": Case(
        ADMIN,
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A)))],
        classes=A_CLASS,
        slices=ONE_DEVICE,
        allocated={(DRIVER_A, POOL1, DEVICE1)},
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1, adminAccess=True))],
    ),
    "count-devices-some-allocated-admin-access": Case(
        ADMIN,
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A, 2)))],
        classes=A_CLASS,
        slices=TWO_DEVICES,
        allocated={(DRIVER_A, POOL1, DEVICE1)},
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                result(REQ0, DRIVER_A, POOL1, DEVICE1, adminAccess=True),
                result(REQ0, DRIVER_A, POOL1, DEVICE2, adminAccess=True),
            )
        ],
    ),
    "all-devices-some-allocated-admin-access": Case(
        ADMIN,
        claims=[claim(CLAIM0, admin(all_request(REQ0, CLASS_A)))],
        classes=A_CLASS,
        slices=TWO_DEVICES,
        allocated={(DRIVER_A, POOL1, DEVICE1)},
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                result(REQ0, DRIVER_A, POOL1, DEVICE1, adminAccess=True),
                result(REQ0, DRIVER_A, POOL1, DEVICE2, adminAccess=True),
            )
        ],
    ),
    "all-devices-some-allocating-admin-access": Case(
        ADMIN,
        # The second request for "All" cannot have the device the first request of its claim takes.
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A)), admin(all_request(REQ1, CLASS_A)))],
        classes=A_CLASS,
        slices=TWO_DEVICES,
        node=node(NODE1),
        expect=None,
    ),
    "separate-claims-share-device-admin-access": Case(
        ADMIN,
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A))), claim(CLAIM1, admin(request(REQ0, CLASS_A)))],
        classes=A_CLASS,
        slices=TWO_DEVICES,
        node=node(NODE1),
        expect=[
            allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1, adminAccess=True)),
            allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1, adminAccess=True)),
        ],
    ),
    "admin-access-claims-device-allocating-for-non-admin-access": Case(
        ADMIN,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, admin(request(REQ0, CLASS_A)))],
        classes=A_CLASS,
        slices=TWO_DEVICES,
        node=node(NODE1),
        expect=[
            allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1, adminAccess=True)),
        ],
    ),
    # -- device taints (DRADeviceTaints) --------------------------------------------
    "tainted-two-devices": Case(
        TAINTS,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                device(DEVICE2, taints=[TAINT_NO_EXECUTE]),
            )
        ],
        node=node(NODE1),
        expect=None,
    ),
    "tainted-one-device-two-taints": Case(
        TAINTS,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))],
        node=node(NODE1),
        expect=None,
    ),
    "tainted-two-devices-tolerated": Case(
        TAINTS,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, tolerations=[TOLERATION_NO_EXECUTE]))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                device(DEVICE2, taints=[TAINT_NO_EXECUTE]),
            )
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE2, tolerations=[TOLERATION_NO_EXECUTE]))],
    ),
    "tainted-two-devices-prioritized-list-tolerated": Case(
        gates(device_taints=True, prioritized_list=True),
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, request(SUB0, CLASS_A), request(SUB1, CLASS_A, tolerations=[TOLERATION_NO_EXECUTE])),
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                device(DEVICE2, taints=[TAINT_NO_EXECUTE]),
            )
        ],
        node=node(NODE1),
        expect=[
            allocation(HERE, result(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEVICE2, tolerations=[TOLERATION_NO_EXECUTE]))
        ],
    ),
    "tainted-no-effect": Case(
        TAINTS,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NONE]))],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "tainted-disabled": Case(
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "tainted-admin-access": Case(
        gates(device_taints=True, admin_access=True),
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A)))],
        classes=A_CLASS,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        allocated={(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)},
        node=node(NODE1),
        expect=None,
    ),
    "tainted-all-devices-single": Case(
        TAINTS,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        node=node(NODE1),
        expect=None,
    ),
    # -- partitionable devices (DRAPartitionableDevices) ----------------------------
    "partitionable-devices-single-device": Case(
        PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, consumesCounters=consumes(COUNTER_SET1, memory="4Gi")),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi"), count=2),
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "partitionable-devices-multiple-devices": Case(
        PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                from_counters(DEVICE1, COUNTER_SET1, memory="4Gi"),
                from_counters(DEVICE2, COUNTER_SET1, memory="6Gi"),
                from_counters(DEVICE3, COUNTER_SET1, memory="4Gi"),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi"), count=2),
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE3))],
    ),
    "partitionable-devices-no-capacity-available": Case(
        PARTITIONABLE,
        # Upstream's two slices each claim a pool of one slice; here the pool says two, as the counter slice needs.
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                from_counters(DEVICE1, COUNTER_SET1, memory="4Gi"),
                from_counters(DEVICE2, COUNTER_SET1, memory="16Gi"),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi"), count=2),
        ],
        allocated={(DRIVER_A, POOL1, DEVICE2)},
        node=node(NODE1),
        expect=None,
    ),
    "partitionable-devices-disabled-device-consumes-counters": Case(
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, consumesCounters=consumes(COUNTER_SET1, memory="4Gi"))
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi")),
        ],
        node=node(NODE1),
        expect=None,
    ),
    "partitionable-devices-per-device-node-selection-nodename": Case(
        gates(partitionable_devices=True, prioritized_list=True),
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, request(SUB0, CLASS_A, 1, memory("6Gi")), request(SUB1, CLASS_A, 1, memory("4Gi"))),
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                PER_DEVICE,
                POOL1,
                DRIVER_A,
                device(
                    DEVICE1, {"memory": "4Gi"}, consumesCounters=consumes(COUNTER_SET1, memory="4Gi"), nodeName=NODE1
                ),
                device(
                    DEVICE2, {"memory": "6Gi"}, consumesCounters=consumes(COUNTER_SET1, memory="6Gi"), nodeName=NODE2
                ),
                count=2,
            ),
            counter_slice(SLICE2, PER_DEVICE, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi"), count=2),
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEVICE1))],
    ),
    "partitionable-devices-per-device-node-selection-node-selector": Case(
        gates(partitionable_devices=True, prioritized_list=True),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                PER_DEVICE,
                POOL1,
                DRIVER_A,
                device(
                    DEVICE1,
                    {"memory": "4Gi"},
                    consumesCounters=consumes(COUNTER_SET1, memory="4Gi"),
                    nodeSelector={
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "region", "operator": "In", "values": [REGION1]}]}
                        ]
                    },
                ),
                count=2,
            ),
            counter_slice(SLICE2, PER_DEVICE, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi"), count=2),
        ],
        node=node(NODE1),
        expect=[
            allocation(
                {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "region", "operator": "In", "values": [REGION1]}]}
                    ]
                },
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
            )
        ],
    ),
    "partitionable-devices-prioritized-list": Case(
        gates(partitionable_devices=True, prioritized_list=True),
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A),
                prioritized(REQ1, request(SUB0, CLASS_A, 1, memory("6Gi")), request(SUB1, CLASS_A, 1, memory("4Gi"))),
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                from_counters(DEVICE1, COUNTER_SET1, memory="4Gi"),
                from_counters(DEVICE2, COUNTER_SET1, memory="6Gi"),
                from_counters(DEVICE3, COUNTER_SET1, memory="4Gi"),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi"), count=2),
        ],
        node=node(NODE1),
        expect=[
            allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, DEVICE3))
        ],
    ),
    "partitionable-devices-multiple-pools": Case(
        PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                from_counters(DEVICE1, COUNTER_SET1, cpus="6", memory="4Gi"),
                from_counters(DEVICE2, COUNTER_SET1, cpus="4", memory="6Gi"),
                from_counters(DEVICE3, COUNTER_SET1, cpus="4", memory="4Gi"),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, cpus="8", memory="18Gi"), count=2),
            slice_(
                SLICE3,
                NODE1,
                POOL2,
                DRIVER_A,
                from_counters(DEVICE1, COUNTER_SET1, cpus="6", memory="4Gi"),
                from_counters(DEVICE2, COUNTER_SET1, cpus="1", memory="7Gi"),
                from_counters(DEVICE3, COUNTER_SET1, cpus="1", memory="7Gi"),
                count=2,
            ),
            counter_slice(SLICE4, NODE1, POOL2, DRIVER_A, counter_set(COUNTER_SET1, cpus="8", memory="18Gi"), count=2),
        ],
        allocated={(DRIVER_A, POOL1, DEVICE2), (DRIVER_A, POOL1, DEVICE3), (DRIVER_A, POOL2, DEVICE1)},
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL2, DEVICE2), result(REQ1, DRIVER_A, POOL2, DEVICE3))],
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": Case(
        PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, consumesCounters=consumes(COUNTER_SET2)), count=2),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1), count=2),
        ],
        node=node(NODE1),
        error="invalid resource pools were encountered",
    ),
    "partitionable-devices-same-counter-set-name-in-different-resource-slices": Case(
        PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), count=4),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1), count=4),
            slice_(SLICE3, NODE1, POOL1, DRIVER_A, device(DEVICE2), count=4),
            counter_slice(SLICE4, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1), count=4),
        ],
        node=node(NODE1),
        error="invalid resource pools were encountered",
    ),
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": Case(
        gates(partitionable_devices=True, prioritized_list=True),
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, request(SUB0, CLASS_A, 1, memory("6Gi")), request(SUB1, CLASS_A, 1, memory("2Gi"))),
            )
        ],
        classes=A_CLASS,
        slices=[
            counter_slice(SLICE1, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi"), count=3),
            slice_(
                SLICE2,
                NODE1,
                POOL1,
                DRIVER_A,
                from_counters(DEVICE1, COUNTER_SET1, memory="6Gi"),
                from_counters(DEVICE2, COUNTER_SET1, memory="2Gi"),
                count=3,
            ),
            slice_(
                SLICE3,
                NODE2,
                POOL1,
                DRIVER_A,
                device(DEVICE3, consumesCounters=consumes(COUNTER_SET1, memory="6Gi")),
                count=3,
            ),
        ],
        allocated={(DRIVER_A, POOL1, DEVICE3)},
        node=node(NODE1),
        expect=[allocation(HERE, result(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEVICE2))],
    ),
    "partitionable-devices-taint-releases-counter": Case(
        gates(partitionable_devices=True, device_taints=True),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, taints=[TAINT_NO_SCHEDULE], consumesCounters=consumes(COUNTER_SET1, c="1")),
                device(DEVICE2, consumesCounters=consumes(COUNTER_SET1, c="1")),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, c="1"), count=2),
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE2))],
    ),
    "all-devices-with-consumed-counters": Case(
        PARTITIONABLE,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, consumesCounters=consumes(COUNTER_SET1, memory="4Gi")),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi"), count=2),
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "partitionable-all-mode-constraint-must-error-with-reserved-counter": Case(
        PARTITIONABLE,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A), constraints=[{"matchAttribute": f"{DRIVER_A}/numa"}])],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"numa": {"int": 1}}),
                device(DEVICE2, None, {"numa": {"int": 2}}, consumesCounters=consumes(COUNTER_SET1, c="1")),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, c="1"), count=2),
        ],
        node=node(NODE1),
        error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied",
    ),
    # -- consumable capacity (DRAConsumableCapacity) --------------------------------
    # Upstream's classWithAllowMultipleAllocations(..., true) also selects on
    # device.allowMultipleAllocations; every device of these cases matches it, so class-a is used.
    "consumable-capacity-disabled-feature": Case(
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("1")))],
        classes=A_CLASS,
        slices=ONE_DEVICE,
        node=node(NODE1),
        error="claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled",
    ),
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": Case(
        CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("1")))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY1: "1"}, allowMultipleAllocations=True))
        ],
        node=node(NODE1),
        expect=None,
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": Case(
        CONSUMABLE,
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("1"))),
            claim(CLAIM1, request(REQ0, CLASS_A, capacity=capacity_request("1"))),
        ],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: "2"}, allowMultipleAllocations=True))
        ],
        node=node(NODE1),
        expect=[
            allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"})),
            allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"})),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": Case(
        CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: "2"}, allowMultipleAllocations=True))
        ],
        node=node(NODE1),
        expect=None,
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": Case(
        CONSUMABLE,
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("1"))),
            claim(CLAIM1, request(REQ0, CLASS_A, capacity=capacity_request("1"))),
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                {"name": DEVICE1, "basic": {"allowMultipleAllocations": True, "capacity": range_policy("4")}},
            )
        ],
        node=node(NODE1),
        expect=[
            allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})),
            allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": Case(
        CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("3")))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                {"name": DEVICE1, "basic": {"allowMultipleAllocations": True, "capacity": range_policy("4")}},
            )
        ],
        node=node(NODE1),
        expect=[allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "4"}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": Case(
        CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("2")))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                {
                    "name": DEVICE1,
                    "basic": {
                        "allowMultipleAllocations": True,
                        "capacity": {
                            CAPACITY0: {"value": "3", "requestPolicy": {"default": "1", "validValues": ["1", "3"]}}
                        },
                    },
                },
            )
        ],
        node=node(NODE1),
        expect=[allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "3"}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": Case(
        CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("2")))],
        allocated_capacity={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: Fraction(2)}},
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                {"name": DEVICE1, "basic": {"allowMultipleAllocations": True, "capacity": range_policy("4")}},
            )
        ],
        node=node(NODE1),
        expect=[allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": Case(
        CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("2")))],
        allocated_capacity={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: Fraction(2)}},
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                {"name": DEVICE1, "basic": {"allowMultipleAllocations": True, "capacity": range_policy("2")}},
                {"name": DEVICE2, "basic": {"allowMultipleAllocations": True, "capacity": range_policy("2")}},
            )
        ],
        node=node(NODE1),
        expect=[allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "2"}))],
    ),
    "consumable-capacity-negative-request-aborts": Case(
        CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("-5")))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: "10"}, allowMultipleAllocations=True))
        ],
        node=node(NODE1),
        error="negative",
    ),
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": Case(
        CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("1")))],
        classes=A_CLASS,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: "1"}))],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "with-distinct-constraints": Case(
        CONSUMABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A),
                request(REQ1, CLASS_A),
                request(REQ2, CLASS_A),
                request(REQ3, CLASS_A),
                constraints=[
                    {"distinctAttribute": f"{DRIVER_A}/boolAttribute", "requests": [REQ0, REQ1]},
                    {"distinctAttribute": VERSION, "requests": [REQ0, REQ1, REQ2]},
                    {"distinctAttribute": f"{DRIVER_A}/numa", "requests": [REQ0, REQ1, REQ2, REQ3]},
                ],
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                *(
                    device(
                        name,
                        None,
                        {"driverVersion": {"version": version}, "numa": {"int": numa}, "boolAttribute": {"bool": flag}},
                        allowMultipleAllocations=True,
                    )
                    for name, version, numa, flag in (
                        (DEVICE1, "1.0.0", 0, True),
                        (DEVICE2, "1.0.1", 1, False),
                        (DEVICE3, "1.0.2", 2, True),
                        (DEVICE4, "1.0.0", 3, True),
                    )
                ),
            )
        ],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                shared(REQ0, DRIVER_A, POOL1, DEVICE1),
                shared(REQ1, DRIVER_A, POOL1, DEVICE2),
                shared(REQ2, DRIVER_A, POOL1, DEVICE3),
                shared(REQ3, DRIVER_A, POOL1, DEVICE4),
            )
        ],
    ),
    "distinct-constraint-single-request-count-3-not-distinct": Case(
        CONSUMABLE,
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A, 3), constraints=[{"distinctAttribute": f"{DRIVER_A}/stringAttribute"}])
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"string": "value1"}}),
                device(DEVICE2, None, {"stringAttribute": {"string": "value2"}}),
                device(DEVICE3, None, {"stringAttribute": {"string": "value1"}}),
            )
        ],
        node=node(NODE1),
        expect=None,
    ),
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": Case(
        CONSUMABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, capacity=capacity_request("2")),
                request(REQ1, CLASS_A, capacity=capacity_request("2")),
                constraints=[{"distinctAttribute": f"{DRIVER_A}/stringAttribute"}],
            )
        ],
        classes=A_CLASS,
        # Upstream names both slices slice-1; the second is slice-2 here (names are unique in an API server).
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                {
                    "name": DEVICE1,
                    "basic": {
                        "attributes": {"stringAttribute": {"string": "stringAttributeValue1"}},
                        "allowMultipleAllocations": True,
                        "capacity": range_policy("4"),
                    },
                },
                count=2,
            ),
            slice_(
                SLICE2,
                NODE1,
                POOL1,
                DRIVER_A,
                {
                    "name": DEVICE2,
                    "basic": {
                        "attributes": {"stringAttribute": {"string": "stringAttributeValue2"}},
                        "allowMultipleAllocations": True,
                        "capacity": range_policy("4"),
                    },
                },
                count=2,
            ),
        ],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}),
                shared(REQ1, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "2"}),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": Case(
        CONSUMABLE,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, capacity=capacity_request("2")))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {CAPACITY0: "2"}, allowMultipleAllocations=True),
                device(DEVICE2, {CAPACITY0: "1"}, allowMultipleAllocations=True),
            )
        ],
        node=node(NODE1),
        expect=[allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": Case(
        # device-1's capacity is used up but it still matches: "All" fails rather than take device-2 alone.
        CONSUMABLE,
        allocated_capacity={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: Fraction(1)}},
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, capacity=capacity_request("1")))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {CAPACITY0: "1"}, allowMultipleAllocations=True),
                device(DEVICE2, {CAPACITY0: "1"}, allowMultipleAllocations=True),
            )
        ],
        node=node(NODE1),
        expect=None,
    ),
    "consumable-capacity-multi-allocatable-device-with-subrequest": Case(
        gates(consumable_capacity=True, prioritized_list=True),
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    request(SUB0, CLASS_A, capacity=capacity_request("4")),
                    request(SUB1, CLASS_A, capacity=capacity_request("2")),
                    request(SUB1, CLASS_A),
                ),
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                {"name": DEVICE1, "basic": {"allowMultipleAllocations": True, "capacity": range_policy("2")}},
            )
        ],
        node=node(NODE1),
        expect=[allocation(HERE, shared(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))],
    ),
    "consumable-capacity-with-multi-allocatable-device-backtrack": Case(
        CONSUMABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, capacity=capacity_request("2")),
                request(REQ1, CLASS_A, capacity=capacity_request("2")),
                constraints=[{"matchAttribute": f"{DRIVER_A}/stringAttribute"}],
            ),
            claim(CLAIM1, request(REQ0, CLASS_A, capacity=capacity_request("2"))),
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                {
                    "name": DEVICE2,
                    "basic": {
                        "attributes": {"stringAttribute": {"string": "stringAttributeValue1"}},
                        "allowMultipleAllocations": True,
                        "capacity": range_policy("2"),
                    },
                },
                {
                    "name": DEVICE1,
                    "basic": {
                        "attributes": {"stringAttribute": {"string": "stringAttributeValue2"}},
                        "allowMultipleAllocations": True,
                        "capacity": range_policy("4"),
                    },
                },
            )
        ],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                shared(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}),
                shared(REQ1, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}),
            ),
            allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "2"})),
        ],
    ),
    "allow-multiple-allocations-with-partitionable-device": Case(
        gates(prioritized_list=True, partitionable_devices=True, consumable_capacity=True),
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A),
                prioritized(REQ1, request(SUB0, CLASS_A, 1, memory("6Gi")), request(SUB1, CLASS_A, 1, memory("4Gi"))),
            )
        ],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                *(
                    multi(from_counters(name, COUNTER_SET1, memory=size))
                    for name, size in ((DEVICE1, "4Gi"), (DEVICE2, "6Gi"), (DEVICE3, "4Gi"))
                ),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi"), count=2),
        ],
        node=node(NODE1),
        expect=[
            allocation(
                HERE,
                shared(REQ0, DRIVER_A, POOL1, DEVICE1, {"memory": "4Gi"}),
                shared(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, DEVICE3, {"memory": "4Gi"}),
            )
        ],
    ),
    "partitionable-consumable-capacity-shared-device-counter-not-recharged": Case(
        gates(partitionable_devices=True, consumable_capacity=True),
        shared={(DRIVER_A, POOL1, DEVICE1)},
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, allowMultipleAllocations=True, consumesCounters=consumes(COUNTER_SET1, c="1")),
                count=2,
            ),
            counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, c="1"), count=2),
        ],
        node=node(NODE1),
        expect=[allocation(HERE, shared(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": Case(
        CONSUMABLE,
        allocated={(DRIVER_A, POOL1, DEVICE1)},
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity_request("1")))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                {"name": DEVICE1, "basic": {"allowMultipleAllocations": True, "capacity": range_policy("2")}},
            )
        ],
        node=node(NODE1),
        expect=None,
    ),
    # -- smaller 1.33-1.37 behaviour -------------------------------------------------
    "exact-count-sum-exceeds-claim-limit": Case(
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 20), request(REQ1, CLASS_A, 20))],
        classes=A_CLASS,
        error="claim claim-0, request req-1: adding 20 devices exceeds the claim limit of 32, with 20 already accounted for",
    ),
    "multi-host-resource-pool-with-stale-slice-for-current-node": Case(
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), count=2),
            generation(slice_(SLICE2, NODE2, POOL1, DRIVER_A, device(DEVICE2), count=2), 2),
        ],
        node=node(NODE1),
        expect=None,
    ),
    "different-resourceslices-in-pool-can-target-different-nodes": Case(
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE2, POOL1, DRIVER_A, device(DEVICE1), count=2),
            slice_(SLICE2, NODE1, POOL1, DRIVER_A, device(DEVICE2), count=2),
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE2))],
    ),
    "node-restriction": Case(
        gates(binding_conditions=True),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(
                SLICE1,
                {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "planet", "operator": "In", "values": ["earth"]}]}
                    ]
                },
                POOL1,
                DRIVER_A,
                device(DEVICE1, bindsToNode=True),
            )
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "all-devices-slice-without-devices": Case(
        NONE,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1),
        expect=None,
    ),
    "all-devices-no-slices": Case(
        NONE,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=A_CLASS,
        node=node(NODE1),
        expect=None,
    ),
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": Case(
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), count=2),
            slice_(SLICE2, NODE1, POOL1, DRIVER_A, device(DEVICE1), count=2),
            slice_(SLICE3, NODE1, POOL2, DRIVER_A, device(DEVICE2)),
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL2, DEVICE2))],
    ),
    "invalid-pool-is-error-if-no-other-device-can-be-allocated": Case(
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), count=2),
            slice_(SLICE2, NODE1, POOL1, DRIVER_A, device(DEVICE1), count=2),
            slice_(SLICE3, NODE1, POOL2, DRIVER_A, device(DEVICE2)),
        ],
        allocated={(DRIVER_A, POOL2, DEVICE2)},
        node=node(NODE1),
        error="invalid resource pools were encountered",
    ),
    "no-allocation-from-incomplete-pools": Case(
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), count=2)],
        node=node(NODE1),
        expect=None,
    ),
    "pools-sorted-by-id": Case(
        # Not an upstream case: GatherPools sorts by driver, then pool name (1.36), whatever the slice order.
        NONE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=A_CLASS,
        slices=[
            slice_(SLICE1, NODE1, POOL2, DRIVER_A, device(DEVICE1)),
            slice_(SLICE2, NODE1, POOL1, DRIVER_A, device(DEVICE2)),
        ],
        node=node(NODE1),
        expect=[allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE2))],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_allocator_1_37(name: str) -> None:
    case = CASES[name]
    inputs = copy.deepcopy((case.claims, case.classes, case.slices))
    allocator = Allocator(
        case.claims,
        frozenset(case.allocated),
        case.classes,
        case.slices,
        features=case.features,
        shared_devices=frozenset(case.shared | set(case.allocated_capacity)),
        allocated_capacity=case.allocated_capacity,
        new_share_id=lambda: SHARE_ID,
    )
    if case.error is not None:
        with pytest.raises(AllocationError) as err:
            allocator.allocate(case.node)
        assert case.error in str(err.value)
        return
    got = allocator.allocate(case.node)
    assert normalize(got) == normalize(case.expect)
    assert (case.claims, case.classes, case.slices) == inputs


def test_device_taint_rules_are_merged_in() -> None:
    """A DeviceTaintRule's taint, given by the caller per device, keeps the device out like a slice taint."""
    rule_taint = {(DRIVER_A, POOL1, DEVICE1): [TAINT_NO_EXECUTE]}
    allocator = Allocator(
        [claim(CLAIM0, request(REQ0, CLASS_A))],
        frozenset(),
        A_CLASS,
        TWO_DEVICES,
        features=TAINTS,
        device_taints=rule_taint,
    )
    got = allocator.allocate(node(NODE1))
    assert normalize(got) == normalize([allocation(HERE, result(REQ0, DRIVER_A, POOL1, DEVICE2))])


def test_binding_conditions_in_results_and_pools_last() -> None:
    """Incubating results carry the device's binding conditions; a pool with them is tried after the others."""
    features = gates(binding_conditions=True)
    slices = [
        slice_(
            SLICE1,
            NODE1,
            POOL1,
            DRIVER_A,
            device(DEVICE1, bindingConditions=["ready"], bindingFailureConditions=["failed"]),
        ),
        slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2)),
    ]
    got = Allocator(
        [claim(CLAIM0, request(REQ0, CLASS_A, 2))], frozenset(), A_CLASS, slices, features=features
    ).allocate(node(NODE1))
    assert got is not None
    assert got[0]["devices"]["results"] == [
        result(REQ0, DRIVER_A, POOL2, DEVICE2),
        result(REQ0, DRIVER_A, POOL1, DEVICE1, bindingConditions=["ready"], bindingFailureConditions=["failed"]),
    ]
    # Without the gate such a device is never picked.
    assert (
        Allocator([claim(CLAIM0, request(REQ0, CLASS_A, 2))], frozenset(), A_CLASS, slices, features=NONE).allocate(
            node(NODE1)
        )
        is None
    )


def test_allocated_state_from_results() -> None:
    """What the scheduler feeds the allocator: admin access holds nothing, shares add up their capacity."""
    state = AllocatedState()
    state.add(
        {
            "devices": {
                "results": [
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(REQ1, DRIVER_A, POOL1, DEVICE2, adminAccess=True),
                ]
            }
        }
    )
    state.add({"devices": {"results": [shared(REQ0, DRIVER_A, POOL1, DEVICE3, {CAPACITY0: "1"})]}})
    state.add({"devices": {"results": [shared(REQ0, DRIVER_A, POOL1, DEVICE3, {CAPACITY0: "500m"})]}})
    assert state.devices == {(DRIVER_A, POOL1, DEVICE1)}
    assert state.shared_devices == {(DRIVER_A, POOL1, DEVICE3)}
    assert state.capacity == {(DRIVER_A, POOL1, DEVICE3): {CAPACITY0: Fraction(3, 2)}}


@pytest.mark.parametrize(
    ("release", "overrides", "expected"),
    [
        ("1.31", {}, Features()),
        (
            RELEASE_1_37,
            {},
            Features(
                prioritized_list=True,
                device_taints=True,
                partitionable_devices=True,
                consumable_capacity=True,
                binding_conditions=True,
                kube_1_37=True,
            ),
        ),
        (
            RELEASE_1_37,
            {"DRAPartitionableDevices": False, "DRAConsumableCapacity": False},
            Features(prioritized_list=True, device_taints=True, binding_conditions=True, kube_1_37=True),
        ),
    ],
)
def test_features_from_gates(release: str, overrides: dict[str, bool], expected: Features) -> None:
    gate_set = FeatureGates.from_map(overrides, release=release)
    if release == "1.31":
        expected = Features(admin_access=gate_set.dra_admin_access)
    assert Features.from_gates(gate_set) == expected


def test_gather_pools_1_37() -> None:
    """``GatherPools`` of 1.37: sorted by ID, counter slices split off, multi-host pools, incomplete kept, obsolete dropped."""
    slices = [
        slice_(SLICE4, NODE1, "pool-b", DRIVER_B, device(DEVICE1)),
        slice_(
            SLICE1, NODE1, POOL2, DRIVER_A, device(DEVICE1, consumesCounters=consumes(COUNTER_SET1, c="1")), count=3
        ),
        counter_slice(SLICE2, NODE1, POOL2, DRIVER_A, counter_set(COUNTER_SET1, c="2"), count=3),
        slice_(
            SLICE3, NODE2, POOL2, DRIVER_A, device(DEVICE2, consumesCounters=consumes(COUNTER_SET1, c="1")), count=3
        ),
        slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), count=2),  # the other slice is missing
        slice_(SLICE1, NODE1, "pool-old", DRIVER_A, device(DEVICE1), count=2),
        generation(slice_(SLICE2, NODE2, "pool-old", DRIVER_A, device(DEVICE2), count=2), 2),  # newer elsewhere
    ]
    pools = gather_pools(slices, node(NODE1), PoolMode(kube_1_37=True, partitionable_devices=True))
    assert [(p.driver, p.name, p.is_incomplete, p.is_invalid) for p in pools] == [
        (DRIVER_A, POOL1, True, False),
        (DRIVER_A, POOL2, False, False),
        (DRIVER_B, "pool-b", False, False),
    ]
    multi_host = pools[1]
    assert [s["metadata"]["name"] for s in multi_host.slices] == [SLICE1]
    assert [s["metadata"]["name"] for s in multi_host.slices_elsewhere] == [SLICE3]
    assert multi_host.counter_sets == {COUNTER_SET1: {"c": {"value": "2"}}}
    # 1.31 keeps the slices' order and uses what the node sees.
    assert [(p.driver, p.name) for p in gather_pools(slices, node(NODE1))] == [
        (DRIVER_B, "pool-b"),
        (DRIVER_A, POOL2),
        (DRIVER_A, POOL1),
        (DRIVER_A, "pool-old"),
    ]
