"""``draplane explain``'s 1.37 reasons: "counters exhausted" (partitionable devices) and "subrequest chosen".

The verdicts come from `diagnose_node` with 1.37's allocator (DRAPartitionableDevices
on), the pending text from `explain_pending`/`render`, the attempt text from the
scheduler's decision record (`render_attempt`).
"""

from __future__ import annotations

from typing import Any

from services.kube.feature_gates import FeatureGates
from services.kube.structured import Features, SliceIndex
from services.kube.structured.diagnosis import COUNTERS, FITS, chosen_subrequests, diagnose_node
from services.replay.pending import explain_pending, render
from services.scheduler.explain import render_attempt

Obj = dict[str, Any]
DRIVER = "gpu.example.com"
FEATURES = Features.from_gates(FeatureGates(release="1.37"))
CLASSES = {
    "gpu": {
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
}
NODE = {"metadata": {"name": "node-1", "labels": {}}}


def slice_(name: str, **spec: Any) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 2},
            **spec,
        },
    }


def device(name: str, kind: str, memory: str) -> Obj:
    consumes = [{"counterSet": "gpu-0-memory", "counters": {"memory": {"value": memory}}}]
    return {"name": name, "basic": {"attributes": {"kind": {"string": kind}}, "consumesCounters": consumes}}


SLICES = [
    slice_("counters", sharedCounters=[{"name": "gpu-0-memory", "counters": {"memory": {"value": "80Gi"}}}]),
    slice_(
        "devices",
        devices=[
            device("gpu-0", "full", "80Gi"),
            device("gpu-0-half-0", "half", "40Gi"),
            device("gpu-0-half-1", "half", "40Gi"),
        ],
    ),
]


def claim(name: str, kind: str) -> Obj:
    request = {
        "name": "gpu",
        "deviceClassName": "gpu",
        "allocationMode": "ExactCount",
        "count": 1,
        "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].kind == "{kind}"'}}],
    }
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": {"requests": [request]}}}


def diagnose(in_use: set[tuple[str, str, str]]) -> Any:
    return diagnose_node(
        [claim("full", "full")],
        NODE,
        allocated_devices=in_use,
        classes=CLASSES,
        slices=SliceIndex(SLICES),
        features=FEATURES,
    )


def test_a_free_whole_gpu_whose_counters_the_halves_use_is_counters_exhausted() -> None:
    fit = diagnose({(DRIVER, "node-1", "gpu-0-half-0")})
    assert fit.verdict == COUNTERS
    assert fit.detail == (
        "claim default/full, request gpu: counters exhausted: 1 of 1 free matching device(s) need more shared "
        "counters than are left, e.g. device gpu.example.com/node-1/gpu-0 needs gpu-0-memory/memory 80Gi, 40Gi left"
    )


def test_with_the_counters_back_the_whole_gpu_fits() -> None:
    assert diagnose(set()).verdict == FITS


def test_without_partitionable_devices_counters_are_no_reason() -> None:
    fit = diagnose_node(
        [claim("full", "full")],
        NODE,
        allocated_devices={(DRIVER, "node-1", "gpu-0-half-0")},
        classes=CLASSES,
        slices=SliceIndex(SLICES),
        features=Features(),
    )
    assert fit.verdict != COUNTERS


PRIORITIZED = {
    "metadata": {"name": "train", "namespace": "default"},
    "spec": {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "two", "deviceClassName": "gpu", "count": 2},
                        {"name": "one", "deviceClassName": "gpu", "count": 1},
                    ],
                }
            ]
        }
    },
    "status": {
        "allocation": {
            "devices": {"results": [{"request": "gpu/one", "driver": DRIVER, "pool": "node-2", "device": "gpu-9"}]}
        }
    },
}


def test_chosen_subrequests_names_the_alternative_and_its_rank() -> None:
    assert chosen_subrequests(PRIORITIZED) == ["gpu/one (2nd of 2)"]
    assert chosen_subrequests(claim("plain", "full")) == []


class State:
    """The two reads `explain_pending` makes of an ObjectState."""

    def __init__(self, objects: dict[tuple[str, str], list[Obj]]) -> None:
        self.objects = objects

    def get(self, group: str, resource: str, namespace: str, name: str) -> Obj | None:
        for obj in self.objects.get((group, resource), []):
            meta = obj["metadata"]
            if meta.get("namespace", "") == namespace and meta["name"] == name:
                return obj
        return None

    def list(self, group: str, resource: str, namespace: str | None = None) -> list[Obj]:
        return list(self.objects.get((group, resource), []))


def pending_pod(name: str, *claims: str) -> Obj:
    return {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims]},
    }


def test_explain_pending_says_counters_exhausted_and_which_subrequest_an_allocated_claim_got() -> None:
    halves = claim("halves", "half")
    halves["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": "gpu-0-half-0"}]}
        }
    }
    state = State(
        {
            ("", "pods"): [pending_pod("full", "full", "train")],
            ("", "nodes"): [NODE],
            ("resource.k8s.io", "resourceclaims"): [claim("full", "full"), halves, PRIORITIZED],
            ("resource.k8s.io", "deviceclasses"): list(CLASSES.values()),
            ("resource.k8s.io", "resourceslices"): SLICES,
        }
    )
    pending = explain_pending(state, "default", "full")  # type: ignore[arg-type]
    assert pending is not None
    lines = render(pending)
    assert (
        "  claim default/train: allocated: gpu.example.com/node-2/gpu-9; subrequest chosen: gpu/one (2nd of 2)" in lines
    )
    assert any(
        line.startswith("  counters exhausted on 1 node(s) (node-1): claim default/full, request gpu:")
        for line in lines
    )


def test_an_attempt_shows_the_subrequest_chosen() -> None:
    record = {
        "attempt": 1,
        "result": "scheduled",
        "node": "node-1",
        "plugins": {"DynamicResources": {"allocations": {"default/train": PRIORITIZED["status"]["allocation"]}}},
    }
    assert "      request gpu/one: gpu.example.com/node-2/gpu-9 (subrequest chosen: one of gpu)" in render_attempt(
        record
    )
