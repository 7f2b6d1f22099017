"""ObjectMeta rules on create and update, exercised through ResourceClaims and DeviceClasses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.api.admission.validation import validate_create, validate_update

from .objects import (
    BAD_NAME,
    CLAIM,
    CLASS,
    LABEL_MSG,
    LABEL_VALUE_MSG,
    NAME_PART_MSG,
    SUBDOMAIN_MSG,
    Obj,
    claim,
    device_class,
    mutated,
    render,
)

Change = Callable[[Obj], Any]


def meta(**values: Any) -> Change:
    return lambda o: o["metadata"].update(values)


CREATE_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    ("missing name", meta(name=""), ["metadata.name: Required value: name or generateName is required"]),
    ("generateName only", lambda o: (o["metadata"].pop("name"), o["metadata"].update(generateName="gpu-claim-")), []),
    (
        "bad generateName",
        meta(generateName="Gpu-"),
        [f'metadata.generateName: Invalid value: "Gpu-": {SUBDOMAIN_MSG}'],
    ),
    ("bad name", meta(name=BAD_NAME), [f'metadata.name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}']),
    ("missing namespace", meta(namespace=""), ["metadata.namespace: Required value"]),
    ("bad namespace", meta(namespace="Team_A"), [f'metadata.namespace: Invalid value: "Team_A": {LABEL_MSG}']),
    (
        "negative generation",
        meta(generation=-1),
        ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"],
    ),
    ("good labels", meta(labels={"apps.kubernetes.io/name": "test"}), []),
    (
        "bad label value",
        meta(labels={"hello-world": "spaces not allowed"}),
        [f'metadata.labels: Invalid value: "spaces not allowed": {LABEL_VALUE_MSG}'],
    ),
    ("bad label key", meta(labels={BAD_NAME: "x"}), [f'metadata.labels: Invalid value: "{BAD_NAME}": {NAME_PART_MSG}']),
    ("good annotations", meta(annotations={"Example.com/Key": "hello world"}), []),
    (
        "bad annotations",
        meta(annotations={BAD_NAME: "hello world"}),
        [f'metadata.annotations: Invalid value: "{BAD_NAME}": {NAME_PART_MSG}'],
    ),
    ("annotations at the size limit", meta(annotations={"a": "x" * (256 * 1024 - 1)}), []),
    (
        "annotations over 256 KiB",
        meta(annotations={"a": "x" * (256 * 1024)}),
        ["metadata.annotations: Too long: must have at most 262144 bytes"],
    ),
    (
        "owner reference without fields",
        meta(ownerReferences=[{}]),
        [
            'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
            'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
            'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
            'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
        ],
    ),
    (
        "valid owner reference",
        meta(ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u", "controller": True}]),
        [],
    ),
    (
        "event as owner",
        meta(ownerReferences=[{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}]),
        [
            'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: '
            "/v1, Kind=Event is disallowed from being an owner"
        ],
    ),
    (
        "two controllers",
        meta(
            ownerReferences=[
                {"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "1", "controller": True},
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "uid": "2", "controller": True},
            ]
        ),
        [
            'metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","controller":true,"kind":"Pod","name":"a",'
            '"uid":"1"},{"apiVersion":"apps/v1","controller":true,"kind":"ReplicaSet","name":"b","uid":"2"}]: '
            'Only one reference can have Controller set to true. Found "true" in references for Pod/a and ReplicaSet/b'
        ],
    ),
    ("standard finalizer", meta(finalizers=["kubernetes", "example.com/foo"]), []),
    (
        "unqualified finalizer",
        meta(finalizers=["example.com/foo", "foo"]),
        [
            'metadata.finalizers[1]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully '
            "qualified"
        ],
    ),
    (
        "badly named finalizer",
        meta(finalizers=["example.com/-x"]),
        [f'metadata.finalizers: Invalid value: "example.com/-x": {NAME_PART_MSG}'],
    ),
    (
        "orphan and foreground deletion",
        meta(finalizers=["orphan", "foregroundDeletion"]),
        [
            'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: '
            "finalizer orphan and foregroundDeletion cannot be both set"
        ],
    ),
    (
        "valid managed fields",
        meta(managedFields=[{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1"}]),
        [],
    ),
    (
        "bad managed fields",
        meta(
            managedFields=[
                {"manager": "a\x07", "operation": "Patch", "fieldsType": "FieldsV2", "subresource": "s" * 257},
                {"manager": "m" * 129, "operation": "Update"},
            ]
        ),
        [
            'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
            'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
            'metadata.managedFields[0].manager: Invalid value: "a\\a": invalid character U+0007 (at position 1)',
            "metadata.managedFields[0].subresource: Too long: must have at most 256 bytes",
            "metadata.managedFields[1].manager: Too long: must have at most 128 bytes",
        ],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(CLAIM, mutated(claim(), change))) == expected


def test_namespace_forbidden_for_cluster_scoped_kinds() -> None:
    obj = mutated(device_class(), meta(namespace="default"))
    assert render(validate_create(CLASS, obj)) == ["metadata.namespace: Forbidden: not allowed on this type"]
    assert validate_create(CLASS, device_class()) == []


UPDATE_CASES: list[tuple[str, Change, Change, list[str]]] = [
    ("no change", lambda o: None, lambda o: None, []),
    ("rename", lambda o: None, meta(name="other"), ['metadata.name: Invalid value: "other": field is immutable']),
    (
        "move namespace",
        lambda o: None,
        meta(namespace="ns2"),
        ['metadata.namespace: Invalid value: "ns2": field is immutable'],
    ),
    (
        "change uid",
        lambda o: None,
        meta(uid="other-uid"),
        ['metadata.uid: Invalid value: "other-uid": field is immutable'],
    ),
    (
        "omit uid, creationTimestamp and resourceVersion",
        lambda o: None,
        lambda o: [o["metadata"].pop(k) for k in ("uid", "creationTimestamp", "resourceVersion")],
        [],
    ),
    (
        "creationTimestamp is kept from the stored object",
        lambda o: None,
        meta(creationTimestamp="2030-01-01T00:00:00Z"),
        [],
    ),
    (
        "creationTimestamp set where none was stored",
        lambda o: o["metadata"].pop("creationTimestamp"),
        meta(creationTimestamp="2024-08-13T10:00:00Z"),
        ["metadata.creationTimestamp: Invalid value: 2024-08-13 10:00:00 +0000 UTC: field is immutable"],
    ),
    (
        "client sets deletionTimestamp",
        lambda o: None,
        meta(deletionTimestamp="2024-08-13T11:00:00Z"),
        ["metadata.deletionTimestamp: Invalid value: 2024-08-13 11:00:00 +0000 UTC: field is immutable"],
    ),
    (
        "change deletionGracePeriodSeconds",
        meta(deletionGracePeriodSeconds=30),
        meta(deletionGracePeriodSeconds=10),
        ["metadata.deletionGracePeriodSeconds: Invalid value: 10: field is immutable"],
    ),
    ("omit deletionGracePeriodSeconds", meta(deletionGracePeriodSeconds=30), lambda o: None, []),
    (
        "new finalizer while deleting",
        meta(deletionTimestamp="2024-08-13T11:00:00Z", finalizers=["example.com/a"]),
        meta(deletionTimestamp="2024-08-13T11:00:00Z", finalizers=["example.com/a", "example.com/c", "example.com/b"]),
        [
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, "
            'found new finalizers []string{"example.com/b", "example.com/c"}'
        ],
    ),
    (
        "remove finalizer while deleting",
        meta(deletionTimestamp="2024-08-13T11:00:00Z", finalizers=["example.com/a"]),
        meta(deletionTimestamp="2024-08-13T11:00:00Z", finalizers=[]),
        [],
    ),
    (
        "bad label reported once",
        lambda o: None,
        meta(labels={"x": "spaces not allowed"}),
        [f'metadata.labels: Invalid value: "spaces not allowed": {LABEL_VALUE_MSG}'],
    ),
    (
        "unqualified finalizer reported once",
        lambda o: None,
        meta(finalizers=["foo"]),
        [
            'metadata.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully '
            "qualified"
        ],
    ),
]


@pytest.mark.parametrize(
    ("old_change", "new_change", "expected"), [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES]
)
def test_update(old_change: Change, new_change: Change, expected: list[str]) -> None:
    old = mutated(claim(), old_change)
    new = mutated(old, new_change)
    assert render(validate_update(CLAIM, new, old)) == expected
