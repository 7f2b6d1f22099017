"""The claim status strategy drops ``status.devices`` of deallocated devices (1.37's dropDeallocatedStatusDevices).

Cases from k8s.io/kubernetes@v1.37.2 pkg/registry/resource/resourceclaim/strategy.go:
an entry goes when the old claim had its (driver, pool, device, shareID)
allocated and the new one does not; entries of devices still allocated, or
never allocated, stay; an empty list becomes absent. With
DRAResourceClaimDeviceStatus off (release 1.31) and no device status in use,
nothing is touched.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from services.api.admission.deallocated_devices import drop_deallocated_status_devices
from services.kube.feature_gates import FeatureGates

Obj = dict[str, Any]


def result(device: str, share: str | None = None) -> Obj:
    r: Obj = {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": device}
    return r if share is None else {**r, "shareID": share}


def entry(device: str, share: str | None = None) -> Obj:
    e: Obj = {"driver": "gpu.example.com", "pool": "node-1", "device": device, "conditions": []}
    return e if share is None else {**e, "shareID": share}


def claim(results: list[Obj] | None, devices: list[Obj] | None) -> Obj:
    status: Obj = {}
    if results is not None:
        status["allocation"] = {"devices": {"results": results}}
    if devices is not None:
        status["devices"] = devices
    return {"metadata": {"name": "c", "namespace": "ns"}, "status": status}


@dataclass(frozen=True)
class Case:
    name: str
    old: Obj
    new: Obj
    want: list[Obj] | None  # status.devices afterwards; None: absent
    release: str = "1.37"


CASES = [
    Case(
        "deallocated: the entry goes", claim([result("gpu-0")], [entry("gpu-0")]), claim(None, [entry("gpu-0")]), None
    ),
    Case(
        "still allocated: kept",
        claim([result("gpu-0")], [entry("gpu-0")]),
        claim([result("gpu-0")], [entry("gpu-0")]),
        [entry("gpu-0")],
    ),
    Case(
        "one of two deallocated",
        claim([result("gpu-0"), result("gpu-1")], [entry("gpu-0"), entry("gpu-1")]),
        claim([result("gpu-1")], [entry("gpu-0"), entry("gpu-1")]),
        [entry("gpu-1")],
    ),
    Case(
        "a share is its own device",
        claim([result("gpu-0", "a")], [entry("gpu-0", "a"), entry("gpu-0", "b")]),
        claim(None, [entry("gpu-0", "a"), entry("gpu-0", "b")]),
        [entry("gpu-0", "b")],
    ),
    Case(
        "never allocated: kept for validation to judge",
        claim(None, None),
        claim(None, [entry("gpu-3")]),
        [entry("gpu-3")],
    ),
    Case("no device status: nothing to do", claim([result("gpu-0")], None), claim(None, None), None),
    Case(
        "gate off and not in use: untouched",
        claim([result("gpu-0")], None),
        claim(None, [entry("gpu-0")]),
        [entry("gpu-0")],
        release="1.31",
    ),
    Case(
        "gate off but in use: dropped",
        claim([result("gpu-0")], [entry("gpu-0")]),
        claim(None, [entry("gpu-0")]),
        None,
        release="1.31",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_drop_deallocated_status_devices(case: Case) -> None:
    new = copy.deepcopy(case.new)
    drop_deallocated_status_devices(new, copy.deepcopy(case.old), FeatureGates(release=case.release))
    assert new["status"].get("devices") == case.want
