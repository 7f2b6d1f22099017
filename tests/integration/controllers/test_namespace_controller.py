"""The namespace controller on a log: conditions while content stays or fails to go, and the finalizer removed last.

Condition wording is Kubernetes 1.37's pkg/controller/namespace/deletion
(status_condition_utils.go); a resource whose deletes fail is reported by its
error alone (deleteAllContentForGroupVersionResource returns before counting).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from claim_fixtures import RG, injected

from services.api.admission.authorization import CONTROLLER_MANAGER
from services.api.admission.chain import AdmissionChain, Attributes, View
from services.apiserver.admission_chain import build_admission
from services.controllers.manager import ControllerManager
from services.runtime.client import Client
from services.testing.harness import LogHarness
from tests.support.eventually import eventually

NS = "doomed"


class WhoWrote:
    name = "WhoWrote"

    def __init__(self) -> None:
        self.writes: list[tuple[str, str, str]] = []

    def admit(self, attrs: Attributes, view: View) -> None:
        resource = attrs.resource.plural + (f"/{attrs.subresource}" if attrs.subresource else "")
        self.writes.append((attrs.user.name, attrs.operation, resource))


class FailTemplateDeletes:
    """Deletes of ResourceClaimTemplates fail while ``failing`` is set."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.failing = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def delete(self, group: str, resource: str, namespace: str, name: str, **options: Any) -> dict[str, Any]:
        if resource == "resourceclaimtemplates" and self.failing:
            raise injected("no template deletes today")
        return await self.inner.delete(group, resource, namespace, name, **options)


def conditions(admin: Client) -> dict[str, dict[str, Any]]:
    ns = admin.get("", "namespaces", "", NS)
    return {c["type"]: c for c in ((ns or {}).get("status") or {}).get("conditions") or []}


def claim(name: str, finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if finalizers:
        meta["finalizers"] = finalizers
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }


@pytest.fixture
async def who() -> WhoWrote:
    return WhoWrote()


@pytest.fixture
async def log(tmp_path: Path, who: WhoWrote) -> AsyncIterator[LogHarness]:
    admission = AdmissionChain([*build_admission().plugins, who])
    async with LogHarness.running(f"sqlite://{tmp_path / 'bus.db'}", admission=admission) as harness:
        yield harness


async def test_failures_and_finalizers_are_reported_then_the_kubernetes_finalizer_goes_last(
    log: LogHarness, who: WhoWrote
) -> None:
    admin = await log.client()
    await admin.create("", "namespaces", {"metadata": {"name": NS}})
    template = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": NS},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}},
    }
    await admin.create(RG, "resourceclaimtemplates", template)
    await admin.create(RG, "resourceclaims", claim("held", ["example.com/hold"]))
    await admin.create(RG, "resourceclaims", claim("plain"))
    writer: FailTemplateDeletes | None = None

    def wrap(client: Client) -> FailTemplateDeletes:
        nonlocal writer
        writer = FailTemplateDeletes(client)
        return writer

    manager = ControllerManager(log.bus, wrap_writer=wrap)  # type: ignore[arg-type]
    task = asyncio.create_task(manager.run())
    try:
        await asyncio.wait_for(manager.ready.wait(), 30)
        deleted = await admin.delete("", "namespaces", "", NS)
        assert deleted["status"]["phase"] == "Terminating"
        failure = await eventually(
            lambda: conditions(admin).get("NamespaceDeletionContentFailure"),
            until=lambda c: c is not None and c["status"] == "True",
            what="the content failure condition",
        )
        assert failure["reason"] == "ContentDeletionFailed"
        assert failure["message"] == (
            "Failed to delete all resource types, 1 remaining: injected fault: no template deletes today"
        )
        found = conditions(admin)
        assert found["NamespaceContentRemaining"]["message"] == (
            "Some resources are remaining: resourceclaims.resource.k8s.io has 1 resource instances"
        )
        assert found["NamespaceFinalizersRemaining"]["message"] == (
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
        )
        assert found["NamespaceDeletionDiscoveryFailure"]["status"] == "False"
        assert admin.get(RG, "resourceclaims", NS, "plain") is None
        held = admin.get(RG, "resourceclaims", NS, "held")
        assert held is not None and held["metadata"].get("deletionTimestamp")
        assert writer is not None
        writer.failing = False
        await eventually(
            lambda: conditions(admin).get("NamespaceDeletionContentFailure"),
            until=lambda c: c is not None and c["status"] == "False",
            what="the failure cleared on a retry",
        )
        assert admin.get(RG, "resourceclaimtemplates", NS, "t") is None
        namespace = admin.get("", "namespaces", "", NS)
        assert namespace is not None and namespace["spec"]["finalizers"] == ["kubernetes"]
        # The last finalizer of the content goes: the namespace is finalized, then gone.
        await admin.update(RG, "resourceclaims", {**held, "metadata": {**held["metadata"], "finalizers": []}})
        await eventually(lambda: admin.get("", "namespaces", "", NS) is None, what="the namespace gone")
        assert (CONTROLLER_MANAGER, "UPDATE", "namespaces/finalize") in who.writes
        assert (CONTROLLER_MANAGER, "UPDATE", "namespaces/status") in who.writes
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
