"""Gated fields: dropped on create, kept on update when already used, dropped when newly added.

Cases follow Kubernetes 1.31's pkg/registry/resource/*/strategy_test.go and
pkg/api/pod/util_test.go, plus 1.32's DRAAdminAccess.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.api.admission.gated_fields import drop_disabled_fields
from services.api.types import registry
from services.kube.feature_gates import FeatureGates
from tests.support import samples

Obj = dict[str, Any]


def registry_kind(group: str, kind: str) -> registry.ResourceType:
    rt = registry.by_kind(group, kind)
    assert rt is not None
    return rt


CLAIM = registry_kind("resource.k8s.io", "ResourceClaim")
TEMPLATE = registry_kind("resource.k8s.io", "ResourceClaimTemplate")
CLASS = registry_kind("resource.k8s.io", "DeviceClass")
SLICE = registry_kind("resource.k8s.io", "ResourceSlice")
PSC = registry_kind("resource.k8s.io", "PodSchedulingContext")
POD = registry_kind("", "Pod")

# These cases are 1.31's (the seeds'): pinned to that release, whatever the default becomes.
DEFAULT = FeatureGates(release="1.31")  # DRA on, classic DRA off, admin access off
CLASSIC = FeatureGates.parse("DRAControlPlaneController=true", release="1.31")
ADMIN = FeatureGates.parse("DRAAdminAccess=true", release="1.31")
NO_DRA = FeatureGates.parse("DynamicResourceAllocation=false", release="1.31")
EVERYTHING = FeatureGates.parse("DRAControlPlaneController=true,DRAAdminAccess=true", release="1.31")


def dropped(rt: registry.ResourceType, new: Obj, old: Obj | None, gates: FeatureGates) -> Obj:
    out = copy.deepcopy(new)
    drop_disabled_fields(rt, out, copy.deepcopy(old) if old is not None else None, gates)
    return out


# --------------------------------------------------------------------------
# ResourceClaim: DRAControlPlaneController

PLAIN_CLAIM: Obj = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": []}}}
CONTROLLER_CLAIM: Obj = {**PLAIN_CLAIM, "spec": {"devices": {"requests": []}, "controller": "dra.example.com"}}
ALLOCATED_CLAIM: Obj = {**PLAIN_CLAIM, "status": {"allocation": {}}}
GATED_STATUS_CLAIM: Obj = {
    **CONTROLLER_CLAIM,
    "status": {"allocation": {"controller": "dra.example.com"}, "deallocationRequested": True},
}


def test_claim_create_drops_controller_when_gate_off() -> None:
    assert dropped(CLAIM, CONTROLLER_CLAIM, None, DEFAULT) == PLAIN_CLAIM


def test_claim_create_keeps_controller_when_gate_on() -> None:
    assert dropped(CLAIM, CONTROLLER_CLAIM, None, CLASSIC) == CONTROLLER_CLAIM


def test_claim_update_drops_newly_added_controller() -> None:
    assert dropped(CLAIM, CONTROLLER_CLAIM, PLAIN_CLAIM, DEFAULT) == PLAIN_CLAIM


def test_claim_update_keeps_controller_that_was_already_set() -> None:
    assert dropped(CLAIM, CONTROLLER_CLAIM, CONTROLLER_CLAIM, DEFAULT) == CONTROLLER_CLAIM


def test_claim_status_update_drops_new_gated_status_fields() -> None:
    new = {**PLAIN_CLAIM, "status": GATED_STATUS_CLAIM["status"]}
    assert dropped(CLAIM, new, PLAIN_CLAIM, DEFAULT) == ALLOCATED_CLAIM


def test_claim_status_update_keeps_gated_status_fields_when_gate_on() -> None:
    new = {**PLAIN_CLAIM, "status": GATED_STATUS_CLAIM["status"]}
    assert dropped(CLAIM, new, PLAIN_CLAIM, CLASSIC) == new


def test_claim_status_update_keeps_status_fields_because_of_spec() -> None:
    assert dropped(CLAIM, GATED_STATUS_CLAIM, CONTROLLER_CLAIM, DEFAULT) == GATED_STATUS_CLAIM


def test_claim_status_update_keeps_status_fields_because_of_status() -> None:
    old = {**PLAIN_CLAIM, "status": GATED_STATUS_CLAIM["status"]}
    assert dropped(CLAIM, old, old, DEFAULT) == old


def test_claim_allocation_controller_dropped_only_when_there_was_no_allocation() -> None:
    # As in 1.31: an existing allocation (even one without a controller) lets the field through.
    new = {**PLAIN_CLAIM, "status": {"allocation": {"controller": "dra.example.com"}}}
    assert dropped(CLAIM, new, ALLOCATED_CLAIM, DEFAULT) == new
    assert dropped(CLAIM, new, PLAIN_CLAIM, DEFAULT) == ALLOCATED_CLAIM


def test_claim_deallocation_requested_kept_while_old_claim_requested_it() -> None:
    old = {**PLAIN_CLAIM, "status": {"allocation": {}, "deallocationRequested": True}}
    assert dropped(CLAIM, old, old, DEFAULT) == old
    new = {**PLAIN_CLAIM, "status": {"allocation": {}, "deallocationRequested": True}}
    assert dropped(CLAIM, new, ALLOCATED_CLAIM, DEFAULT) == ALLOCATED_CLAIM


def test_claim_with_null_parts_is_tolerated() -> None:
    new = {"metadata": {"name": "c"}, "spec": None, "status": None}
    assert dropped(CLAIM, new, None, DEFAULT) == new
    assert dropped(CLAIM, new, {"spec": None}, DEFAULT) == new


# --------------------------------------------------------------------------
# DeviceClass: DRAControlPlaneController

PLAIN_CLASS: Obj = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": "true"}}]}}
SUITABLE_CLASS: Obj = {**PLAIN_CLASS, "spec": {**PLAIN_CLASS["spec"], "suitableNodes": {"nodeSelectorTerms": []}}}


@pytest.mark.parametrize(
    ("new", "old", "gates", "expected"),
    [
        (SUITABLE_CLASS, None, DEFAULT, PLAIN_CLASS),
        (SUITABLE_CLASS, None, CLASSIC, SUITABLE_CLASS),
        (SUITABLE_CLASS, PLAIN_CLASS, DEFAULT, PLAIN_CLASS),
        (SUITABLE_CLASS, PLAIN_CLASS, CLASSIC, SUITABLE_CLASS),
        (SUITABLE_CLASS, SUITABLE_CLASS, DEFAULT, SUITABLE_CLASS),
        (PLAIN_CLASS, SUITABLE_CLASS, DEFAULT, PLAIN_CLASS),
    ],
    ids=["create-drop", "create-keep", "update-drop-new", "update-keep-gate-on", "update-keep-existing", "removal"],
)
def test_device_class_suitable_nodes(new: Obj, old: Obj | None, gates: FeatureGates, expected: Obj) -> None:
    assert dropped(CLASS, new, old, gates) == expected


# --------------------------------------------------------------------------
# adminAccess: DRAAdminAccess (1.32 semantics)


def _claim_with_admin(value: bool | None) -> Obj:
    request: Obj = {"name": "r", "deviceClassName": "c"}
    if value is not None:
        request["adminAccess"] = value
    return {
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [request, {"name": "s", "deviceClassName": "c"}]}},
    }


def _template(claim: Obj) -> Obj:
    return {"metadata": {"name": "t"}, "spec": {"metadata": {"labels": {"a": "b"}}, "spec": claim["spec"]}}


@pytest.mark.parametrize(
    ("new", "old", "gates", "expected"),
    [
        (True, None, DEFAULT, None),
        (False, None, DEFAULT, None),
        (True, None, ADMIN, True),
        (True, "none", DEFAULT, None),
        (True, False, DEFAULT, True),
        (True, True, DEFAULT, True),
        (True, "none", ADMIN, True),
    ],
    ids=[
        "create-drop",
        "create-drop-false",
        "create-keep-gate-on",
        "update-drop-new",
        "update-keep-set-false",
        "update-keep-existing",
        "update-keep-gate-on",
    ],
)
def test_admin_access(new: bool, old: bool | str | None, gates: FeatureGates, expected: bool | None) -> None:
    new_claim = _claim_with_admin(new)
    old_claim = None if old is None else _claim_with_admin(None if old == "none" else bool(old))
    out = dropped(CLAIM, new_claim, old_claim, gates)
    assert out["spec"]["devices"]["requests"][0].get("adminAccess") == expected
    assert out["spec"]["devices"]["requests"][1] == {"name": "s", "deviceClassName": "c"}
    # Templates follow the same rule on spec.spec.
    out = dropped(TEMPLATE, _template(new_claim), None if old_claim is None else _template(old_claim), gates)
    assert out["spec"]["spec"]["devices"]["requests"][0].get("adminAccess") == expected
    assert out["spec"]["metadata"] == {"labels": {"a": "b"}}


def test_realistic_claim_under_default_gates() -> None:
    claim = samples.resource_claim()
    out = dropped(CLAIM, claim, None, DEFAULT)
    assert "controller" not in out["spec"]
    assert all("adminAccess" not in r for r in out["spec"]["devices"]["requests"])
    assert out["status"] == claim["status"], "status is the strategy's business on create, not this module's"
    assert dropped(CLAIM, claim, None, EVERYTHING) == claim


def test_template_controller_is_not_gated_in_1_31() -> None:
    template = samples.resource_claim_template()
    out = dropped(TEMPLATE, template, None, DEFAULT)
    assert out["spec"]["spec"]["controller"] == "gpu.example.com"


def test_kinds_without_gated_fields_are_untouched() -> None:
    for rt, make in [(SLICE, samples.resource_slice), (PSC, samples.pod_scheduling_context)]:
        for gates in (DEFAULT, NO_DRA):
            assert dropped(rt, make(), None, gates) == make()


# --------------------------------------------------------------------------
# Pod: DynamicResourceAllocation


def _dra_pod() -> Obj:
    return {
        "metadata": {"name": "p"},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
            "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}], "limits": {"cpu": "1"}}}],
            "initContainers": [{"name": "i", "resources": {"claims": [{"name": "gpu"}]}}],
            "ephemeralContainers": [{"name": "e", "resources": {"claims": [{"name": "gpu"}]}}],
        },
        "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu"}], "phase": "Pending"},
    }


def _plain_pod() -> Obj:
    return {
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}],
            "initContainers": [{"name": "i", "resources": {}}],
            "ephemeralContainers": [{"name": "e", "resources": {}}],
        },
        "status": {"phase": "Pending"},
    }


def test_pod_create_drops_dra_fields_when_gate_off() -> None:
    assert dropped(POD, _dra_pod(), None, NO_DRA) == _plain_pod()


def test_pod_create_keeps_dra_fields_when_gate_on() -> None:
    assert dropped(POD, _dra_pod(), None, DEFAULT) == _dra_pod()


def test_pod_update_drops_newly_added_dra_fields() -> None:
    assert dropped(POD, _dra_pod(), _plain_pod(), NO_DRA) == _plain_pod()


def test_pod_update_keeps_dra_fields_already_in_use() -> None:
    assert dropped(POD, _dra_pod(), _dra_pod(), NO_DRA) == _dra_pod()


def test_pod_status_field_depends_on_the_old_spec() -> None:
    # Status update: the spec is the old spec; resourceClaimStatuses survive because the spec uses claims.
    old = _dra_pod()
    old["status"].pop("resourceClaimStatuses")
    assert dropped(POD, _dra_pod(), old, NO_DRA) == _dra_pod()
    # An old pod with statuses but no claims in its spec does not protect them.
    old = _plain_pod()
    old["status"]["resourceClaimStatuses"] = [{"name": "gpu"}]
    new = _plain_pod()
    new["status"]["resourceClaimStatuses"] = [{"name": "gpu"}]
    assert dropped(POD, new, old, NO_DRA) == _plain_pod()


def test_pod_with_empty_claim_list_is_not_in_use() -> None:
    old = _plain_pod()
    old["spec"]["resourceClaims"] = []
    assert dropped(POD, _dra_pod(), old, NO_DRA) == _plain_pod()


def test_realistic_pod_under_gates() -> None:
    pod = samples.pod()
    assert dropped(POD, pod, None, DEFAULT) == pod
    out = dropped(POD, pod, None, NO_DRA)
    assert "resourceClaims" not in out["spec"]
    assert "claims" not in out["spec"]["containers"][0]["resources"]
    assert "resourceClaimStatuses" not in out["status"]
    assert out["spec"]["containers"][0]["resources"]["limits"] == pod["spec"]["containers"][0]["resources"]["limits"]
