"""ResourceSlice rules (Kubernetes 1.31 ValidateResourceSlice and ...Update)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from services.api.admission.validation import validate_create, validate_update

from .objects import (
    BAD_NAME,
    C_IDENTIFIER_MSG,
    LABEL_MSG,
    SLICE,
    SUBDOMAIN_MSG,
    Obj,
    mutated,
    render,
    resource_slice,
)

Change = Callable[[Obj], Any]
SEMVER = "must be a string compatible with semver.org spec 2.0.0"
QUANTITY = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
NODE_SELECTION = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required"
A0 = "spec.devices[0].basic.attributes"
ONE_TERM = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}


def spec(**values: Any) -> Change:
    return lambda o: o["spec"].update(values)


def pool(**values: Any) -> Change:
    return lambda o: o["spec"]["pool"].update(values)


def attributes(value: dict[str, Any]) -> Change:
    return lambda o: o["spec"]["devices"][0]["basic"].update(attributes=value, capacity={})


def without(*keys: str) -> Change:
    return lambda o: [o["spec"].pop(k, None) for k in keys]


def _spec_json(change: Change) -> str:
    return orjson.dumps(mutated(resource_slice(), change)["spec"], option=orjson.OPT_SORT_KEYS).decode()


BOTH_NAME_AND_SELECTOR = spec(nodeSelector=ONE_TERM)
BOTH_NAME_AND_ALL = spec(allNodes=True)

CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    ("128 devices", lambda o: o.update(spec=resource_slice(128)["spec"]), []),
    (
        "129 devices",
        lambda o: o.update(spec=resource_slice(129)["spec"]),
        ["spec.devices: Too long: may not be longer than 128"],
    ),
    ("no devices", spec(devices=[]), []),
    (
        "bad name",
        lambda o: o["metadata"].update(name=BAD_NAME),
        [f'metadata.name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    (
        "bad node name",
        lambda o: (spec(nodeName=BAD_NAME)(o), pool(name=BAD_NAME)(o)),
        [
            f'spec.pool.name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}',
            f'spec.nodeName: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}',
        ],
    ),
    (
        "bad multi-part pool name",
        lambda o: (spec(nodeName=f"{BAD_NAME}/{BAD_NAME}")(o), pool(name=f"{BAD_NAME}/{BAD_NAME}")(o)),
        [
            f'spec.pool.name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}',
            f'spec.pool.name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}',
            f'spec.nodeName: Invalid value: "{BAD_NAME}/{BAD_NAME}": {SUBDOMAIN_MSG}',
        ],
    ),
    ("multi-part pool name", pool(name="rack-1/worker-1"), []),
    ("pool name of 253 bytes", pool(name="x" * 253), []),
    (
        "bad pool",
        pool(name="x/" * 126 + "xy", resourceSliceCount=0, generation=-1),
        [
            "spec.pool.name: Too long: may not be longer than 253",
            "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
            "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero",
        ],
    ),
    (
        "missing pool",
        spec(pool={}),
        [
            "spec.pool.name: Required value",
            "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
        ],
    ),
    ("bad driver", spec(driver=BAD_NAME), [f'spec.driver: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}']),
    (
        "missing driver",
        without("driver"),
        [
            "spec.driver: Required value",
            f'spec.driver: Invalid value: "": {SUBDOMAIN_MSG}',
        ],
    ),
    ("node selector instead of node name", lambda o: (without("nodeName")(o), spec(nodeSelector=ONE_TERM)(o)), []),
    ("all nodes instead of node name", lambda o: (without("nodeName")(o), spec(allNodes=True)(o)), []),
    ("allNodes false does not count", spec(allNodes=False), []),
    (
        "empty node selector",
        lambda o: (without("nodeName")(o), spec(nodeSelector={})(o)),
        [
            "spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term",
            "spec.nodeSelector.nodeSelectorTerms: Invalid value: []core.NodeSelectorTerm(nil): must have exactly one "
            "selector term",
        ],
    ),
    (
        "empty list of node selector terms",  # Go decodes [] to an empty slice (kube-apiserver 1.31, oracle)
        lambda o: (without("nodeName")(o), spec(nodeSelector={"nodeSelectorTerms": []})(o)),
        [
            "spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term",
            "spec.nodeSelector.nodeSelectorTerms: Invalid value: []core.NodeSelectorTerm{}: must have exactly one "
            "selector term",
        ],
    ),
    (
        "two selector terms",
        lambda o: (without("nodeName")(o), spec(nodeSelector={"nodeSelectorTerms": [{}, {}]})(o)),
        [
            "spec.nodeSelector.nodeSelectorTerms: Invalid value: [{},{}]: must have exactly one selector term",
        ],
    ),
    (
        "bad selector requirement",
        lambda o: (
            without("nodeName")(o),
            spec(
                nodeSelector={
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "a", "operator": "In"},
                                {"key": "b", "operator": "Exists", "values": ["x"]},
                                {"key": "c", "operator": "Gt", "values": []},
                                {"key": "d", "operator": "Near"},
                            ],
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
                                {"key": "spec.x", "operator": "Exists"},
                            ],
                        }
                    ]
                }
            )(o),
        ),
        [
            "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified "
            "when `operator` is 'In' or 'NotIn'",
            "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[1].values: Forbidden: may not be specified when "
            "`operator` is 'Exists' or 'DoesNotExist'",
            "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[2].values: Required value: must be specified "
            "single value when `operator` is 'Lt' or 'Gt'",
            'spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[3].operator: Invalid value: "Near": not a valid '
            "selector operator",
            "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].values: Required value: must be only one value "
            "when `operator` is 'In' or 'NotIn' for node field selector",
            'spec.nodeSelector.nodeSelectorTerms[0].matchFields[1].operator: Invalid value: "Exists": not a valid '
            "selector operator",
            'spec.nodeSelector.nodeSelectorTerms[0].matchFields[1].key: Invalid value: "spec.x": not a valid field '
            "selector key",
        ],
    ),
    (
        "node name and node selector",
        BOTH_NAME_AND_SELECTOR,
        [f"spec: Invalid value: {_spec_json(BOTH_NAME_AND_SELECTOR)}: {NODE_SELECTION}"],
    ),
    (
        "node name and all nodes",
        BOTH_NAME_AND_ALL,
        [f"spec: Invalid value: {_spec_json(BOTH_NAME_AND_ALL)}: {NODE_SELECTION}"],
    ),
    ("no node selection", without("nodeName"), [f"spec: Required value: {NODE_SELECTION}"]),
    (
        "bad device name",
        lambda o: o["spec"]["devices"][1].update(name=BAD_NAME),
        [f'spec.devices[1].name: Invalid value: "{BAD_NAME}": {LABEL_MSG}'],
    ),
    (
        "duplicate device names",
        lambda o: o["spec"]["devices"][1].update(name="gpu-0"),
        ['spec.devices[1].name: Duplicate value: "gpu-0"'],
    ),
    ("device without basic", lambda o: o["spec"]["devices"][0].pop("basic"), ["spec.devices[0].basic: Required value"]),
    ("empty basic", lambda o: o["spec"]["devices"][0].update(basic={}), []),
    (
        "bad attribute",
        attributes({BAD_NAME: {}}),
        [
            f'{A0}: Invalid value: "{BAD_NAME}": {C_IDENTIFIER_MSG}',
            f"{A0}[{BAD_NAME}]: Required value: exactly one value must be specified",
        ],
    ),
    (
        "two attribute values",
        attributes({"foo": {"string": "x", "version": "1.2.3"}}),
        [f'{A0}[foo]: Invalid value: {{"string":"x","version":"1.2.3"}}: exactly one field must be specified'],
    ),
    ("false and zero are values", attributes({"a": {"bool": False}, "b": {"int": 0}, "c": {"string": ""}}), []),
    ("semver with pre-release and build", attributes({"v": {"version": "1.0.0-beta.1+build.1"}}), []),
    ("semver too short", attributes({"v": {"version": "1.0"}}), [f'{A0}[v].version: Invalid value: "1.0": {SEMVER}']),
    (
        "semver leading zero",
        attributes({"v": {"version": "01.0.0"}}),
        [f'{A0}[v].version: Invalid value: "01.0.0": {SEMVER}'],
    ),
    (
        "version too long",
        attributes({"v": {"version": "x" * 65}}),
        [
            f'{A0}[v].version: Invalid value: "{"x" * 65}": {SEMVER}',
            f"{A0}[v].version: Too long: may not be longer than 64",
        ],
    ),
    ("string of 64 bytes", attributes({"s": {"string": "x" * 64}}), []),
    (
        "string too long",
        attributes({"s": {"string": "x" * 65}}),
        [f"{A0}[s].string: Too long: may not be longer than 64"],
    ),
    ("identifier of 32 bytes", attributes({"x" * 32: {"int": 1}}), []),
    ("identifier too long", attributes({"x" * 33: {"int": 1}}), [f"{A0}: Too long: may not be longer than 32"]),
    ("domain-qualified name", attributes({"dra.example.com/model": {"string": "a100"}}), []),
    (
        "bad domain",
        attributes({"Bad_Domain/model": {"int": 1}}),
        [f'{A0}: Invalid value: "Bad_Domain": {SUBDOMAIN_MSG}'],
    ),
    ("empty domain", attributes({"/model": {"int": 1}}), [f"{A0}: Required value: the prefix must not be empty"]),
    (
        "empty identifier",
        attributes({"dra.example.com/": {"int": 1}}),
        [f"{A0}: Required value: the name must not be empty"],
    ),
    ("two slashes are not rejected by 1.31", attributes({"a/b/c": {"int": 1}}), []),
    (
        "32 attributes and capacities",
        lambda o: o["spec"]["devices"][0].update(
            basic={
                "attributes": {f"a{i}": {"int": i} for i in range(16)},
                "capacity": {f"c{i}": "1" for i in range(16)},
            }
        ),
        [],
    ),
    (
        "33 attributes and capacities",
        lambda o: o["spec"]["devices"][0].update(
            basic={
                "attributes": {f"a{i}": {"int": i} for i in range(16)},
                "capacity": {f"c{i}": "1" for i in range(17)},
            }
        ),
        ["spec.devices[0].basic: Invalid value: 33: the total number of attributes and capacities must not exceed 32"],
    ),
    (
        "bad capacity name",
        lambda o: o["spec"]["devices"][0]["basic"].update(capacity={"1mem": "1Gi"}),
        [f'spec.devices[0].basic.capacity: Invalid value: "1mem": {C_IDENTIFIER_MSG}'],
    ),
    (
        "capacity not a quantity",
        lambda o: o["spec"]["devices"][0]["basic"].update(capacity={"memory": "lots"}),
        [f'spec.devices[0].basic.capacity[memory]: Invalid value: "lots": {QUANTITY}'],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(SLICE, mutated(resource_slice(), change))) == expected


def test_identifier_errors_are_type_invalid() -> None:
    errs = validate_create(SLICE, mutated(resource_slice(), attributes({"1x": {"int": 1}})))
    assert [e.cause()["reason"] for e in errs] == ["FieldValueTypeInvalid"]


UPDATE_CASES: list[tuple[str, Change, list[str]]] = [
    ("no change", lambda o: None, []),
    ("devices and generation may change", lambda o: (o["spec"]["devices"].pop(), pool(generation=1)(o)), []),
    (
        "driver is immutable",
        spec(driver="other.example.com"),
        ['spec.driver: Invalid value: "other.example.com": field is immutable'],
    ),
    (
        "pool name is immutable",
        pool(name="worker-2"),
        ['spec.pool.name: Invalid value: "worker-2": field is immutable'],
    ),
    (
        "node name is immutable",
        spec(nodeName="worker-2"),
        ['spec.nodeName: Invalid value: "worker-2": field is immutable'],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES])
def test_update(change: Change, expected: list[str]) -> None:
    old = resource_slice()
    assert render(validate_update(SLICE, mutated(old, change), old)) == expected
