"""Feature gates seen through the API of a running stack (DRAControlPlaneController off, the default)."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.e2e.conftest import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def test_stale_pod_scheduling_context_can_be_deleted_with_the_gate_off(stack: Stack) -> None:
    k = stack.kubectl
    ns = f"psc-{uuid.uuid4().hex[:8]}"
    await k("create", "namespace", ns)
    psc = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "PodSchedulingContext",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {"selectedNode": "node-1", "potentialNodes": ["node-1", "node-2"]},
    }
    await k("create", "-f", "-", stdin=json.dumps(psc))
    out = await k("delete", "podschedulingcontext", "web", "-n", ns)
    assert out.out.strip() == 'podschedulingcontext.resource.k8s.io "web" deleted'
    assert (await k("get", "podschedulingcontexts", "-n", ns, "-o", "name")).out.strip() == ""


async def test_claim_controller_field_is_dropped_on_create_with_the_gate_off(stack: Stack) -> None:
    k = stack.kubectl
    ns = f"gate-{uuid.uuid4().hex[:8]}"
    await k("create", "namespace", ns)
    claim = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": "classic", "namespace": ns},
        "spec": {
            "controller": "gpu.example.com",
            "devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]},
        },
    }
    await k("create", "-f", "-", stdin=json.dumps(claim))
    stored = json.loads((await k("get", "resourceclaim", "classic", "-n", ns, "-o", "json")).out)
    assert "controller" not in stored["spec"]
