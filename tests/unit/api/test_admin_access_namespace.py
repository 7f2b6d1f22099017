"""Admin access needs the ``resource.kubernetes.io/admin-access: "true"`` namespace label (1.37), not at 1.31.

Expectations from Kubernetes 1.37.2: pkg/registry/resource/utils.go
(``AuthorizedForAdmin``, ``AuthorizedForAdminStatus``) and the claim and template
strategies that call them (Validate on create, the status strategy's
ValidateUpdate; the spec is immutable, so spec updates are not checked).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from services.api.admission.chain import Attributes
from services.api.admission.plugins import Validation
from services.api.machinery.status import StatusError
from services.api.types import registry

_claim_type = registry.by_kind("resource.k8s.io", "ResourceClaim")
_template_type = registry.by_kind("resource.k8s.io", "ResourceClaimTemplate")
assert _claim_type is not None and _template_type is not None
CLAIM, TEMPLATE = _claim_type, _template_type
DETAIL = (
    "admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace"
)


def request(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1, **fields}


def claim(*requests: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": list(requests)}},
    }
    if status is not None:
        obj["status"] = status
    return obj


def template(*requests: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "ns"},
        "spec": {"spec": {"devices": {"requests": list(requests)}}},
    }


def allocated(*admin: bool | None) -> dict[str, Any]:
    results = []
    for i, value in enumerate(admin):
        result: dict[str, Any] = {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": f"gpu-{i}"}
        if value is not None:
            result["adminAccess"] = value
        results.append(result)
    return {"allocation": {"devices": {"results": results}}}


class Namespaces:
    """The admission View: one namespace ``ns`` with these labels (None: there is none)."""

    def __init__(self, labels: dict[str, str] | None) -> None:
        self.labels = labels

    def get(self, group: str, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        assert (group, resource, namespace, name) == ("", "namespaces", "", "ns")
        if self.labels is None:
            return None
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": self.labels}}

    def list(self, group: str, resource: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return []


LABELLED = {"resource.kubernetes.io/admin-access": "true"}


@dataclass(frozen=True)
class Case:
    id: str
    rt: registry.ResourceType
    new: dict[str, Any]
    labels: dict[str, str] | None = None
    old: dict[str, Any] | None = None
    subresource: str = ""
    errors: tuple[str, ...] = ()


CASES = [
    Case("claim, admin, unlabelled", CLAIM, claim(request("gpu", adminAccess=True)), {},
         errors=(f"spec.devices.requests[0].adminAccess: Forbidden: {DETAIL}",)),
    Case("claim, admin, labelled", CLAIM, claim(request("gpu", adminAccess=True)), LABELLED),
    Case("claim, label not true", CLAIM, claim(request("gpu", adminAccess=True)),
         {"resource.kubernetes.io/admin-access": "yes"},
         errors=(f"spec.devices.requests[0].adminAccess: Forbidden: {DETAIL}",)),
    Case("claim, adminAccess false", CLAIM, claim(request("gpu", adminAccess=False)), {}),
    Case("claim, no admin", CLAIM, claim(request("gpu")), {}),
    Case("claim, first admin request named", CLAIM,
         claim(request("a"), request("b", adminAccess=True), request("c", adminAccess=True)), {},
         errors=(f"spec.devices.requests[1].adminAccess: Forbidden: {DETAIL}",)),
    Case("claim, prioritized list is never admin", CLAIM,
         claim({"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "gpu.example.com"}]}), {}),
    Case("claim, no namespace", CLAIM, claim(request("gpu", adminAccess=True)), None,
         errors=("spec.devices.requests[0].adminAccess: Internal error: could not retrieve namespace to verify "
                 'admin access: namespaces "ns" not found',)),
    # Templates share the function, and its fixed path (no leading "spec." for the template's own spec).
    Case("template, admin, unlabelled", TEMPLATE, template(request("gpu", adminAccess=True)), {},
         errors=(f"spec.devices.requests[0].adminAccess: Forbidden: {DETAIL}",)),
    Case("template, admin, labelled", TEMPLATE, template(request("gpu", adminAccess=True)), LABELLED),
    Case("claim status grants admin, unlabelled", CLAIM,
         claim(request("gpu", adminAccess=True), status=allocated(True)), {},
         old=claim(request("gpu", adminAccess=True)), subresource="status",
         errors=(f"status.allocation.devices.results[0].adminAccess: Forbidden: {DETAIL}",)),
    Case("claim status grants admin, labelled", CLAIM,
         claim(request("gpu", adminAccess=True), status=allocated(True)), LABELLED,
         old=claim(request("gpu", adminAccess=True)), subresource="status"),
    Case("claim status already granted", CLAIM,
         claim(request("gpu", adminAccess=True), status=allocated(True)), {},
         old=claim(request("gpu", adminAccess=True), status=allocated(True)), subresource="status"),
    Case("claim status without admin", CLAIM, claim(request("gpu"), status=allocated(None, False)), {},
         old=claim(request("gpu")), subresource="status"),
]  # fmt: skip


def admit(case: Case, release: str) -> list[str]:
    attrs = Attributes(
        operation="CREATE" if case.old is None else "UPDATE",
        resource=case.rt,
        namespace="ns",
        name=case.new["metadata"]["name"],
        user=None,  # type: ignore[arg-type]
        subresource=case.subresource,
        old=copy.deepcopy(case.old),
        new=copy.deepcopy(case.new),
        version="v1",
    )
    try:
        Validation(release=release).admit(attrs, Namespaces(case.labels))
    except StatusError as err:
        assert err.status["code"] == 422 and err.status["reason"] == "Invalid"
        return [f"{c['field']}: {c['message']}" for c in err.status["details"]["causes"]]
    return []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_at_1_37(case: Case) -> None:
    assert admit(case, "1.37") == list(case.errors)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_no_namespace_rule_at_1_31(case: Case) -> None:
    """1.31 (the seeds', --emulated-version=1.31) has no label rule: only the ordinary validation."""
    assert admit(case, "1.31") == []


def test_message_and_kind_of_a_refused_claim() -> None:
    case = CASES[0]
    attrs = Attributes(
        operation="CREATE", resource=CLAIM, namespace="ns", name="c", user=None,  # type: ignore[arg-type]
        new=copy.deepcopy(case.new), version="v1",
    )  # fmt: skip
    with pytest.raises(StatusError) as err:
        Validation(release="1.37").admit(attrs, Namespaces({}))
    assert err.value.status["message"] == (
        f'ResourceClaim.resource.k8s.io "c" is invalid: spec.devices.requests[0].adminAccess: Forbidden: {DETAIL}'
    )
