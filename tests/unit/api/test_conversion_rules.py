"""Each of Kubernetes' resource.k8s.io conversion rules, one example each, to and from the hub form.

Where the expectations come from: ``pkg/apis/resource/v1beta1/conversion.go``
of k8s.io/kubernetes v1.37.2 (read through the Go module proxy), which
converts v1beta1 — the hub's layout — to and from the internal type that v1
and v1beta2 mirror field for field:

- ``Convert_resource_Device_To_v1beta1_Device`` always writes ``basic``;
- ``Convert_v1beta1_DeviceRequest_To_resource_DeviceRequest`` builds
  ``exactly`` only when ``hasAnyMainRequestFieldsSet`` (a non-empty string, a
  non-zero count, a non-nil list or pointer), and the reverse flattens it;
- ``Convert_{v1beta1,resource}_ResourceSliceSpec_To_...`` turn ``""``/``false``
  into a nil pointer and a nil pointer into ``""``/``false`` (absent on the
  wire, omitempty);

and for 1.31's v1alpha3 from ``pkg/apis/resource/v1alpha3`` of Kubernetes
1.32, which wrapped the bare capacity quantity in DeviceCapacity{value}.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.api.machinery.conversion import (
    ConversionError,
    from_internal,
    from_storage,
    keep_unrepresentable,
    to_internal,
    to_storage,
)
from services.api.machinery.conversions.table import GROUP

Obj = dict[str, Any]


def hub(obj: Obj, kind: str, version: str) -> Obj:
    return to_internal(obj, group=GROUP, kind=kind, version=version)


def read(obj: Obj, kind: str, version: str) -> Obj:
    out = from_internal(obj, group=GROUP, kind=kind, version=version)
    assert out["apiVersion"] == f"{GROUP}/{version}"
    return {k: v for k, v in out.items() if k not in ("apiVersion", "kind")}


def slice_spec(**spec: Any) -> Obj:
    return {"kind": "ResourceSlice", "spec": {"driver": "gpu.example.com", **spec}}


def claim(*requests: Obj, **spec: Any) -> Obj:
    return {"kind": "ResourceClaim", "spec": {"devices": {"requests": list(requests)}, **spec}}


# ------------------------------------------------------------------ v1 / v1beta2 → hub → v1 / v1beta2

# (rule, v1 object, hub object): to the hub and back.
BOTH_WAYS: list[tuple[str, Obj, Obj]] = [
    (
        "device fields go under basic",
        slice_spec(
            devices=[{"name": "gpu-0", "attributes": {"model": {"string": "a"}}, "capacity": {"m": {"value": "1"}}}]
        ),
        slice_spec(
            devices=[
                {
                    "name": "gpu-0",
                    "basic": {"attributes": {"model": {"string": "a"}}, "capacity": {"m": {"value": "1"}}},
                }
            ]
        ),
    ),
    (
        "a device with only a name still gets basic",
        slice_spec(devices=[{"name": "gpu-0"}]),
        slice_spec(devices=[{"name": "gpu-0", "basic": {}}]),
    ),
    (
        "device-level nodeName/allNodes are pointers in both: false stays",
        slice_spec(perDeviceNodeSelection=True, devices=[{"name": "d", "nodeName": "n", "allNodes": False}]),
        slice_spec(perDeviceNodeSelection=True, devices=[{"name": "d", "basic": {"nodeName": "n", "allNodes": False}}]),
    ),
    ("slice nodeName", slice_spec(nodeName="worker-1"), slice_spec(nodeName="worker-1")),
    ("slice allNodes true", slice_spec(allNodes=True), slice_spec(allNodes=True)),
    (
        "exactly is flat beside name",
        claim(
            {
                "name": "gpu",
                "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2},
            }
        ),
        claim({"name": "gpu", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2}),
    ),
    (
        "exactly with tolerations, capacity and adminAccess false",
        claim(
            {
                "name": "r",
                "exactly": {
                    "deviceClassName": "c",
                    "adminAccess": False,
                    "tolerations": [{"key": "k", "operator": "Exists"}],
                    "capacity": {"requests": {"m": "1Gi"}},
                },
            }
        ),
        claim(
            {
                "name": "r",
                "deviceClassName": "c",
                "adminAccess": False,
                "tolerations": [{"key": "k", "operator": "Exists"}],
                "capacity": {"requests": {"m": "1Gi"}},
            }
        ),
    ),
    (
        "firstAvailable stays as it is, no exactly",
        claim(
            {
                "name": "r",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "c", "count": 2},
                    {"name": "small", "deviceClassName": "c"},
                ],
            }
        ),
        claim(
            {
                "name": "r",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "c", "count": 2},
                    {"name": "small", "deviceClassName": "c"},
                ],
            }
        ),
    ),
    (
        # Go's decoder makes [] a non-nil slice, so exactly is built; its encoder would then omit the empty
        # list and print deviceClassName: "" (no omitempty), while draplane carries wire values as written.
        "a present empty list counts as set (Go's non-nil slice)",
        claim({"name": "r", "exactly": {"selectors": []}}),
        claim({"name": "r", "selectors": []}),
    ),
]


@pytest.mark.parametrize("version", ["v1", "v1beta2"])
@pytest.mark.parametrize(("rule", "v1", "stored"), BOTH_WAYS, ids=[c[0] for c in BOTH_WAYS])
def test_v1_rules_both_ways(rule: str, v1: Obj, stored: Obj, version: str) -> None:
    kind = v1["kind"]
    assert hub(v1, kind, version) == stored
    assert read(stored, kind, version) == {k: v for k, v in v1.items() if k != "kind"}


# (rule, hub object, v1 object): one way only — empty values are absent after the trip.
FROM_HUB: list[tuple[str, Obj, Obj]] = [
    ("no basic: only the name", slice_spec(devices=[{"name": "d"}]), slice_spec(devices=[{"name": "d"}])),
    ('slice nodeName "" is a nil pointer', slice_spec(nodeName="", allNodes=True), slice_spec(allNodes=True)),
    ("slice allNodes false is a nil pointer", slice_spec(nodeName="n", allNodes=False), slice_spec(nodeName="n")),
    (
        "zero values are not exact fields: no exactly",
        claim({"name": "r", "deviceClassName": "", "allocationMode": "", "count": 0}),
        claim({"name": "r"}),
    ),
    (
        "classic fields have no v1 form",
        {
            "kind": "ResourceClaim",
            "spec": {"controller": "gpu.example.com", "devices": {"requests": [{"name": "r", "deviceClassName": "c"}]}},
            "status": {"deallocationRequested": True, "allocation": {"controller": "gpu.example.com"}},
        },
        {
            "kind": "ResourceClaim",
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}},
            "status": {"allocation": {}},
        },
    ),
    (
        "suitableNodes has no v1 form",
        {"kind": "DeviceClass", "spec": {"selectors": [], "suitableNodes": {"nodeSelectorTerms": []}}},
        {"kind": "DeviceClass", "spec": {"selectors": []}},
    ),
]


@pytest.mark.parametrize(("rule", "stored", "v1"), FROM_HUB, ids=[c[0] for c in FROM_HUB])
def test_v1_rules_from_hub(rule: str, stored: Obj, v1: Obj) -> None:
    assert read(stored, stored["kind"], "v1") == {k: v for k, v in v1.items() if k != "kind"}


# (rule, v1 object, hub object): one way only.
TO_HUB: list[tuple[str, Obj, Obj]] = [
    ("an empty exactly adds nothing", claim({"name": "r", "exactly": {}}), claim({"name": "r"})),
    ('slice nodeName pointer to "" is absent', slice_spec(nodeName="", allNodes=True), slice_spec(allNodes=True)),
    ("slice allNodes pointer to false is absent", slice_spec(nodeName="n", allNodes=False), slice_spec(nodeName="n")),
]


@pytest.mark.parametrize(("rule", "v1", "stored"), TO_HUB, ids=[c[0] for c in TO_HUB])
def test_v1_rules_to_hub(rule: str, v1: Obj, stored: Obj) -> None:
    assert hub(v1, v1["kind"], "v1") == stored


# ------------------------------------------------------------------ v1beta1: the hub's own layout


def test_v1beta1_is_the_hub_without_classic_fields() -> None:
    v1beta1 = claim({"name": "r", "deviceClassName": "c", "firstAvailable": [{"name": "s", "deviceClassName": "c"}]})
    assert hub(v1beta1, "ResourceClaim", "v1beta1") is v1beta1
    stored = {**v1beta1, "spec": {**v1beta1["spec"], "controller": "gpu.example.com"}}
    assert read(stored, "ResourceClaim", "v1beta1") == {"spec": v1beta1["spec"]}


# ------------------------------------------------------------------ v1alpha3 (1.31)

CAPACITY: list[tuple[str, Obj, Obj]] = [
    ("quantity string", {"memory": "80Gi"}, {"memory": {"value": "80Gi"}}),
    ("quantity number", {"cores": 132}, {"cores": {"value": 132}}),
]


def _device_capacity(capacity: Obj) -> Obj:
    return slice_spec(nodeName="n", devices=[{"name": "d", "basic": {"capacity": capacity}}])


@pytest.mark.parametrize(("rule", "v1alpha3", "stored"), CAPACITY, ids=[c[0] for c in CAPACITY])
def test_v1alpha3_capacity_is_wrapped_in_value(rule: str, v1alpha3: Obj, stored: Obj) -> None:
    assert hub(_device_capacity(v1alpha3), "ResourceSlice", "v1alpha3") == _device_capacity(stored)
    assert read(_device_capacity(stored), "ResourceSlice", "v1alpha3") == {"spec": _device_capacity(v1alpha3)["spec"]}
    # Wrapping is idempotent: a hub object passes through unchanged.
    assert hub(_device_capacity(stored), "ResourceSlice", "v1alpha3") == _device_capacity(stored)


def test_v1alpha3_drops_a_capacity_without_value_and_every_newer_field() -> None:
    stored = slice_spec(
        nodeName="n",
        sharedCounters=[{"name": "set", "counters": {"mem": {"value": "1"}}}],
        devices=[
            {
                "name": "d",
                "basic": {
                    "attributes": {"a": {"int": 1}, "l": {"ints": [1, 2]}},
                    "capacity": {"m": {"value": "1", "requestPolicy": {"default": "1"}}, "p": {"requestPolicy": {}}},
                    "taints": [{"key": "k", "effect": "NoSchedule"}],
                },
            }
        ],
    )
    assert read(stored, "ResourceSlice", "v1alpha3") == {
        "spec": slice_spec(
            nodeName="n",
            devices=[{"name": "d", "basic": {"attributes": {"a": {"int": 1}, "l": {}}, "capacity": {"m": "1"}}}],
        )["spec"]
    }


def test_v1alpha3_keeps_the_classic_fields() -> None:
    stored = {
        "kind": "ResourceClaim",
        "spec": {"controller": "c", "devices": {"requests": [{"name": "r", "deviceClassName": "c"}]}},
        "status": {"deallocationRequested": True, "allocation": {"controller": "c"}},
    }
    assert read(stored, "ResourceClaim", "v1alpha3") == {k: v for k, v in stored.items() if k != "kind"}


# ------------------------------------------------------------------ updates through a version that cannot express a field


def test_an_update_through_v1_keeps_the_classic_fields() -> None:
    stored = {
        "kind": "ResourceClaim",
        "spec": {"controller": "c", "devices": {"requests": [{"name": "r", "deviceClassName": "c"}]}},
        "status": {
            "deallocationRequested": True,
            "allocation": {"controller": "c", "nodeSelector": {"nodeSelectorTerms": []}},
        },
    }
    seen = from_internal(stored, group=GROUP, kind="ResourceClaim", version="v1")
    seen["spec"]["devices"]["requests"][0]["exactly"]["count"] = 3  # the client's change
    new = keep_unrepresentable(
        hub(seen, "ResourceClaim", "v1"), stored, group=GROUP, kind="ResourceClaim", version="v1"
    )
    assert new["spec"] == {
        "controller": "c",
        "devices": {"requests": [{"name": "r", "deviceClassName": "c", "count": 3}]},
    }
    assert new["status"] == stored["status"]


def test_an_update_through_v1alpha3_keeps_newer_fields_of_what_the_client_kept() -> None:
    stored = claim(
        {"name": "a", "deviceClassName": "c", "tolerations": [{"key": "k", "operator": "Exists"}]},
        {"name": "b", "firstAvailable": [{"name": "s", "deviceClassName": "c"}]},
    )
    seen = from_internal(stored, group=GROUP, kind="ResourceClaim", version="v1alpha3")
    assert seen["spec"]["devices"]["requests"] == [{"name": "a", "deviceClassName": "c"}, {"name": "b"}]
    # The client removes request b and changes a's class: b stays removed, a keeps its tolerations.
    seen["spec"]["devices"]["requests"] = [{"name": "a", "deviceClassName": "d"}]
    new = keep_unrepresentable(
        hub(seen, "ResourceClaim", "v1alpha3"), stored, group=GROUP, kind="ResourceClaim", version="v1alpha3"
    )
    assert new["spec"]["devices"]["requests"] == [
        {"name": "a", "deviceClassName": "d", "tolerations": [{"key": "k", "operator": "Exists"}]}
    ]


def test_a_field_the_version_expresses_is_the_clients_to_clear() -> None:
    stored = {
        "kind": "DeviceClass",
        "spec": {"selectors": [{"cel": {"expression": "true"}}], "suitableNodes": {"nodeSelectorTerms": []}},
    }
    new = keep_unrepresentable(
        {"kind": "DeviceClass", "spec": {}}, stored, group=GROUP, kind="DeviceClass", version="v1"
    )
    assert new == {"kind": "DeviceClass", "spec": {"suitableNodes": {"nodeSelectorTerms": []}}}


# ------------------------------------------------------------------ kinds a version does not have


@pytest.mark.parametrize(
    ("kind", "version"),
    [
        ("DeviceTaintRule", "v1beta1"),
        ("DeviceTaintRule", "v1alpha3"),
        ("PodSchedulingContext", "v1"),
        ("PodSchedulingContext", "v1beta1"),
    ],
)
def test_no_conversion_for_a_kind_the_version_lacks(kind: str, version: str) -> None:
    with pytest.raises(ConversionError, match="unknown conversion"):
        to_internal({"kind": kind}, group=GROUP, kind=kind, version=version)


def test_storage_is_the_hub_and_every_served_version_converts_to_it() -> None:
    obj = claim({"name": "r", "deviceClassName": "c"})
    # A v1alpha3 claim is a hub claim as it is; to_storage keeps the apiVersion it was written with.
    assert to_storage(obj, group=GROUP, kind="ResourceClaim", version="v1alpha3") == obj
    v1 = from_storage(obj, group=GROUP, kind="ResourceClaim", version="v1")
    assert v1["apiVersion"] == f"{GROUP}/v1"
    assert v1["spec"]["devices"]["requests"] == [{"name": "r", "exactly": {"deviceClassName": "c"}}]
    assert to_storage(v1, group=GROUP, kind="ResourceClaim", version="v1")["spec"] == obj["spec"]
    with pytest.raises(ConversionError, match="unknown conversion"):
        to_storage(obj, group=GROUP, kind="PodSchedulingContext", version="v1")
