"""reservedFor cleanup for each reason, deallocation (structured and classic), and deleting generated claims."""

from __future__ import annotations

import asyncio
from typing import Any

from claim_fixtures import (
    ALLOCATION,
    NS,
    RG,
    allocate,
    by_name,
    claim,
    claim_controller,
    consumer,
    from_template,
    pod,
    recorded_names,
    template,
)

from services.runtime.client import Client
from services.runtime.workqueue import WorkQueue
from services.testing.harness import LogHarness
from tests.support.eventually import eventually

PROTECTION = "resource.kubernetes.io/delete-protection"
HOLD = "example.com/hold"


class RecordingQueue(WorkQueue[str]):
    """The controller's work queue, telling when it is idle: nothing queued, no key being synced."""

    def __init__(self) -> None:
        super().__init__()
        self._in_flight: set[str] = set()
        self._changed = asyncio.Event()

    async def get(self) -> str:
        key = await super().get()
        self._in_flight.add(key)
        return key

    def done(self, item: str) -> None:
        self._in_flight.discard(item)
        super().done(item)
        self._changed.set()

    async def wait_idle(self, timeout: float = 15.0) -> None:
        """Wait until every key queued so far has been synced (and nothing was queued again)."""
        async with asyncio.timeout(timeout):
            while len(self) or self._in_flight:
                self._changed.clear()
                await self._changed.wait()


def current(admin: Client, name: str) -> dict[str, Any] | None:
    return admin.get(RG, "resourceclaims", NS, name)


def released(admin: Client, name: str) -> dict[str, Any] | None:
    """The claim once it is unreserved, deallocated and unprotected (a structured claim fully released)."""
    c = current(admin, name)
    if c is None:
        return None
    status, finalizers = c.get("status") or {}, c["metadata"].get("finalizers") or []
    if status.get("reservedFor") or status.get("allocation") or PROTECTION in finalizers:
        return None
    return c


async def shared_claim_for(admin: Client, *pods: dict[str, Any], controller: str = "") -> str:
    await admin.create(RG, "resourceclaims", claim("shared", controller=controller))
    await allocate(
        admin, {"metadata": {"name": "shared"}}, reserved_for=[consumer(p) for p in pods], controller=controller
    )
    return "shared"


async def test_deleted_pod_releases_a_structured_claim(log: LogHarness, admin: Client) -> None:
    p = await admin.create("", "pods", pod("user", by_name("gpu", "shared")))
    async with claim_controller(log):
        name = await shared_claim_for(admin, p)
        await admin.delete("", "pods", NS, "user")
        c = await eventually(lambda: released(admin, name), what="the claim released")
    assert not c.get("status"), "no reservation, no allocation, no deallocation request"


async def test_terminated_pod_releases_its_reservation(log: LogHarness, admin: Client) -> None:
    p = await admin.create("", "pods", pod("user", by_name("gpu", "shared"), node="node-1"))
    async with claim_controller(log):
        name = await shared_claim_for(admin, p)
        latest = admin.get("", "pods", NS, "user")
        assert latest is not None
        await admin.update_status("", "pods", {**latest, "status": {**latest["status"], "phase": "Succeeded"}})
        await eventually(lambda: released(admin, name), what="the claim released")


async def test_pod_deleted_before_it_was_scheduled_releases_its_reservation(log: LogHarness, admin: Client) -> None:
    # A finalizer keeps the deleted, never-scheduled pod around: it is done, but not gone.
    p = await admin.create("", "pods", pod("user", by_name("gpu", "shared"), finalizers=[HOLD]))
    async with claim_controller(log):
        name = await shared_claim_for(admin, p)
        await admin.delete("", "pods", NS, "user")
        assert (admin.get("", "pods", NS, "user") or {})["metadata"].get("deletionTimestamp")
        await eventually(lambda: released(admin, name), what="the claim released")


async def test_pod_never_seen_is_confirmed_gone_by_catching_up(log: LogHarness, admin: Client) -> None:
    """Not in the cache and never seen deleted: the controller catches up with the log, then removes it."""
    ghost = {"metadata": {"name": "ghost", "uid": "ghost-uid"}}
    name = await shared_claim_for(admin, ghost)
    async with claim_controller(log) as running:
        await eventually(lambda: released(admin, name), what="the claim released")
        assert "ghost-uid" not in running.controller.deleted_pods, "removed by the log check, not the LRU"


async def test_replaced_pod_loses_the_old_reservation(log: LogHarness, admin: Client) -> None:
    old = await admin.create("", "pods", pod("user", by_name("gpu", "shared"), node="node-1"))
    name = await shared_claim_for(admin, old)
    await admin.delete("", "pods", NS, "user", gracePeriodSeconds=0)
    new = await admin.create("", "pods", pod("user", by_name("gpu", "shared")))
    assert new["metadata"]["uid"] != old["metadata"]["uid"]
    # No LRU: the entry must go because the uid differs, not because the deletion was seen.
    async with claim_controller(log, deleted_uid_cache_size=0):
        await eventually(lambda: released(admin, name), what="the old pod's reservation removed")


async def test_one_of_two_consumers_gone_keeps_the_allocation(log: LogHarness, admin: Client) -> None:
    stays = await admin.create("", "pods", pod("stays", by_name("gpu", "shared"), node="node-1"))
    goes = await admin.create("", "pods", pod("goes", by_name("gpu", "shared"), node="node-1"))
    async with claim_controller(log):
        name = await shared_claim_for(admin, stays, goes)
        await admin.delete("", "pods", NS, "goes", gracePeriodSeconds=0)

        def one_left() -> dict[str, Any] | None:
            c = current(admin, name)
            return c if c is not None and len(c["status"].get("reservedFor") or []) == 1 else None

        c = await eventually(one_left, what="one reservation left")
    assert c["status"]["reservedFor"] == [consumer(stays)]
    assert c["status"]["allocation"] == ALLOCATION
    assert PROTECTION in c["metadata"]["finalizers"]


async def test_classic_claim_gets_deallocation_requested(log: LogHarness, admin: Client) -> None:
    p = await admin.create("", "pods", pod("user", by_name("gpu", "shared")))
    async with claim_controller(log):
        name = await shared_claim_for(admin, p, controller="gpu.example.com")
        await admin.delete("", "pods", NS, "user")
        c = await eventually(
            lambda: (c := current(admin, name)) and (c.get("status") or {}).get("deallocationRequested") and c,
            what="deallocation requested",
        )
    assert "reservedFor" not in c["status"]
    assert c["status"]["allocation"]["controller"] == "gpu.example.com", "the driver deallocates, not the controller"


async def test_generated_claim_is_deallocated_and_deleted_when_its_pod_is_done(log: LogHarness, admin: Client) -> None:
    await admin.create(RG, "resourceclaimtemplates", template())
    p = await admin.create("", "pods", pod("job", from_template("gpu"), node="node-1"))
    async with claim_controller(log):
        name = (await eventually(lambda: recorded_names(admin, "job"), what="claim recorded"))["gpu"]
        assert name is not None
        await allocate(admin, {"metadata": {"name": name}}, reserved_for=[consumer(p)])
        latest = admin.get("", "pods", NS, "job")
        assert latest is not None
        await admin.update_status("", "pods", {**latest, "status": {**latest["status"], "phase": "Succeeded"}})
        await eventually(lambda: current(admin, name) is None, what="the generated claim deleted")
    assert admin.get("", "pods", NS, "job") is not None, "the pod itself stays"


async def test_deleted_generated_claim_in_use_waits_then_goes(log: LogHarness, admin: Client) -> None:
    """A claim being deleted keeps its finalizer while reserved; the controller frees it once unused."""
    await admin.create(RG, "resourceclaimtemplates", template())
    p = await admin.create("", "pods", pod("job", from_template("gpu"), node="node-1"))
    async with claim_controller(log):
        name = (await eventually(lambda: recorded_names(admin, "job"), what="claim recorded"))["gpu"]
        assert name is not None
        await allocate(admin, {"metadata": {"name": name}}, reserved_for=[consumer(p)])
        await admin.delete(RG, "resourceclaims", NS, name)
        deleting = current(admin, name)
        assert deleting is not None and deleting["metadata"].get("deletionTimestamp")
        latest = admin.get("", "pods", NS, "job")
        assert latest is not None
        await admin.update_status("", "pods", {**latest, "status": {**latest["status"], "phase": "Failed"}})
        await eventually(lambda: current(admin, name) is None, what="the claim finally gone")


async def test_a_finished_pod_does_not_get_its_deleted_generated_claim_back(log: LogHarness, admin: Client) -> None:
    """Once the controller deleted the generated claim of a finished pod, later events of that pod (here a
    label change) must not create the claim again — or create and delete would repeat for as long as the
    pod object exists."""
    await admin.create(RG, "resourceclaimtemplates", template())
    p = await admin.create("", "pods", pod("job", from_template("gpu"), node="node-1"))
    queue = RecordingQueue()
    async with claim_controller(log, queue=queue) as running:
        name = (await eventually(lambda: recorded_names(admin, "job"), what="claim recorded"))["gpu"]
        assert name is not None
        await allocate(admin, {"metadata": {"name": name}}, reserved_for=[consumer(p)])
        latest = admin.get("", "pods", NS, "job")
        assert latest is not None
        await admin.update_status("", "pods", {**latest, "status": {**latest["status"], "phase": "Succeeded"}})
        await eventually(lambda: current(admin, name) is None, what="the generated claim deleted")
        attempts = running.sample("resourceclaim_controller_create_attempts_total")

        latest = admin.get("", "pods", NS, "job")
        assert latest is not None
        labels = {**latest["metadata"].get("labels", {}), "touched": "yes"}
        touched = await admin.update("", "pods", {**latest, "metadata": {**latest["metadata"], "labels": labels}})
        # The controller's informer has applied the update (its handlers queued whatever the update
        # calls for), and the queue has run dry since: whatever the update made the controller do is done.
        await running.controller.informer.wait_for(int(touched["metadata"]["resourceVersion"]), timeout=15)
        await queue.wait_idle()
        assert running.sample("resourceclaim_controller_create_attempts_total") == attempts
        end = await log.bus.end_offset("objects")
        assert admin.informer is not None
        await admin.informer.wait_for(end - 1, timeout=15)  # every write the sync made, seen
        assert admin.list(RG, "resourceclaims", NS) == []
