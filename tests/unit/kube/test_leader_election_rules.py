"""The pure leader-election rules against client-go's leaderelection_test.go cases.

Each case of client-go's ``testTryAcquireOrRenew`` (tools/leaderelection,
client-go v0.32.3) is a row under the same name: what the candidate ``baz``
observed before, what the GET returns, whether it writes, and who holds the
Lease afterwards. ``observedTime`` "past"/"future" are the test's
``now ∓ 1000 h``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from services.kube.leader_election import (
    ElectionTimings,
    LeaderElectionRecord,
    LeaseName,
    Observation,
    lease_spec,
    new_lease,
    next_attempt_in,
    record_of,
    release,
    try_acquire_or_renew,
)
from services.kube.times import micro_time, parse_micro_time

WHERE = LeaseName("foo", "bar")
ME = "baz"
NOW = 10_000_000.0
PAST = NOW - 1000 * 3600
FUTURE = NOW + 1000 * 3600
WALL = datetime(2026, 12, 2, 7, 30, 0, 123456, tzinfo=UTC)
TIMINGS = ElectionTimings(lease_duration=10, renew_deadline=5, retry_period=2)


def lease(record: LeaderElectionRecord | None, *, rv: str = "41") -> dict[str, Any]:
    spec = lease_spec(record) if record is not None else {}
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "bar", "namespace": "foo", "resourceVersion": rv, "uid": "u-1"},
        "spec": spec,
    }


def lease_without_spec() -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "bar", "namespace": "foo"}}


@dataclass(frozen=True)
class Case:
    name: str
    current: dict[str, Any] | None
    observed: Observation = field(default_factory=Observation)
    expect_success: bool = True
    transition_leader: bool = False
    out_holder: str = ME


CASES = [
    Case("acquire from no object", None),
    Case("acquire from object without annotations", lease_without_spec(), transition_leader=True),
    Case("acquire from unled object", lease(LeaderElectionRecord()), transition_leader=True),
    Case(
        "acquire from led, unacked object",
        lease(LeaderElectionRecord(holder_identity="bing")),
        observed=Observation(LeaderElectionRecord(holder_identity="bing"), PAST),
        transition_leader=True,
    ),
    Case(
        "acquire from empty led, acked object",
        lease(LeaderElectionRecord(holder_identity="")),
        observed=Observation(LeaderElectionRecord(), FUTURE),
        transition_leader=True,
    ),
    Case(
        "don't acquire from led, acked object",
        lease(LeaderElectionRecord(holder_identity="bing")),
        observed=Observation(LeaderElectionRecord(), FUTURE),
        expect_success=False,
        out_holder="bing",
    ),
    Case(
        "renew already acquired object",
        lease(LeaderElectionRecord(holder_identity=ME)),
        observed=Observation(LeaderElectionRecord(holder_identity=ME), FUTURE),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_try_acquire_or_renew(case: Case) -> None:
    observed, write = try_acquire_or_renew(
        case.observed, case.current, where=WHERE, identity=ME, timings=TIMINGS, now=NOW, wall=WALL
    )
    assert (write is not None) == case.expect_success
    holder = write.record.holder_identity if write is not None else observed.record.holder_identity
    assert holder == case.out_holder
    if write is None:
        return
    before = record_of(case.current).leader_transitions
    after = write.record.leader_transitions
    assert after == (before + 1 if case.transition_leader else before)
    assert write.verb == ("create" if case.current is None else "update")
    # The update is decided on the version read: its resourceVersion is the precondition.
    assert write.lease["metadata"] == (case.current or new_lease(WHERE, write.record))["metadata"]
    assert write.lease["spec"]["renewTime"] == micro_time(WALL)
    assert write.lease["spec"]["leaseDurationSeconds"] == 10


def test_acquire_from_led_object_with_the_lease_duration_seconds() -> None:
    """client-go's case of that name: held by "bing" for 3 s; refused at first sight, taken 3 s later."""
    held = lease(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=3))
    observed, write = try_acquire_or_renew(
        Observation(), held, where=WHERE, identity=ME, timings=TIMINGS, now=NOW, wall=WALL
    )
    assert write is None
    assert observed.time == NOW  # the first sight of the record starts its clock
    observed, write = try_acquire_or_renew(
        observed, held, where=WHERE, identity=ME, timings=TIMINGS, now=NOW + 2.9, wall=WALL
    )
    assert write is None
    observed, write = try_acquire_or_renew(
        observed, held, where=WHERE, identity=ME, timings=TIMINGS, now=NOW + 3.001, wall=WALL
    )
    assert write is not None and write.record.holder_identity == ME
    assert write.record.leader_transitions == 1


def test_expiry_counts_from_the_last_observed_change_not_the_renew_time() -> None:
    """observedTime is the candidate's own clock: an old renewTime from a skewed host does not expire the Lease."""
    skewed = LeaderElectionRecord(
        holder_identity="bing", lease_duration_seconds=10, renew_time=micro_time(WALL - timedelta(hours=5))
    )
    observed, write = try_acquire_or_renew(
        Observation(), lease(skewed), where=WHERE, identity=ME, timings=TIMINGS, now=NOW, wall=WALL
    )
    assert write is None
    renewed = LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=10, renew_time=micro_time(WALL))
    # A renewal 9 s later restarts the clock: at +15 s (6 s after it) the Lease is still valid.
    observed, _ = try_acquire_or_renew(
        observed, lease(renewed), where=WHERE, identity=ME, timings=TIMINGS, now=NOW + 9, wall=WALL
    )
    observed, write = try_acquire_or_renew(
        observed, lease(renewed), where=WHERE, identity=ME, timings=TIMINGS, now=NOW + 15, wall=WALL
    )
    assert write is None
    _, write = try_acquire_or_renew(
        observed, lease(renewed), where=WHERE, identity=ME, timings=TIMINGS, now=NOW + 19.5, wall=WALL
    )
    assert write is not None


def test_renewal_keeps_acquire_time_and_transitions() -> None:
    acquired = micro_time(WALL - timedelta(minutes=3))
    mine = LeaderElectionRecord(
        holder_identity=ME, lease_duration_seconds=10, acquire_time=acquired, renew_time=acquired, leader_transitions=4
    )
    _, write = try_acquire_or_renew(
        Observation(mine, NOW - 1), lease(mine), where=WHERE, identity=ME, timings=TIMINGS, now=NOW, wall=WALL
    )
    assert write is not None
    assert write.record.acquire_time == acquired
    assert write.record.renew_time == micro_time(WALL)
    assert write.record.leader_transitions == 4


def test_a_takeover_sets_acquire_time_and_clears_preferred_holder() -> None:
    """A new holder writes acquireTime = renewTime = now; the whole spec is the new record's (LeaseLock.Update)."""
    other = LeaderElectionRecord(
        holder_identity="bing", lease_duration_seconds=1, leader_transitions=2, strategy="OldestEmulationVersion"
    )
    _, write = try_acquire_or_renew(
        Observation(other, PAST), lease(other), where=WHERE, identity=ME, timings=TIMINGS, now=NOW, wall=WALL
    )
    assert write is not None
    assert write.lease["spec"] == {
        "holderIdentity": ME,
        "leaseDurationSeconds": 10,
        "acquireTime": micro_time(WALL),
        "renewTime": micro_time(WALL),
        "leaseTransitions": 3,
    }


@dataclass(frozen=True)
class ReleaseCase:
    name: str
    observed: Observation
    current: dict[str, Any] | None
    writes: bool


MINE = LeaderElectionRecord(holder_identity=ME, lease_duration_seconds=10, leader_transitions=7)
RELEASE_CASES = [
    ReleaseCase("release acquired lock", Observation(MINE, NOW), lease(MINE), True),
    ReleaseCase(
        "nothing to release when another holds it", Observation(record_of(lease(None)), NOW), lease(None), False
    ),
    ReleaseCase("nothing to release without a lease", Observation(MINE, NOW), None, False),
]


@pytest.mark.parametrize("case", RELEASE_CASES, ids=[c.name for c in RELEASE_CASES])
def test_release(case: ReleaseCase) -> None:
    write = release(case.observed, case.current, identity=ME, wall=WALL)
    assert (write is not None) == case.writes
    if write is not None:
        assert write.lease["spec"] == {
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": micro_time(WALL),
            "renewTime": micro_time(WALL),
            "leaseTransitions": 7,
        }
        assert write.lease["metadata"]["resourceVersion"] == "41"


def test_a_released_lease_is_taken_at_once() -> None:
    released = release(Observation(MINE, NOW), lease(MINE), identity=ME, wall=WALL)
    assert released is not None
    _, write = try_acquire_or_renew(
        Observation(), released.lease, where=WHERE, identity="other", timings=TIMINGS, now=NOW, wall=WALL
    )
    assert write is not None and write.record.leader_transitions == 8


def test_lease_spec_round_trip() -> None:
    """TestLeaseSpecToLeaderElectionRecordRoundTrip: spec → record → spec is the identity."""
    record = LeaderElectionRecord(
        holder_identity="h",
        lease_duration_seconds=15,
        acquire_time=micro_time(WALL),
        renew_time=micro_time(WALL),
        leader_transitions=2,
        preferred_holder="p",
        strategy="OldestEmulationVersion",
    )
    assert record_of({"spec": lease_spec(record)}) == record
    assert parse_micro_time(micro_time(WALL)) == WALL


@pytest.mark.parametrize(
    ("timings", "message"),
    [
        (ElectionTimings(15, 10, 2), None),
        (ElectionTimings(15, 2, 1), None),  # TestLeaderElectionConfigValidation's valid config
        (ElectionTimings(10, 10, 2), "leaseDuration must be greater than renewDeadline"),
        (ElectionTimings(15, 2.4, 2), "renewDeadline must be greater than retryPeriod*JitterFactor"),
        (ElectionTimings(15, 10, 0), "retryPeriod must be greater than zero"),
    ],
)
def test_timings_check(timings: ElectionTimings, message: str | None) -> None:
    if message is None:
        timings.check()
        return
    with pytest.raises(ValueError, match=message.replace("*", r"\*")):
        timings.check()


HELD = LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=15)


@pytest.mark.parametrize(
    ("observed", "now", "jittered", "pause"),
    [
        (Observation(HELD, NOW), NOW + 1, 3.0, 3.0),  # expiry far off: the jittered retry period
        (Observation(HELD, NOW), NOW + 14, 3.0, 1.05),  # expiry sooner: just after it
        (Observation(HELD, NOW), NOW + 20, 3.0, 3.0),  # expired, yet the write failed: no busy loop
        (Observation(LeaderElectionRecord(), NOW), NOW + 14, 3.0, 3.0),  # nobody holds it
    ],
    ids=["far", "soon", "expired", "unheld"],
)
def test_a_standby_tries_again_when_the_observed_lease_runs_out(
    observed: Observation, now: float, jittered: float, pause: float
) -> None:
    assert next_attempt_in(observed, now=now, jittered=jittered) == pytest.approx(pause)
