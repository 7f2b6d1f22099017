"""Two schedulers and two controller-managers on one log: one of each acts, and a killed leader is replaced.

Every replica runs as ``draplane scheduler`` / ``draplane controller-manager``
run them (its own informer, client and Lease elector), with short leader
election timings. Pods from a claim template are created in two waves; between
them the leading scheduler and the leading controller-manager are killed
(their tasks cancelled without releasing the Lease, as SIGKILL leaves it).

What must hold, read from the log rather than from the clock:

* every decision record names the scheduler that made it, and the names
  change once, from the first leader to its successor;
* every write of a controller-manager happened while it held its Lease;
* the successor's ``acquireTime`` is within leaseDuration + 2 s of the killed
  leader's last ``renewTime``, and not before the Lease expired;
* every pod is bound once, and each pod has exactly one generated claim;
* ``<identity> became leader`` Events (reason LeaderElection) on the Leases
  and ``leader_election_master_status`` say who leads.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from datetime import timedelta
from typing import Any

from scheduler_scenario import NS, RG, device_class, node, pod, resource_slice

from services.api.machinery.status import StatusError
from services.bus.port import BEGINNING, Bus
from services.controllers.manager import ControllerManager
from services.controllers.ports import Writer
from services.kube.leader_election import (
    CONTROLLER_MANAGER_LEASE,
    EVENT_REASON,
    SCHEDULER_LEASE,
    ElectionTimings,
)
from services.kube.times import parse_micro_time
from services.runtime.client import Client
from services.runtime.informer import Obj
from services.runtime.leader_election import LeaderElectionConfig, LeaderElectionLost
from services.scheduler.decisions import read_decisions
from services.scheduler.service import SchedulerConfig, SchedulerService
from services.testing.harness import LogHarness
from tests.conftest import BusUrl
from tests.support.eventually import eventually
from topics.declarations import EVENTS
from topics.envelope import decode_event

TIMINGS = ElectionTimings(lease_duration=5, renew_deadline=4, retry_period=0.5)
HANDOVER_BOUND = timedelta(seconds=TIMINGS.lease_duration + 2)
WAVE = 6


def election(name: str, identity: str) -> LeaderElectionConfig:
    # No release: a killed leader leaves its Lease to expire, as SIGKILL does.
    return LeaderElectionConfig(name=name, identity=identity, timings=TIMINGS, release_on_cancel=False)


def template() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu-template", "namespace": NS},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}},
    }


class LeaseHistory:
    """Every version of the kube-system Leases, in log order (an informer handler)."""

    def __init__(self) -> None:
        self.versions: list[Obj] = []

    def on_add(self, obj: Obj) -> None:
        self.versions.append(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self.versions.append(new)

    def on_delete(self, obj: Obj) -> None:
        pass

    def of(self, name: str) -> list[dict[str, Any]]:
        return [v["spec"] for v in self.versions if v["metadata"]["name"] == name]


class RecordingWriter:
    """A controller-manager's writer that notes, for each write, whether that manager held its Lease."""

    def __init__(self, client: Client, who: str, leading: asyncio.Event, log: list[tuple[str, bool]]) -> None:
        self._client = client
        self._who = who
        self._leading = leading
        self._log = log

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._client, name)
        if name not in ("create", "update", "update_status", "patch", "delete", "write_chain"):
            return target

        async def write(*args: Any, **kwargs: Any) -> Any:
            self._log.append((self._who, self._leading.is_set()))
            return await target(*args, **kwargs)

        return write


async def leader_events(bus: Bus) -> list[tuple[str, str]]:
    end = await bus.end_offset(EVENTS)
    consumer = await bus.consumer(EVENTS, start=BEGINNING)
    found: list[tuple[str, str]] = []
    try:
        while consumer.position() < end:
            for record in await consumer.getmany(timeout_ms=500):
                if record.value is None:
                    continue
                event = decode_event(record.value).object
                if event.get("reason") == EVENT_REASON:
                    found.append((event["involvedObject"]["name"], event["message"]))
    finally:
        await consumer.close()
    return found


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


async def test_one_scheduler_and_one_controller_manager_act_and_a_killed_leader_is_replaced(bus_url: BusUrl) -> None:
    async with LogHarness.running(bus_url()) as log:
        admin = await log.client()
        history = LeaseHistory()
        watcher = await log.informer()
        watcher.add_handler("coordination.k8s.io", "leases", history)

        schedulers = {
            who: SchedulerService(log.bus, config=SchedulerConfig(leader_election=election(SCHEDULER_LEASE, who)))
            for who in ("scheduler-a", "scheduler-b")
        }
        writes: list[tuple[str, bool]] = []
        managers: dict[str, ControllerManager] = {}
        for who in ("manager-a", "manager-b"):
            leading = asyncio.Event()

            def wrap(client: Client, who: str = who, leading: asyncio.Event = leading) -> Writer:
                return RecordingWriter(client, who, leading, writes)  # type: ignore[return-value]

            managers[who] = ControllerManager(
                log.bus, leader_election=election(CONTROLLER_MANAGER_LEASE, who), wrap_writer=wrap
            )
            managers[who].leading = leading
        tasks = {who: asyncio.create_task(s.run(), name=who) for who, s in schedulers.items()}
        tasks |= {who: asyncio.create_task(m.run(), name=who) for who, m in managers.items()}
        try:
            await admin.create(RG, "deviceclasses", device_class())
            for n in ("node-1", "node-2"):
                await admin.create("", "nodes", node(n))
                await admin.create(RG, "resourceslices", resource_slice(n, devices=WAVE))
            await admin.create(RG, "resourceclaimtemplates", template())

            def leader_of(replicas: dict[str, Any]) -> str | None:
                leading = [who for who, r in replicas.items() if r.leading.is_set()]
                assert len(leading) <= 1, f"two replicas act at once: {leading}"
                return leading[0] if leading else None

            first_scheduler = await eventually(lambda: leader_of(schedulers), what="a scheduler leads")
            first_manager = await eventually(lambda: leader_of(managers), what="a controller-manager leads")

            def bound(names: list[str]) -> bool:
                assert leader_of(schedulers) in (None, *schedulers)
                assert leader_of(managers) in (None, *managers)
                return all((admin.get("", "pods", NS, n) or {}).get("spec", {}).get("nodeName") for n in names)

            first = [f"first-{i}" for i in range(WAVE)]
            for name in first:
                await admin.create("", "pods", pod(name, template="gpu-template"))
            await eventually(lambda: bound(first), timeout=60, what="the first wave bound")

            # Kill both leaders; the second wave must be handled by their successors.
            await schedulers[first_scheduler].flush()
            await stop(tasks[first_scheduler])
            await stop(tasks[first_manager])
            second = [f"second-{i}" for i in range(WAVE)]
            for name in second:
                await admin.create("", "pods", pod(name, template="gpu-template"))
            await eventually(lambda: bound(first + second), timeout=60, what="the second wave bound")
            next_scheduler = leader_of(schedulers)
            next_manager = leader_of(managers)
            assert next_scheduler not in (None, first_scheduler)
            assert next_manager not in (None, first_manager)
            await schedulers[next_scheduler].flush()  # type: ignore[index]

            # Decision records: one scheduler per attempt, the first leader's before its successor's.
            decisions = [d for d in await read_decisions(log.bus) if d.record["pod"].startswith(f"{NS}/")]
            names = [d.record.get("scheduler") for d in decisions]
            assert set(names) <= {first_scheduler, next_scheduler}, names
            switch = names.index(next_scheduler)
            assert names[:switch] == [first_scheduler] * switch and names[switch:] == [next_scheduler] * (
                len(names) - switch
            ), names
            # No pod bound twice.
            bindings = Counter(d.pod for d in decisions if (d.record.get("binding") or {}).get("result") == "bound")
            assert all(count == 1 for count in bindings.values()), bindings
            assert set(bindings) <= {f"{NS}/{n}" for n in first + second}

            # Controller-managers wrote only while leading; both leaders wrote.
            assert all(leading for _, leading in writes), writes
            assert {who for who, _ in writes} == {first_manager, next_manager}

            # No claim created twice: one generated claim per pod.
            await eventually(lambda: len(admin.list(RG, "resourceclaims", NS)) >= 2 * WAVE, what="every claim seen")
            owners = Counter(
                ref["uid"]
                for c in admin.list(RG, "resourceclaims", NS)
                for ref in c["metadata"].get("ownerReferences") or []
            )
            pods = [admin.get("", "pods", NS, n) for n in first + second]
            assert {p["metadata"]["uid"]: 1 for p in pods if p} == dict(owners)

            # The handover, from the Lease's own records.
            await watcher.wait_for(await log.bus.end_offset("objects") - 1, timeout=30)
            for lease, gone, successor in (
                (SCHEDULER_LEASE, first_scheduler, next_scheduler),
                (CONTROLLER_MANAGER_LEASE, first_manager, next_manager),
            ):
                specs = history.of(lease)
                last_renewal = parse_micro_time([s for s in specs if s["holderIdentity"] == gone][-1]["renewTime"])
                taken = next(s for s in specs if s["holderIdentity"] == successor)
                gap = parse_micro_time(taken["acquireTime"]) - last_renewal
                assert timedelta(seconds=TIMINGS.lease_duration - 0.1) <= gap <= HANDOVER_BOUND, (lease, gap)
                assert taken["leaseTransitions"] == specs[0]["leaseTransitions"] + 1
                assert taken["leaseDurationSeconds"] == TIMINGS.lease_duration_seconds

            # Transitions as Events on the Leases and as the gauge.
            events = await leader_events(log.bus)
            assert (SCHEDULER_LEASE, f"{first_scheduler} became leader") in events
            assert (SCHEDULER_LEASE, f"{next_scheduler} became leader") in events
            assert (CONTROLLER_MANAGER_LEASE, f"{next_manager} became leader") in events
            status = "leader_election_master_status"
            assert schedulers[next_scheduler].registry.get_sample_value(status, {"name": SCHEDULER_LEASE}) == 1  # type: ignore[index]
            assert schedulers[first_scheduler].registry.get_sample_value(status, {"name": SCHEDULER_LEASE}) == 0
            assert managers[next_manager].registry.get_sample_value(status, {"name": CONTROLLER_MANAGER_LEASE}) == 1  # type: ignore[index]
        finally:
            for task in tasks.values():
                await stop(task)


async def test_a_stopped_leader_releases_its_lease_and_the_standby_takes_over_at_once(bus_url: BusUrl) -> None:
    """ReleaseOnCancel (kube-scheduler sets it): a leader stopped cleanly hands over without waiting for expiry."""
    slow = ElectionTimings(lease_duration=60, renew_deadline=40, retry_period=0.5)
    async with LogHarness.running(bus_url()) as log:
        replicas = {
            who: SchedulerService(
                log.bus,
                config=SchedulerConfig(
                    leader_election=LeaderElectionConfig(name=SCHEDULER_LEASE, identity=who, timings=slow)
                ),
            )
            for who in ("a", "b")
        }
        tasks = {who: asyncio.create_task(s.run()) for who, s in replicas.items()}
        try:
            first = await eventually(lambda: next((w for w, s in replicas.items() if s.leading.is_set()), None))
            other = "b" if first == "a" else "a"
            await stop(tasks[first])
            # Far less than the 60 s lease: the release made the Lease free.
            await eventually(lambda: replicas[other].leading.is_set(), timeout=20, what="the standby leads")
            lease = replicas[other].client.get("coordination.k8s.io", "leases", "kube-system", SCHEDULER_LEASE)
            assert lease is not None and lease["spec"]["holderIdentity"] == other
        finally:
            for task in tasks.values():
                await stop(task)


async def test_a_leader_that_cannot_renew_stops_acting(bus_url: BusUrl) -> None:
    """Lose leadership → stop: the service's run raises LeaderElectionLost (the process exits, its supervisor
    restarts it). Renewals are made to fail by another writer taking the Lease over."""
    async with LogHarness.running(bus_url()) as log:
        service = SchedulerService(log.bus, config=SchedulerConfig(leader_election=election(SCHEDULER_LEASE, "victim")))
        task = asyncio.create_task(service.run())
        try:
            await eventually(service.leading.is_set, what="the scheduler leads")
            admin = await log.client()

            async def take_over() -> bool:
                """An intruder holds the Lease for an hour: the victim's renewals are refused from then on."""
                lease = admin.get("coordination.k8s.io", "leases", "kube-system", SCHEDULER_LEASE)
                if lease is None:
                    return False
                spec = {**lease["spec"], "holderIdentity": "intruder", "leaseDurationSeconds": 3600}
                try:
                    await admin.update("coordination.k8s.io", "leases", {**lease, "spec": spec})
                except StatusError as err:
                    assert err.code == 409  # the victim renewed first: read again
                    return False
                return True

            await eventually(take_over, what="the intruder's write")
            done, _ = await asyncio.wait({task}, timeout=30)
            assert task in done
            assert isinstance(task.exception(), LeaderElectionLost)
            assert not service.leading.is_set()
        finally:
            await stop(task)
