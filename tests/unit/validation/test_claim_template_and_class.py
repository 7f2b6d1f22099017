"""ResourceClaimTemplate and DeviceClass rules (Kubernetes 1.31)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from services.api.admission.validation import validate_create, validate_update

from .objects import (
    BAD_NAME,
    CLASS,
    LABEL_VALUE_MSG,
    SUBDOMAIN_MSG,
    TEMPLATE,
    Obj,
    device_class,
    mutated,
    render,
    template,
)

Change = Callable[[Obj], Any]


def tmeta(**values: Any) -> Change:
    return lambda o: o["spec"]["metadata"].update(values)


TEMPLATE_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    (
        "bad name",
        lambda o: o["metadata"].update(name=BAD_NAME),
        [f'metadata.name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    ("creationTimestamp null in template metadata", tmeta(creationTimestamp=None), []),
    (
        "bad template label",
        tmeta(labels={"a": "spaces not allowed"}),
        [f'spec.metadata.labels: Invalid value: "spaces not allowed": {LABEL_VALUE_MSG}'],
    ),
    (
        "fields other than labels and annotations",
        tmeta(name="x", namespace="y", uid="z", generation=2, finalizers=["a/b"]),
        [
            "spec.metadata.name: Forbidden: cannot be set",
            "spec.metadata.namespace: Forbidden: cannot be set",
            "spec.metadata.uID: Forbidden: cannot be set",
            "spec.metadata.generation: Forbidden: cannot be set",
            "spec.metadata.finalizers: Forbidden: cannot be set",
        ],
    ),
    (
        "claim spec errors under spec.spec",
        lambda o: o["spec"]["spec"]["devices"]["requests"][0].update(deviceClassName=""),
        ["spec.spec.devices.requests[0].deviceClassName: Required value"],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in TEMPLATE_CASES], ids=[c[0] for c in TEMPLATE_CASES])
def test_template_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(TEMPLATE, mutated(template(), change))) == expected


def test_template_spec_is_immutable() -> None:
    old = template()
    assert validate_update(TEMPLATE, mutated(old, lambda o: None), old) == []
    new = mutated(old, tmeta(labels={"app": "other"}))
    spec = orjson.dumps(new["spec"], option=orjson.OPT_SORT_KEYS).decode()
    assert render(validate_update(TEMPLATE, new, old)) == [f"spec: Invalid value: {spec}: field is immutable"]


def selectors(*expressions: str) -> Change:
    return lambda o: o["spec"].update(selectors=[{"cel": {"expression": e}} for e in expressions])


CLASS_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    ("empty spec", lambda o: o.update(spec={}), []),
    (
        "bad name",
        lambda o: o["metadata"].update(name=BAD_NAME),
        [f'metadata.name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    ("selector without cel", lambda o: o["spec"].update(selectors=[{}]), ["spec.selectors[0].cel: Required value"]),
    ("32 selectors", selectors(*["true"] * 32), []),
    ("33 selectors", selectors(*["true"] * 33), ["spec.selectors: Too long: may not be longer than 32"]),
    (
        "selector not bool",
        selectors("device.driver"),
        [
            'spec.selectors[0].cel.expression: Invalid value: "device.driver": must evaluate to bool or the unknown '
            "type, not string"
        ],
    ),
    ("config without opaque", lambda o: o["spec"].update(config=[{}]), ["spec.config[0].opaque: Required value"]),
    (
        "33 configs",
        lambda o: o["spec"].update(config=[{"opaque": {"driver": "a.b", "parameters": {}}}] * 33),
        ["spec.config: Too long: may not be longer than 32"],
    ),
    (
        "suitable nodes",
        lambda o: o["spec"].update(
            suitableNodes={"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}
        ),
        [],
    ),
    (
        "empty suitable nodes (reported without the spec. prefix, as 1.31 does)",
        lambda o: o["spec"].update(suitableNodes={}),
        ["suitableNodes.nodeSelectorTerms: Required value: must have at least one node selector term"],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CLASS_CASES], ids=[c[0] for c in CLASS_CASES])
def test_class_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(CLASS, mutated(device_class(), change))) == expected


def test_class_update_compiles_only_changed_selectors() -> None:
    stored = mutated(device_class(), selectors("1"))  # stored before the rule existed
    assert validate_update(CLASS, mutated(stored, lambda o: o["metadata"].update(labels={"a": "b"})), stored) == []
    changed = mutated(stored, selectors("1", "true"))
    assert render(validate_update(CLASS, changed, stored)) == [
        'spec.selectors[0].cel.expression: Invalid value: "1": must evaluate to bool or the unknown type, not int'
    ]


def test_class_spec_is_mutable() -> None:
    old = device_class()
    assert validate_update(CLASS, mutated(old, selectors("true")), old) == []
