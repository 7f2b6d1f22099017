"""Every component in one process: what `draplane up` and the test fixture run.

The apiserver (with its committer candidate) keeps its own view; the other
components — controller-manager, scheduler, and per simulated node a DRA
driver and a node agent — share one informer, as client-go's shared informer
factory does, so each record of the log is decoded once for all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.api import status as st
from services.api.feature_gates import FeatureGates
from services.apiserver.http.auth import Authenticator
from services.apiserver.service import Apiserver, ApiserverConfig
from services.bus import open_bus
from services.bus.port import Bus
from services.controllers.manager import ControllerManager
from services.driver.service import DriverOptions, DriverService
from services.nodeagent.agent import NodeAgent
from services.runtime.client import Client
from services.runtime.informer import Informer
from services.runtime.snapshot import SnapshotStore
from topics.envelope import UserInfo

log = logging.getLogger(__name__)

GPU_DRIVER = "gpu.example.com"
BOOTSTRAP_USER = UserInfo("system:apiserver", ("system:masters",))


def gpu_device_class() -> dict[str, Any]:
    """The DeviceClass of the example GPU driver (dra-example-driver's)."""
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceClass",
        "metadata": {"name": GPU_DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}]},
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


@dataclass
class LocalStack:
    config: StackConfig
    apiserver: Apiserver | None = None
    bus: Bus | None = None
    informer: Informer | None = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

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
                gates=cfg.gates,
            )
        )
        await self.apiserver.start()
        await self.apiserver.wait_ready()
        self.bus = open_bus(cfg.bus_url)
        await self.bus.start()
        self._closers.append(self.bus.close)
        self.informer = Informer(self.bus, snapshot=SnapshotStore(cfg.data_dir / "components" / "view.db"))
        await self.informer.start()
        self._closers.append(self.informer.stop)
        await self.informer.wait_synced(120)
        await self._ensure_device_class()
        self._spawn("controller-manager", ControllerManager(self.bus, gates=cfg.gates, informer=self.informer).run())
        for node in node_names(cfg.nodes):
            state = cfg.data_dir / "nodes" / node
            driver = DriverService(
                self.bus,
                DriverOptions(
                    node=node,
                    driver=GPU_DRIVER,
                    state_dir=state,
                    control_plane=cfg.gates.enabled("DRAControlPlaneController"),
                ),
                informer=self.informer,
            )
            self._spawn(f"driver-{node}", driver.run())
            agent = NodeAgent(self.bus, node=node, state_dir=state, informer=self.informer)
            self._spawn(f"nodeagent-{node}", agent.run())

    def _spawn(self, name: str, coro: Awaitable[None]) -> None:
        async def guarded() -> None:
            try:
                await coro
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("component stopped", extra={"component": name})

        self._tasks.append(asyncio.create_task(guarded(), name=name))

    async def _ensure_device_class(self) -> None:
        assert self.bus is not None and self.informer is not None
        client = Client(self.bus, user=BOOTSTRAP_USER, informer=self.informer, timeout=30.0)
        await client.start()
        try:
            if client.get("resource.k8s.io", "deviceclasses", "", GPU_DRIVER) is None:
                with contextlib.suppress(st.StatusError):
                    await client.create("resource.k8s.io", "deviceclasses", gpu_device_class())
        finally:
            await client.close()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for close in reversed(self._closers):
            with contextlib.suppress(Exception):
                await close()
        if self.apiserver is not None:
            await self.apiserver.stop()
