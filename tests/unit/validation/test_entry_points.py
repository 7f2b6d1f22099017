"""The public entry points: realistic objects of every kind pass, inputs are not mutated, dispatch."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from services.api.admission.validation import validate_create, validate_status_update, validate_update
from services.api.machinery.status import invalid
from services.api.types.registry import RESOURCES, ResourceType
from tests.support.stored_kinds import STORED_KINDS

from .objects import (
    Obj,
    allocated_claim,
    claim,
    device_class,
    event,
    lease,
    namespace,
    node,
    pod,
    render,
    resource_slice,
    scheduling_context,
    template,
)

REALISTIC: dict[str, Callable[[], Obj]] = {
    "Namespace": namespace,
    "Node": node,
    "Pod": pod,
    "Event": event,
    "DeviceClass": device_class,
    "ResourceClaim": allocated_claim,
    "ResourceClaimTemplate": template,
    "ResourceSlice": resource_slice,
    "PodSchedulingContext": scheduling_context,
    "DeviceTaintRule": lambda: device_taint_rule(),
    "Lease": lease,
    **STORED_KINDS,
}


def device_taint_rule(name: str = "gpu-maintenance") -> Obj:
    """A DeviceTaintRule as Kubernetes 1.37's v1 has it (stored in v1's shape)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name, "uid": "u-1", "resourceVersion": "5", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1"},
            "taint": {"key": "example.com/maintenance", "value": "soon", "effect": "NoSchedule"},
        },
    }


@pytest.mark.parametrize(
    ("name", "field"),
    [("Bad_Name", "metadata.name"), ("", "metadata.name")],
)
def test_a_device_taint_rule_needs_a_dns_subdomain_name(name: str, field: str) -> None:
    rt = next(r for r in RESOURCES if r.kind == "DeviceTaintRule")
    rule = device_taint_rule(name)
    assert [e.field for e in validate_create(rt, rule)] == [field]
    old = device_taint_rule()
    renamed = {**old, "metadata": {**old["metadata"], "uid": "u-2"}}
    assert [e.field for e in validate_update(rt, renamed, old)] == ["metadata.uid"]


def test_every_registered_kind_has_a_realistic_object() -> None:
    assert {rt.kind for rt in RESOURCES} == set(REALISTIC)


@pytest.mark.parametrize("rt", RESOURCES, ids=[rt.kind for rt in RESOURCES])
def test_realistic_objects_are_valid(rt: ResourceType) -> None:
    obj = REALISTIC[rt.kind]()
    before = copy.deepcopy(obj)
    assert render(validate_create(rt, obj)) == []
    assert render(validate_update(rt, copy.deepcopy(obj), obj)) == []
    assert render(validate_status_update(rt, copy.deepcopy(obj), obj)) == []
    assert obj == before  # validation never mutates its input


def test_unchanged_large_slice_update_is_valid() -> None:
    rt = next(r for r in RESOURCES if r.kind == "ResourceSlice")
    old = resource_slice(128)
    assert validate_update(rt, copy.deepcopy(old), old) == []


def test_kind_without_status_subresource_falls_back_to_update_rules() -> None:
    rt = next(r for r in RESOURCES if r.kind == "ResourceClaimTemplate")
    old = template()
    new = copy.deepcopy(old)
    new["spec"]["spec"]["devices"]["requests"][0]["count"] = 2
    assert [e.field for e in validate_status_update(rt, new, old)] == ["spec"]


def test_unknown_kind_gets_the_generic_metadata_checks() -> None:
    rt = ResourceType("example.com", "v1", "Widget", "widgets", "widget", True)
    assert validate_create(rt, {"metadata": {"name": "ok", "namespace": "default"}}) == []
    assert render(validate_create(rt, {"metadata": {"name": "..", "namespace": "default"}})) == [
        "metadata.name: Invalid value: \"..\": may not be '..'"
    ]
    old = {"metadata": {"name": "ok", "namespace": "default"}}
    assert render(validate_update(rt, {"metadata": {"name": "other", "namespace": "default"}}, old)) == [
        'metadata.name: Invalid value: "other": field is immutable'
    ]


def test_errors_become_a_kubernetes_422() -> None:
    rt = next(r for r in RESOURCES if r.kind == "ResourceClaim")
    bad = claim()
    bad["spec"]["devices"]["requests"][0]["deviceClassName"] = ""
    bad["spec"]["devices"]["requests"][0]["count"] = -1
    err = invalid(rt.group, rt.kind, "gpu-claim", validate_create(rt, bad))
    assert err.status["message"] == (
        'ResourceClaim.resource.k8s.io "gpu-claim" is invalid: ['
        "spec.devices.requests[0].deviceClassName: Required value, "
        "spec.devices.requests[0].count: Invalid value: -1: must be greater than zero]"
    )
    assert err.status["details"]["causes"][1] == {
        "reason": "FieldValueInvalid",
        "message": "Invalid value: -1: must be greater than zero",
        "field": "spec.devices.requests[0].count",
    }
