"""Building generated claims, finding them again (recovery and legacy names), recording them in the pod."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from services.controllers.gates import gate_enabled
from services.controllers.generated_claims import (
    ADMIN_ACCESS_DISABLED,
    AdminAccessDisabled,
    claim_statuses_patch,
    find_generated_claim,
    needs_admin_access,
    new_claim_for_pod,
)
from services.kube.feature_gates import FeatureGates
from services.kube.generated_names import GENERATE_NAME_ALPHABET
from services.kube.resourceclaim import POD_CLAIM_NAME_ANNOTATION

POD: dict[str, Any] = {
    "metadata": {"name": "web-0", "namespace": "ns", "uid": "pod-uid"},
    "spec": {
        "resourceClaims": [
            {"name": "gpu", "resourceClaimTemplateName": "gpu-template"},
            {"name": "nic", "resourceClaimTemplateName": "nic-template"},
        ]
    },
    "status": {"phase": "Pending"},
}
GPU = POD["spec"]["resourceClaims"][0]


def template(*, admin: bool = False, labels: dict[str, str] | None = None, annotations: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {"name": "gpu", "deviceClassName": "gpu.example.com"}
    if admin:
        request["adminAccess"] = True
    meta: dict[str, Any] = {}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "metadata": {"name": "gpu-template", "namespace": "ns"},
        "spec": {"metadata": meta, "spec": {"devices": {"requests": [request]}}},
    }


def owned(name: str, *, annotation: str | None, created: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "creationTimestamp": created,
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web-0", "uid": "pod-uid", "controller": True}],
    }
    if annotation is not None:
        meta["annotations"] = {POD_CLAIM_NAME_ANNOTATION: annotation}
    return {"metadata": meta}


def test_new_claim_for_pod() -> None:
    tmpl = template(labels={"team": "ml"}, annotations={"note": "x"})
    before = copy.deepcopy(tmpl)
    claim = new_claim_for_pod(POD, GPU, tmpl, admin_access_enabled=False, pick_name=lambda prefix: prefix + "x2b4z")
    assert claim == {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {
            "name": "web-0-gpu-x2b4z",
            "generateName": "web-0-gpu-",
            "namespace": "ns",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": "web-0",
                    "uid": "pod-uid",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "labels": {"team": "ml"},
            "annotations": {"note": "x", POD_CLAIM_NAME_ANNOTATION: "gpu"},
        },
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }
    claim["spec"]["devices"]["requests"][0]["name"] = "changed"
    claim["metadata"]["annotations"]["note"] = "changed"
    assert tmpl == before, "the template (an informer object) must not be changed"


def test_new_claim_is_named_as_the_committer_would_name_it() -> None:
    """The controller picks the name (to record it in the pod status in the same chain); generateName stays."""
    names = {new_claim_for_pod(POD, GPU, template(), admin_access_enabled=False)["metadata"]["name"] for _ in range(20)}
    assert len(names) > 1, "a random suffix, so that a retry after AlreadyExists picks another name"
    for name in names:
        assert re.fullmatch(f"web-0-gpu-[{GENERATE_NAME_ALPHABET}]{{5}}", name), name


def test_new_claim_without_template_metadata() -> None:
    claim = new_claim_for_pod(POD, GPU, template(), admin_access_enabled=False)
    assert "labels" not in claim["metadata"]
    assert claim["metadata"]["annotations"] == {POD_CLAIM_NAME_ANNOTATION: "gpu"}


@pytest.mark.parametrize(
    ("admin", "gate", "created"),
    [(False, False, True), (False, True, True), (True, True, True), (True, False, False)],
)
def test_admin_access_gate(admin: bool, gate: bool, created: bool) -> None:
    tmpl = template(admin=admin)
    assert needs_admin_access(tmpl) is admin
    if created:
        assert new_claim_for_pod(POD, GPU, tmpl, admin_access_enabled=gate)["spec"] == tmpl["spec"]["spec"]
    else:
        with pytest.raises(AdminAccessDisabled, match=f"^{ADMIN_ACCESS_DISABLED}$"):
            new_claim_for_pod(POD, GPU, tmpl, admin_access_enabled=gate)


def test_gate_sources() -> None:
    class Gates:
        def enabled(self, name: str) -> bool:
            if name != "DRAAdminAccess":
                raise ValueError(name)
            return True

    # The project default is the default release's, 1.37: DRAAdminAccess is GA and on (1.31/1.32: off).
    assert gate_enabled(None, "DRAAdminAccess") is True
    assert gate_enabled({"DRAAdminAccess": False}, "DRAAdminAccess") is False
    assert gate_enabled({}, "DRAAdminAccess") is True
    assert gate_enabled(None, "DRAControlPlaneController") is False
    assert gate_enabled(FeatureGates(release="1.31"), "DRAAdminAccess") is False, "1.31 (the seeds'): off"
    assert gate_enabled(Gates(), "DRAAdminAccess") is True
    assert gate_enabled(Gates(), "DynamicResourceAllocation") is True, "unknown to the source: default"


FIND = [
    # (case, claims the pod owns, expected name or None)
    ("nothing owned", [], None),
    ("annotated for this pod claim", [owned("web-0-gpu-abcde", annotation="gpu")], "web-0-gpu-abcde"),
    ("annotated for another pod claim", [owned("web-0-nic-abcde", annotation="nic")], None),
    ("legacy name without annotation", [owned("web-0-gpu", annotation=None)], "web-0-gpu"),
    ("legacy name of another pod claim", [owned("web-0-nic", annotation=None)], None),
    ("no annotation, not the legacy name", [owned("something-else", annotation=None)], None),
    ("annotated for another claim with the legacy name", [owned("web-0-gpu", annotation="nic")], None),
    (
        "several: the oldest wins",
        [
            owned("web-0-gpu-zzzzz", annotation="gpu", created="2026-01-01T00:00:02Z"),
            owned("web-0-gpu-yyyyy", annotation="gpu", created="2026-01-01T00:00:01Z"),
        ],
        "web-0-gpu-yyyyy",
    ),
]


@pytest.mark.parametrize(("case", "claims", "expected"), FIND, ids=[c[0] for c in FIND])
def test_find_generated_claim(case: str, claims: list[dict[str, Any]], expected: str | None) -> None:
    found = find_generated_claim(POD, GPU, claims)
    assert (found["metadata"]["name"] if found else None) == expected


def test_find_is_independent_of_order() -> None:
    claims = [
        owned("web-0-gpu-b", annotation="gpu", created="2026-01-01T00:00:00Z"),
        owned("web-0-gpu-a", annotation="gpu", created="2026-01-01T00:00:00Z"),
    ]
    first = find_generated_claim(POD, GPU, claims)
    second = find_generated_claim(POD, GPU, list(reversed(claims)))
    assert first is not None and second is not None
    assert first["metadata"]["name"] == second["metadata"]["name"] == "web-0-gpu-a"


PATCHES = [
    ("one entry", {"gpu": "c1"}, [{"name": "gpu", "resourceClaimName": "c1"}]),
    (
        "spec order, whatever the dict order",
        {"nic": "c2", "gpu": "c1"},
        [{"name": "gpu", "resourceClaimName": "c1"}, {"name": "nic", "resourceClaimName": "c2"}],
    ),
    (
        "names not in the spec go last, sorted",
        {"zz": "c4", "aa": "c3", "nic": "c2"},
        [
            {"name": "nic", "resourceClaimName": "c2"},
            {"name": "aa", "resourceClaimName": "c3"},
            {"name": "zz", "resourceClaimName": "c4"},
        ],
    ),
]


@pytest.mark.parametrize(("case", "names", "entries"), PATCHES, ids=[c[0] for c in PATCHES])
def test_claim_statuses_patch(case: str, names: dict[str, str], entries: list[dict[str, Any]]) -> None:
    frozen = copy.deepcopy(POD)
    assert claim_statuses_patch(POD, names) == {
        "metadata": {"uid": "pod-uid"},
        "status": {"resourceClaimStatuses": entries},
    }
    assert POD == frozen
