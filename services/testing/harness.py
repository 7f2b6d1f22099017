"""An in-process log: the bus, topics and a leading committer, plus clients with informers.

Tests and benchmarks use it to get a working control-plane core in a few
lines, on either backend::

    async with LogHarness.running("sqlite:///tmp/bus.db") as log:
        client = await log.client(ADMIN)
        await client.create("", "namespaces", {...})
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from services.api.admission.chain import AdmissionChain
from services.apiserver.admission_chain import build_admission
from services.apiserver.committer_hooks import wired_core
from services.bus import open_bus
from services.bus.port import Bus
from services.runtime.client import Client
from services.runtime.committer import Committer
from services.runtime.committer_core import CommitterCore
from services.runtime.informer import Informer
from topics.declarations import declarations
from topics.envelope import UserInfo

ADMIN = UserInfo("system:admin", ("system:masters", "system:authenticated"))


@dataclass
class LogHarness:
    bus: Bus
    committer: Committer
    committer_task: asyncio.Task[None]
    clients: list[Client] = field(default_factory=list)
    informers: list[Informer] = field(default_factory=list)

    @classmethod
    @contextlib.asynccontextmanager
    async def running(
        cls, url: str, *, admission: AdmissionChain | None = None, core: CommitterCore | None = None
    ) -> AsyncIterator[LogHarness]:
        bus = open_bus(url)
        await bus.start()
        await bus.ensure_topics(declarations())
        core = core or wired_core(admission=admission or build_admission())
        committer = Committer(bus, core)
        task = asyncio.create_task(committer.run(), name="committer")
        harness = cls(bus, committer, task)
        try:
            async with asyncio.timeout(60):
                await committer.is_leader.wait()
            yield harness
        finally:
            await harness.close()

    async def informer(self) -> Informer:
        informer = Informer(self.bus)
        await informer.start()
        await informer.wait_synced(timeout=60)
        self.informers.append(informer)
        return informer

    async def client(
        self, user: UserInfo = ADMIN, *, informer: Informer | None = None, timeout: float = 10.0
    ) -> Client:
        if informer is None:
            informer = await self.informer()
        client = Client(self.bus, user=user, informer=informer, timeout=timeout)
        await client.start()
        self.clients.append(client)
        return client

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        for informer in self.informers:
            await informer.stop()
        self.committer.stop()
        self.committer_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.committer_task
        await self.bus.close()
