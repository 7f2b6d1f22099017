"""Node, Namespace and core/v1 Event rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.api.admission.validation import validate_create, validate_status_update, validate_update

from .objects import (
    BAD_NAME,
    EVENT,
    LABEL_MSG,
    LABEL_VALUE_MSG,
    NAME_PART_MSG,
    NAMESPACE,
    NODE,
    SUBDOMAIN_MSG,
    Obj,
    event,
    mutated,
    namespace,
    node,
    render,
)

Change = Callable[[Obj], Any]


def taints(*values: Obj) -> Change:
    return lambda o: o["spec"].update(taints=list(values))


def capacity(**values: Any) -> Change:
    return lambda o: o["status"]["capacity"].update(values)


NODE_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    (
        "bad name",
        lambda o: o["metadata"].update(name=BAD_NAME),
        [f'metadata.name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    (
        "same key, different effects",
        taints({"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoExecute"}),
        [],
    ),
    (
        "bad taints",
        taints({"key": "-k", "value": "a b", "effect": ""}, {"key": "k", "effect": "Sometimes"}),
        [
            f'metadata.taints[0].key: Invalid value: "-k": {NAME_PART_MSG}',
            f'metadata.taints[0].value: Invalid value: "a b": {LABEL_VALUE_MSG}',
            "metadata.taints[0].effect: Required value",
            'metadata.taints[1].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
            '"PreferNoSchedule", "NoExecute"',
        ],
    ),
    (
        "duplicate taint",
        taints({"key": "k", "effect": "NoSchedule"}, {"key": "k", "value": "x", "effect": "NoSchedule"}),
        [
            'metadata.taints[1]: Duplicate value: {"effect":"NoSchedule","key":"k","value":"x"}: '
            "taints must be unique by key and effect pair"
        ],
    ),
    (
        "negative capacity",
        capacity(cpu="-1"),
        ['status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0'],
    ),
    (
        "fractional pods",
        lambda o: o["status"]["allocatable"].update(pods="1500m"),
        ['status.allocatable.pods: Invalid value: "1500m": must be an integer'],
    ),
    (
        "fractional extended resource",
        capacity(**{"example.com/gpu": "0.5"}),
        ['status.capacity.example.com/gpu: Invalid value: "500m": must be an integer'],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in NODE_CASES], ids=[c[0] for c in NODE_CASES])
def test_node_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(NODE, mutated(node(), change))) == expected


NODE_UPDATE_CASES: list[tuple[str, Change, Change, list[str]]] = [
    (
        "status and taints may change",
        lambda o: None,
        lambda o: (taints()(o), o["spec"].update(unschedulable=True), capacity(cpu="16")(o)),
        [],
    ),
    ("set pod CIDRs", lambda o: None, lambda o: o["spec"].update(podCIDRs=["10.244.1.0/24"]), []),
    (
        "change pod CIDRs",
        lambda o: o["spec"].update(podCIDRs=["10.244.1.0/24"]),
        lambda o: o["spec"].update(podCIDRs=["10.244.2.0/24"]),
        ['spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid'],
    ),
    (
        "change provider ID",
        lambda o: o["spec"].update(providerID="kind://a"),
        lambda o: o["spec"].update(providerID="kind://b"),
        ['spec.providerID: Forbidden: node updates may not change providerID except from "" to valid'],
    ),
    (
        "duplicate address",
        lambda o: None,
        lambda o: o["status"]["addresses"].append({"type": "InternalIP", "address": "10.0.0.1"}),
        ['status.addresses[2]: Duplicate value: {"address":"10.0.0.1","type":"InternalIP"}'],
    ),
    (
        "bad taint on update",
        lambda o: None,
        taints({"key": "k", "effect": "Never"}),
        [
            'metadata.taints[0].effect: Unsupported value: "Never": supported values: "NoSchedule", '
            '"PreferNoSchedule", "NoExecute"'
        ],
    ),
    (
        "change external ID",
        lambda o: None,
        lambda o: o["spec"].update(externalID="x"),
        ["spec.externalID: Forbidden: may not be updated"],
    ),
]


@pytest.mark.parametrize(
    ("old_change", "new_change", "expected"), [c[1:] for c in NODE_UPDATE_CASES], ids=[c[0] for c in NODE_UPDATE_CASES]
)
@pytest.mark.parametrize("status", [False, True], ids=["update", "status"])
def test_node_update(old_change: Change, new_change: Change, expected: list[str], status: bool) -> None:
    old = mutated(node(), old_change)
    validate = validate_status_update if status else validate_update
    assert render(validate(NODE, mutated(old, new_change), old)) == expected


NAMESPACE_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    (
        "name with dots",
        lambda o: o["metadata"].update(name="team.a"),
        ['metadata.name: Invalid value: "team.a": must not contain dots'],
    ),
    (
        "upper-case name",
        lambda o: o["metadata"].update(name="Team"),
        [f'metadata.name: Invalid value: "Team": {LABEL_MSG}'],
    ),
    (
        "unqualified finalizer",
        lambda o: o["spec"].update(finalizers=["foo"]),
        ['spec.finalizers: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified'],
    ),
    (
        "bad finalizer",
        lambda o: o["spec"].update(finalizers=["example.com/-x"]),
        [f'spec.finalizers: Invalid value: "example.com/-x": {NAME_PART_MSG}'],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in NAMESPACE_CASES], ids=[c[0] for c in NAMESPACE_CASES])
def test_namespace_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(NAMESPACE, mutated(namespace(), change))) == expected


def deleting(o: Obj) -> None:
    o["metadata"]["deletionTimestamp"] = "2024-08-13T11:00:00Z"


NAMESPACE_STATUS_CASES: list[tuple[str, Change, Change, list[str]]] = [
    ("active", lambda o: None, lambda o: None, []),
    ("empty phase means Active", lambda o: None, lambda o: o.update(status={}), []),
    (
        "terminating while not deleted",
        lambda o: None,
        lambda o: o["status"].update(phase="Terminating"),
        ["status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"],
    ),
    ("terminating while deleted", deleting, lambda o: o["status"].update(phase="Terminating"), []),
    (
        "active while deleted",
        deleting,
        lambda o: None,
        ["status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty"],
    ),
]


@pytest.mark.parametrize(
    ("old_change", "new_change", "expected"),
    [c[1:] for c in NAMESPACE_STATUS_CASES],
    ids=[c[0] for c in NAMESPACE_STATUS_CASES],
)
def test_namespace_status_update(old_change: Change, new_change: Change, expected: list[str]) -> None:
    old = mutated(namespace(), old_change)
    assert render(validate_status_update(NAMESPACE, mutated(old, new_change), old)) == expected


NEW_STYLE = {
    "eventTime": "2024-08-13T10:00:00.000000Z",
    "reportingComponent": "default-scheduler",
    "reportingInstance": "default-scheduler-worker-1",
    "action": "Scheduling",
}

EVENT_CASES: list[tuple[str, Change, list[str]]] = [
    ("legacy event", lambda o: None, []),
    ("new-style event", lambda o: o.update(NEW_STYLE), []),
    (
        "involved object elsewhere",
        lambda o: o["involvedObject"].update(namespace="other"),
        ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
    ),
    ("cluster-scoped object, default namespace", lambda o: o["involvedObject"].pop("namespace"), []),
    (
        "cluster-scoped object, other namespace",
        lambda o: (o["involvedObject"].pop("namespace"), o["metadata"].update(namespace="team-a")),
        ['involvedObject.namespace: Invalid value: "": does not match event.namespace'],
    ),
    (
        "new-style without reporting fields",
        lambda o: o.update(eventTime="2024-08-13T10:00:00.000000Z", reason=""),
        [
            "reportingComponent: Required value",
            'reportingComponent: Invalid value: "": name part must be non-empty',
            f'reportingComponent: Invalid value: "": {NAME_PART_MSG}',
            "reportingInstance: Required value",
            "action: Required value",
            "reason: Required value",
        ],
    ),
    (
        "new-style with long fields",
        lambda o: (o.update(NEW_STYLE), o.update(reason="r" * 129, message="m" * 1025)),
        [
            'reason: Invalid value: "": can have at most 128 characters',
            'message: Invalid value: "": can have at most 1024 characters',
        ],
    ),
    (
        "bad namespace",
        lambda o: (o["metadata"].update(namespace="Bad"), o["involvedObject"].update(namespace="Bad")),
        [f'namespace: Invalid value: "Bad": {SUBDOMAIN_MSG}'],
    ),
    (
        "name that is not a path segment",
        lambda o: o["metadata"].update(name="a/b"),
        ["metadata.name: Invalid value: \"a/b\": may not contain '/'"],
    ),
    (
        "missing name",
        lambda o: o["metadata"].pop("name"),
        ["metadata.name: Required value: name or generateName is required"],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in EVENT_CASES], ids=[c[0] for c in EVENT_CASES])
def test_event_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(EVENT, mutated(event(), change))) == expected


def test_event_update() -> None:
    old = event()
    assert validate_update(EVENT, mutated(old, lambda o: o.update(count=2, message="again")), old) == []
    renamed = mutated(old, lambda o: o["metadata"].update(name="other"))
    assert render(validate_update(EVENT, renamed, old)) == ['metadata.name: Invalid value: "other": field is immutable']
