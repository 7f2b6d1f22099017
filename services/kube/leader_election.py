"""client-go's Lease leader election (k8s.io/client-go/tools/leaderelection) as a pure state machine.

Why this module exists: the scheduler, the controller-manager and a driver's
control-plane controller run as two or more replicas with one active member,
as kube-scheduler and kube-controller-manager do. Who is active is decided by
a ``coordination.k8s.io/v1`` Lease in ``kube-system``, with client-go's rules
so that ``kubectl get lease -n kube-system`` reads as on a real cluster:

* a candidate may take the Lease when nobody holds it, or when its record has
  not changed for ``leaseDurationSeconds`` as measured on the candidate's own
  clock since it last *observed* a change (``observedTime``), never from the
  ``renewTime`` written by another host's clock;
* taking it from another holder increments ``leaseTransitions`` and sets
  ``acquireTime``; the holder renews by moving ``renewTime`` and keeps
  ``acquireTime`` and ``leaseTransitions``;
* every write carries the ``resourceVersion`` it was decided from, so of two
  candidates deciding on one version only one write is accepted (409 for the
  other);
* releasing (ReleaseOnCancel, as kube-scheduler sets it) writes an empty
  holder with ``leaseDurationSeconds`` 1, so a standby takes over at once.

Everything here is pure: what the runner (``services.runtime.leader_election``)
read, and the clocks, go in; the write to attempt comes out. The runner reads
the Lease from its informer, so client-go's optimistic fast path (update from
the last observed record without a GET) buys nothing and is not reproduced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from services.kube.times import micro_time

Obj = dict[str, Any]

LEASE_API_VERSION = "coordination.k8s.io/v1"
LEASE_NAMESPACE = "kube-system"  # --leader-elect-resource-namespace's default
SCHEDULER_LEASE = "kube-scheduler"
CONTROLLER_MANAGER_LEASE = "kube-controller-manager"

# kube-scheduler's and kube-controller-manager's defaults (component-base's RecommendedDefault...).
DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0
JITTER_FACTOR = 1.2  # leaderelection.JitterFactor: a retry waits retryPeriod * (1 + rand * 1.2)

EXPIRY_MARGIN = 0.05  # seconds after the observed expiry that a standby tries again

EVENT_REASON = "LeaderElection"
BECAME_LEADER = "became leader"
STOPPED_LEADING = "stopped leading"


@dataclass(frozen=True, slots=True)
class ElectionTimings:
    """leaseDuration, renewDeadline and retryPeriod, in seconds."""

    lease_duration: float = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD

    def check(self) -> None:
        """Raise ValueError with NewLeaderElector's message when the three do not fit together."""
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if self.lease_duration <= 0:
            raise ValueError("leaseDuration must be greater than zero")
        if self.renew_deadline <= 0:
            raise ValueError("renewDeadline must be greater than zero")
        if self.retry_period <= 0:
            raise ValueError("retryPeriod must be greater than zero")

    @property
    def lease_duration_seconds(self) -> int:
        """What goes into ``spec.leaseDurationSeconds``: whole seconds, as ``int(LeaseDuration / time.Second)``."""
        return int(self.lease_duration)


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """resourcelock.LeaderElectionRecord: what a Lease's spec says about its holder."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0
    preferred_holder: str = ""
    strategy: str = ""


def record_of(lease: Mapping[str, Any] | None) -> LeaderElectionRecord:
    """LeaseSpecToLeaderElectionRecord: absent fields read as zero values."""
    spec = (lease or {}).get("spec") or {}

    def number(key: str) -> int:
        value = spec.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def text(key: str) -> str:
        value = spec.get(key)
        return value if isinstance(value, str) else ""

    return LeaderElectionRecord(
        holder_identity=text("holderIdentity"),
        lease_duration_seconds=number("leaseDurationSeconds"),
        acquire_time=text("acquireTime") or None,
        renew_time=text("renewTime") or None,
        leader_transitions=number("leaseTransitions"),
        preferred_holder=text("preferredHolder"),
        strategy=text("strategy"),
    )


def lease_spec(record: LeaderElectionRecord) -> Obj:
    """LeaderElectionRecordToLeaseSpec: holder, duration, both times and transitions always written."""
    spec: Obj = {
        "holderIdentity": record.holder_identity,
        "leaseDurationSeconds": record.lease_duration_seconds,
        "acquireTime": record.acquire_time,
        "renewTime": record.renew_time,
        "leaseTransitions": record.leader_transitions,
    }
    if record.preferred_holder:
        spec["preferredHolder"] = record.preferred_holder
    if record.strategy:
        spec["strategy"] = record.strategy
    return spec


@dataclass(frozen=True, slots=True)
class Observation:
    """What a candidate last saw of the Lease, and when on its own (monotonic) clock it saw it change."""

    record: LeaderElectionRecord = LeaderElectionRecord()
    time: float = -math.inf

    def is_leader(self, identity: str) -> bool:
        return self.record.holder_identity == identity

    def lease_valid(self, now: float) -> bool:
        """isLeaseValid: observedTime + leaseDurationSeconds is not behind ``now``.

        At or ahead, not strictly ahead: client-go takes ``now`` before it reads
        the record and stamps observedTime after, so a record seen for the first
        time is valid in that same attempt even with a zero duration.
        """
        return self.expires_at() >= now

    def expires_at(self) -> float:
        """When (on the observer's clock) the observed holder's lease runs out unless it is renewed."""
        return self.time + self.record.lease_duration_seconds

    def seen(self, record: LeaderElectionRecord, now: float) -> Observation:
        """The observation after reading ``record``: observedTime moves only when the record changed."""
        return self if record == self.record else Observation(record, now)


@dataclass(frozen=True, slots=True)
class LeaseWrite:
    """A write to attempt: create the Lease, or update it from the version it was decided on."""

    verb: Literal["create", "update"]
    lease: Obj
    record: LeaderElectionRecord


@dataclass(frozen=True, slots=True)
class LeaseName:
    """Where the Lease lives (``--leader-elect-resource-namespace`` / ``--leader-elect-resource-name``)."""

    namespace: str
    name: str

    def describe(self) -> str:
        """LeaseLock.Describe: ``namespace/name``."""
        return f"{self.namespace}/{self.name}"


def try_acquire_or_renew(
    observed: Observation,
    current: Mapping[str, Any] | None,
    *,
    where: LeaseName,
    identity: str,
    timings: ElectionTimings,
    now: float,
    wall: datetime,
) -> tuple[Observation, LeaseWrite | None]:
    """tryAcquireOrRenew's decision (slow path): the new observation and the write to attempt, or None.

    ``current`` is the Lease as read now (None: it does not exist), ``now``
    the candidate's monotonic clock and ``wall`` the time written into the
    record. None means the Lease is held by someone else and has not expired.
    After a successful write the caller observes ``write.record`` (`Observation.seen`).
    """
    stamp = micro_time(wall)
    mine = LeaderElectionRecord(
        holder_identity=identity,
        lease_duration_seconds=timings.lease_duration_seconds,
        acquire_time=stamp,
        renew_time=stamp,
    )
    if current is None:
        return observed, LeaseWrite("create", new_lease(where, mine), mine)
    old = record_of(current)
    observed = observed.seen(old, now)
    if old.holder_identity and observed.lease_valid(now) and not observed.is_leader(identity):
        return observed, None
    if observed.is_leader(identity):
        mine = replace(mine, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions)
    else:
        mine = replace(mine, leader_transitions=old.leader_transitions + 1)
    return observed, LeaseWrite("update", updated_lease(current, mine), mine)


def next_attempt_in(observed: Observation, *, now: float, jittered: float) -> float:
    """The pause before a standby's next attempt: the jittered retry period, or less when the observed
    holder's lease runs out sooner — then just after it runs out.

    client-go only retries every jittered retryPeriod (2 to 4.4 s by default),
    so a standby may try up to 4.4 s after the lease expired; waking at the
    expiry keeps a handover within leaseDuration plus the log's latency. Who may
    take the Lease is unchanged: `try_acquire_or_renew` decides as before.
    """
    if not observed.record.holder_identity:
        return jittered
    expires_in = observed.expires_at() - now + EXPIRY_MARGIN
    # Already expired and still not ours (a write failed): the plain pause, never a busy loop.
    return min(jittered, expires_in) if expires_in > 0 else jittered


def release(
    observed: Observation, current: Mapping[str, Any] | None, *, identity: str, wall: datetime
) -> LeaseWrite | None:
    """release(): give the Lease up if this candidate holds it — empty holder, 1 s duration, transitions kept."""
    if current is None or not observed.is_leader(identity):
        return None
    stamp = micro_time(wall)
    record = LeaderElectionRecord(
        lease_duration_seconds=1,
        acquire_time=stamp,
        renew_time=stamp,
        leader_transitions=observed.record.leader_transitions,
    )
    return LeaseWrite("update", updated_lease(current, record), record)


def new_lease(where: LeaseName, record: LeaderElectionRecord) -> Obj:
    """The Lease LeaseLock.Create sends."""
    return {
        "apiVersion": LEASE_API_VERSION,
        "kind": "Lease",
        "metadata": {"name": where.name, "namespace": where.namespace},
        "spec": lease_spec(record),
    }


def updated_lease(current: Mapping[str, Any], record: LeaderElectionRecord) -> Obj:
    """LeaseLock.Update: the Lease as read (its resourceVersion the precondition), its spec the record's."""
    return {**current, "spec": lease_spec(record)}


def event_message(identity: str, what: str) -> str:
    """LeaseLock.RecordEvent's message: ``<identity> became leader`` / ``<identity> stopped leading``."""
    return f"{identity} {what}"
