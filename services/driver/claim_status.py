"""The driver's writes of ``status.devices``: Ready after prepare, binding conditions once a device is ready.

Why this module exists: a 1.37 driver reports per allocated device in the
claim's status (`services.driver.device_status` computes what). Two things
trigger a write: the preparer finished a claim on this node (`report_prepared`),
and a claim got allocated with devices of this driver's pool that carry binding
conditions — the driver's controller side then marks the device ready, which
ends the scheduler's PreBind wait (dra-example-driver's binding-conditions
controller). Each kind goes through its own work queue so a failed write is
retried with backoff and a claim is never handled twice at once; a prepared
claim is written only while the preparer still has it prepared (``still_prepared``).

Writes use the driver's own service-account identity (the DRA controller's
``system:serviceaccount:kube-system:dra-controller``, which may update
``resourceclaims/status``), as dra-example-driver's kubelet plugin writes
with its service account, not as the node. A write that conflicts is tried
again on the informer's newer copy.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from services.api.machinery import status as st
from services.api.types.registry import RESOURCE_GROUP
from services.driver.device_status import binding_conditions_met, prepared_statuses
from services.kube.times import now_text
from services.runtime import backoff
from services.runtime.client import Client
from services.runtime.informer import Informer, Obj
from services.runtime.workers import run_workers
from services.runtime.workqueue import WorkQueue

log = logging.getLogger(__name__)

CLAIMS = "resourceclaims"
ATTEMPTS = 5


class ClaimStatusWriter:
    """Writes this node driver's ``status.devices`` entries (see module docstring)."""

    def __init__(
        self,
        informer: Informer,
        client: Client,
        *,
        driver: str,
        node: str,
        devices: Callable[[], Mapping[str, Mapping[str, Any]]],
        network_data: Callable[[str, int], Obj | None] = lambda device, share: None,
        binding_conditions: bool = True,
        still_prepared: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        self.informer = informer
        self.client = client
        self.driver = driver
        self.node = node
        self.devices = devices  # published device name -> its ``basic``
        self.network_data = network_data
        self.binding_conditions = binding_conditions
        self.still_prepared = still_prepared
        self.queue: WorkQueue[tuple[str, str]] = WorkQueue()
        self.prepared_queue: WorkQueue[tuple[str, str, str]] = WorkQueue()  # (namespace, name, uid)

    def register(self) -> None:
        if self.binding_conditions:
            self.informer.add_handler(RESOURCE_GROUP, CLAIMS, _Enqueue(self))

    def wants(self, claim: Mapping[str, Any]) -> bool:
        """An allocated claim with a device of this node's pool that has binding conditions."""
        allocation = (claim.get("status") or {}).get("allocation") or {}
        return any(
            r.get("driver") == self.driver and r.get("pool") == self.node and r.get("bindingConditions")
            for r in (allocation.get("devices") or {}).get("results") or ()
        )

    async def run(self) -> None:
        await asyncio.gather(
            run_workers(self.queue, self._sync, name=f"binding-conditions-{self.node}"),
            run_workers(self.prepared_queue, self._sync_prepared, name=f"prepared-status-{self.node}"),
        )

    def report_prepared(self, namespace: str, name: str, uid: str) -> None:
        """Queue the Ready write of a claim prepared here (`prepared`, retried with backoff until it succeeds)."""
        self.prepared_queue.add((namespace, name, uid))

    async def _sync_prepared(self, key: tuple[str, str, str]) -> None:
        namespace, name, uid = key
        if self.still_prepared is not None and not await self.still_prepared(uid):
            return  # unprepared meanwhile: its devices are not Ready any more
        await self.prepared(namespace, name, uid)

    async def _sync(self, key: tuple[str, str]) -> None:
        await self._write(
            key, lambda claim: binding_conditions_met(claim, driver=self.driver, pools=(self.node,), now=now_text())
        )

    async def prepared(self, namespace: str, name: str, uid: str) -> None:
        """The claim was prepared here: report its devices Ready, with their data and network data."""

        def compute(claim: Mapping[str, Any]) -> list[Obj] | None:
            if (claim.get("metadata") or {}).get("uid") != uid:
                return None
            published = self.devices()
            return prepared_statuses(
                claim,
                driver=self.driver,
                pool=self.node,
                now=now_text(),
                device_info=lambda device: published.get(device),
                network_data=self.network_data,
            )

        await self._write((namespace, name), compute)

    async def _write(self, key: tuple[str, str], compute: Callable[[Mapping[str, Any]], list[Obj] | None]) -> None:
        namespace, name = key
        retry = backoff.retry_on_conflict()
        for attempt in range(ATTEMPTS):
            if attempt:
                await retry.pause()  # client-go's RetryOnConflict: the informer catches up meanwhile
            claim = self.informer.store(RESOURCE_GROUP, CLAIMS).get(namespace, name)
            if claim is None:
                return
            devices = compute(claim)
            if devices is None:
                return
            updated = {**claim, "status": {**(claim.get("status") or {}), "devices": devices}}
            try:
                await self.client.update_status(RESOURCE_GROUP, CLAIMS, updated)
            except st.StatusError as err:
                if err.code == 409:
                    continue
                if err.code == 404:
                    return
                raise
            log.info("wrote device status", extra={"claim": f"{namespace}/{name}", "devices": len(devices)})
            return
        raise st.modified_conflict(RESOURCE_GROUP, CLAIMS, name)


class _Enqueue:
    def __init__(self, writer: ClaimStatusWriter) -> None:
        self.writer = writer

    def _maybe(self, obj: Obj) -> None:
        if self.writer.wants(obj):
            meta = obj.get("metadata") or {}
            self.writer.queue.add((str(meta.get("namespace", "")), str(meta.get("name", ""))))

    def on_add(self, obj: Obj) -> None:
        self._maybe(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self._maybe(new)

    def on_delete(self, obj: Obj) -> None:
        pass
