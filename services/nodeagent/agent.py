"""The node agent service: register the Node, heartbeat, renew its Lease, and run the pods bound to it.

Why this module exists: this is the kubelet's part of DRA, on the log. For
every pod bound to this node a worker syncs it (one key at a time, like
kubelet's pod workers):

- a pod being deleted is stopped (containers terminated, phase Succeeded),
  its claims are unprepared unless another pod on this node still uses them,
  and the deletion is finished with ``gracePeriodSeconds=0``;
- a terminated pod's claims are unprepared;
- otherwise every claim must be reserved for the pod (kubelet's checks and
  messages, `pod_claims`); claims not yet prepared are recorded in the claim
  cache and sent to their drivers' plugin sockets in one batch per driver;
  then the pod is reported Running with the CDI ids of each container; a pod
  with ``draplane.io/run-seconds`` completes (Succeeded) after that time.

The claim cache is checkpointed (fsynced) before the drivers are called —
that record is what lets a restarted agent unprepare the claims of a pod
deleted while it was down — and again after they answered, to mark the
claims prepared. The second checkpoint only spares a restarted agent a
repeated (idempotent) prepare call (kubelet checkpoints "to reduce redundant
calls to NodePrepareResources after a kubelet restart"), so the Running status
is written while it reaches the disk; the sync still waits for both.

A failed step becomes a ``FailedPrepareDynamicResources`` Warning event on
the pod (on the ``events`` topic, counted on repeats) and the pod is retried
with backoff, and at
once when one of its claims changes. A periodic reconcile unprepares claims
whose pods are gone (deleted while the agent was down, or force-deleted).
All writes authenticate as ``system:node:<name>``.

Beside the Node's own heartbeat, the agent renews the node's Lease in
``kube-node-lease`` as kubelet's lease controller does (`node_lease`): get or
create it, then move ``renewTime`` forward every ``lease_renew_interval``
(10 s), retrying a failed write with kubelet's backoff (100 ms doubling to 7 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import platform
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from services.api.admission.authorization import node_user
from services.api.machinery import status as st
from services.api.types.registry import COORDINATION_GROUP, RESOURCE_GROUP
from services.bus.port import Bus
from services.kubeletplugin.api import ClaimRef
from services.kubeletplugin.health import UNKNOWN, decode_health, health_path
from services.kubeletplugin.unix_socket import PluginClient, PluginClients, PluginUnavailable
from services.nodeagent import node_lease, node_object, pod_status
from services.nodeagent.claim_cache import ClaimCache, ClaimInfo
from services.nodeagent.pod_claims import (
    FAILED_PREPARE_PREFIX,
    FAILED_PREPARE_REASON,
    ClaimUse,
    PodClaimsError,
    allocated_resources_status,
    claims_of_pod,
    drivers_of,
    used_claim_keys,
    used_claim_names,
)
from services.runtime import backoff
from services.runtime.client import Client
from services.runtime.events import EventRecorder
from services.runtime.informer import Informer, Obj
from services.runtime.lifecycle import raise_if_cancelling, stop
from services.runtime.snapshot import SnapshotStore
from services.runtime.workers import run_workers
from services.runtime.workqueue import ExponentialBackoff, WorkQueue

log = logging.getLogger(__name__)

NODE_INDEX = "spec.nodeName"
CLAIMS_INDEX = "nodeagent.claims"
Key = tuple[str, str]  # (namespace, name) of a pod
Health = Callable[[str, str, str], str]  # (driver, pool, device) -> the driver's last health report


class PrepareFailed(Exception):
    """Preparing the pod's resources failed; ``str()`` is kubelet's message (without the event prefix)."""


class UnprepareFailed(Exception):
    """A driver did not unprepare a claim; the claim stays recorded and is tried again."""


def _node_of(obj: Obj) -> list[str]:
    node = (obj.get("spec") or {}).get("nodeName")
    return [node] if node else []


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    return meta


@dataclass
class _Running:
    """A pod this agent handles: its UID and the claims it used (for cleanup after it is gone)."""

    uid: str
    claims: list[str] = field(default_factory=list)
    started: datetime | None = None


class NodeAgent:
    """A kubelet-lite for one node (see module docstring); ``await run()`` until cancelled."""

    def __init__(
        self,
        bus: Bus,
        *,
        node: str,
        state_dir: Path,
        capacity: Mapping[str, str] | None = None,
        address: str | None = None,
        arch: str | None = None,
        labels: Mapping[str, str] | None = None,
        heartbeat_interval: float = 10.0,
        lease_renew_interval: float = node_lease.RENEW_INTERVAL,
        lease_duration_seconds: int = node_lease.LEASE_DURATION_SECONDS,
        reconcile_interval: float = 60.0,
        workers: int = 4,
        informer: Informer | None = None,
        snapshot: SnapshotStore | None = None,
        client_timeout: float = 10.0,
        plugin_timeout: float = 60.0,
        retry_backoff: ExponentialBackoff[Key] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.bus = bus
        self.node = node
        self.state_dir = state_dir
        self.capacity = dict(capacity or node_object.DEFAULT_CAPACITY)
        self.address = address or node_object.node_address(node)
        self.arch = arch or node_object.go_arch(platform.machine())
        self.labels = dict(labels or {})
        self.heartbeat_interval = heartbeat_interval
        self.lease_renew_interval = lease_renew_interval
        self.lease_duration_seconds = lease_duration_seconds
        self.reconcile_interval = reconcile_interval
        self.workers = workers
        self.client_timeout = client_timeout
        self.plugin_timeout = plugin_timeout
        self.plugins = PluginClients(state_dir, timeout=plugin_timeout)
        self.clock = clock
        self._own_informer = informer is None
        self.informer = informer or Informer(bus, snapshot=snapshot, name=f"nodeagent-{node}")
        self.client = Client(bus, user=node_user(node), informer=self.informer, timeout=client_timeout)
        self.recorder = EventRecorder(bus, component="kubelet", host=node)
        self.cache = ClaimCache(state_dir / "nodeagent" / "claims.json")
        self.queue: WorkQueue[Key] = WorkQueue(backoff=retry_backoff or ExponentialBackoff(base=0.2, cap=10.0))
        self.ready = asyncio.Event()
        self._pods: dict[Key, _Running] = {}
        self._claims_lock = asyncio.Lock()

    # -- wiring ---------------------------------------------------------------

    def register_handlers(self) -> None:
        pods = self.informer.store("", "pods")
        pods.add_index(NODE_INDEX, _node_of)
        pods.add_index(CLAIMS_INDEX, used_claim_keys)
        self.informer.add_handler("", "pods", _PodEvents(self))
        self.informer.add_handler(RESOURCE_GROUP, "resourceclaims", _ClaimEvents(self))

    def pods_here(self) -> list[Obj]:
        found: Iterable[Obj] = self.informer.store("", "pods").index(NODE_INDEX, self.node)
        return list(found)

    def enqueue(self, obj: Mapping[str, Any]) -> None:
        meta = _meta(obj)
        self.queue.add((str(meta.get("namespace", "")), str(meta.get("name", ""))))

    async def run(self) -> None:
        tasks: list[asyncio.Task[None]] = []
        try:
            if self._own_informer:
                await self.informer.start()
            # Register right after start (no await in between): the handlers replay the
            # pods a snapshot put in the stores as adds, so a restarted agent syncs them.
            self.register_handlers()
            await self.client.start()
            await self.recorder.start()
            await self.informer.synced.wait()
            await asyncio.to_thread(self.cache.load)
            await self.register()
            tasks.append(asyncio.create_task(self._heartbeats(), name=f"heartbeat-{self.node}"))
            tasks.append(asyncio.create_task(self._lease_renewals(), name=f"node-lease-{self.node}"))
            tasks.append(asyncio.create_task(self._reconciles(), name=f"claim-reconcile-{self.node}"))
            workers = run_workers(
                self.queue,
                self.sync,
                workers=self.workers,
                name=f"podworker-{self.node}",
                on_failure=self._failed,
                describe="/".join,
                expected=(PrepareFailed, PodClaimsError),
            )
            tasks.append(asyncio.create_task(workers, name=f"podworkers-{self.node}"))
            self.ready.set()
            log.info("node agent ready", extra={"node": self.node, "pods": len(self.pods_here())})
            await asyncio.gather(*tasks)
        finally:
            self.queue.shutdown()
            await stop(tasks)
            self.plugins.close()
            self.cache.close()
            with contextlib.suppress(Exception):
                await self.recorder.close()
            with contextlib.suppress(Exception):
                await self.client.close()
            if self._own_informer:
                with contextlib.suppress(Exception):
                    await self.informer.stop()

    # -- the Node ---------------------------------------------------------------

    async def register(self) -> Obj:
        """Create the Node (or bring its labels up to date) and report its full status.

        Like the kubelet's registration, it tries again with backoff (100 ms
        doubling to 7 s, with jitter: `backoff.node_registration`) while the API
        answers a conflict (the Node changed under it, e.g. by a heartbeat of the
        agent's previous run still in flight) or a server error.
        """
        retry = backoff.node_registration()
        while True:
            try:
                return await self._register_once()
            except st.StatusError as err:
                if err.code != 409 and err.code < 500:
                    raise
                delay = retry.step()
                log.warning(
                    "node registration failed; trying again",
                    extra={"node": self.node, "code": err.code, "error": str(err), "retry_in": round(delay, 3)},
                )
                await asyncio.sleep(delay)

    async def _register_once(self) -> Obj:
        wanted = {**node_object.node_labels(self.node, arch=self.arch), **self.labels}
        node = self.informer.store("", "nodes").get("", self.node)
        if node is None:
            try:
                node = await self.client.create(
                    "", "nodes", node_object.new_node(self.node, arch=self.arch, labels=wanted)
                )
            except st.StatusError as err:
                if err.code != 409:
                    raise
                node = self.informer.store("", "nodes").get("", self.node)
                if node is None:
                    raise
        labels = node_object.missing_labels(node, wanted)
        if labels is not None:
            node = await self.client.update("", "nodes", {**node, "metadata": {**node["metadata"], "labels": labels}})
        status = node_object.node_status(
            self.node,
            capacity=self.capacity,
            address=self.address,
            arch=self.arch,
            now=self.clock(),
            previous=node.get("status"),
        )
        node = await self.client.update_status("", "nodes", {**node, "status": status})
        log.info("registered node", extra={"node": self.node})
        return node

    async def heartbeat(self) -> None:
        """Move the node's heartbeat forward (re-registering a Node that disappeared)."""
        node = self.informer.store("", "nodes").get("", self.node)
        if node is None:
            await self.register()
            return
        await self.client.update_status("", "nodes", node_object.heartbeat(node, now=self.clock()))

    async def _heartbeats(self) -> None:
        while True:
            raise_if_cancelling()
            await asyncio.sleep(self.heartbeat_interval)
            try:
                await self.heartbeat()
            except st.StatusError as err:
                log.warning("node heartbeat failed", extra={"node": self.node, "code": err.code, "error": str(err)})

    # -- the node's Lease ---------------------------------------------------------

    async def renew_lease(self) -> Obj:
        """Create the node's Lease, or move its ``renewTime`` to now (kubelet's lease controller ``sync``)."""
        node = self.informer.store("", "nodes").get("", self.node)
        leases = self.informer.store(COORDINATION_GROUP, "leases")
        lease = leases.get(node_lease.NODE_LEASE_NAMESPACE, self.node)
        if lease is None:
            fresh = node_lease.new_lease(self.node, node=node, now=self.clock(), duration=self.lease_duration_seconds)
            try:
                return await self.client.create(COORDINATION_GROUP, "leases", fresh)
            except st.StatusError as err:
                lease = leases.get(node_lease.NODE_LEASE_NAMESPACE, self.node)
                if err.code != 409 or lease is None:
                    raise
        return await self.client.update(
            COORDINATION_GROUP, "leases", node_lease.renewed(lease, node=node, now=self.clock())
        )

    async def _lease_renewals(self) -> None:
        retry = backoff.node_registration()
        while True:
            raise_if_cancelling()
            try:
                await self.renew_lease()
            except st.StatusError as err:
                delay = retry.step()
                log.warning(
                    "failed to renew the node lease; trying again",
                    extra={"node": self.node, "code": err.code, "error": str(err), "retry_in": round(delay, 3)},
                )
                await asyncio.sleep(delay)
                continue
            retry.reset()
            await asyncio.sleep(self.lease_renew_interval)

    # -- pods -------------------------------------------------------------------

    async def _failed(self, key: Key, err: Exception) -> None:
        """kubelet's ``FailedPrepareDynamicResources`` event for a failed prepare (the key is retried anyway)."""
        if isinstance(err, (PrepareFailed, PodClaimsError)):
            pod = self.informer.store("", "pods").get(*key)
            if pod is not None:
                await self.recorder.record(pod, "Warning", FAILED_PREPARE_REASON, f"{FAILED_PREPARE_PREFIX}{err}")

    async def sync(self, key: Key) -> None:
        """Bring one pod (by namespace and name) to where it should be on this node."""
        pod = self.informer.store("", "pods").get(*key)
        running = self._pods.get(key)
        mine = pod is not None and (pod.get("spec") or {}).get("nodeName") == self.node
        if running is not None and (not mine or pod is None or _meta(pod).get("uid") != running.uid):
            await self._release(running.uid, key[0], running.claims)  # the pod we ran is gone
            del self._pods[key]
        if pod is None or not mine:
            return
        phase = (pod.get("status") or {}).get("phase")
        if _meta(pod).get("deletionTimestamp"):
            await self._finish_deletion(key, pod)
        elif phase in pod_status.TERMINAL:
            await self._release(str(_meta(pod)["uid"]), key[0], used_claim_names(pod))
            self._pods.pop(key, None)
        else:
            await self._run_pod(key, pod)

    async def _run_pod(self, key: Key, pod: Obj) -> None:
        uses = claims_of_pod(pod, self.informer.store(RESOURCE_GROUP, "resourceclaims").get)
        health: asyncio.Future[Health] | None = None
        if (pod.get("status") or {}).get("phase") != pod_status.RUNNING:
            # The drivers' health reports go into the Running status: read while the drivers prepare.
            health = asyncio.ensure_future(self._health({d for use in uses for d in drivers_of(use.claim)}))
        try:
            devices, recorded = await self._prepare(pod, uses)
            try:
                await self._report_running(key, pod, devices, health)
            finally:
                if recorded is not None:
                    await recorded  # the checkpoint after the prepare, written meanwhile
        finally:
            if health is not None:
                health.cancel()  # a no-op once read

    async def _report_running(
        self,
        key: Key,
        pod: Obj,
        devices: dict[str, list[dict[str, Any]]],
        health: asyncio.Future[Health] | None,
    ) -> None:
        uid = str(_meta(pod)["uid"])
        running = self._pods.setdefault(key, _Running(uid))
        running.claims = used_claim_names(pod)
        status = pod.get("status") or {}
        if status.get("phase") != pod_status.RUNNING:
            now = self.clock()
            assert health is not None  # `_run_pod` reads it whenever the pod is not Running yet
            lookup = await health
            new_status = pod_status.running_status(
                pod,
                host_ip=self.address,
                now=now,
                resources=allocated_resources_status(pod, devices, health=lookup),
            )
            pod = await self.client.update_status("", "pods", {**pod, "status": new_status})
            running.started = now
            log.info("pod running", extra={"pod": "/".join(key), "node": self.node})
        delay = pod_status.completion_delay(pod, now=self.clock(), started=running.started)
        if delay is None:
            return
        if delay > 0:
            self.queue.add_after(key, delay)
            return
        await self.client.update_status(
            "", "pods", {**pod, "status": pod_status.terminated_status(pod, now=self.clock())}
        )
        log.info("pod completed", extra={"pod": "/".join(key), "node": self.node})

    async def _finish_deletion(self, key: Key, pod: Obj) -> None:
        meta = _meta(pod)
        uid = str(meta["uid"])
        status = pod.get("status") or {}
        if status.get("phase") == pod_status.RUNNING:
            # The containers stop on SIGTERM (the demos trap it and exit 0).
            pod = await self.client.update_status(
                "", "pods", {**pod, "status": pod_status.terminated_status(pod, now=self.clock())}
            )
        await self._release(uid, key[0], used_claim_names(pod))
        self._pods.pop(key, None)
        try:
            await self.client.delete("", "pods", key[0], key[1], gracePeriodSeconds=0, preconditions={"uid": uid})
        except st.StatusError as err:
            if err.code not in (404, 409):
                raise

    # -- claims: prepare and unprepare --------------------------------------------

    async def _prepare(
        self, pod: Obj, uses: list[ClaimUse]
    ) -> tuple[dict[str, list[dict[str, Any]]], asyncio.Future[None] | None]:
        """Prepare the pod's claims (``uses``): the devices per pod claim name, and the checkpoint that marks
        newly prepared claims so (being written; None when nothing was prepared)."""
        if not uses:
            return {}, None
        pod_uid = str(_meta(pod)["uid"])
        position = str(max(self.informer.position - 1, 0))
        async with self._claims_lock:
            pending: dict[str, list[ClaimInfo]] = {}
            infos: dict[str, ClaimInfo] = {}
            for use in uses:
                namespace = str(_meta(use.claim).get("namespace", ""))
                info = self.cache.get(namespace, use.name)
                if info is not None and info.uid != use.uid:
                    raise PrepareFailed(
                        f"old ResourceClaim with same name {use.name} and different UID {info.uid} still exists"
                    )
                if info is None:
                    info = ClaimInfo(use.uid, namespace, use.name, drivers_of(use.claim))
                    self.cache.put(info)
                info.pod_uids.add(pod_uid)
                infos[use.pod_claim_name] = info
                if not info.prepared:
                    for driver in info.drivers:
                        pending.setdefault(driver, []).append(info)
            # Recorded before the drivers are called: a pod deleted meanwhile still gets its claims unprepared.
            await self.cache.checkpoint()
            for driver, batch in pending.items():
                await self._call_prepare(driver, batch, position)
            for info in {id(i): i for batch in pending.values() for i in batch}.values():
                info.prepared = True
            recorded = self.cache.checkpoint() if pending else None
        devices = {
            name: [{**d, "driver": driver} for driver in info.drivers for d in info.devices.get(driver, ())]
            for name, info in infos.items()
        }
        return devices, recorded

    async def _health(self, drivers: Iterable[str]) -> Health:
        """The drivers' last health reports (kubelet's health info cache), read from their health files."""
        reports: dict[str, dict[tuple[str, str], str]] = {}
        for driver in drivers:
            path = health_path(self.state_dir, driver)
            try:
                reports[driver] = decode_health(await asyncio.to_thread(path.read_bytes))
            except OSError:
                reports[driver] = {}
        return lambda driver, pool, device: reports.get(driver, {}).get((pool, device), UNKNOWN)

    def _plugin(self, driver: str) -> PluginClient:
        try:
            return self.plugins.get(driver)
        except PluginUnavailable as err:
            raise PrepareFailed(f"failed to get DRA Plugin client for plugin name {driver}: {err}") from None

    async def _call_prepare(self, driver: str, batch: list[ClaimInfo], position: str) -> None:
        plugin = self._plugin(driver)
        refs = [ClaimRef(i.uid, i.namespace, i.name, position) for i in batch]
        try:
            response = await plugin.prepare(refs)
        except PluginUnavailable as err:
            raise PrepareFailed(f"NodePrepareResources failed: {err}") from None
        if response.error:
            raise PrepareFailed(f"NodePrepareResources failed: {response.error}")
        by_uid = {i.uid: i for i in batch}
        for claim_uid, result in response.claims.items():
            info = by_uid.get(claim_uid)
            if info is None:
                raise PrepareFailed(f"NodePrepareResources returned result for unknown claim UID {claim_uid}")
            if result.error:
                raise PrepareFailed(
                    f"NodePrepareResources failed for claim {info.namespace}/{info.name}: {result.error}"
                )
            info.devices[driver] = [dict(d) for d in result.devices]
        unfinished = len(batch) - len(response.claims)
        if unfinished:
            raise PrepareFailed(f"NodePrepareResources left out {unfinished} claims")

    async def _release(self, pod_uid: str, namespace: str, claim_names: Iterable[str]) -> None:
        """The pod no longer needs its claims: unprepare those no other pod on this node uses."""
        async with self._claims_lock:
            done: list[ClaimInfo] = []
            for name in claim_names:
                info = self.cache.get(namespace, name)
                if info is None:
                    continue
                info.pod_uids.discard(pod_uid)
                if not info.pod_uids:
                    done.append(info)
            await self._unprepare(done)

    async def _unprepare(self, infos: list[ClaimInfo]) -> None:
        """Ask the drivers to unprepare ``infos`` (lock held); forget each one that all its drivers released."""
        failed: list[str] = []
        for info in infos:
            ok = True
            for driver in info.drivers:
                try:
                    response = await self._plugin(driver).unprepare([ClaimRef(info.uid, info.namespace, info.name)])
                    result = response.claims.get(info.uid)
                    error = response.error or (result.error if result is not None else "no result")
                except (PrepareFailed, PluginUnavailable) as err:
                    error = str(err)
                if error:
                    ok = False
                    failed.append(f"NodeUnprepareResources failed for claim {info.namespace}/{info.name}: {error}")
            if ok:
                self.cache.remove(info.namespace, info.name)
        await self.cache.checkpoint()
        if failed:
            raise UnprepareFailed("; ".join(failed))

    async def reconcile_claims(self) -> None:
        """Unprepare claims none of whose pods is still active on this node (kubelet's reconcile loop)."""
        active = {
            str(_meta(p).get("uid"))
            for p in self.pods_here()
            if (p.get("status") or {}).get("phase") not in pod_status.TERMINAL
        }
        async with self._claims_lock:
            orphaned = []
            for info in self.cache:
                info.pod_uids &= active
                if not info.pod_uids:
                    orphaned.append(info)
            await self._unprepare(orphaned)

    async def _reconciles(self) -> None:
        while True:
            raise_if_cancelling()
            try:
                await self.reconcile_claims()
            except Exception as err:
                log.warning("claim reconcile failed", extra={"node": self.node, "error": str(err)})
            await asyncio.sleep(self.reconcile_interval)


class _PodEvents:
    """Informer handler: pods bound to this node (before or after the change) are synced."""

    def __init__(self, agent: NodeAgent) -> None:
        self.agent = agent

    def _here(self, obj: Obj) -> bool:
        return (obj.get("spec") or {}).get("nodeName") == self.agent.node

    def on_add(self, obj: Obj) -> None:
        if self._here(obj):
            self.agent.enqueue(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        if self._here(new) or self._here(old):
            self.agent.enqueue(new)

    def on_delete(self, obj: Obj) -> None:
        if self._here(obj):
            self.agent.enqueue(obj)


class _ClaimEvents:
    """Informer handler: a claim changed, so the pods on this node that use it are synced."""

    def __init__(self, agent: NodeAgent) -> None:
        self.agent = agent

    def _pods_of(self, claim: Obj) -> None:
        meta = claim["metadata"]
        users: Iterable[Obj] = self.agent.informer.store("", "pods").index(
            CLAIMS_INDEX, f"{meta.get('namespace', '')}/{meta['name']}"
        )
        for pod in users:
            if (pod.get("spec") or {}).get("nodeName") == self.agent.node:
                self.agent.enqueue(pod)

    def on_add(self, obj: Obj) -> None:
        self._pods_of(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self._pods_of(new)

    def on_delete(self, obj: Obj) -> None:
        self._pods_of(obj)
