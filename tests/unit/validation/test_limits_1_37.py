"""Kubernetes 1.37 validation of hub-form resource.k8s.io objects: every limit and field rule, in 1.37's words.

The hub (docs/decisions/api-versions.md) is 1.37's v1beta1 layout; 1.37
validates its internal form, so paths name ``exactly`` for a request's flat
fields and never ``basic`` for a device. Expectations come from reading
``pkg/apis/resource/validation/validation.go`` and the v1beta1
``zz_generated.validations.go`` of k8s.io/kubernetes@v1.37.2 (not from running
it) and apimachinery@v0.37.2's ``field`` errors: list limits are
``field.TooMany`` reported alone (``validateSlice``/``validateSet``
short-circuit), duplicates sit at the entry (``path[i]``), ``TooLong`` says
``may not be more than N bytes`` and a bad value prints as JSON (nil is null).
The rendering of each error type used here (TooMany, TooLong, Invalid with
nil/false/string, Duplicate, NotSupported, Required) was confirmed by running
a small Go program against apimachinery@v0.37.2's ``field`` package; the rules
themselves (which check, which path, which limit) are read from the source.
The same objects under the 1.31 default keep 1.31's wording, which is what is
served today.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from services.api.admission.gated_fields import drop_disabled_fields
from services.api.admission.validation import validate_create, validate_status_update
from services.api.admission.validation.device_class import validate_device_class
from services.api.admission.validation.device_taint_rule import validate_device_taint_rule_update
from services.api.admission.validation.resource_claim import (
    validate_resource_claim,
    validate_resource_claim_status_update,
)
from services.api.admission.validation.resource_claim_template import validate_resource_claim_template
from services.api.admission.validation.resource_slice import validate_resource_slice
from services.api.types.registry import ResourceType, by_kind
from services.api.types.resource_hub import HUB_MODELS
from services.kube.feature_gates import FeatureGateError, FeatureGates
from services.kube.feature_gates_table import features_at
from services.kube.resource_limits import LIMITS_1_37
from tests.unit.validation.objects import (
    BAD_NAME,
    LABEL_MSG,
    NAME_PART_MSG,
    UID,
    claim,
    device_class,
    mutated,
    render,
    resource_slice,
    template,
)

Obj = dict[str, Any]
Change = Callable[[Obj], Any]


def _resource(kind: str) -> ResourceType:
    rt = by_kind("resource.k8s.io", kind)
    # DeviceTaintRule's registry row comes with serving v1 (another change); until then a stand-in row.
    if rt is not None:
        return rt
    return ResourceType(
        "resource.k8s.io", "v1", kind, kind.lower() + "s", kind.lower(), False, subresources=("status",)
    )


RESOURCE_KINDS = {k: _resource(k) for k in ("ResourceClaim", "ResourceSlice", "DeviceClass", "DeviceTaintRule")}
DEVICE_TAINT_RULE = RESOURCE_KINDS["DeviceTaintRule"]

REQ = "spec.devices.requests[0]"
EFFECTS = 'supported values: "NoExecute", "NoSchedule", "None"'


def hub_claim() -> Obj:
    obj = claim()
    obj["apiVersion"] = "resource.k8s.io/v1beta1"
    return obj


def sub(name: str, **fields: Any) -> Obj:
    return {"name": name, "deviceClassName": "gpu.example.com", **fields}


def prioritized(n: int) -> Change:
    def change(obj: Obj) -> None:
        obj["spec"]["devices"]["requests"][0] = {"name": "gpu", "firstAvailable": [sub(f"s{i}") for i in range(n)]}

    return change


def set_request(**fields: Any) -> Change:
    def change(obj: Obj) -> None:
        obj["spec"]["devices"]["requests"][0].update(fields)

    return change


def tolerations(*tols: Obj) -> Change:
    return set_request(tolerations=list(tols))


def n_requests(n: int) -> Change:
    def change(obj: Obj) -> None:
        obj["spec"]["devices"]["requests"] = [{"name": f"r{i}", "deviceClassName": "gpu.example.com"} for i in range(n)]
        obj["spec"]["devices"]["constraints"] = []
        obj["spec"]["devices"]["config"] = []

    return change


def n_of(field: str, entry: Obj, n: int) -> Change:
    def change(obj: Obj) -> None:
        obj["spec"]["devices"][field] = [copy.deepcopy(entry) for _ in range(n)]

    return change


NESTED_3 = "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, true)))"
NESTED_4 = (
    "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, true))))"
)

CLAIM_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid hub claim", lambda o: None, []),
    ("8 subrequests", prioritized(8), []),
    (
        "9 subrequests",
        prioritized(9),
        [f"{REQ}.firstAvailable: Too many: 9: must have at most 8 items"],
    ),
    (
        "firstAvailable beside deviceClassName",
        set_request(firstAvailable=[sub("a")]),
        [
            f"{REQ}: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
        ],
    ),
    (
        "neither exactly nor firstAvailable",
        lambda o: o["spec"]["devices"]["requests"].__setitem__(0, {"name": "gpu"}),
        [f"{REQ}: Required value: exactly one of `exactly` or `firstAvailable` is required"],
    ),
    (
        "subrequest name",
        lambda o: prioritized(1)(o) or o["spec"]["devices"]["requests"][0]["firstAvailable"][0].update(name=BAD_NAME),
        [f'{REQ}.firstAvailable[0].name: Invalid value: "{BAD_NAME}": {LABEL_MSG}'],
    ),
    (
        "subrequest without class",
        lambda o: prioritized(1)(o) or o["spec"]["devices"]["requests"][0]["firstAvailable"][0].pop("deviceClassName"),
        [f"{REQ}.firstAvailable[0].deviceClassName: Required value"],
    ),
    (
        "duplicate subrequest names",
        lambda o: prioritized(2)(o) or o["spec"]["devices"]["requests"][0]["firstAvailable"][1].update(name="s0"),
        [f'{REQ}.firstAvailable[1]: Duplicate value: "s0"'],
    ),
    (
        "subrequest count with All",
        lambda o: (
            prioritized(1)(o)
            or o["spec"]["devices"]["requests"][0]["firstAvailable"][0].update(allocationMode="All", count=2)
        ),
        [f"{REQ}.firstAvailable[0].count: Invalid value: 2: must not be specified when allocationMode is 'All'"],
    ),
    (
        "exact class name",
        set_request(deviceClassName="Bad_Class"),
        [
            f'{REQ}.exactly.deviceClassName: Invalid value: "Bad_Class": a lowercase RFC 1123 subdomain must consist '
            "of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ],
    ),
    (
        "17 tolerations: 1.37 documents 16 but enforces no limit",
        tolerations(*({"key": f"k{i}", "operator": "Exists"} for i in range(17))),
        [],
    ),
    (
        "toleration Exists with a value",
        tolerations({"key": "k", "operator": "Exists", "value": "v"}),
        [f'{REQ}.exactly.tolerations[0].value: Invalid value: "v": must be empty for operator `Exists`'],
    ),
    (
        "toleration without operator",
        tolerations({"key": "k"}),
        [f"{REQ}.exactly.tolerations[0].operator: Required value"],
    ),
    (
        "toleration operator",
        tolerations({"key": "k", "operator": "In"}),
        [f'{REQ}.exactly.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"'],
    ),
    (
        "toleration effect",
        tolerations({"key": "k", "operator": "Exists", "effect": "PreferNoSchedule"}),
        [f'{REQ}.exactly.tolerations[0].effect: Unsupported value: "PreferNoSchedule": {EFFECTS}'],
    ),
    (
        "toleration Equal value",
        tolerations({"key": "k", "operator": "Equal", "value": "-x"}),
        [
            f'{REQ}.exactly.tolerations[0].value: Invalid value: "-x": a valid label must be an empty string or '
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ],
    ),
    (
        "toleration key",
        tolerations({"key": "-k", "operator": "Exists"}),
        [f'{REQ}.exactly.tolerations[0].key: Invalid value: "-k": {NAME_PART_MSG}'],
    ),
    (
        "subrequest toleration",
        lambda o: (
            prioritized(1)(o)
            or o["spec"]["devices"]["requests"][0]["firstAvailable"][0].update(tolerations=[{"key": "k"}])
        ),
        [f"{REQ}.firstAvailable[0].tolerations[0].operator: Required value"],
    ),
    ("32 requests", n_requests(32), []),
    ("33 requests", n_requests(33), ["spec.devices.requests: Too many: 33: must have at most 32 items"]),
    (
        "duplicate request names at the entry",
        lambda o: o["spec"]["devices"]["requests"].append(copy.deepcopy(o["spec"]["devices"]["requests"][0])),
        ['spec.devices.requests[1]: Duplicate value: "gpu"'],
    ),
    (
        "33 constraints",
        n_of("constraints", {"requests": ["gpu"], "matchAttribute": "gpu.example.com/numa"}, 33),
        ["spec.devices.constraints: Too many: 33: must have at most 32 items"],
    ),
    (
        "33 configs",
        n_of("config", {"opaque": {"driver": "gpu.example.com", "parameters": {}}}, 33),
        ["spec.devices.config: Too many: 33: must have at most 32 items"],
    ),
    (
        "33 selectors",
        set_request(selectors=[{"cel": {"expression": "true"}}] * 33),
        [f"{REQ}.exactly.selectors: Too many: 33: must have at most 32 items"],
    ),
    ("CEL expression of 10Ki", set_request(selectors=[{"cel": {"expression": "true" + " " * (10240 - 4)}}]), []),
    (
        "CEL expression over 10Ki, not compiled",
        set_request(selectors=[{"cel": {"expression": "(" * 10241}}]),
        [f"{REQ}.exactly.selectors[0].cel.expression: Too long: may not be more than 10240 bytes"],
    ),
    # Opaque parameters are measured as compact JSON: {"a":"..."} is 8 bytes plus the string.
    (
        "opaque parameters of 10Ki",
        n_of("config", {"opaque": {"driver": "gpu.example.com", "parameters": {"a": "x" * (10240 - 8)}}}, 1),
        [],
    ),
    (
        "opaque parameters over 10Ki",
        n_of("config", {"opaque": {"driver": "gpu.example.com", "parameters": {"a": "x" * (10241 - 8)}}}, 1),
        ["spec.devices.config[0].opaque.parameters: Too long: may not be more than 10240 bytes"],
    ),
    (
        "opaque parameters not an object",
        n_of("config", {"opaque": {"driver": "gpu.example.com", "parameters": [1]}}, 1),
        ['spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object'],
    ),
    # Estimated costs 104,643 and 3,348,675 (printed by 1.37.2's compiler, tests/unit/cel/test_cel_cost.py).
    ("CEL cost under 1,000,000", set_request(selectors=[{"cel": {"expression": NESTED_3}}]), []),
    (
        "CEL cost over 1,000,000",
        set_request(selectors=[{"cel": {"expression": NESTED_4}}]),
        [f"{REQ}.exactly.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit"],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CLAIM_CASES], ids=[c[0] for c in CLAIM_CASES])
def test_claim_1_37(change: Change, expected: list[str]) -> None:
    assert render(validate_resource_claim(mutated(hub_claim(), change), limits=LIMITS_1_37)) == expected


def consumers(n: int) -> list[Obj]:
    return [{"resource": "pods", "name": f"pod-{i}", "uid": f"uid-{i}"} for i in range(n)]


def allocated(**status: Any) -> Obj:
    obj = hub_claim()
    obj["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"}],
                "config": [],
            }
        },
        **status,
    }
    return obj


def with_results(n: int) -> Obj:
    obj = allocated()
    result = obj["status"]["allocation"]["devices"]["results"][0]
    obj["status"]["allocation"]["devices"]["results"] = [dict(result, device=f"gpu-{i}") for i in range(n)]
    return obj


def with_configs(n: int) -> Obj:
    obj = allocated()
    config = {"source": "FromClaim", "opaque": {"driver": "gpu.example.com", "parameters": {}}}
    obj["status"]["allocation"]["devices"]["config"] = [copy.deepcopy(config) for _ in range(n)]
    return obj


STATUS_CASES: list[tuple[str, Obj, list[str]]] = [
    ("reservedFor 256", allocated(reservedFor=consumers(256)), []),
    (
        "reservedFor 257",
        allocated(reservedFor=consumers(257)),
        ["status.reservedFor: Too many: 257: must have at most 256 items"],
    ),
    ("32 allocated devices", with_results(32), []),
    (
        "33 allocated devices",
        with_results(33),
        ["status.allocation.devices.results: Too many: 33: must have at most 32 items"],
    ),
    ("64 allocation configs", with_configs(64), []),
    (
        "65 allocation configs",
        with_configs(65),
        ["status.allocation.devices.config: Too many: 65: must have at most 64 items"],
    ),
]


GPU_0 = {"driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"}
GPU_0_ID = '{"Driver":"gpu.example.com","Pool":"worker-1","Device":"gpu-0","ShareID":""}'
CONDITION = {"type": "Ready", "status": "True", "reason": "Prepared", "lastTransitionTime": "2026-12-02T04:00:00Z"}
CIDR_MSG = "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"


def device_status(**fields: Any) -> Obj:
    return allocated(devices=[{**GPU_0, **fields}])


# status.devices (validateDeviceStatus); the invalid-device, UID and address wordings were printed by
# apimachinery v0.37.2, dynamic-resource-allocation v0.37.2 and google/uuid (a small Go program).
STATUS_CASES += [
    ("device status", device_status(conditions=[CONDITION], data={"a": 1}), []),
    (
        "device status of a device not allocated",
        allocated(devices=[dict(GPU_0, device="gpu-1")]),
        [
            'status.devices[0]: Invalid value: {"Driver":"gpu.example.com","Pool":"worker-1","Device":"gpu-1",'
            '"ShareID":""}: must be an allocated device in the claim'
        ],
    ),
    (
        "device status twice",
        allocated(devices=[GPU_0, GPU_0]),
        [f"status.devices[1]: Duplicate value: {GPU_0_ID}"],
    ),
    (
        "device status shareID",
        device_status(shareID="7B2B4E0C-4D7F-4A4C-9B3E-2F1D3C4B5A69"),
        [
            'status.devices[0].shareID: Invalid value: "7B2B4E0C-4D7F-4A4C-9B3E-2F1D3C4B5A69": uid must be in '
            "RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters",
            'status.devices[0]: Invalid value: {"Driver":"gpu.example.com","Pool":"worker-1","Device":"gpu-0",'
            '"ShareID":"7B2B4E0C-4D7F-4A4C-9B3E-2F1D3C4B5A69"}: must be an allocated device in the claim',
        ],
    ),
    ("8 device conditions", device_status(conditions=[dict(CONDITION, type=f"c{i}") for i in range(8)]), []),
    (
        "9 device conditions",
        device_status(conditions=[dict(CONDITION, type=f"c{i}") for i in range(9)]),
        ["status.devices[0].conditions: Too many: 9: must have at most 8 items"],
    ),
    (
        "device condition without reason",
        device_status(conditions=[{k: v for k, v in CONDITION.items() if k != "reason"}]),
        ["status.devices[0].conditions[0].reason: Required value"],
    ),
    # {"a":"..."} is 8 bytes plus the string, as compact JSON.
    ("device data of 10Ki", device_status(data={"a": "x" * (10240 - 8)}), []),
    (
        "device data over 10Ki",
        device_status(data={"a": "x" * (10241 - 8)}),
        ["status.devices[0].data: Too long: may not be more than 10240 bytes"],
    ),
    (
        "device data not an object",
        device_status(data=[1]),
        ['status.devices[0].data: Invalid value: "<value omitted>": must be a valid JSON object'],
    ),
    (
        "network data",
        device_status(networkData={"interfaceName": "eth1", "ips": ["10.9.8.7/24", "2001:db8::1/64"]}),
        [],
    ),
    (
        "16 IPs",
        device_status(networkData={"ips": [f"10.0.0.{i}/24" for i in range(16)]}),
        [],
    ),
    (
        "17 IPs",
        device_status(networkData={"ips": [f"10.0.0.{i}/24" for i in range(17)]}),
        ["status.devices[0].networkData.ips: Too many: 17: must have at most 16 items"],
    ),
    (
        "IPs not in CIDR or canonical form, twice",
        device_status(networkData={"ips": ["10.9.8.7", "2001:DB8::1/64", "10.9.8.7"]}),
        [
            f'status.devices[0].networkData.ips[0]: Invalid value: "10.9.8.7": {CIDR_MSG}',
            'status.devices[0].networkData.ips[1]: Invalid value: "2001:DB8::1/64": '
            'must be in canonical form ("2001:db8::1/64")',
            f'status.devices[0].networkData.ips[2]: Invalid value: "10.9.8.7": {CIDR_MSG}',
            'status.devices[0].networkData.ips[2]: Duplicate value: "10.9.8.7"',
        ],
    ),
    (
        "long interface name and hardware address",
        device_status(networkData={"interfaceName": "i" * 257, "hardwareAddress": "h" * 129}),
        [
            "status.devices[0].networkData.interfaceName: Too long: may not be more than 256 bytes",
            "status.devices[0].networkData.hardwareAddress: Too long: may not be more than 128 bytes",
        ],
    ),
]


@pytest.mark.parametrize(("new", "expected"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES])
def test_claim_status_1_37(new: Obj, expected: list[str]) -> None:
    old = copy.deepcopy(new)
    old["status"].pop("reservedFor", None)
    assert render(validate_resource_claim_status_update(new, old, limits=LIMITS_1_37)) == expected


def test_reserved_for_keeps_1_31_limit_by_default() -> None:
    """What is served today (v1alpha3) keeps 32 and 1.31's wording."""
    new = allocated(reservedFor=consumers(33))
    old = allocated()
    assert render(validate_resource_claim_status_update(new, old)) == [
        "status.reservedFor: Too long: may not be longer than 32"
    ]


def hub_device(i: int, **basic: Any) -> Obj:
    return {
        "name": f"gpu-{i}",
        "basic": {
            "attributes": {"index": {"int": i}, "driverVersion": {"version": "1.2.3"}},
            "capacity": {"memory": {"value": "80Gi"}},
            **basic,
        },
    }


def hub_slice(devices: int = 2, **spec: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": "worker-1-gpu.example.com-x7k2p", "uid": UID, "resourceVersion": "9"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "worker-1", "generation": 0, "resourceSliceCount": 1},
            "nodeName": "worker-1",
            "devices": [hub_device(i) for i in range(devices)],
            **spec,
        },
    }


TAINT = {"key": "example.com/unhealthy", "effect": "NoSchedule"}
CONSUMES = {"counterSet": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}


def with_device0(**basic: Any) -> Obj:
    obj = hub_slice()
    obj["spec"]["devices"][0]["basic"].update(basic)
    return obj


def first_device_uses(n: int, **basic: Any) -> Obj:
    obj = hub_slice(n)
    obj["spec"]["devices"][0]["basic"].update(basic)
    return obj


def counter_sets(n: int, counters: int = 1) -> Obj:
    obj = hub_slice()
    del obj["spec"]["devices"]
    obj["spec"]["sharedCounters"] = [
        {"name": f"set-{i}", "counters": {f"c{j}": {"value": "1"} for j in range(counters)}} for i in range(n)
    ]
    return obj


def per_device(*node_fields: Obj) -> Obj:
    obj = hub_slice(len(node_fields), nodeName="", perDeviceNodeSelection=True)
    for device, fields in zip(obj["spec"]["devices"], node_fields, strict=True):
        device["basic"].update(fields)
    return obj


PER_DEVICE_MSG = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required "
    "when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)

SLICE_CASES: list[tuple[str, Obj, list[str]]] = [
    ("per-device node selection", per_device({"nodeName": "worker-1"}, {"allNodes": True}), []),
    (
        "per-device node selection, device without one",
        per_device({}),
        [f"spec.devices[0]: Required value: {PER_DEVICE_MSG}"],
    ),
    (
        "per-device node selection, device with two",
        per_device({"nodeName": "worker-1", "allNodes": True}),
        [f'spec.devices[0]: Invalid value: "{{`nodeName`, `allNodes`}}": {PER_DEVICE_MSG}'],
    ),
    (
        "device node name without per-device selection",
        with_device0(nodeName="worker-1"),
        [
            "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set "
            "if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
        ],
    ),
    ("4 binding conditions", with_device0(bindingConditions=["a", "b", "c", "d"], bindingFailureConditions=["e"]), []),
    (
        "5 binding conditions",
        with_device0(bindingConditions=["a", "b", "c", "d", "e"], bindingFailureConditions=["f"]),
        ["spec.devices[0].bindingConditions: Too many: 5: must have at most 4 items"],
    ),
    (
        "duplicate and overlapping binding conditions",
        with_device0(bindingConditions=["a", "a"], bindingFailureConditions=["a"]),
        [
            'spec.devices[0].bindingConditions[1]: Duplicate value: "a"',
            'spec.devices[0].bindingFailureConditions[0]: Invalid value: "a": '
            "bindingFailureConditions must not overlap with bindingConditions",
        ],
    ),
    (
        "binding failure conditions alone",
        with_device0(bindingFailureConditions=["f"]),
        [
            "spec.devices[0].bindingConditions: Invalid value: null: "
            "bindingConditions are required to use bindingFailureConditions"
        ],
    ),
    (
        "string attribute over 64 bytes",
        with_device0(attributes={"uuid": {"string": "x" * 65}}),
        ["spec.devices[0].attributes[uuid].string: Too long: may not be more than 64 bytes"],
    ),
    (
        "nodeSelector without terms",
        hub_slice(nodeName="", nodeSelector={"nodeSelectorTerms": []}),
        [
            "spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term",
            "spec.nodeSelector.nodeSelectorTerms: Invalid value: null: must have exactly one node selector term",
        ],
    ),
    (
        "perDeviceNodeSelection false",
        hub_slice(perDeviceNodeSelection=False),
        ["spec.perDeviceNodeSelection: Invalid value: false: must be either unset or set to true"],
    ),
    ("valid hub slice", hub_slice(), []),
    ("128 devices", hub_slice(128), []),
    ("129 devices", hub_slice(129), ["spec.devices: Too many: 129: must have at most 128 items"]),
    ("64 devices, one tainted", first_device_uses(64, taints=[TAINT]), []),
    (
        "65 devices, one tainted",
        first_device_uses(65, taints=[TAINT]),
        ["spec.devices: Too many: 65: must have at most 64 items"],
    ),
    ("64 devices, one consuming counters", first_device_uses(64, consumesCounters=[CONSUMES]), []),
    (
        "65 devices, one consuming counters",
        first_device_uses(65, consumesCounters=[CONSUMES]),
        ["spec.devices: Too many: 65: must have at most 64 items"],
    ),
    (
        "duplicate device names at the entry",
        mutated(hub_slice(), lambda o: o["spec"]["devices"][1].update(name="gpu-0")),
        ['spec.devices[1]: Duplicate value: "gpu-0"'],
    ),
    ("16 taints", with_device0(taints=[dict(TAINT, key=f"k{i}") for i in range(16)]), []),
    (
        "17 taints",
        with_device0(taints=[dict(TAINT, key=f"k{i}") for i in range(17)]),
        ["spec.devices[0].taints: Too many: 17: must have at most 16 items"],
    ),
    ("taint without effect", with_device0(taints=[{"key": "k"}]), ["spec.devices[0].taints[0].effect: Required value"]),
    (
        "taint effect",
        with_device0(taints=[{"key": "k", "effect": "PreferNoSchedule"}]),
        [f'spec.devices[0].taints[0].effect: Unsupported value: "PreferNoSchedule": {EFFECTS}'],
    ),
    (
        "3 consumesCounters",
        with_device0(consumesCounters=[dict(CONSUMES, counterSet=f"s{i}") for i in range(3)]),
        ["spec.devices[0].consumesCounters: Too many: 3: must have at most 2 items"],
    ),
    (
        "33 consumed counters",
        with_device0(consumesCounters=[{"counterSet": "s", "counters": {f"c{i}": {"value": "1"} for i in range(33)}}]),
        ["spec.devices[0].consumesCounters[0].counters: Too many: 33: must have at most 32 items"],
    ),
    (
        "consumesCounters without counters",
        with_device0(consumesCounters=[{"counterSet": "s"}]),
        ["spec.devices[0].consumesCounters[0].counters: Required value"],
    ),
    ("8 counter sets of 32", counter_sets(8, 32), []),
    ("9 counter sets", counter_sets(9), ["spec.sharedCounters: Too many: 9: must have at most 8 items"]),
    (
        "33 counters in a set",
        counter_sets(1, 33),
        ["spec.sharedCounters[0].counters: Too many: 33: must have at most 32 items"],
    ),
    (
        "devices beside sharedCounters",
        mutated(counter_sets(1), lambda o: o["spec"].update(devices=[hub_device(0)])),
        ['spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed'],
    ),
    (
        "33 attributes and capacities",
        with_device0(capacity={f"c{i}": {"value": "1"} for i in range(31)}),
        ["spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32"],
    ),
    (
        "bad capacity value",
        with_device0(capacity={"memory": {"value": "80 Gi"}}),
        [
            'spec.devices[0].capacity[memory].value: Invalid value: "80 Gi": quantities must match the regular '
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ],
    ),
    (
        "nodeName and allNodes",
        hub_slice(allNodes=True),
        [
            'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, '
            "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"
        ],
    ),
    (
        "no node selection",
        hub_slice(nodeName=""),
        [
            "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
        ],
    ),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in SLICE_CASES], ids=[c[0] for c in SLICE_CASES])
def test_slice_1_37(obj: Obj, expected: list[str]) -> None:
    assert render(validate_resource_slice(obj, limits=LIMITS_1_37)) == expected


def test_slice_keeps_1_31_limit_by_default() -> None:
    """Served today: 1.31 validates each device, then ``Too long`` at 128, whatever the layout."""
    assert render(validate_resource_slice(resource_slice(129))) == [
        "spec.devices: Too long: may not be longer than 128"
    ]


def test_valid_cases_are_hub_objects() -> None:
    """The objects this table calls valid decode strictly as the hub model (they are the form 1.37 rules judge)."""
    for _, change, expected in CLAIM_CASES:
        if not expected:
            msgspec.convert(mutated(hub_claim(), change), HUB_MODELS["ResourceClaim"])
    for _, obj, expected in SLICE_CASES:
        if not expected:
            msgspec.convert(obj, HUB_MODELS["ResourceSlice"])


def test_template_paths_1_37() -> None:
    """A template's claim spec is validated as a claim's, one ``spec`` deeper."""
    obj = template()
    obj["spec"]["spec"]["devices"]["requests"][0] = {"name": "gpu", "firstAvailable": [sub(f"s{i}") for i in range(9)]}
    assert render(validate_resource_claim_template(obj, limits=LIMITS_1_37)) == [
        "spec.spec.devices.requests[0].firstAvailable: Too many: 9: must have at most 8 items"
    ]


@pytest.mark.parametrize(
    ("field", "entry", "expected"),
    [
        ("selectors", {"cel": {"expression": "true"}}, "spec.selectors: Too many: 33: must have at most 32 items"),
        (
            "config",
            {"opaque": {"driver": "gpu.example.com", "parameters": {}}},
            "spec.config: Too many: 33: must have at most 32 items",
        ),
    ],
)
def test_class_lists_1_37(field: str, entry: Obj, expected: str) -> None:
    obj = device_class()
    obj["spec"][field] = [copy.deepcopy(entry) for _ in range(33)]
    assert render(validate_device_class(obj, limits=LIMITS_1_37)) == [expected]
    assert render(validate_device_class(obj)) == [
        expected.replace("Too many: 33: must have at most 32 items", "Too long: may not be longer than 32")
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("example.com/gpu", []),
        (  # the implicit name cannot be set: a kubernetes.io name is a native resource (IsExtendedResourceName)
            "deviceclass.resource.kubernetes.io/gpu",
            [
                'spec.extendedResourceName: Invalid value: "deviceclass.resource.kubernetes.io/gpu": '
                "must be a valid extended resource name"
            ],
        ),
        ("gpu", ['spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name']),
        (
            "requests.example.com/gpu",
            [
                'spec.extendedResourceName: Invalid value: "requests.example.com/gpu": must be a valid extended resource name'
            ],
        ),
        (
            "kubernetes.io/gpu",
            ['spec.extendedResourceName: Invalid value: "kubernetes.io/gpu": must be a valid extended resource name'],
        ),
    ],
)
def test_class_extended_resource_name_1_37(name: str, expected: list[str]) -> None:
    obj = mutated(device_class(), lambda o: o["spec"].update(extendedResourceName=name))
    assert render(validate_device_class(obj, limits=LIMITS_1_37)) == expected


# --------------------------------------------------------------------------
# DeviceTaintRule (1.37 ValidateDeviceTaintRule, ...Update, ...StatusUpdate)

RULE_TAINT = {"key": "example.com/unhealthy", "value": "yes", "effect": "NoExecute"}
TIME = "2026-12-02T04:00:00Z"


def taint_rule(**spec: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "gpu-0-unhealthy", "uid": UID, "resourceVersion": "7", "generation": 1},
        "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"}, **spec}
        | ({} if "taint" in spec else {"taint": dict(RULE_TAINT)}),
    }


def condition(**fields: Any) -> Obj:
    return {
        "type": "EvictionInProgress",
        "status": "True",
        "reason": "PodsPendingEviction",
        "lastTransitionTime": TIME,
        **fields,
    }


def with_conditions(*conditions: Obj) -> Obj:
    return mutated(taint_rule(), lambda o: o.__setitem__("status", {"conditions": list(conditions)}))


SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
REASON_MSG = (
    "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric "
    "characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  "
    "or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is "
    "'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"
)

RULE_CASES: list[tuple[str, Obj, list[str]]] = [
    ("valid rule", taint_rule(), []),
    ("no device selector", mutated(taint_rule(), lambda o: o["spec"].pop("deviceSelector")), []),
    (
        "bad driver",
        mutated(taint_rule(), lambda o: o["spec"]["deviceSelector"].update(driver="gpu_example.com")),
        [f'spec.deviceSelector.driver: Invalid value: "gpu_example.com": {SUBDOMAIN}'],
    ),
    (
        "bad device",
        mutated(taint_rule(), lambda o: o["spec"]["deviceSelector"].update(device=BAD_NAME)),
        [f'spec.deviceSelector.device: Invalid value: "{BAD_NAME}": {LABEL_MSG}'],
    ),
    (
        "taint without key",
        taint_rule(taint={"effect": "NoSchedule"}),
        [
            'spec.taint.key: Invalid value: "": name part must be non-empty',
            f'spec.taint.key: Invalid value: "": {NAME_PART_MSG}',
        ],
    ),
    (
        "taint without effect",
        taint_rule(taint={"key": "example.com/k"}),
        ["spec.taint.effect: Required value"],
    ),
    (
        "pod taint effect",
        taint_rule(taint={"key": "example.com/k", "effect": "PreferNoSchedule"}),
        [f'spec.taint.effect: Unsupported value: "PreferNoSchedule": {EFFECTS}'],
    ),
    (
        "bad name",
        mutated(taint_rule(), lambda o: o["metadata"].update(name="Bad")),
        [f'metadata.name: Invalid value: "Bad": {SUBDOMAIN}'],
    ),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_device_taint_rule_1_37(obj: Obj, expected: list[str]) -> None:
    assert render(validate_create(DEVICE_TAINT_RULE, obj)) == expected


def test_device_taint_rule_update_checks_an_unchanged_effect_no_more() -> None:
    """1.37 validates the effect on update only when it changed (ratcheting a stored bad value)."""
    old = taint_rule(taint={"key": "example.com/k", "effect": "PreferNoSchedule"})
    assert render(validate_device_taint_rule_update(copy.deepcopy(old), old)) == []
    changed = mutated(old, lambda o: o["spec"]["taint"].update(effect="Bogus"))
    assert render(validate_device_taint_rule_update(changed, old)) == [
        f'spec.taint.effect: Unsupported value: "Bogus": {EFFECTS}'
    ]


# The condition wordings were printed by apimachinery v0.37.2's ValidateConditions (a small Go program).
STATUS_RULE_CASES: list[tuple[str, Obj, list[str]]] = [
    ("valid conditions", with_conditions(condition()), []),
    ("8 conditions", with_conditions(*(condition(type=f"example.com/c{i}") for i in range(8))), []),
    (
        "9 conditions",
        with_conditions(*(condition(type=f"example.com/c{i}") for i in range(9))),
        ["status.conditions: Too many: 9: must have at most 8 items"],
    ),
    (
        "duplicate type",
        with_conditions(condition(), condition(status="False")),
        ['status.conditions[1]: Duplicate value: "EvictionInProgress"'],
    ),
    (
        "empty condition",
        with_conditions({}),
        [
            "status.conditions[0].type: Required value: is required",
            "status.conditions[0].status: Required value",
            "status.conditions[0].lastTransitionTime: Required value",
            "status.conditions[0].reason: Required value",
        ],
    ),
    (
        "bad status, generation and reason",
        with_conditions(condition(status="Yes", observedGeneration=-1, reason="1bad")),
        [
            'status.conditions[0].status: Unsupported value: "Yes": supported values: "False", "True", "Unknown"',
            "status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to zero",
            f'status.conditions[0].reason: Invalid value: "1bad": {REASON_MSG}',
        ],
    ),
    (
        "long reason and message",
        with_conditions(condition(reason="R" * 1025, message="m" * (32 * 1024 + 1))),
        [
            "status.conditions[0].reason: Too long: may not be more than 1024 bytes",
            "status.conditions[0].message: Too long: may not be more than 32768 bytes",
        ],
    ),
]


@pytest.mark.parametrize(("new", "expected"), [c[1:] for c in STATUS_RULE_CASES], ids=[c[0] for c in STATUS_RULE_CASES])
def test_device_taint_rule_status_1_37(new: Obj, expected: list[str]) -> None:
    assert render(validate_status_update(DEVICE_TAINT_RULE, new, taint_rule())) == expected


# --------------------------------------------------------------------------
# 1.37's feature gates: stage, default, what --feature-gates may not do, and the field each drops when off
# (pkg/features/kube_features.go; component-base featuregate; pkg/registry/resource/*/strategy.go).

LOCKED = "cannot set feature gate {gate} to false, feature is locked to true"

# gate, (stage, default, locked), refusal of "gate=false" at 1.37 (None: allowed), gates to turn it off with,
# kind, object using the gated field, the object with the field dropped
GATE_CASES: list[tuple[str, tuple[str, bool, bool], str | None, str, str, Obj, Obj]] = [
    (
        "DRAPrioritizedList",
        ("GA", True, True),
        LOCKED,
        "1.31",
        "ResourceClaim",
        mutated(hub_claim(), prioritized(2)),
        mutated(hub_claim(), lambda o: o["spec"]["devices"]["requests"].__setitem__(0, {"name": "gpu"})),
    ),
    (
        "DRAAdminAccess",
        ("GA", True, True),
        LOCKED,
        "1.31",
        "ResourceClaim",
        mutated(hub_claim(), set_request(adminAccess=True)),
        hub_claim(),
    ),
    (
        "DRAResourceClaimDeviceStatus",
        ("GA", True, True),
        LOCKED,
        "1.31",
        "ResourceClaim",
        mutated(
            hub_claim(), lambda o: o.__setitem__("status", {"devices": [{"driver": "d", "pool": "p", "device": "x"}]})
        ),
        mutated(hub_claim(), lambda o: o.__setitem__("status", {})),
    ),
    (
        "DRADeviceTaints",
        ("GA", True, False),
        "DRADeviceTaintRules is enabled, but depends on features that are disabled: [DRADeviceTaints]",
        "DRADeviceTaints=false,DRADeviceTaintRules=false",
        "ResourceClaim",
        mutated(hub_claim(), tolerations({"operator": "Exists"})),
        hub_claim(),
    ),
    (
        "DRADeviceTaintRules",
        ("GA", True, False),
        None,
        "DRADeviceTaintRules=false",
        "DeviceTaintRule",
        taint_rule(),
        taint_rule(),  # the gate serves the kind; it drops no field
    ),
    (
        "DRAPartitionableDevices",
        ("BETA", True, False),
        None,
        "DRAPartitionableDevices=false",
        "ResourceSlice",
        with_device0(consumesCounters=[CONSUMES]),
        hub_slice(),
    ),
    (
        "DRAConsumableCapacity",
        ("BETA", True, False),
        None,
        "DRAConsumableCapacity=false",
        "ResourceSlice",
        with_device0(allowMultipleAllocations=True),
        hub_slice(),
    ),
    (
        "DRADeviceBindingConditions",
        ("BETA", True, False),
        None,
        "DRADeviceBindingConditions=false",
        "ResourceSlice",
        with_device0(bindingConditions=["ready"], bindingFailureConditions=["failed"], bindsToNode=True),
        hub_slice(),
    ),
    (
        "DRAExtendedResource",
        ("GA", True, True),
        LOCKED,
        "1.31",
        "DeviceClass",
        mutated(device_class(), lambda o: o["spec"].update(extendedResourceName="example.com/gpu")),
        device_class(),
    ),
    (
        "DRASchedulerFilterTimeout",
        ("BETA", True, False),
        None,
        "DRASchedulerFilterTimeout=false",
        "ResourceClaim",
        hub_claim(),
        hub_claim(),  # a scheduler setting; no field
    ),
]


def gates_off(flag: str) -> FeatureGates:
    return FeatureGates(release="1.31") if flag == "1.31" else FeatureGates.parse(flag, release="1.37")


@pytest.mark.parametrize(
    ("gate", "spec", "refusal", "off", "kind", "obj", "without"), GATE_CASES, ids=[c[0] for c in GATE_CASES]
)
def test_gate_1_37(
    gate: str, spec: tuple[str, bool, bool], refusal: str | None, off: str, kind: str, obj: Obj, without: Obj
) -> None:
    got = features_at("1.37")[gate]
    assert (got.pre_release, got.default, got.lock_to_default) == spec
    if refusal is None:
        assert not FeatureGates.parse(f"{gate}=false", release="1.37").enabled(gate)
    else:
        with pytest.raises(FeatureGateError) as err:
            FeatureGates.parse(f"{gate}=false", release="1.37")
        assert str(err.value) == refusal.format(gate=gate)
    rt = RESOURCE_KINDS[kind]
    disabled = gates_off(off)
    assert not disabled.enabled(gate)
    created = copy.deepcopy(obj)
    drop_disabled_fields(rt, created, None, disabled)
    assert created == without  # create drops
    updated = copy.deepcopy(obj)
    drop_disabled_fields(rt, updated, copy.deepcopy(obj), disabled)
    assert updated == obj  # update keeps what the old object used
    enabled = copy.deepcopy(obj)
    drop_disabled_fields(rt, enabled, None, FeatureGates(release="1.37"))
    assert enabled == obj  # on by default in 1.37
