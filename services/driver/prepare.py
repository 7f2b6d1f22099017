"""Preparing and unpreparing claims on this node: checkpoint, CDI files, and the plugin API handler.

Why this module exists: this is dra-example-driver's ``DeviceState.Prepare``
and ``Unprepare`` with crash safety. A prepare is idempotent: a claim whose
checkpoint entry is complete is answered from the checkpoint (its CDI file
rewritten if it went missing). Otherwise the claim is read (after the
driver's informer reached the node agent's log position), planned
(`services.driver.prepared.plan_claim`), checkpointed as started, its CDI
spec written, and checkpointed as completed. A driver killed anywhere in
between re-plans and overwrites on the next prepare; `recover` removes spec
files nothing accounts for and entries whose claim no longer exists, so a
restart neither prepares twice nor leaks. Unprepare removes the file and
then the entry, and is a no-op for claims it does not know.

After a prepare (fresh or answered from the checkpoint) the driver reports
the claim's ``status.devices`` (`on_prepared` queues the write; the node agent's
answer does not wait for it: kubelet knows nothing of that status, and the
write is a round trip through the log). A queued write lost to a crash is
queued again by `recover` for every completed claim (a write that would change
nothing is skipped), so the claim never stays without it.

An optional fault hook is awaited at named stages (``started``,
``cdi-written``, ``status``) so tests can stop a driver in the middle of a prepare.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Container, Mapping
from typing import Any, Protocol

from services.driver import cdi
from services.driver.cdi_files import CdiDirectory
from services.driver.checkpoint import PREPARE_COMPLETED, PREPARE_STARTED, Checkpoint
from services.driver.metrics import DriverMetrics
from services.driver.prepared import PreparedDevice, PrepareError, plan_claim, reserved_on_node
from services.kubeletplugin.api import PREPARE, ClaimRef, ClaimResult, Request, Response

log = logging.getLogger(__name__)

PreparedHook = Callable[[ClaimRef], None]
"""Called after every successful prepare (fresh or from the checkpoint) and for every completed claim `recover`
keeps: the driver queues its status.devices write."""

FaultHook = Callable[[str, str], Awaitable[None]]
"""Awaited with (stage, claim uid) at ``started``, ``cdi-written`` and ``status``; tests use it to stop a prepare."""


class ClaimSource(Protocol):
    """Where the driver reads claims and pods (its informer)."""

    async def claim(self, ref: ClaimRef) -> Mapping[str, Any] | None: ...

    def pod(self, namespace: str, name: str) -> Mapping[str, Any] | None: ...

    def claim_exists(self, namespace: str, name: str, uid: str) -> bool: ...


class Preparer:
    """Prepares and unprepares this driver's claims on one node (see module docstring)."""

    def __init__(
        self,
        *,
        driver: str,
        node: str,
        allocatable: Container[str],
        checkpoint: Checkpoint,
        cdi_dir: CdiDirectory,
        source: ClaimSource,
        metrics: DriverMetrics | None = None,
        fault: FaultHook | None = None,
        on_prepared: PreparedHook | None = None,
    ) -> None:
        self.driver = driver
        self.on_prepared = on_prepared
        self.node = node
        self.allocatable = allocatable
        self.checkpoint = checkpoint
        self.cdi_dir = cdi_dir
        self.source = source
        self.metrics = metrics or DriverMetrics()
        self.fault = fault
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        """Open the checkpoint and write the common CDI spec."""
        await self.checkpoint.open()
        await self.cdi_dir.write_common(cdi.common_spec(driver=self.driver, node=self.node))
        await self._update_gauge()

    async def close(self) -> None:
        try:
            await self.checkpoint.close()
        finally:
            self.cdi_dir.close()

    # -- the plugin API ----------------------------------------------------------

    async def handle(self, request: Request) -> Response:
        """Answer a `plugin_api` request claim by claim, as dra-example-driver's gRPC server does."""
        results: dict[str, ClaimResult] = {}
        for ref in request.claims:
            if request.method == PREPARE:
                try:
                    devices = await self.prepare(ref)
                except PrepareError as err:
                    results[ref.uid] = ClaimResult(error=f"error preparing devices for claim {ref.uid}: {err}")
                else:
                    results[ref.uid] = ClaimResult(tuple(_public(d) for d in devices))
            else:
                try:
                    await self.unprepare(ref)
                except OSError as err:
                    self.metrics.unprepare.labels(self.driver, "error").inc()
                    results[ref.uid] = ClaimResult(error=f"error unpreparing devices for claim {ref.uid}: {err}")
                else:
                    results[ref.uid] = ClaimResult()
        return Response(results)

    # -- prepare / unprepare -----------------------------------------------------

    async def prepare(self, ref: ClaimRef) -> tuple[PreparedDevice, ...]:
        async with self._lock:
            try:
                devices, fresh = await self._prepare(ref)
            except PrepareError:
                self.metrics.prepare.labels(self.driver, "error").inc()
                raise
            self.metrics.prepare.labels(self.driver, "prepared" if fresh else "already_prepared").inc()
            await self._update_gauge()
        if self.on_prepared is not None:
            await self._fault("status", ref.uid)
            # After the checkpoint says completed: a status write lost to a crash is queued again by `recover`.
            self.on_prepared(ref)
        return devices

    async def _prepare(self, ref: ClaimRef) -> tuple[tuple[PreparedDevice, ...], bool]:
        entry = await self.checkpoint.get(ref.uid)
        if entry is not None and entry.completed:
            if not await self.cdi_dir.has_claim(ref.uid):
                await self.cdi_dir.write_claim(ref.uid, entry.claim.cdi_spec(self.driver))
            return entry.claim.devices, False
        claim = await self.source.claim(ref)
        if claim is None:
            raise PrepareError(f"failed to fetch ResourceClaim {ref.name} in namespace {ref.namespace}")
        uid = (claim.get("metadata") or {}).get("uid")
        if uid != ref.uid:
            raise PrepareError(
                f"failed to fetch ResourceClaim {ref.name} in namespace {ref.namespace}: "
                f"it has UID {uid}, not {ref.uid}"
            )
        planned = plan_claim(claim, driver=self.driver, node=self.node, allocatable=self.allocatable)
        if not reserved_on_node(claim, node=self.node, pod=self.source.pod):
            raise PrepareError(f"prepare failed: claim is not reserved for a pod on node {self.node}")
        await self.checkpoint.put(PREPARE_STARTED, planned)
        await self._fault("started", ref.uid)
        await self.cdi_dir.write_claim(ref.uid, planned.cdi_spec(self.driver))
        await self._fault("cdi-written", ref.uid)
        await self.checkpoint.put(PREPARE_COMPLETED, planned)
        log.info("prepared claim", extra={"claim": f"{ref.namespace}/{ref.name}", "uid": ref.uid})
        return planned.devices, True

    async def unprepare(self, ref: ClaimRef) -> bool:
        """Remove the claim's CDI file and checkpoint entry; False when it was not prepared here."""
        async with self._lock:
            entry = await self.checkpoint.get(ref.uid)
            await self.cdi_dir.remove_claim(ref.uid)
            if entry is None:
                self.metrics.unprepare.labels(self.driver, "not_prepared").inc()
                return False
            await self.checkpoint.delete(ref.uid)
            self.metrics.unprepare.labels(self.driver, "unprepared").inc()
            await self._update_gauge()
            log.info("unprepared claim", extra={"claim": f"{ref.namespace}/{ref.name}", "uid": ref.uid})
            return True

    async def recover(self) -> list[str]:
        """After a restart (informer synced): drop what nothing accounts for; return the UIDs cleaned up.

        - a claim spec file without a checkpoint entry is removed;
        - an entry whose claim no longer exists is unprepared (nobody can use it any more);
        - a completed entry whose spec file is missing gets it back;
        - every completed entry kept has its status.devices write queued again (`on_prepared`).
        """
        cleaned: list[str] = []
        async with self._lock:
            entries = await self.checkpoint.entries()
            known = {e.claim.uid for e in entries}
            for uid in await self.cdi_dir.claim_uids():
                if uid not in known:
                    await self.cdi_dir.remove_claim(uid)
                    cleaned.append(uid)
            for entry in entries:
                claim = entry.claim
                if not self.source.claim_exists(claim.namespace, claim.name, claim.uid):
                    await self.cdi_dir.remove_claim(claim.uid)
                    await self.checkpoint.delete(claim.uid)
                    cleaned.append(claim.uid)
                elif entry.completed:
                    if not await self.cdi_dir.has_claim(claim.uid):
                        await self.cdi_dir.write_claim(claim.uid, claim.cdi_spec(self.driver))
                    if self.on_prepared is not None:
                        self.on_prepared(ClaimRef(claim.uid, claim.namespace, claim.name))
            await self._update_gauge()
        return cleaned

    async def is_prepared(self, uid: str) -> bool:
        """Whether the claim's checkpoint entry says completed (it was prepared here and not unprepared since)."""
        entry = await self.checkpoint.get(uid)
        return entry is not None and entry.completed

    async def _fault(self, stage: str, uid: str) -> None:
        if self.fault is not None:
            await self.fault(stage, uid)

    async def _update_gauge(self) -> None:
        entries = await self.checkpoint.entries()
        self.metrics.prepared_claims.labels(self.driver).set(sum(1 for e in entries if e.completed))


def _public(device: PreparedDevice) -> dict[str, Any]:
    """The device as the plugin API returns it (the environment stays in the CDI spec)."""
    wire = device.to_wire()
    wire.pop("env", None)
    return wire
