"""Admin access on a running stack at the default release (1.37): refused in an unlabelled namespace, in kubectl's words.

Kubernetes 1.37.2 admits ``adminAccess: true`` only in namespaces labelled
``resource.kubernetes.io/admin-access: "true"`` (pkg/registry/resource/utils.go);
the unit table is tests/unit/api/test_admin_access_namespace.py.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tests.e2e.conftest import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

DETAIL = (
    "admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace"
)


def admin_claim(ns: str) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "admin", "namespace": ns},
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "adminAccess": True}}]
            }
        },
    }


def admin_template(ns: str) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "admin", "namespace": ns},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com", "adminAccess": True}]}
            }
        },
    }


async def test_admin_access_needs_the_namespace_label(stack: Stack) -> None:
    k = stack.kubectl
    ns = f"admin-{uuid.uuid4().hex[:8]}"
    await k("create", "namespace", ns)

    refused = await k("create", "-f", "-", stdin=json.dumps(admin_claim(ns)), ok=False)
    assert refused.code != 0
    assert (
        f'The ResourceClaim "admin" is invalid: spec.devices.requests[0].adminAccess: Forbidden: {DETAIL}'
        in refused.err
    )
    refused = await k("create", "-f", "-", stdin=json.dumps(admin_template(ns)), ok=False)
    assert refused.code != 0
    assert (
        f'The ResourceClaimTemplate "admin" is invalid: spec.devices.requests[0].adminAccess: Forbidden: {DETAIL}'
        in refused.err
    )
    assert (await k("get", "resourceclaims,resourceclaimtemplates", "-n", ns, "-o", "name")).out.strip() == ""

    await k("label", "namespace", ns, "resource.kubernetes.io/admin-access=true")
    await k("create", "-f", "-", stdin=json.dumps(admin_claim(ns)))
    await k("create", "-f", "-", stdin=json.dumps(admin_template(ns)))
    stored = json.loads((await k("get", "resourceclaim", "admin", "-n", ns, "-o", "json")).out)
    assert stored["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] is True  # DRAAdminAccess: GA at 1.37
