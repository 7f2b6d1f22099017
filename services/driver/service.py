"""The driver service: informer, clients, slice publisher, plugin socket and (classic mode) controller.

Why this module exists: one place decides what a driver process runs and in
which order, so ``draplane driver``, ``draplane up`` and the tests start it the
same way. `DriverService.run` starts the informer and clients, waits until
the informer has caught up with the log, discovers devices, recovers
prepared claims from the checkpoint, opens the plugin socket, publishes
ResourceSlices and (with ``control_plane``) runs the classic controller,
until it is cancelled. `DriverService.decommission` deletes the node's slices
and returns (``draplane driver --decommission``); ``decommission_on_exit``
does the same when `run` ends.

Identities: the node part writes as ``system:node:<node>``; the controller
as ``system:serviceaccount:kube-system:dra-controller``. With an empty
``node`` the service is only the control-plane controller. With leader
election (``leader_election``, on in ``draplane driver --control-plane``)
several control-plane replicas may run: the controller's workers start only in
the one holding the driver's Lease in ``kube-system``
(`controller_lease_name`), after the predecessor-drain step.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from services.api.admission.authorization import DRA_CONTROLLER, node_user
from services.api.types.registry import RESOURCE_GROUP
from services.bus.port import Bus
from services.driver.cdi_files import CdiDirectory
from services.driver.checkpoint import Checkpoint
from services.driver.claim_status import ClaimStatusWriter
from services.driver.controller import RECHECK_DELAY, ClassicController
from services.driver.metrics import DriverMetrics
from services.driver.nvidia import Discovery, discover_devices
from services.driver.prepare import FaultHook, Preparer
from services.driver.profiles import NET, DriverProfile, nic_network_data
from services.driver.publisher import SlicePublisher
from services.kubeletplugin.api import ClaimRef, plugins_dir, socket_path
from services.kubeletplugin.health import HEALTHY, encode_health, health_path
from services.kubeletplugin.unix_socket import PluginServer
from services.runtime.atomic_files import write_atomically
from services.runtime.client import Client
from services.runtime.events import EventRecorder
from services.runtime.informer import Informer
from services.runtime.leader_election import LeaderElectionConfig, LeaderElector, MasterStatus
from services.runtime.lifecycle import stop
from services.runtime.snapshot import SnapshotStore
from topics.envelope import UserInfo

log = logging.getLogger(__name__)

DEFAULT_DRIVER = "gpu.example.com"
DRA_CONTROLLER_USER = UserInfo(
    DRA_CONTROLLER, ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")
)


def controller_lease_name(driver: str) -> str:
    """The Lease of a driver's control-plane controller, named as the CSI sidecars name theirs
    (``<component>-leader-<driver with dots and slashes as dashes>``)."""
    return "dra-controller-leader-" + driver.replace(".", "-").replace("/", "-")


@dataclass
class DriverOptions:
    """What one driver process serves (see `services.cmd.driver` for the flags)."""

    node: str = ""
    driver: str = DEFAULT_DRIVER
    state_dir: Path = Path(".draplane/node")
    inventory: Path | None = None
    num_devices: int = 8
    nvidia_smi: str | None = "nvidia-smi"
    cdi_root: Path | None = None
    control_plane: bool = False
    decommission_on_exit: bool = False
    client_timeout: float = 10.0
    recheck_delay: float = RECHECK_DELAY
    read_timeout: float = 10.0
    leader_election: LeaderElectionConfig | None = None  # the control-plane controller's; None: act at once
    profile: DriverProfile = field(default_factory=DriverProfile)
    device_status: bool = True  # write status.devices after prepare

    @property
    def cdi_dir(self) -> Path:
        return self.cdi_root or self.state_dir / "cdi"

    @property
    def checkpoint_path(self) -> Path:
        return plugins_dir(self.state_dir) / self.driver / "checkpoint.db"

    @property
    def socket_path(self) -> Path:
        return socket_path(self.state_dir, self.driver)

    @property
    def health_path(self) -> Path:
        return health_path(self.state_dir, self.driver)


class InformerClaims:
    """The preparer's view of claims and pods: the informer, read at the node agent's log position."""

    def __init__(self, informer: Informer, *, timeout: float = 10.0) -> None:
        self.informer = informer
        self.timeout = timeout

    async def claim(self, ref: ClaimRef) -> Mapping[str, Any] | None:
        if ref.resource_version.isdigit():
            with contextlib.suppress(TimeoutError):
                await self.informer.wait_for(int(ref.resource_version), timeout=self.timeout)
        return self.informer.store(RESOURCE_GROUP, "resourceclaims").get(ref.namespace, ref.name)

    def pod(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.informer.store("", "pods").get(namespace, name)

    def claim_exists(self, namespace: str, name: str, uid: str) -> bool:
        claim = self.informer.store(RESOURCE_GROUP, "resourceclaims").get(namespace, name)
        return claim is not None and claim["metadata"].get("uid") == uid


class DriverService:
    """One driver (see module docstring); ``await run()`` until cancelled."""

    def __init__(
        self,
        bus: Bus,
        options: DriverOptions,
        *,
        informer: Informer | None = None,
        snapshot: SnapshotStore | None = None,
        devices: Sequence[dict[str, Any]] | None = None,
        fault: FaultHook | None = None,
    ) -> None:
        if not options.node and not options.control_plane:
            raise ValueError("a driver needs a node, or --control-plane, or both")
        self.bus = bus
        self.options = options
        self._own_informer = informer is None
        self.informer = informer or Informer(bus, snapshot=snapshot, name=f"driver-{options.node or 'controller'}")
        self._devices = list(devices) if devices is not None else None
        self.fault = fault
        self.metrics = DriverMetrics()
        self.ready = asyncio.Event()
        self.discovery: Discovery | None = None
        self.node_client: Client | None = None
        self.controller_client: Client | None = None
        self.publisher: SlicePublisher | None = None
        self.preparer: Preparer | None = None
        self.controller: ClassicController | None = None
        self.elector: LeaderElector | None = None
        election = options.leader_election
        self._election = election if options.control_plane and election is not None and election.enabled else None
        self._master_status = MasterStatus(self.registry) if self._election is not None else None
        self.server: PluginServer | None = None
        self.status_writer: ClaimStatusWriter | None = None
        self.shared_counters: list[dict[str, Any]] = []

    @property
    def registry(self) -> CollectorRegistry:
        return self.metrics.registry

    def _client(self, user: UserInfo) -> Client:
        return Client(self.bus, user=user, informer=self.informer, timeout=self.options.client_timeout)

    async def _discover(self) -> Discovery:
        if self._devices is not None:
            return Discovery("given", list(self._devices))
        opts = self.options
        if not opts.profile.plain:
            pool = opts.profile.resources(opts.node)
            self.shared_counters = pool.shared_counters
            return Discovery(f"profile {opts.profile.kind}", pool.devices)
        return await discover_devices(
            node=opts.node, inventory=opts.inventory, num_devices=opts.num_devices, nvidia_smi=opts.nvidia_smi
        )

    async def run(self) -> None:
        opts = self.options
        clients: list[Client] = []
        recorders: list[EventRecorder] = []
        tasks: list[asyncio.Task[None]] = []
        try:
            if opts.node:
                self.node_client = self._client(node_user(opts.node))
                clients.append(self.node_client)
                self.publisher = SlicePublisher(
                    self.informer, self.node_client, node=opts.node, driver=opts.driver, metrics=self.metrics
                )
                self.publisher.register()
                self.status_writer = ClaimStatusWriter(
                    self.informer,
                    self._client(DRA_CONTROLLER_USER),
                    driver=opts.driver,
                    node=opts.node,
                    devices=self._published,
                    network_data=self._network_data,
                    still_prepared=self._still_prepared,
                )
                clients.append(self.status_writer.client)
                self.status_writer.register()
            if opts.control_plane:
                self.controller_client = self._client(DRA_CONTROLLER_USER)
                clients.append(self.controller_client)
                recorder = EventRecorder(self.bus, component=f"resource driver {opts.driver}")
                recorders.append(recorder)
                self.controller = ClassicController(
                    self.informer,
                    self.controller_client,
                    driver=opts.driver,
                    metrics=self.metrics,
                    recorder=recorder,
                    recheck_delay=opts.recheck_delay,
                )
                self.controller.register()
            if self._own_informer:
                await self.informer.start()
            for client in clients:
                await client.start()
            for recorder in recorders:
                await recorder.start()
            await self.informer.synced.wait()
            if opts.node and self.publisher is not None:
                self.discovery = await self._discover()
                allocatable = {d["name"] for d in self.discovery.devices}
                self.preparer = Preparer(
                    driver=opts.driver,
                    node=opts.node,
                    allocatable=allocatable,
                    checkpoint=Checkpoint(opts.checkpoint_path),
                    cdi_dir=CdiDirectory(opts.cdi_dir, driver=opts.driver),
                    source=InformerClaims(self.informer, timeout=opts.read_timeout),
                    metrics=self.metrics,
                    fault=self.fault,
                    on_prepared=self._report_prepared if opts.device_status else None,
                )
                await self.preparer.start()
                await self._write_health()
                cleaned = await self.preparer.recover()
                if cleaned:
                    log.info("removed leftovers of claims that are gone", extra={"uids": cleaned})
                self.server = PluginServer(opts.socket_path, self.preparer.handle)
                await self.server.start()
                self.publisher.set_devices(self.discovery.devices, shared_counters=self.shared_counters)
                tasks.append(asyncio.create_task(self.publisher.run(), name=f"publisher-{opts.node}"))
                if self.status_writer is not None:
                    tasks.append(asyncio.create_task(self.status_writer.run(), name=f"device-status-{opts.node}"))
                log.info(
                    "driver ready",
                    extra={
                        "node": opts.node,
                        "driver": opts.driver,
                        "devices": len(self.discovery.devices),
                        "source": self.discovery.source,
                    },
                )
            if self.controller is not None:
                tasks.append(asyncio.create_task(self._run_controller(), name=f"dra-controller-{opts.driver}"))
            self.ready.set()
            if tasks:
                await asyncio.gather(*tasks)
            else:
                await asyncio.Event().wait()
        finally:
            await stop(tasks)
            if self.server is not None:
                await self.server.close()
            if opts.decommission_on_exit and self.publisher is not None:
                with contextlib.suppress(Exception):
                    await self.publisher.decommission()
            if self.preparer is not None:
                with contextlib.suppress(Exception):
                    await self.preparer.close()
            for recorder in recorders:
                with contextlib.suppress(Exception):
                    await recorder.close()
            for client in clients:
                with contextlib.suppress(Exception):
                    await client.close()
            if self._own_informer:
                with contextlib.suppress(Exception):
                    await self.informer.stop()

    async def _run_controller(self) -> None:
        """The classic controller: at once, or while this replica holds the driver's Lease."""
        controller, client = self.controller, self.controller_client
        assert controller is not None and client is not None
        if self._election is None:
            await controller.run()
            return

        async def lead() -> None:
            await client.wait_for_predecessors()
            await controller.run()

        self.elector = LeaderElector(
            self._election,
            client=client,
            component=f"resource driver {self.options.driver}",
            status=self._master_status,
        )
        await self.elector.run(lead)

    def _published(self) -> dict[str, dict[str, Any]]:
        """Device name -> ``basic`` of what this driver publishes."""
        devices = self.discovery.devices if self.discovery is not None else []
        return {str(d.get("name")): dict(d.get("basic") or {}) for d in devices}

    def _network_data(self, device: str, share: int) -> dict[str, Any] | None:
        if self.options.profile.kind != NET:
            return None
        return nic_network_data(device, node=self.options.node, share=share)

    def _report_prepared(self, ref: ClaimRef) -> None:
        if self.status_writer is not None:
            self.status_writer.report_prepared(ref.namespace, ref.name, ref.uid)

    async def _still_prepared(self, uid: str) -> bool:
        return self.preparer is not None and await self.preparer.is_prepared(uid)

    def health_report(self) -> dict[tuple[str, str], str]:
        """What this driver says about its devices' health: Healthy unless the profile says otherwise."""
        overrides = self.options.profile.device_health()
        devices = self.discovery.devices if self.discovery is not None else []
        return {(self.options.node, str(d["name"])): overrides.get(str(d["name"]), HEALTHY) for d in devices}

    async def _write_health(self) -> None:
        await asyncio.to_thread(write_atomically, self.options.health_path, encode_health(self.health_report()))

    async def decommission(self) -> None:
        """Delete this node's ResourceSlices of this driver and return (``--decommission``)."""
        opts = self.options
        if not opts.node:
            raise ValueError("decommissioning needs a node")
        client = self._client(node_user(opts.node))
        publisher = SlicePublisher(self.informer, client, node=opts.node, driver=opts.driver, metrics=self.metrics)
        publisher.register()
        try:
            if self._own_informer:
                await self.informer.start()
            await client.start()
            await self.informer.synced.wait()
            await publisher.decommission()
        finally:
            with contextlib.suppress(Exception):
                await client.close()
            if self._own_informer:
                with contextlib.suppress(Exception):
                    await self.informer.stop()
