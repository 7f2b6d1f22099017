"""The apiserver service: REST facade, materialized view and (when elected) the committer.

Every apiserver keeps its own view of `objects` (an informer with a snapshot)
and serves reads from it. Every apiserver also runs a committer candidate; the
one that owns partition 0 of the `requests` group commits, the others stand by
and forward writes through `requests` like any other client.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

from services.api.admission.chain import AdmissionChain
from services.api.types.served import DEFAULT_SERVED, ServedVersions
from services.apiserver.admission_chain import build_admission
from services.apiserver.committer_hooks import wired_core
from services.apiserver.events_writer import EventsWriter
from services.apiserver.http.auth import Authenticator
from services.apiserver.http.server import build_app, start
from services.apiserver.log_backend import LogBackend
from services.bus import open_bus
from services.bus.port import Bus
from services.kube.feature_gates import FeatureGates
from services.runtime.client import Client
from services.runtime.committer import Committer
from services.runtime.healthz import HealthCheck, ready_check
from services.runtime.informer import Informer
from services.runtime.snapshot import SnapshotStore
from services.runtime.supervised import Supervised
from topics.declarations import EVENTS, declarations
from topics.envelope import UserInfo

log = logging.getLogger(__name__)

APISERVER_USER = UserInfo("system:apiserver", ("system:masters",))


@dataclass
class ApiserverConfig:
    bus_url: str
    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 8080
    authenticator: Authenticator | None = None
    anonymous: bool = False
    certfile: str | None = None
    keyfile: str | None = None
    max_body_bytes: int = 3 * 1024 * 1024
    max_watches_per_user: int = 64
    run_committer: bool = True
    admission: AdmissionChain | None = None
    gates: FeatureGates | None = None
    served: ServedVersions = DEFAULT_SERVED  # --runtime-config


@dataclass
class Apiserver:
    config: ApiserverConfig
    bus: Bus | None = None
    informer: Informer | None = None
    committer: Committer | None = None
    client: Client | None = None
    events_informer: Informer | None = None
    events_writer: EventsWriter | None = None
    port: int = 0
    metrics_registries: list[CollectorRegistry] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    tasks: Supervised = field(default_factory=Supervised)  # the committer, when it runs one
    # More task groups whose deaths fail the API port's /healthz (`draplane up`: every component's).
    also_supervised: list[Supervised] = field(default_factory=list)

    async def start(self) -> None:
        cfg = self.config
        cfg.data_dir.mkdir(parents=True, exist_ok=True)
        self.bus = open_bus(cfg.bus_url)
        await self.bus.start()
        await self.bus.ensure_topics(declarations())
        if cfg.run_committer:
            admission = cfg.admission or build_admission(gates=cfg.gates, anonymous_writes=cfg.anonymous)
            core = wired_core(admission=admission)
            self.committer = Committer(self.bus, core, snapshot=SnapshotStore(cfg.data_dir / "committer.db"))
            self.tasks.spawn("committer", self.committer.run())
        self.informer = Informer(self.bus, snapshot=SnapshotStore(cfg.data_dir / "view.db"), name="apiserver")
        self.events_informer = Informer(self.bus, name="apiserver-events", topic=EVENTS)
        admission = cfg.admission or build_admission(gates=cfg.gates, anonymous_writes=cfg.anonymous)
        self.events_writer = EventsWriter(
            self.bus, wired_core(admission=admission), events=self.events_informer, objects=self.informer
        )
        await self.informer.start()
        await self.events_informer.start()
        await self.events_writer.start()
        self.client = Client(self.bus, user=APISERVER_USER, informer=self.informer, timeout=30.0)
        await self.client.start()
        backend = LogBackend(self.informer, self.client, events=(self.events_informer, self.events_writer))
        app = build_app(
            backend,
            authenticator=cfg.authenticator,
            anonymous=cfg.anonymous,
            max_body_bytes=cfg.max_body_bytes,
            max_watches_per_user=cfg.max_watches_per_user,
            metrics=self.exposition,
            ready=self.ready,
            live=self.live_checks,
            served=cfg.served,
            release=(cfg.gates or FeatureGates()).release,
        )
        self._runner, self.port = await start(
            app, host=cfg.host, port=cfg.port, certfile=cfg.certfile, keyfile=cfg.keyfile
        )
        log.info("apiserver listening", extra={"host": cfg.host, "port": self.port})

    def exposition(self) -> bytes:
        """``/metrics``: the process-wide runtime metrics plus ``metrics_registries`` (all of `draplane up`)."""
        return b"".join(generate_latest(r) for r in (REGISTRY, *self.metrics_registries))

    def live_checks(self) -> list[HealthCheck]:
        """One check per task that must not end: the committer's, and those of ``also_supervised``."""
        return [check for group in (self.tasks, *self.also_supervised) for check in group.checks()]

    def ready(self) -> bool:
        """Both views (objects, events) have caught up with the log."""
        return all(i is not None and i.synced.is_set() for i in (self.informer, self.events_informer))

    def checks(self) -> list[HealthCheck]:
        """What ``/healthz`` on ``--metrics-listen`` checks: the views caught up, the committer task alive."""
        synced = ready_check("informer-sync", self.ready, reason="the view has not caught up with the log")
        return [synced, *self.tasks.checks()]

    async def wait_ready(self, timeout: float = 120.0) -> None:
        """The view has caught up with the log, and (if it runs one) a committer leads somewhere."""
        assert self.informer is not None and self.events_informer is not None and self.events_writer is not None
        await self.informer.wait_synced(timeout)
        await self.events_informer.wait_synced(timeout)
        self.events_writer.seed(self.informer)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self.committer is not None:
            self.committer.stop()
        await self.tasks.stop()
        if self.client is not None:
            await self.client.close()
        if self.events_writer is not None:
            await self.events_writer.close()
        for informer in (self.events_informer, self.informer):
            if informer is not None:
                await informer.stop()
        if self.bus is not None:
            await self.bus.close()
