"""The controller-manager: resourceclaim, device-taint-eviction, garbage-collector and namespace controllers.

Why this module exists: the controllers read the same objects, so one
process runs them over one shared informer (one consumer of ``objects``) and
one client that writes as ``system:kube-controller-manager``; warnings about
pods (``FailedResourceClaimCreation``) go to the ``events`` topic. `run` is the
component's whole life: start the informer and client, install the
controllers (device-taint-eviction only with DRADeviceTaints on; its Events
come from ``device-taint-eviction-controller``), serve until cancelled, close
everything it opened. ``registry`` holds the controllers' Prometheus metrics
for ``/metrics``.

With leader election (``leader_election``, on in ``draplane
controller-manager`` as in kube-controller-manager) a replica installs its
handlers and keeps its informer warm, and starts the controllers' workers only
while it holds the ``kube-system/kube-controller-manager`` Lease, after the
predecessor-drain step (docs/decisions/leader-election.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from prometheus_client import CollectorRegistry

from services.api.admission.authorization import CONTROLLER_MANAGER
from services.bus.port import Bus
from services.controllers import device_taint_eviction
from services.controllers.device_taint_eviction import DeviceTaintEvictionController
from services.controllers.garbage_collector import DEFAULT_WORKERS as DEFAULT_GC_WORKERS
from services.controllers.garbage_collector import GarbageCollector
from services.controllers.gates import Gates
from services.controllers.metrics import ControllerMetrics
from services.controllers.namespace import NamespaceController
from services.controllers.ports import EventRecorder, Writer
from services.controllers.resourceclaim import DEFAULT_WORKERS as DEFAULT_CLAIM_WORKERS
from services.controllers.resourceclaim import ResourceClaimController
from services.runtime.client import Client
from services.runtime.events import EventRecorder as RuntimeEventRecorder
from services.runtime.informer import Informer
from services.runtime.leader_election import LeaderElectionConfig, LeaderElector, MasterStatus
from services.runtime.snapshot import SnapshotStore
from topics.envelope import UserInfo

log = logging.getLogger(__name__)

CONTROLLER_MANAGER_USER = UserInfo(CONTROLLER_MANAGER, ("system:authenticated",))
EVENT_COMPONENT = "resource_claim"


class ControllerManager:
    """Runs the controllers; ``await run()`` until the task is cancelled."""

    def __init__(
        self,
        bus: Bus,
        *,
        gates: Gates = None,
        claim_workers: int = DEFAULT_CLAIM_WORKERS,
        gc_workers: int = DEFAULT_GC_WORKERS,
        informer: Informer | None = None,
        snapshot: SnapshotStore | None = None,
        user: UserInfo = CONTROLLER_MANAGER_USER,
        client_timeout: float = 10.0,
        wrap_writer: Callable[[Client], Writer] | None = None,
        recorder: EventRecorder | None = None,
        garbage_collector: bool = True,
        host: str = "",
        leader_election: LeaderElectionConfig | None = None,
    ) -> None:
        self.bus = bus
        self.gates = gates
        self.claim_workers = claim_workers
        self.gc_workers = gc_workers
        self.user = user
        self.client_timeout = client_timeout
        self.wrap_writer = wrap_writer
        self.recorder = recorder
        self.host = host
        self.garbage_collector_enabled = garbage_collector
        self._own_informer = informer is None
        self.informer = informer or Informer(bus, snapshot=snapshot, name="controller-manager")
        self.metrics = ControllerMetrics()
        self.leader_election = leader_election if leader_election is not None and leader_election.enabled else None
        self.elector: LeaderElector | None = None
        self._master_status = MasterStatus(self.registry) if self.leader_election is not None else None
        self.ready = asyncio.Event()  # caught up (a warm standby is ready) and, without election, drained
        self.leading = asyncio.Event()  # the controllers' workers run
        self.client: Client | None = None
        self.claim_controller: ResourceClaimController | None = None
        self.gc: GarbageCollector | None = None
        self.namespace_controller: NamespaceController | None = None
        self.taint_eviction: DeviceTaintEvictionController | None = None

    @property
    def registry(self) -> CollectorRegistry:
        """The controllers' metrics registry (serve with ``prometheus_client.generate_latest``)."""
        return self.metrics.registry

    async def run(self) -> None:
        client = Client(self.bus, user=self.user, informer=self.informer, timeout=self.client_timeout)
        self.client = client
        events: RuntimeEventRecorder | None = None
        if self.recorder is None:
            # Kubernetes' resourceclaim controller reports as component "resource_claim".
            events = RuntimeEventRecorder(self.bus, component=EVENT_COMPONENT, host=self.host)
        writer: Writer = self.wrap_writer(client) if self.wrap_writer else client
        self.claim_controller = ResourceClaimController(
            self.informer,
            writer,
            workers=self.claim_workers,
            gates=self.gates,
            metrics=self.metrics,
            recorder=self.recorder or events,
        )
        if self.garbage_collector_enabled:
            self.gc = GarbageCollector(self.informer, writer, workers=self.gc_workers, metrics=self.metrics)
        self.namespace_controller = NamespaceController(self.informer, writer, metrics=self.metrics)
        taint_events: RuntimeEventRecorder | None = None
        if device_taint_eviction.enabled(self.gates):
            if self.recorder is None:
                taint_events = RuntimeEventRecorder(
                    self.bus, component=device_taint_eviction.CONTROLLER_NAME, host=self.host
                )
            self.taint_eviction = DeviceTaintEvictionController(
                self.informer, writer, gates=self.gates, recorder=self.recorder or taint_events, metrics=self.metrics
            )
        try:
            if self._own_informer:
                await self.informer.start()
            # Register right after start (no await in between): handlers replay
            # what a snapshot put in the stores, then see every record after it.
            self.claim_controller.register()
            if self.gc is not None:
                self.gc.register()
            self.namespace_controller.register()
            if self.taint_eviction is not None:
                self.taint_eviction.register()
            await client.start()
            if events is not None:
                await events.start()
            if taint_events is not None:
                await taint_events.start()
            await self.informer.synced.wait()
            if self.leader_election is None:
                await self._lead(client)
                return
            self.elector = LeaderElector(
                self.leader_election,
                client=client,
                component="kube-controller-manager",
                host=self.host,
                status=self._master_status,
            )
            log.info("controller-manager ready (standby until it holds the lease)")
            self.ready.set()
            await self.elector.run(lambda: self._lead(client))
        finally:
            with contextlib.suppress(Exception):
                await client.close()
            for recorder in (events, taint_events):
                if recorder is not None:
                    with contextlib.suppress(Exception):
                        await recorder.close()
            if self._own_informer:
                with contextlib.suppress(Exception):
                    await self.informer.stop()

    async def _lead(self, client: Client) -> None:
        """The active controller-manager: drain a predecessor's requests, then run the controllers' workers."""
        assert self.claim_controller is not None and self.namespace_controller is not None
        # A predecessor's last creates, decided and seen: else a claim it created while the
        # log was away would be missed by the owner lookup and created a second time.
        await client.wait_for_predecessors()
        log.info("controller-manager ready", extra={"position": self.informer.position})
        self.ready.set()
        self.leading.set()
        runs = [self.claim_controller.run(), self.namespace_controller.run()]
        if self.gc is not None:
            runs.append(self.gc.run())
        if self.taint_eviction is not None:
            runs.append(self.taint_eviction.run())
        try:
            await asyncio.gather(*runs)
        finally:
            self.leading.clear()
