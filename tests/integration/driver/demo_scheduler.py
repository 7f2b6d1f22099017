"""A stand-in for the scheduler in the demo tests: structured allocation on one node, reservation, binding.

The real scheduler is another component with its own tests; the demos here
need just enough of it to get claims allocated and pods bound, so the driver
and node agent can be judged on the outcomes. For every unbound pod whose
claims all exist, it allocates the unallocated ones on its node with the
structured allocator (`services.kube.structured`), reserves every claim
for the pod, and binds the pod. It runs whenever the informer applies a
change (no polling) and writes as an admin.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from services.api.machinery import status as st
from services.driver.classic import allocated_device_ids, pod_consumer
from services.kube.resourceclaim import ClaimNameError, claim_name
from services.kube.structured import Allocator
from services.runtime.client import Client
from services.runtime.informer import Obj

log = logging.getLogger(__name__)
RG = "resource.k8s.io"


class _Wake:
    def __init__(self, event: asyncio.Event) -> None:
        self.event = event

    def on_add(self, obj: Obj) -> None:
        self.event.set()

    def on_update(self, old: Obj, new: Obj) -> None:
        self.event.set()

    def on_delete(self, obj: Obj) -> None:
        self.event.set()


class DemoScheduler:
    def __init__(self, admin: Client, node: str) -> None:
        assert admin.informer is not None
        self.admin = admin
        self.informer = admin.informer
        self.node = node
        self.changed = asyncio.Event()
        for group, resource in (("", "pods"), (RG, "resourceclaims"), (RG, "resourceslices"), ("", "nodes")):
            self.informer.add_handler(group, resource, _Wake(self.changed))

    async def run(self) -> None:
        while True:
            await self.changed.wait()
            self.changed.clear()
            for pod in self.admin.list("", "pods"):
                if pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    await self.schedule(pod)
                except st.StatusError as err:  # a conflict: the next change brings a fresh view
                    log.info("demo scheduler retries", extra={"pod": pod["metadata"]["name"], "error": str(err)})
                    self.changed.set()

    def claims_of(self, pod: dict[str, Any]) -> list[dict[str, Any]] | None:
        claims = []
        for pod_claim in pod["spec"].get("resourceClaims") or ():
            try:
                name, _ = claim_name(pod, pod_claim)
            except ClaimNameError:
                return None  # not created yet
            if name is None:
                continue
            found = self.admin.get(RG, "resourceclaims", pod["metadata"]["namespace"], name)
            if found is None:
                return None
            claims.append(found)
        return claims

    async def schedule(self, pod: dict[str, Any]) -> None:
        claims = self.claims_of(pod)
        node = self.admin.get("", "nodes", "", self.node)
        if claims is None or node is None:
            return
        pending = [c for c in claims if not (c.get("status") or {}).get("allocation")]
        if pending:
            classes = {c["metadata"]["name"]: c for c in self.admin.list(RG, "deviceclasses")}
            used = allocated_device_ids(self.admin.list(RG, "resourceclaims"))
            results = Allocator(pending, used, classes, self.admin.list(RG, "resourceslices")).allocate(node)
            if results is None:
                return
            allocations = dict(zip((c["metadata"]["uid"] for c in pending), results, strict=True))
        else:
            allocations = {}
        for claim in claims:
            status = dict(claim.get("status") or {})
            if claim["metadata"]["uid"] in allocations:
                status["allocation"] = allocations[claim["metadata"]["uid"]]
            reserved = list(status.get("reservedFor") or ())
            if not any(r.get("uid") == pod["metadata"]["uid"] for r in reserved):
                reserved.append(pod_consumer(pod))
            status["reservedFor"] = reserved
            await self.admin.update_status(RG, "resourceclaims", {**claim, "status": status})
        await self.admin.bind(pod["metadata"]["namespace"], pod["metadata"]["name"], self.node)


@contextlib.asynccontextmanager
async def demo_scheduler(admin: Client, node: str) -> AsyncIterator[DemoScheduler]:
    scheduler = DemoScheduler(admin, node)
    scheduler.changed.set()
    task = asyncio.create_task(scheduler.run(), name="demo-scheduler")
    try:
        yield scheduler
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
