"""Kubernetes 1.37's gated fields on hub objects: each gate by create/update, dropped or kept.

Which field each gate guards, and what "in use" means for keeping it on
update, is read from k8s.io/kubernetes@v1.37.2 pkg/registry/resource/*/strategy.go
(``dropDisabledFields``) and pkg/api/resourceclaimspec/util.go. Objects are in
the hub layout (docs/decisions/api-versions.md): a request's ``exactly``
fields flat in the request, a device's fields under ``basic``.

A gate that 1.37 locks on (DRAPrioritizedList, DRAAdminAccess,
DRAResourceClaimDeviceStatus, DRAExtendedResource) cannot be turned off at
1.37; its "off" cases run at release 1.31, where it is pre-alpha and off.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from services.api.admission.gated_fields import drop_disabled_fields
from services.api.types import registry
from services.kube.feature_gates import FeatureGates

Obj = dict[str, Any]
Path = tuple[str | int, ...]


def resource_kind(kind: str) -> registry.ResourceType:
    rt = registry.by_kind("resource.k8s.io", kind)
    assert rt is not None
    return rt


CLAIM = resource_kind("ResourceClaim")
TEMPLATE = resource_kind("ResourceClaimTemplate")
CLASS = resource_kind("DeviceClass")
SLICE = resource_kind("ResourceSlice")

AT_1_37 = FeatureGates(release="1.37")
AT_1_31 = FeatureGates(release="1.31")  # the seeds' release, --emulated-version=1.31
REQ: Path = ("spec", "devices", "requests", 0)
RESULT: Path = ("status", "allocation", "devices", "results", 0)
DEVICE: Path = ("spec", "devices", 0, "basic")
SUB = {"name": "a", "deviceClassName": "gpu.example.com"}


def claim(request: Obj | None = None, *, status: Obj | None = None, **devices: Any) -> Obj:
    req = request if request is not None else {"name": "gpu", "deviceClassName": "gpu.example.com"}
    obj: Obj = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": [req], **devices}}}
    if status is not None:
        obj["status"] = status
    return obj


def allocated(*, devices: list[Obj] | None = None, **result: Any) -> Obj:
    status: Obj = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": "d", **result}]
            }
        }
    }
    if devices is not None:
        status["devices"] = devices
    return claim(status=status)


def template(request: Obj) -> Obj:
    return {
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


def slice_with(device: Obj | None = None, **spec: Any) -> Obj:
    basic = {"attributes": {}, "capacity": {"memory": {"value": "80Gi"}}, **(device or {})}
    return {
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "worker-1",
            "devices": [{"name": "gpu-0", "basic": basic}],
            **spec,
        },
    }


def device_class(**spec: Any) -> Obj:
    return {"metadata": {"name": "gpu.example.com"}, "spec": {"selectors": [], **spec}}


@dataclass(frozen=True)
class Case:
    gate: str
    rt: registry.ResourceType
    obj: Obj
    paths: tuple[Path, ...]
    off: FeatureGates

    @property
    def id(self) -> str:
        return f"{self.gate}-{self.rt.kind}-{'.'.join(str(p) for p in self.paths[0][-2:])}"


def off_1_37(flag: str) -> FeatureGates:
    return FeatureGates.parse(flag, release="1.37")


TAINTS_OFF = off_1_37("DRADeviceTaints=false,DRADeviceTaintRules=false")
CAPACITY_OFF = off_1_37("DRAConsumableCapacity=false")
BINDING_OFF = off_1_37("DRADeviceBindingConditions=false")
PARTITION_OFF = off_1_37("DRAPartitionableDevices=false")

CASES = [
    Case(
        "DRAPrioritizedList",
        CLAIM,
        claim({"name": "gpu", "firstAvailable": [SUB]}),
        ((*REQ, "firstAvailable"),),
        AT_1_31,
    ),
    Case(
        "DRAPrioritizedList",
        TEMPLATE,
        template({"name": "gpu", "firstAvailable": [SUB]}),
        (("spec", "spec", "devices", "requests", 0, "firstAvailable"),),
        AT_1_31,
    ),
    Case(
        "DRADeviceTaints",
        CLAIM,
        claim({"name": "gpu", "deviceClassName": "gpu.example.com", "tolerations": [{"operator": "Exists"}]}),
        ((*REQ, "tolerations"),),
        TAINTS_OFF,
    ),
    Case(
        "DRADeviceTaints",
        CLAIM,
        claim({"name": "gpu", "firstAvailable": [dict(SUB, tolerations=[{"operator": "Exists"}])]}),
        ((*REQ, "firstAvailable", 0, "tolerations"),),
        TAINTS_OFF,
    ),
    Case(
        "DRADeviceTaints",
        SLICE,
        slice_with({"taints": [{"key": "k", "effect": "NoSchedule"}]}),
        ((*DEVICE, "taints"),),
        TAINTS_OFF,
    ),
    Case(
        "DRAAdminAccess",
        CLAIM,
        claim({"name": "gpu", "deviceClassName": "gpu.example.com", "adminAccess": True}),
        ((*REQ, "adminAccess"),),
        AT_1_31,
    ),
    Case(
        "DRAAdminAccess",
        TEMPLATE,
        template({"name": "gpu", "deviceClassName": "gpu.example.com", "adminAccess": False}),
        (("spec", "spec", "devices", "requests", 0, "adminAccess"),),
        AT_1_31,
    ),
    Case("DRAAdminAccess", CLAIM, allocated(adminAccess=True), ((*RESULT, "adminAccess"),), AT_1_31),
    Case(
        "DRAConsumableCapacity",
        CLAIM,
        claim(
            {"name": "gpu", "deviceClassName": "gpu.example.com", "capacity": {"requests": {"memory": "1Gi"}}},
            constraints=[{"requests": ["gpu"], "distinctAttribute": "gpu.example.com/uuid"}],
        ),
        ((*REQ, "capacity"), ("spec", "devices", "constraints", 0, "distinctAttribute")),
        CAPACITY_OFF,
    ),
    Case(
        "DRAConsumableCapacity",
        CLAIM,
        claim({"name": "gpu", "firstAvailable": [dict(SUB, capacity={"requests": {"memory": "1Gi"}})]}),
        ((*REQ, "firstAvailable", 0, "capacity"),),
        CAPACITY_OFF,
    ),
    Case(
        "DRAConsumableCapacity",
        CLAIM,
        allocated(
            shareID="7b2b4e0c-4d7f-4a4c-9b3e-2f1d3c4b5a69",
            consumedCapacity={"memory": "1Gi"},
            devices=[{"driver": "gpu.example.com", "pool": "p", "device": "d", "shareID": "x"}],
        ),
        ((*RESULT, "shareID"), (*RESULT, "consumedCapacity"), ("status", "devices", 0, "shareID")),
        CAPACITY_OFF,
    ),
    Case(
        "DRAConsumableCapacity",
        SLICE,
        slice_with({"allowMultipleAllocations": True}),
        ((*DEVICE, "allowMultipleAllocations"),),
        CAPACITY_OFF,
    ),
    Case(
        "DRAConsumableCapacity",
        SLICE,
        slice_with({"capacity": {"memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi"}}}}),
        ((*DEVICE, "capacity", "memory", "requestPolicy"),),
        CAPACITY_OFF,
    ),
    Case(
        "DRAResourceClaimDeviceStatus",
        CLAIM,
        claim(status={"devices": [{"driver": "gpu.example.com", "pool": "p", "device": "d"}]}),
        (("status", "devices"),),
        AT_1_31,
    ),
    Case(
        "DRADeviceBindingConditions",
        CLAIM,
        allocated(bindingConditions=["ready"], bindingFailureConditions=["failed"]),
        ((*RESULT, "bindingConditions"), (*RESULT, "bindingFailureConditions")),
        BINDING_OFF,
    ),
    Case(
        "DRADeviceBindingConditions",
        SLICE,
        slice_with({"bindingConditions": ["ready"], "bindingFailureConditions": ["failed"], "bindsToNode": True}),
        ((*DEVICE, "bindingConditions"), (*DEVICE, "bindingFailureConditions"), (*DEVICE, "bindsToNode")),
        BINDING_OFF,
    ),
    Case(
        "DRAPartitionableDevices",
        SLICE,
        slice_with(sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]),
        (("spec", "sharedCounters"),),
        PARTITION_OFF,
    ),
    Case(
        "DRAPartitionableDevices",
        SLICE,
        slice_with({"consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}]}),
        ((*DEVICE, "consumesCounters"),),
        PARTITION_OFF,
    ),
    Case(
        "DRAPartitionableDevices",
        SLICE,
        slice_with({"nodeName": "worker-1"}, perDeviceNodeSelection=True),
        (("spec", "perDeviceNodeSelection"), (*DEVICE, "nodeName")),
        PARTITION_OFF,
    ),
    Case(
        "DRAExtendedResource",
        CLASS,
        device_class(extendedResourceName="example.com/gpu"),
        (("spec", "extendedResourceName"),),
        AT_1_31,
    ),
]
IDS = [c.id for c in CASES]


def without(obj: Obj, paths: tuple[Path, ...]) -> Obj:
    out = copy.deepcopy(obj)
    for path in paths:
        parent: Any = out
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
    return out


def dropped(case: Case, new: Obj, old: Obj | None, gates: FeatureGates) -> Obj:
    out = copy.deepcopy(new)
    drop_disabled_fields(case.rt, out, copy.deepcopy(old) if old is not None else None, gates)
    return out


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gate_off_drops_on_create(case: Case) -> None:
    assert not case.off.enabled(case.gate)
    assert dropped(case, case.obj, None, case.off) == without(case.obj, case.paths)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gate_off_keeps_on_update_when_old_uses_it(case: Case) -> None:
    assert dropped(case, case.obj, case.obj, case.off) == case.obj


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gate_off_drops_on_update_when_old_does_not_use_it(case: Case) -> None:
    old = without(case.obj, case.paths)
    assert dropped(case, case.obj, old, case.off) == old


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gate_on_keeps_on_create_and_update(case: Case) -> None:
    assert AT_1_37.enabled(case.gate)
    assert dropped(case, case.obj, None, AT_1_37) == case.obj
    assert dropped(case, case.obj, without(case.obj, case.paths), AT_1_37) == case.obj


def test_binding_conditions_of_slices_need_device_status_too() -> None:
    """Slices keep binding fields only with DRADeviceBindingConditions *and* DRAResourceClaimDeviceStatus on."""
    case = next(c for c in CASES if c.gate == "DRADeviceBindingConditions" and c.rt is SLICE)
    # 1.37 locks DRAResourceClaimDeviceStatus on, so the flag parser refuses this set; the constructor
    # does not check locks, which isolates the rule.
    gates = FeatureGates({"DRAResourceClaimDeviceStatus": False}, release="1.37")
    assert gates.enabled("DRADeviceBindingConditions")
    assert dropped(case, case.obj, None, gates) == without(case.obj, case.paths)


def test_default_gates_leave_1_31_objects_alone() -> None:
    """A 1.31-shaped claim and slice keep every field under the 1.31 gates (--emulated-version=1.31)."""
    plain_claim = claim()
    plain_slice = slice_with()
    assert dropped(CASES[0], plain_claim, None, AT_1_31) == plain_claim
    assert dropped(Case("", SLICE, plain_slice, ((),), AT_1_31), plain_slice, None, AT_1_31) == plain_slice
