"""Every component in one process: what `draplane up` and the test fixture run.

The apiserver (with its committer candidate) keeps its own view; the other
components — controller-manager, scheduler, and per simulated node a DRA
driver and a node agent — share one informer, as client-go's shared informer
factory does, so each record of the log is decoded once for all of them.

The whole process has one ``/metrics``: `LocalStack.metrics_registries` holds
every component's registry, the drivers' merged under a ``node`` label (they
share metric names, one driver per node).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Sample

from services.api.machinery import status as st
from services.api.types.served import DEFAULT_SERVED, ServedVersions
from services.apiserver.http.auth import Authenticator
from services.apiserver.service import Apiserver, ApiserverConfig
from services.bus import open_bus
from services.bus.port import Bus
from services.controllers.manager import ControllerManager
from services.driver.profiles import DriverProfile
from services.driver.service import DriverOptions, DriverService
from services.kube.feature_gates import FeatureGates
from services.nodeagent.agent import NodeAgent
from services.runtime.client import Client
from services.runtime.healthz import HealthCheck, ready_check
from services.runtime.informer import Informer
from services.runtime.snapshot import SnapshotStore
from services.runtime.supervised import Supervised
from services.scheduler.service import SchedulerConfig, SchedulerService
from topics.envelope import UserInfo

log = logging.getLogger(__name__)

GPU_DRIVER = "gpu.example.com"
BOOTSTRAP_USER = UserInfo("system:apiserver", ("system:masters",))


def gpu_device_class(driver: str = GPU_DRIVER) -> dict[str, Any]:
    """The DeviceClass of an example driver (dra-example-driver's: named after the driver, selecting its devices)."""
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceClass",
        "metadata": {"name": driver},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def node_names(count: int) -> list[str]:
    return [f"node-{i}" for i in range(1, count + 1)]


@dataclass
class StackConfig:
    bus_url: str
    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 8080
    nodes: int = 2
    gates: FeatureGates = field(default_factory=FeatureGates)
    authenticator: Authenticator | None = None
    anonymous: bool = True
    certfile: str | None = None
    keyfile: str | None = None
    # The apiserver's own gates when they differ from the components' (a cluster
    # part-way through turning a gate off); None: the same as ``gates``.
    apiserver_gates: FeatureGates | None = None
    served: ServedVersions = DEFAULT_SERVED  # the apiserver's --runtime-config
    # False: no controller-manager in the process (a test runs its own, to stop and start it).
    controller_manager: bool = True
    # False: no scheduler in the process (an unmodified kube-scheduler schedules instead: tests/upstream).
    scheduler: bool = True
    # The drivers of node-1, node-2, ... in order (driver name, profile); a node past the list runs
    # dra-example-driver's eight GPUs (`draplane up --driver-profile`).
    node_profiles: tuple[tuple[str, DriverProfile], ...] = ()


class PerNodeMetrics:
    """A Prometheus collector merging same-named registries (one per node) under a ``node`` label."""

    def __init__(self, label: str = "node") -> None:
        self.label = label
        self._sources: dict[str, CollectorRegistry] = {}

    def add(self, node: str, registry: CollectorRegistry) -> None:
        self._sources[node] = registry

    def collect(self) -> Iterable[Metric]:
        merged: dict[str, Metric] = {}
        for node, registry in self._sources.items():
            for family in registry.collect():
                out = merged.get(family.name)
                if out is None:
                    out = merged[family.name] = Metric(family.name, family.documentation, family.type, family.unit)
                for s in family.samples:
                    out.samples.append(Sample(s.name, {**s.labels, self.label: node}, s.value, s.timestamp, s.exemplar))
        return list(merged.values())


@dataclass
class LocalStack:
    config: StackConfig
    apiserver: Apiserver | None = None
    bus: Bus | None = None
    informer: Informer | None = None
    controller_manager: ControllerManager | None = None
    scheduler: SchedulerService | None = None
    drivers: dict[str, DriverService] = field(default_factory=dict)
    node_agents: dict[str, NodeAgent] = field(default_factory=dict)
    tasks: Supervised = field(default_factory=Supervised)  # one per component, named as in _ready_events
    _closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    _node_metrics: PerNodeMetrics = field(default_factory=PerNodeMetrics)

    @property
    def url(self) -> str:
        assert self.apiserver is not None
        scheme = "https" if self.config.certfile else "http"
        return f"{scheme}://{self.config.host}:{self.apiserver.port}"

    async def start(self) -> None:
        cfg = self.config
        cfg.data_dir.mkdir(parents=True, exist_ok=True)
        self.apiserver = Apiserver(
            ApiserverConfig(
                bus_url=cfg.bus_url,
                data_dir=cfg.data_dir / "apiserver",
                host=cfg.host,
                port=cfg.port,
                authenticator=cfg.authenticator,
                anonymous=cfg.anonymous,
                certfile=cfg.certfile,
                keyfile=cfg.keyfile,
                gates=cfg.apiserver_gates or cfg.gates,
                served=cfg.served,
            ),
            also_supervised=[self.tasks],  # a component's death fails the API port's /healthz too
        )
        await self.apiserver.start()
        await self.apiserver.wait_ready()
        # Each closer is registered before its start: a start cut short (a signal) is closed all the same.
        self.bus = open_bus(cfg.bus_url)
        self._closers.append(self.bus.close)
        await self.bus.start()
        self.informer = Informer(self.bus, snapshot=SnapshotStore(cfg.data_dir / "components" / "view.db"))
        self._closers.append(self.informer.stop)
        await self.informer.start()
        await self.informer.wait_synced(120)
        await self._ensure_device_class()
        if cfg.controller_manager:
            self.controller_manager = ControllerManager(self.bus, gates=cfg.gates, informer=self.informer)
            self._spawn("controller-manager", self.controller_manager.run())
        if cfg.scheduler:
            self.scheduler = SchedulerService(self.bus, config=SchedulerConfig(gates=cfg.gates), informer=self.informer)
            self._spawn("scheduler", self.scheduler.run())
        if cfg.gates.enabled("DRAControlPlaneController"):
            # One classic control-plane controller for the driver, not one per node.
            controller = DriverService(
                self.bus,
                DriverOptions(node="", driver=GPU_DRIVER, state_dir=cfg.data_dir / "controller", control_plane=True),
                informer=self.informer,
            )
            self._spawn("dra-controller", controller.run())
        for index, node in enumerate(node_names(cfg.nodes)):
            state = cfg.data_dir / "nodes" / node
            name, profile = (
                cfg.node_profiles[index] if index < len(cfg.node_profiles) else (GPU_DRIVER, DriverProfile())
            )
            driver = DriverService(
                self.bus,
                DriverOptions(node=node, driver=name, state_dir=state, nvidia_smi=None, profile=profile),
                informer=self.informer,
            )
            self.drivers[node] = driver
            self._node_metrics.add(node, driver.registry)
            self._spawn(f"driver-{node}", driver.run())
            agent = NodeAgent(self.bus, node=node, state_dir=state, informer=self.informer)
            self.node_agents[node] = agent
            self._spawn(f"nodeagent-{node}", agent.run())
        if self.apiserver is not None:
            self.apiserver.metrics_registries.extend(self.metrics_registries())

    def metrics_registries(self) -> list[CollectorRegistry]:
        """Every component's metrics (besides the process-wide runtime ones), for one ``/metrics``."""
        registries: list[CollectorRegistry] = []
        if self.controller_manager is not None:
            registries.append(self.controller_manager.registry)
        if self.scheduler is not None:
            registries.append(self.scheduler.registry)
        if self.drivers:
            drivers = CollectorRegistry()
            drivers.register(self._node_metrics)
            registries.append(drivers)
        return registries

    def _ready_events(self) -> list[tuple[str, asyncio.Event]]:
        events: list[tuple[str, asyncio.Event]] = []
        if self.controller_manager is not None:
            events.append(("controller-manager", self.controller_manager.ready))
        if self.scheduler is not None:
            events.append(("scheduler", self.scheduler.ready))
        events += [(f"driver-{node}", d.ready) for node, d in self.drivers.items()]
        events += [(f"nodeagent-{node}", a.ready) for node, a in self.node_agents.items()]
        return events

    def healthy(self) -> bool:
        """Every component has caught up with the log and runs."""
        return all(event.is_set() for _, event in self._ready_events()) and not self.died

    @property
    def died(self) -> bool:
        """A component task (or the apiserver's committer) ended before `stop`."""
        return self.tasks.died or (self.apiserver is not None and self.apiserver.tasks.died)

    def checks(self) -> list[HealthCheck]:
        """What ``/healthz`` checks: the apiserver's, every component caught up, and each task alive."""
        own = self.apiserver.checks() if self.apiserver is not None else []
        synced = ready_check(
            "components-sync",
            lambda: all(event.is_set() for _, event in self._ready_events()),
            reason="a component has not caught up with the log",
        )
        return [*own, synced, *self.tasks.checks()]

    def supervised(self) -> list[Supervised]:
        """The task groups whose deaths `draplane up` exits on."""
        return [self.tasks] + ([self.apiserver.tasks] if self.apiserver is not None else [])

    async def wait_ready(self, timeout: float = 120.0) -> None:
        """Wait until every component is ready; raise if one stopped first (its log says why)."""
        tasks = self.tasks.tasks

        async def one(name: str, event: asyncio.Event) -> None:
            waiter = asyncio.ensure_future(event.wait())
            task = tasks[name]
            try:
                await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
            if not event.is_set():
                raise RuntimeError(f"draplane: {name} stopped before it was ready")

        async with asyncio.timeout(timeout):
            await asyncio.gather(*(one(n, e) for n, e in self._ready_events()))

    def _spawn(self, name: str, coro: Coroutine[Any, Any, None]) -> None:
        self.tasks.spawn(name, coro)  # a death is logged with its traceback and fails /healthz

    async def _ensure_device_class(self) -> None:
        assert self.bus is not None and self.informer is not None
        client = Client(self.bus, user=BOOTSTRAP_USER, informer=self.informer, timeout=30.0)
        await client.start()
        try:
            for driver in sorted({GPU_DRIVER, *(name for name, _ in self.config.node_profiles)}):
                if client.get("resource.k8s.io", "deviceclasses", "", driver) is None:
                    with contextlib.suppress(st.StatusError):
                        await client.create("resource.k8s.io", "deviceclasses", gpu_device_class(driver))
        finally:
            await client.close()

    async def stop(self) -> None:
        await self.tasks.stop()
        for close in reversed(self._closers):
            with contextlib.suppress(Exception):
                await close()
        if self.apiserver is not None:
            await self.apiserver.stop()
