"""Running a component's work only while it holds its Lease: client-go's LeaderElector over the log.

Why this module exists: the scheduler, the controller-manager and a driver's
control-plane controller run as several replicas of which one acts. Each
replica keeps its informer warm and calls `LeaderElector.run` with what it does
as leader; the rules of who may take the Lease are pure and live in
`services.kube.leader_election`. This module adds time and I/O, as client-go's
``LeaderElector.Run`` does:

* **acquire**: try at once, then every ``retryPeriod`` with up to 1.2 times
  more of jitter, until the Lease is ours — and, unlike client-go, also just
  after the observed holder's lease runs out, if that comes sooner
  (`services.kube.leader_election.next_attempt_in`), so a handover does not wait for a retry tick;
* **lead**: run the component's work as a task; every ``retryPeriod`` renew,
  and when renewing has not succeeded for ``renewDeadline`` stop the work
  (lost leadership — `LeaderElectionLost`, so the process exits for its
  supervisor to restart it, as kube-scheduler exits on "leaderelection lost");
* **release** on cancellation (ReleaseOnCancel, as kube-scheduler and
  kube-controller-manager set it): the Lease is written with no holder and a
  one-second duration, so a standby takes over within a retry period.

The Lease is read from the component's informer and written through its
`Client` with the read version as precondition, so the committer decides
between two candidates. Transitions are Events on the Lease (reason
``LeaderElection``, ``<identity> became leader`` / ``<identity> stopped
leading``) and the gauge ``leader_election_master_status{name}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, Gauge

from services.api.machinery import status as st
from services.kube.leader_election import (
    BECAME_LEADER,
    EVENT_REASON,
    LEASE_NAMESPACE,
    STOPPED_LEADING,
    ElectionTimings,
    LeaseName,
    LeaseWrite,
    Observation,
    event_message,
    next_attempt_in,
    release,
    try_acquire_or_renew,
)
from services.runtime import backoff
from services.runtime.client import Client
from services.runtime.events import EventRecorder

log = logging.getLogger(__name__)

LEASE_GROUP = "coordination.k8s.io"
LEASES = "leases"
MASTER_STATUS_HELP = (
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. "
    "'name' is the string used to identify the lease. Please make sure to group by name."
)


def default_identity() -> str:
    """kube-scheduler's and kube-controller-manager's holder identity: ``<hostname>_<uuid>``."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """What the ``--leader-elect*`` flags set; ``enabled`` False runs the work at once, without a Lease."""

    name: str
    namespace: str = LEASE_NAMESPACE
    enabled: bool = True
    timings: ElectionTimings = field(default_factory=ElectionTimings)
    identity: str = field(default_factory=default_identity)
    release_on_cancel: bool = True

    def __post_init__(self) -> None:
        if self.enabled:
            self.timings.check()
        if not self.identity:
            raise ValueError("Lock identity is empty")

    @property
    def where(self) -> LeaseName:
        return LeaseName(self.namespace, self.name)


class LeaderElectionLost(Exception):
    """Renewing the Lease failed for renewDeadline: the work was stopped and the process should exit."""


class MasterStatus:
    """``leader_election_master_status{name}``: 1 while this process leads the Lease ``name``, else 0."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.gauge = Gauge(
            "leader_election_master_status", MASTER_STATUS_HELP, ["name"], registry=registry or CollectorRegistry()
        )

    def set(self, name: str, *, leading: bool) -> None:
        self.gauge.labels(name=name).set(1 if leading else 0)


class LeaderElector:
    """One candidate for one Lease (see module docstring); ``await run(lead)``.

    ``component`` and ``host`` are the Events' source. ``clock`` (monotonic)
    measures expiry; ``wall`` is what ``acquireTime`` / ``renewTime`` say.
    """

    def __init__(
        self,
        config: LeaderElectionConfig,
        *,
        client: Client,
        component: str,
        host: str = "",
        registry: CollectorRegistry | None = None,
        status: MasterStatus | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.config = config
        self.client = client
        self.recorder = EventRecorder(client.bus, component=component, host=host)
        self.status = status or MasterStatus(registry)
        self.clock = clock
        self.wall = wall
        self.observed = Observation()
        self.leading = asyncio.Event()
        self.lease: dict[str, Any] | None = None  # the Lease as last written by this candidate
        self._reported_leader = ""
        self.status.set(config.name, leading=False)

    @property
    def identity(self) -> str:
        return self.config.identity

    @property
    def leader(self) -> str:
        """GetLeader: the holder last observed ("" before anything was seen)."""
        return self.observed.record.holder_identity

    async def run(self, lead: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Acquire, then run ``lead()`` while the Lease is renewed.

        Returns (or raises) as ``lead()`` does when it ends by itself; raises
        `LeaderElectionLost` when renewing fails; on cancellation stops
        ``lead()`` and releases the Lease. Without election ``lead()`` just runs.
        """
        if not self.config.enabled:
            await lead()
            return
        await self.recorder.start()
        try:
            await self._acquire()
            await self._led(lead)
        finally:
            with contextlib.suppress(Exception):
                await self.recorder.close()

    # -- the loops ----------------------------------------------------------------

    async def _acquire(self) -> None:
        desc = self.config.where.describe()
        log.info("attempting to acquire leader lease", extra={"lease": desc, "identity": self.identity})
        pause = backoff.leader_election_retry(self.config.timings.retry_period)
        while not await self._try(deadline=self.config.timings.renew_deadline):
            log.debug("failed to acquire lease", extra={"lease": desc})
            await asyncio.sleep(next_attempt_in(self.observed, now=self.clock(), jittered=pause.step()))
        log.info("successfully acquired lease", extra={"lease": desc, "identity": self.identity})
        await self._transition(leading=True)

    async def _led(self, lead: Callable[[], Coroutine[Any, Any, None]]) -> None:
        work = asyncio.create_task(lead(), name=f"leading-{self.config.name}")
        renewing = asyncio.create_task(self._renew(), name=f"renew-{self.config.name}")
        lost = False
        try:
            await asyncio.wait({work, renewing}, return_when=asyncio.FIRST_COMPLETED)
            lost = renewing.done() and not work.done()
        finally:
            for task in (renewing, work):
                task.cancel()
            for task in (renewing, work):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            if not lost and self.config.release_on_cancel:
                await self._release()
            await self._transition(leading=False)
        if lost:
            raise LeaderElectionLost(f"leaderelection lost: failed to renew lease {self.config.where.describe()}")
        work.result()  # the work ended by itself: as it did

    async def _renew(self) -> None:
        """Returns when renewing did not succeed within renewDeadline."""
        timings = self.config.timings
        while True:
            await asyncio.sleep(timings.retry_period)
            if not await self._poll_until_renewed(timings):
                log.info("failed to renew lease", extra={"lease": self.config.where.describe()})
                return

    async def _poll_until_renewed(self, timings: ElectionTimings) -> bool:
        """PollUntilContextTimeout(retryPeriod, renewDeadline, immediate): True once a renewal succeeded."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timings.renew_deadline
        while True:
            left = deadline - loop.time()
            if left <= 0:
                return False
            if await self._try(deadline=left):
                return True
            left = deadline - loop.time()
            if left <= 0:
                return False
            await asyncio.sleep(min(timings.retry_period, left))

    # -- one attempt ----------------------------------------------------------------

    async def _try(self, *, deadline: float) -> bool:
        """tryAcquireOrRenew: read the Lease, decide, write; True when this candidate holds it now."""
        current = self.client.get(LEASE_GROUP, LEASES, self.config.namespace, self.config.name)
        self.observed, write = try_acquire_or_renew(
            self.observed,
            current,
            where=self.config.where,
            identity=self.identity,
            timings=self.config.timings,
            now=self.clock(),
            wall=self.wall(),
        )
        self._maybe_report_transition()
        if write is None:
            return False
        if not await self._write(write, deadline=deadline):
            return False
        self.observed = Observation(write.record, self.clock())
        self._maybe_report_transition()
        return True

    async def _write(self, write: LeaseWrite, *, deadline: float) -> bool:
        try:
            async with asyncio.timeout(deadline):
                if write.verb == "create":
                    self.lease = await self.client.create(LEASE_GROUP, LEASES, write.lease)
                else:
                    self.lease = await self.client.update(LEASE_GROUP, LEASES, write.lease)
            return True
        except st.StatusError as err:
            level = logging.DEBUG if err.code == 409 else logging.WARNING
            log.log(level, "failed to update lease", extra={"lease": self.config.where.describe(), "error": str(err)})
        except TimeoutError:
            log.warning("lease write timed out", extra={"lease": self.config.where.describe()})
        return False

    async def _release(self) -> None:
        current = self.client.get(LEASE_GROUP, LEASES, self.config.namespace, self.config.name)
        write = release(self.observed, current, identity=self.identity, wall=self.wall())
        if write is None:
            return
        if await self._write(write, deadline=self.config.timings.renew_deadline):
            self.observed = Observation(write.record, self.clock())
        else:
            log.error("failed to release lock", extra={"lease": self.config.where.describe()})

    # -- reporting ----------------------------------------------------------------

    def _maybe_report_transition(self) -> None:
        leader = self.observed.record.holder_identity
        if leader != self._reported_leader:
            self._reported_leader = leader
            if leader:
                log.info("new leader elected", extra={"lease": self.config.where.describe(), "leader": leader})

    async def _transition(self, *, leading: bool) -> None:
        """The gauge, ``leading``, and the Event on the Lease (best-effort, like every Event)."""
        self.status.set(self.config.name, leading=leading)
        if leading:
            self.leading.set()
        else:
            self.leading.clear()
        if self.lease is not None:
            message = event_message(self.identity, BECAME_LEADER if leading else STOPPED_LEADING)
            await self.recorder.write(self.recorder.build(self.lease, "Normal", EVENT_REASON, message))
