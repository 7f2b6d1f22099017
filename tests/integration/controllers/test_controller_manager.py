"""The controller-manager as a component: both controllers over one informer, its identity, its metrics."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

from claim_fixtures import NS, RG, claims_of, from_template, pod, recorded_names, template

from services.api.admission.authorization import CONTROLLER_MANAGER
from services.api.admission.chain import AdmissionChain, Attributes, View
from services.apiserver.admission_chain import build_admission
from services.bus.port import BEGINNING
from services.controllers.manager import ControllerManager
from services.testing.harness import LogHarness
from tests.support.eventually import eventually
from topics.declarations import EVENTS
from topics.envelope import decode_event


class WhoWrote:
    """An admission plugin that remembers who made which write (after authorization allowed it)."""

    name = "WhoWrote"

    def __init__(self) -> None:
        self.writes: list[tuple[str, str, str]] = []

    def admit(self, attrs: Attributes, view: View) -> None:
        resource = attrs.resource.plural + (f"/{attrs.subresource}" if attrs.subresource else "")
        self.writes.append((attrs.user.name, attrs.operation, resource))


async def test_manager_creates_records_and_collects_as_the_controller_manager(tmp_path: Path) -> None:
    who = WhoWrote()
    admission = AdmissionChain([*build_admission().plugins, who])
    async with LogHarness.running(f"sqlite://{tmp_path / 'bus.db'}", admission=admission) as log:
        admin = await log.client()
        await admin.create(RG, "resourceclaimtemplates", template())
        p = await admin.create("", "pods", pod("web-0", from_template("gpu")))
        manager = ControllerManager(log.bus, claim_workers=2, gc_workers=2)
        task = asyncio.create_task(manager.run())
        try:
            await asyncio.wait_for(manager.ready.wait(), 30)
            recorded = await eventually(lambda: recorded_names(admin, "web-0"), what="claim recorded")
            [generated] = claims_of(admin, p)
            assert recorded == {"gpu": generated["metadata"]["name"]}
            assert (CONTROLLER_MANAGER, "CREATE", "resourceclaims") in who.writes
            assert (CONTROLLER_MANAGER, "UPDATE", "pods/status") in who.writes
            await admin.delete("", "pods", NS, "web-0")
            await eventually(lambda: not admin.list(RG, "resourceclaims", NS), what="the claim gone with its pod")
            assert (CONTROLLER_MANAGER, "DELETE", "resourceclaims") in who.writes
            claim_writers = {user for user, _, res in who.writes if res in ("resourceclaims", "pods/status")}
            assert claim_writers == {CONTROLLER_MANAGER}, "the test itself wrote neither"
            text = manager.metrics.exposition(include_process=False).decode()
            assert "resourceclaim_controller_create_attempts_total 1.0" in text
            assert "resourceclaim_controller_create_failures_total 0.0" in text
            assert manager.registry.get_sample_value("resourceclaim_controller_resource_claims") == 0
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def test_claim_creation_failures_are_reported_as_pod_events(tmp_path: Path) -> None:
    async with LogHarness.running(f"sqlite://{tmp_path / 'bus.db'}") as log:
        admin = await log.client()
        p = await admin.create("", "pods", pod("web-0", from_template("gpu", "missing")))
        events = await log.bus.consumer(EVENTS, start=BEGINNING)
        manager = ControllerManager(log.bus, claim_workers=1, garbage_collector=False)
        task = asyncio.create_task(manager.run())
        try:
            deadline = time.monotonic() + 15
            found: list[dict[str, Any]] = []
            while not found and time.monotonic() < deadline:
                for record in await events.getmany(timeout_ms=200):
                    if record.value is not None:
                        found.append(decode_event(record.value).object)
            assert found, "no event was recorded"
            event = found[0]
            assert event["reason"] == "FailedResourceClaimCreation" and event["type"] == "Warning"
            assert event["message"] == (
                'PodResourceClaim gpu: resource claim template "missing": '
                'resourceclaimtemplates.resource.k8s.io "missing" not found'
            )
            assert event["involvedObject"]["uid"] == p["metadata"]["uid"]
            assert event["source"]["component"] == "resource_claim"
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await events.close()
