"""``taint``: a node whose free devices carry a taint the request does not tolerate (DRADeviceTaints, 1.37).

The allocator skips such a device (NoSchedule or NoExecute, from the slice or
a DeviceTaintRule); the diagnosis says so instead of "the claims do not fit
at once". A ``None`` taint, a tolerated one, or the 1.31 allocator (no
taints) leave the node fitting.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.kube.feature_gates import FeatureGates
from services.kube.structured import SliceIndex
from services.kube.structured.allocator import Features
from services.kube.structured.diagnosis import FITS, TAINT, diagnose_node

Obj = dict[str, Any]
DRIVER = "gpu.example.com"
CLASSES = {"gpu": {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": "true"}}]}}}
NODE = {"metadata": {"name": "node-1", "labels": {}}}
F_1_37 = Features.from_gates(FeatureGates())
F_1_31 = Features.from_gates(FeatureGates(release="1.31"))
NO_SCHEDULE = {"key": "example.com/maintenance", "effect": "NoSchedule"}


def slices(*taints: Obj) -> SliceIndex:
    basic: Obj = {"taints": list(taints)} if taints else {}
    return SliceIndex(
        [
            {
                "metadata": {"name": "node-1-slice"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": "node-1",
                    "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-0", "basic": basic}],
                },
            }
        ]
    )


def claim(*tolerations: Obj) -> Obj:
    request: Obj = {"name": "gpu", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    if tolerations:
        request["tolerations"] = list(tolerations)
    return {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": [request]}}}


@pytest.mark.parametrize(
    ("case", "slice_taints", "rule_taints", "tolerations", "features", "verdict"),
    [
        ("slice taint not tolerated", [NO_SCHEDULE], [], [], F_1_37, TAINT),
        ("rule taint not tolerated", [], [{**NO_SCHEDULE, "effect": "NoExecute"}], [], F_1_37, TAINT),
        ("tolerated", [NO_SCHEDULE], [], [{"key": "example.com/maintenance", "operator": "Exists"}], F_1_37, FITS),
        ("None effect", [{**NO_SCHEDULE, "effect": "None"}], [], [], F_1_37, FITS),
        ("1.31 has no taints", [NO_SCHEDULE], [], [], F_1_31, FITS),
    ],
)
def test_taint_verdict(
    case: str, slice_taints: list[Obj], rule_taints: list[Obj], tolerations: list[Obj], features: Features, verdict: str
) -> None:
    fit = diagnose_node(
        [claim(*tolerations)],
        NODE,
        allocated_devices=frozenset(),
        classes=CLASSES,
        slices=slices(*slice_taints),
        features=features,
        device_taints={(DRIVER, "node-1", "gpu-0"): rule_taints} if rule_taints else None,
    )
    assert fit.verdict == verdict, case
    if verdict == TAINT:
        assert fit.detail == (
            "claim default/c, request gpu: 1 of 1 free device(s) have a taint it does not tolerate "
            f"({DRIVER}/node-1/gpu-0)"
        )
