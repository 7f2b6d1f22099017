"""The leader checks of ``ops/chaos --replicas 2`` on hand-made inputs: a clean history passes, a broken one is caught."""

from __future__ import annotations

from typing import Any

import pytest

from ops.chaoskit.leadership import (
    CLAIMS_CREATED_ONCE,
    LEADERS_REPLACED,
    SCHEDULER_ACTS_ALONE,
    Decided,
    Handover,
    check_claims_created_once,
    check_leaders_replaced,
    check_scheduler_acts_alone,
    leader_status,
)
from ops.chaoskit.records import LogRecord
from ops.chaoskit.run import build_parser, options_from, replica_names
from services.kube.resourceclaim import POD_CLAIM_NAME_ANNOTATION

NS = "chaos"


def decided(*schedulers: str) -> list[Decided]:
    return [Decided(offset, f"{NS}/p{offset}", name) for offset, name in enumerate(schedulers)]


@pytest.mark.parametrize(
    ("schedulers", "offsets"),
    [
        pytest.param((), [], id="no decisions"),
        pytest.param(("a", "a", "a"), [], id="one scheduler"),
        pytest.param(("a", "a", "b", "b", "c"), [], id="two handovers, each identity one run"),
        pytest.param(("a", "b", "a"), [(0, 2)], id="the first decides again after its successor"),
        pytest.param(("a", "b", "a", "b"), [(0, 2), (1, 3)], id="two schedulers alternate"),
        pytest.param(("a", "", "a"), [(1,)], id="a record that names no scheduler"),
    ],
)
def test_one_scheduler_acts_at_a_time(schedulers: tuple[str, ...], offsets: list[tuple[int, ...]]) -> None:
    found = check_scheduler_acts_alone(decided(*schedulers))
    assert [v.offsets for v in found] == offsets
    assert all(v.invariant == SCHEDULER_ACTS_ALONE for v in found)


def test_records_are_taken_in_offset_order() -> None:
    shuffled = [Decided(2, f"{NS}/x", "b"), Decided(0, f"{NS}/y", "a"), Decided(1, f"{NS}/z", "a")]
    assert check_scheduler_acts_alone(shuffled) == []


def test_records_without_a_name_pass_when_names_are_not_required() -> None:
    assert check_scheduler_acts_alone(decided("", "", "a"), require_name=False) == []


def generated(offset: int, name: str, *, pod_uid: str, pod_claim: str = "gpu", type_: str = "ADDED") -> LogRecord:
    obj: dict[str, Any] = {
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "annotations": {POD_CLAIM_NAME_ANNOTATION: pod_claim},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": pod_uid, "controller": True},
            ],
        },
    }
    return LogRecord(offset, f"resource.k8s.io/resourceclaims/{NS}/{name}", type_, obj, f"req-{offset}")


def shared(offset: int, name: str) -> LogRecord:
    obj = {"kind": "ResourceClaim", "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"}}
    return LogRecord(offset, f"resource.k8s.io/resourceclaims/{NS}/{name}", "ADDED", obj, f"req-{offset}")


@pytest.mark.parametrize(
    ("records", "offsets"),
    [
        pytest.param([generated(0, "p-gpu-a", pod_uid="u1")], [], id="one claim"),
        pytest.param(
            [generated(0, "p-gpu-a", pod_uid="u1"), generated(1, "p-gpu-a", pod_uid="u1", type_="MODIFIED")],
            [],
            id="a claim updated",
        ),
        pytest.param(
            [generated(0, "p-gpu-a", pod_uid="u1"), generated(1, "p-gpu-b", pod_uid="u2")],
            [],
            id="a pod of the same name recreated (new uid) gets its own claim",
        ),
        pytest.param(
            [generated(0, "p-gpu-a", pod_uid="u1"), generated(1, "p-other-b", pod_uid="u1", pod_claim="other")],
            [],
            id="two claims of one pod",
        ),
        pytest.param([shared(0, "s"), shared(1, "s")], [], id="claims no pod owns are not generated"),
        pytest.param(
            [generated(0, "p-gpu-a", pod_uid="u1"), generated(5, "p-gpu-b", pod_uid="u1")],
            [(0, 5)],
            id="a second claim for the same pod claim",
        ),
    ],
)
def test_no_claim_is_generated_twice(records: list[LogRecord], offsets: list[tuple[int, ...]]) -> None:
    found = check_claims_created_once(records)
    assert [v.offsets for v in found] == offsets
    assert all(v.invariant == CLAIMS_CREATED_ONCE for v in found)


@pytest.mark.parametrize(
    ("seconds", "violations"),
    [
        pytest.param(5.5, 0, id="within the limit"),
        pytest.param(16.0, 0, id="at the limit"),
        pytest.param(16.1, 1, id="too late"),
        pytest.param(None, 1, id="never replaced"),
    ],
)
def test_every_killed_leader_is_replaced_in_time(seconds: float | None, violations: int) -> None:
    found = check_leaders_replaced([Handover("kube-scheduler", "scheduler-1", "host_1", seconds)], within=16.0)
    assert len(found) == violations
    assert all(v.invariant == LEADERS_REPLACED for v in found)


METRICS = """\
# HELP leader_election_master_status Gauge of if the reporting system is master of the relevant lease
# TYPE leader_election_master_status gauge
leader_election_master_status{name="kube-scheduler"} 1.0
leader_election_master_status{name="kube-controller-manager"} 0.0
process_cpu_seconds_total 3.2
"""


@pytest.mark.parametrize(
    ("text", "lease", "status"),
    [
        pytest.param(METRICS, "kube-scheduler", 1.0, id="leading"),
        pytest.param(METRICS, "kube-controller-manager", 0.0, id="standing by"),
        pytest.param(METRICS, "dra-controller-leader-gpu.example.com", None, id="another lease"),
        pytest.param("", "kube-scheduler", None, id="no metrics"),
        pytest.param('leader_election_master_status{name="kube-scheduler"} x\n', "kube-scheduler", None, id="garbled"),
    ],
)
def test_leader_status_reads_the_gauge(text: str, lease: str, status: float | None) -> None:
    assert leader_status(text, lease) == status


@pytest.mark.parametrize(
    ("replicas", "names"),
    [(1, ["scheduler"]), (2, ["scheduler-1", "scheduler-2"])],
)
def test_replica_names(replicas: int, names: list[str]) -> None:
    assert replica_names("scheduler", replicas) == names


def test_replicas_flag() -> None:
    assert options_from(build_parser().parse_args(["--short", "--replicas", "2"])).replicas == 2
    assert options_from(build_parser().parse_args(["--short"])).replicas == 1
    with pytest.raises(SystemExit):
        options_from(build_parser().parse_args(["--replicas", "0"]))
