"""The classic DRA control-plane controller of a driver (``draplane driver --control-plane``).

Why this module exists: with ``DRAControlPlaneController`` on, claims whose
``spec.controller`` names this driver are allocated by the driver through the
PodSchedulingContext handshake, exactly as
``k8s.io/dynamic-resource-allocation/controller`` (1.31) does it:

- for a PodSchedulingContext with ``potentialNodes`` it writes
  ``status.resourceClaims[{name, unsuitableNodes}]`` for each pending claim
  of the pod (at most 128 nodes, the selected one kept);
- when ``selectedNode`` is set and suitable it adds its finalizer
  (``<driver>/deletion-protection``), allocates for that node (with
  ``allocation.controller`` set and a node selector) and reserves the claim
  for the pod;
- for a claim that is no longer reserved and is being deleted or has
  ``deallocationRequested``, it clears the allocation and the flag and
  removes its finalizer.

Devices come from the driver's published ResourceSlices and are picked by
the structured allocator, so a classic claim gets real devices that the node's
driver can prepare. One worker handles one key at a time, so two allocations
never race for the same device. It writes as
``system:serviceaccount:kube-system:dra-controller``; failures become
``Failed`` events on the object, as in the library.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from services.api.machinery import status as st
from services.api.machinery.field_errors import go_quote
from services.api.types.registry import RESOURCE_GROUP
from services.driver import classic
from services.driver.metrics import DriverMetrics
from services.kube.resourceclaim import (
    ClaimNameError,
    ClaimNotForPodError,
    check_is_for_pod,
    claim_name,
    is_controlled_by,
)
from services.runtime.client import Client
from services.runtime.events import EventRecorder
from services.runtime.informer import Informer, Obj
from services.runtime.workers import RequeueAfter, run_workers
from services.runtime.workqueue import ExponentialBackoff, WorkQueue

log = logging.getLogger(__name__)

RECHECK_DELAY = 30.0  # the library's recheckDelay
CLAIMS = "resourceclaims"
CONTEXTS = "podschedulingcontexts"

Key = tuple[str, str, str]  # ("claim" | "schedulingCtx", namespace, name)


class ClassicController:
    """The control-plane controller for claims whose ``spec.controller`` is ``driver``."""

    def __init__(
        self,
        informer: Informer,
        client: Client,
        *,
        driver: str,
        metrics: DriverMetrics | None = None,
        recorder: EventRecorder,
        recheck_delay: float = RECHECK_DELAY,
    ) -> None:
        self.informer = informer
        self.client = client
        self.driver = driver
        self.finalizer = classic.finalizer_for(driver)
        self.metrics = metrics or DriverMetrics()
        self.recorder = recorder
        self.recheck_delay = recheck_delay
        self.queue: WorkQueue[Key] = WorkQueue(backoff=ExponentialBackoff(base=0.005, cap=60.0))

    # -- wiring ---------------------------------------------------------------

    def register(self) -> None:
        self.informer.add_handler(RESOURCE_GROUP, CLAIMS, _Enqueue(self.queue, "claim"))
        self.informer.add_handler(RESOURCE_GROUP, CONTEXTS, _Enqueue(self.queue, "schedulingCtx"))
        self.informer.add_handler(RESOURCE_GROUP, "resourceslices", _SlicesChanged(self))

    def requeue_contexts(self) -> None:
        for ctx in self.informer.store(RESOURCE_GROUP, CONTEXTS).list():
            meta = ctx["metadata"]
            self.queue.add(("schedulingCtx", meta.get("namespace", ""), meta["name"]))

    async def run(self) -> None:
        """Work the queue with one worker (two allocations must never race) until cancelled."""
        await run_workers(
            self.queue, self.sync, workers=1, name="dra-controller", on_failure=self._failed, describe="/".join
        )

    async def _failed(self, key: Key, err: Exception) -> None:
        """A failed sync becomes a ``Failed`` event on the object, as in the library (not for conflicts)."""
        current = self._object(key)
        if current is not None and not (isinstance(err, st.StatusError) and err.code == 409):
            await self.recorder.record(dict(current), "Warning", "Failed", str(err))

    def _object(self, key: Key) -> Mapping[str, Any] | None:
        kind, namespace, name = key
        resource = CLAIMS if kind == "claim" else CONTEXTS
        return self.informer.store(RESOURCE_GROUP, resource).get(namespace, name)

    async def sync(self, key: Key) -> Mapping[str, Any] | None:
        obj = self._object(key)
        if obj is None:
            return None
        if key[0] == "claim":
            await self.sync_claim(obj)
        else:
            await self.sync_scheduling_context(obj)
        return obj

    # -- claims: deallocation -----------------------------------------------------

    async def sync_claim(self, claim: Mapping[str, Any]) -> None:
        status = claim.get("status") or {}
        if status.get("reservedFor"):
            return  # in use
        meta = claim.get("metadata") or {}
        if not (meta.get("deletionTimestamp") or status.get("deallocationRequested")):
            return
        if self.finalizer not in (meta.get("finalizers") or ()):
            return  # not ours
        current: Obj = dict(claim)
        if status.get("allocation") is not None or status.get("deallocationRequested"):
            # Deallocating here frees the devices: they are only "in use" through this allocation.
            current = await self.client.update_status(
                RESOURCE_GROUP, CLAIMS, {**current, "status": classic.deallocated_status(current)}
            )
            self.metrics.allocations.labels(self.driver, "deallocated").inc()
        await self.client.update(RESOURCE_GROUP, CLAIMS, classic.without_finalizer(current, self.finalizer))

    # -- PodSchedulingContext: unsuitable nodes and allocation ---------------------

    async def sync_scheduling_context(self, ctx: Mapping[str, Any]) -> None:
        meta = ctx.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return
        spec = ctx.get("spec") or {}
        selected = str(spec.get("selectedNode") or "")
        if not selected and not spec.get("potentialNodes"):
            return  # waiting for the scheduler
        namespace, name = str(meta.get("namespace", "")), str(meta["name"])
        pod = self.informer.store("", "pods").get(namespace, name)
        if pod is None:
            raise st.not_found("", "pods", name)
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        if not is_controlled_by(ctx, pod):
            return  # an obsolete object of an earlier pod with this name
        pending = self._pending_claims(pod)
        if not pending:
            raise RequeueAfter(self.recheck_delay)  # the library's errPeriodic
        nodes = classic.nodes_to_check(spec)
        if spec.get("potentialNodes"):
            try:
                classic.unsuitable_nodes(pending, nodes, fits=lambda node: self._fits(pending, node))
            except classic.AllocationError as err:
                raise RuntimeError(f"checking potential nodes: {err}") from None
        if selected and not any(selected in c.unsuitable_nodes for c in pending):
            await self._allocate(pending, selected, pod)
        new_status = classic.scheduling_status_update(ctx, pending, selected)
        if new_status is not None:
            await self.client.update_status(RESOURCE_GROUP, CONTEXTS, {**ctx, "status": new_status})
        raise RequeueAfter(self.recheck_delay)  # the library's errPeriodic

    def _pending_claims(self, pod: Mapping[str, Any]) -> list[classic.PendingClaim]:
        namespace = (pod.get("metadata") or {}).get("namespace", "")
        claims = self.informer.store(RESOURCE_GROUP, CLAIMS)
        classes = self.informer.store(RESOURCE_GROUP, "deviceclasses")
        pending = []
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
            try:
                name, must_check = claim_name(pod, pod_claim)
            except ClaimNameError as err:
                raise RuntimeError(f"pod claim {pod_claim.get('name', '')}: {err}") from None
            if name is None:
                continue
            claim = claims.get(namespace, name)
            if claim is None:
                continue
            if must_check:
                try:
                    check_is_for_pod(pod, claim)
                except ClaimNotForPodError as err:
                    raise RuntimeError(f"pod claim {pod_claim.get('name', '')}: {err}") from None
            if (claim.get("status") or {}).get("allocation") is not None:
                continue
            if (claim.get("spec") or {}).get("controller") != self.driver:
                continue
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
                class_name = request.get("deviceClassName") or ""
                if class_name and classes.get("", class_name) is None:
                    raise RuntimeError(
                        f"pod claim {pod_claim.get('name', '')}: claim {namespace}/{name}: request "
                        f"{request.get('name', '')}: class {class_name}: "
                        f'deviceclass.resource.k8s.io "{class_name}" not found'
                    )
            pending.append(classic.PendingClaim(str(pod_claim.get("name", "")), claim))
        return pending

    def _allocation(self, pending: list[classic.PendingClaim], node_name: str) -> list[Obj] | None:
        node = self.informer.store("", "nodes").get("", node_name) or classic.minimal_node(node_name)
        classes = {c["metadata"]["name"]: c for c in self.informer.store(RESOURCE_GROUP, "deviceclasses").list()}
        return classic.allocate_on(
            [c.claim for c in pending],
            node,
            driver=self.driver,
            slices=self.informer.store(RESOURCE_GROUP, "resourceslices").list(),
            classes=classes,
            allocated=classic.allocated_device_ids(self.informer.store(RESOURCE_GROUP, CLAIMS).list()),
        )

    def _fits(self, pending: list[classic.PendingClaim], node_name: str) -> bool:
        return self._allocation(pending, node_name) is not None

    async def _allocate(self, pending: list[classic.PendingClaim], node_name: str, pod: Mapping[str, Any]) -> None:
        errors: list[str] = []
        ready: list[classic.PendingClaim] = []
        for item in pending:
            claim = item.claim
            if self.finalizer not in ((claim.get("metadata") or {}).get("finalizers") or ()):
                try:
                    claim = await self.client.update(
                        RESOURCE_GROUP, CLAIMS, classic.with_finalizer(claim, self.finalizer)
                    )
                except st.StatusError as err:
                    errors.append(_claim_error(claim, f"add finalizer: {err}"))
                    continue
            ready.append(classic.PendingClaim(item.pod_claim_name, claim, item.unsuitable_nodes))
        if ready:
            try:
                results = self._allocation(ready, node_name)
            except classic.AllocationError as err:
                results, reason = None, str(err)
            else:
                reason = f"resources exhausted on node {go_quote(node_name)}"
            if results is None:
                self.metrics.allocations.labels(self.driver, "failed").inc()
                errors.extend(_claim_error(item.claim, reason) for item in ready)
            else:
                consumer = classic.pod_consumer(pod)
                for item, allocation in zip(ready, results, strict=True):
                    status = classic.allocated_status(item.claim, allocation, consumer)
                    try:
                        await self.client.update_status(RESOURCE_GROUP, CLAIMS, {**item.claim, "status": status})
                    except st.StatusError as err:
                        errors.append(_claim_error(item.claim, f"add allocation: {err}"))
                        continue
                    self.metrics.allocations.labels(self.driver, "allocated").inc()
        if errors:
            raise RuntimeError("\n".join(errors))


def _claim_error(claim: Mapping[str, Any], message: str) -> str:
    name = str((claim.get("metadata") or {}).get("name", ""))
    return message if name in message else f"claim {name}: {message}"


class _Enqueue:
    """Informer handler: every add or update of a kind puts its key on the queue."""

    def __init__(self, queue: WorkQueue[Key], kind: str) -> None:
        self.queue = queue
        self.kind = kind

    def _key(self, obj: Obj) -> Key:
        meta = obj["metadata"]
        return (self.kind, meta.get("namespace", ""), meta["name"])

    def on_add(self, obj: Obj) -> None:
        self.queue.add(self._key(obj))

    def on_update(self, old: Obj, new: Obj) -> None:
        self.queue.add(self._key(new))

    def on_delete(self, obj: Obj) -> None:
        self.queue.forget(self._key(obj))


class _SlicesChanged:
    """Informer handler: this driver's devices changed, so pending pods may fit now."""

    def __init__(self, controller: ClassicController) -> None:
        self.controller = controller

    def _check(self, obj: Obj) -> None:
        if (obj.get("spec") or {}).get("driver") == self.controller.driver:
            self.controller.requeue_contexts()

    def on_add(self, obj: Obj) -> None:
        self._check(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self._check(new)

    def on_delete(self, obj: Obj) -> None:
        self._check(obj)
