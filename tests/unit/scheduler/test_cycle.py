"""The scheduling cycle over small snapshots: filtering, scoring, selection, Reserve, messages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from services.scheduler.cache import SchedulerCache
from services.scheduler.cycle import (
    FILTERED_BY_PRE_FILTER_RESULT,
    FitError,
    SchedulingAlgorithm,
    decision_record,
    num_feasible_nodes_to_find,
    run_scheduling_cycle,
)
from services.scheduler.framework import CycleState, Pod, PreFilterResult
from services.scheduler.node_info import NodeInfo, Snapshot
from services.scheduler.plugins.default_binder import DefaultBinder
from services.scheduler.profile import Profile, default_plugins
from services.scheduler.status import Code, Status, new_status

from .builders import make_node, make_pod, taint
from .fake_client import FakeClient


def default_profile(*extra: Any) -> Profile:
    plugins = default_plugins(binder=DefaultBinder(FakeClient()))
    return Profile([*plugins, *extra])


def snapshot_of(*nodes: dict[str, Any], pods: Sequence[dict[str, Any]] = ()) -> tuple[SchedulerCache, Snapshot]:
    cache = SchedulerCache()
    for node in nodes:
        cache.add_node(node)
    for pod in pods:
        cache.add_pod(pod)
    return cache, cache.snapshot()


async def test_fit_error_message_with_preemption_suffix() -> None:
    cache, snap = snapshot_of(
        make_node("a", taints=[taint("node-role", "x")]),
        make_node("b", allocatable={"cpu": "1", "memory": "1Gi", "pods": "10"}),
        make_node("c", allocatable={"cpu": "1", "memory": "1Gi", "pods": "10"}),
    )
    pod = make_pod("big", requests={"cpu": "2"})
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(default_profile()), cache=cache, snapshot=snap, pod=pod
    )
    assert not outcome.succeeded
    assert outcome.message() == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {node-role: x}, 2 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert outcome.rejectors() == ({"TaintToleration", "NodeResourcesFit"}, set())
    assert outcome.status is not None and outcome.status.code == Code.UNSCHEDULABLE
    assert cache.assumed_count() == 0


async def test_preemption_policy_never() -> None:
    cache, snap = snapshot_of(make_node("a", taints=[taint("k", "v")]))
    pod = make_pod(preemption_policy="Never")
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(default_profile()), cache=cache, snapshot=snap, pod=pod
    )
    assert outcome.message() == (
        "0/1 nodes are available: 1 node(s) had untolerated taint {k: v}. "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


async def test_success_picks_least_allocated_node_and_assumes_pod() -> None:
    busy = make_pod("busy", requests={"cpu": "3", "memory": "6Gi"}, node_name="n1")
    cache, snap = snapshot_of(make_node("n1"), make_node("n2"), make_node("n3", taints=[taint("k")]), pods=[busy])
    pod = make_pod("web", requests={"cpu": "1", "memory": "1Gi"})
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(default_profile()), cache=cache, snapshot=snap, pod=pod
    )
    assert outcome.succeeded and outcome.node == "n2"
    assert outcome.assumed_pod is not None and outcome.assumed_pod["spec"]["nodeName"] == "n2"
    assert cache.is_assumed(pod)
    assert outcome.result is not None and outcome.result.feasible_nodes == 2
    record = decision_record(outcome, attempt=1, profile="default-scheduler")
    assert record["result"] == "scheduled" and record["node"] == "n2"
    assert record["scores"]["n2"] > record["scores"]["n1"]
    assert set(record["pluginScores"]) == {"TaintToleration", "NodeResourcesFit", "NodeResourcesBalancedAllocation"}
    # Why not n3: the node Filter passed over, as a failed attempt would list it.
    assert record["rejected"] == [
        {
            "plugin": "TaintToleration",
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["node(s) had untolerated taint {k: }"],
            "nodes": ["n3"],
        }
    ]


async def test_no_nodes() -> None:
    cache, snap = snapshot_of()
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(default_profile()), cache=cache, snapshot=snap, pod=make_pod()
    )
    assert outcome.status is not None and outcome.status.code == Code.ERROR
    assert outcome.message() == "no nodes available to schedule pods"


async def test_deleted_pod_is_skipped() -> None:
    cache, snap = snapshot_of(make_node("n1"))
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(default_profile()),
        cache=cache,
        snapshot=snap,
        pod=make_pod(deletion_timestamp="2024-01-01T00:00:00Z"),
    )
    assert outcome.status is not None and outcome.status.code == Code.SKIP


@dataclass
class Recorder:
    """A configurable test plugin recording which extension points ran."""

    name: str = "Recorder"
    pre_filter_result: tuple[PreFilterResult | None, Status | None] = (None, None)
    filter_status: dict[str, Status] = field(default_factory=dict)
    reserve_status: Status | None = None
    calls: list[str] = field(default_factory=list)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        self.calls.append("PreFilter")
        return self.pre_filter_result

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls.append(f"Filter {node_info.name}")
        return self.filter_status.get(node_info.name)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        self.calls.append("PreScore")
        return None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(f"Reserve {node_name}")
        return self.reserve_status

    async def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(f"Unreserve {node_name}")


async def test_pre_filter_rejection_stops_and_is_the_message() -> None:
    recorder = Recorder(pre_filter_result=(None, new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "claim missing")))
    cache, snap = snapshot_of(make_node("n1"), make_node("n2"))
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(Profile([recorder])), cache=cache, snapshot=snap, pod=make_pod()
    )
    assert recorder.calls == ["PreFilter"]
    assert outcome.fit_error is not None
    diag = outcome.fit_error.diagnosis
    assert diag.pre_filter_msg == "claim missing"
    assert set(diag.node_to_status) == {"n1", "n2"} and diag.unschedulable_plugins == {"Recorder"}
    assert outcome.message() == "0/2 nodes are available: claim missing."


async def test_pre_filter_error_wording() -> None:
    recorder = Recorder(pre_filter_result=(None, new_status(Code.ERROR, "boom")))
    cache, snap = snapshot_of(make_node("n1"))
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(Profile([recorder])), cache=cache, snapshot=snap, pod=make_pod()
    )
    assert outcome.message() == 'running PreFilter plugin "Recorder": boom'
    assert outcome.rejectors() == (set(), set())


async def test_filter_error_wording() -> None:
    recorder = Recorder(filter_status={"n1": new_status(Code.ERROR, "boom")})
    cache, snap = snapshot_of(make_node("n1"))
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(Profile([recorder])), cache=cache, snapshot=snap, pod=make_pod()
    )
    assert outcome.message() == 'running "Recorder" filter plugin: boom'


async def test_pre_filter_result_narrows_nodes() -> None:
    recorder = Recorder(
        pre_filter_result=(PreFilterResult(frozenset({"n2"})), None),
        filter_status={"n2": new_status(Code.UNSCHEDULABLE, "nope")},
    )
    _, snap = snapshot_of(make_node("n1"), make_node("n2"))
    with pytest.raises(FitError) as info:
        SchedulingAlgorithm(Profile([recorder])).schedule_pod(CycleState(), make_pod(), snap)
    assert recorder.calls == ["PreFilter", "Filter n2"]
    assert info.value.diagnosis.node_to_status["n1"].reasons == (FILTERED_BY_PRE_FILTER_RESULT,)
    assert str(info.value) == "0/2 nodes are available: 1 node is filtered out by the prefilter result, 1 nope."


async def test_empty_pre_filter_result_message() -> None:
    recorder = Recorder(pre_filter_result=(PreFilterResult(frozenset()), None))
    _, snap = snapshot_of(make_node("n1"))
    with pytest.raises(FitError) as info:
        SchedulingAlgorithm(Profile([recorder])).schedule_pod(CycleState(), make_pod(), snap)
    assert str(info.value) == "0/1 nodes are available: node(s) didn't satisfy plugin Recorder."


async def test_single_feasible_node_skips_scoring() -> None:
    recorder = Recorder(filter_status={"n1": new_status(Code.UNSCHEDULABLE, "no")})
    _, snap = snapshot_of(make_node("n1"), make_node("n2"))
    result = SchedulingAlgorithm(Profile([recorder])).schedule_pod(CycleState(), make_pod(), snap)
    assert result.suggested_host == "n2" and result.evaluated_nodes == 2
    assert "PreScore" not in recorder.calls


async def test_reserve_rejection_unreserves_and_forgets() -> None:
    recorder = Recorder(reserve_status=new_status(Code.PENDING, "waiting for resource driver to provide information"))
    cache, snap = snapshot_of(make_node("n1"))
    pod = make_pod()
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(Profile([recorder])), cache=cache, snapshot=snap, pod=pod
    )
    assert recorder.calls[-2:] == ["Reserve n1", "Unreserve n1"]
    assert not cache.is_assumed(pod)
    assert outcome.rejectors() == ({"Recorder"}, {"Recorder"})
    assert outcome.message() == "0/1 nodes are available: 1 waiting for resource driver to provide information."


@pytest.mark.parametrize(
    ("percentage", "nodes", "want"),
    [
        (None, 10, 10),
        (None, 99, 99),
        (None, 100, 100),
        (None, 500, 230),
        (None, 1000, 420),
        (None, 5000, 500),
        (None, 6000, 300),
        (10, 500, 100),
        (50, 1000, 500),
        (100, 1000, 1000),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int | None, nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == want


def test_large_cluster_stops_filtering_early_and_rotates() -> None:
    recorder = Recorder()
    nodes = [make_node(f"n{i:03d}") for i in range(500)]
    _, snap = snapshot_of(*nodes)
    algorithm = SchedulingAlgorithm(Profile([recorder]))
    result = algorithm.schedule_pod(CycleState(), make_pod(), snap)
    assert result.feasible_nodes == 230
    assert sum(1 for c in recorder.calls if c.startswith("Filter")) == 230
    assert algorithm.next_start_node_index == 230
    recorder.calls.clear()
    algorithm.schedule_pod(CycleState(), make_pod(), snap)
    assert recorder.calls[1] == "Filter n230"


def test_invalid_score_is_an_error() -> None:
    @dataclass
    class Bad:
        name: str = "Bad"

        def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
            return 101, None

    _, snap = snapshot_of(make_node("n1"), make_node("n2"))
    with pytest.raises(
        Exception,
        match=r'applying score defaultWeights on Score plugins: plugin "Bad" returns an '
        r"invalid score 101, it should in the range of \[0, 100\] after normalizing",
    ):
        SchedulingAlgorithm(Profile([Bad()])).schedule_pod(CycleState(), make_pod(), snap)


async def test_decision_record_of_a_failure() -> None:
    cache, snap = snapshot_of(make_node("a", taints=[taint("k", "v")]))
    outcome = await run_scheduling_cycle(
        algorithm=SchedulingAlgorithm(default_profile()), cache=cache, snapshot=snap, pod=make_pod()
    )
    outcome.state.write("decision/DynamicResources", {"note": "x"})
    record = decision_record(outcome, attempt=3, profile="default-scheduler")
    assert record["result"] == "unschedulable" and record["attempt"] == 3
    assert record["rejected"] == [
        {
            "plugin": "TaintToleration",
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["node(s) had untolerated taint {k: v}"],
            "nodes": ["a"],
        }
    ]
    assert record["unschedulablePlugins"] == ["TaintToleration"]
    assert record["postFilterMessage"].startswith("preemption: ")
    assert record["plugins"] == {"DynamicResources": {"note": "x"}}
