"""The framework runtime: how statuses of several plugins combine at each extension point."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from services.scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    NodeScore,
    NodeToStatus,
    Pod,
    PostFilterResult,
    PreFilterResult,
    default_normalize_score,
    default_normalized,
)
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins.taint_toleration import TaintToleration
from services.scheduler.profile import Profile
from services.scheduler.status import Code, Status, new_status

from .builders import make_node, make_pod


@dataclass
class PreFilterPlugin:
    name: str
    result: tuple[PreFilterResult | None, Status | None]
    ran: list[str]

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        self.ran.append(self.name)
        return self.result


@dataclass
class FilterPlugin:
    name: str
    status: Status | None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return self.status


@dataclass
class PostFilterPlugin:
    name: str
    status: Status | None

    async def post_filter(self, state: CycleState, pod: Pod, statuses: NodeToStatus, n: int) -> Any:
        return PostFilterResult(), self.status


def test_unschedulable_pre_filter_lets_the_others_run() -> None:
    ran: list[str] = []
    profile = Profile(
        [
            PreFilterPlugin("A", (None, new_status(Code.UNSCHEDULABLE, "a says no")), ran),
            PreFilterPlugin("B", (None, None), ran),
        ]
    )
    _, status = profile.run_pre_filter(CycleState(), make_pod(), [])
    assert ran == ["A", "B"]
    assert status == Status(Code.UNSCHEDULABLE, ("a says no",), "A")


def test_unresolvable_pre_filter_stops() -> None:
    ran: list[str] = []
    profile = Profile(
        [
            PreFilterPlugin("A", (None, new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "never")), ran),
            PreFilterPlugin("B", (None, None), ran),
        ]
    )
    _, status = profile.run_pre_filter(CycleState(), make_pod(), [])
    assert ran == ["A"] and status is not None and status.plugin == "A"


def test_skipped_pre_filter_skips_its_filter() -> None:
    ran: list[str] = []

    @dataclass
    class Both(PreFilterPlugin):
        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            return new_status(Code.UNSCHEDULABLE, "filtered")

    profile = Profile([Both("A", (None, new_status(Code.SKIP)), ran)])
    state = CycleState()
    profile.run_pre_filter(state, make_pod(), [])
    assert state.skip_filter_plugins == {"A"}
    assert profile.run_filter(state, make_pod(), NodeInfo(make_node())) is None


def test_pre_filter_results_intersect() -> None:
    ran: list[str] = []
    profile = Profile(
        [
            PreFilterPlugin("A", (PreFilterResult(frozenset({"n1", "n2"})), None), ran),
            PreFilterPlugin("B", (PreFilterResult(frozenset({"n3"})), None), ran),
        ]
    )
    result, status = profile.run_pre_filter(CycleState(), make_pod(), [])
    assert result == PreFilterResult(frozenset())
    assert status == new_status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [A B] simultaneously"
    )


def test_filter_stops_at_the_first_rejection() -> None:
    profile = Profile(
        [
            FilterPlugin("A", None),
            FilterPlugin("B", new_status(Code.UNSCHEDULABLE, "b")),
            FilterPlugin("C", new_status(Code.UNSCHEDULABLE, "c")),
        ]
    )
    assert profile.run_filter(CycleState(), make_pod(), NodeInfo(make_node())) == Status(
        Code.UNSCHEDULABLE, ("b",), "B"
    )


def test_filter_pending_status_is_a_rejection() -> None:
    profile = Profile([FilterPlugin("A", new_status(Code.PENDING, "wait"))])
    status = profile.run_filter(CycleState(), make_pod(), NodeInfo(make_node()))
    assert status == Status(Code.PENDING, ("wait",), "A")


async def test_post_filter_reasons_are_joined() -> None:
    profile = Profile(
        [
            PostFilterPlugin("DynamicResources", new_status(Code.UNSCHEDULABLE, "no new claims to deallocate")),
            PostFilterPlugin("DefaultPreemption", new_status(Code.UNSCHEDULABLE, "preemption: x")),
        ]
    )
    _, status = await profile.run_post_filter(CycleState(), make_pod(), {}, 1)
    assert status.message() == "no new claims to deallocate, preemption: x"
    assert status.plugin == "DynamicResources" and status.code == Code.UNSCHEDULABLE


async def test_post_filter_success_short_circuits() -> None:
    profile = Profile([PostFilterPlugin("A", None), PostFilterPlugin("B", new_status(Code.UNSCHEDULABLE, "b"))])
    _, status = await profile.run_post_filter(CycleState(), make_pod(), {}, 1)
    assert status.is_success()


async def test_post_filter_error_wins() -> None:
    profile = Profile([PostFilterPlugin("A", new_status(Code.ERROR, "api down"))])
    _, status = await profile.run_post_filter(CycleState(), make_pod(), {}, 1)
    assert status.code == Code.ERROR and status.message() == "api down" and status.plugin == "A"


async def test_bind_plugins_may_skip() -> None:
    @dataclass
    class Binder:
        name: str
        status: Status | None
        calls: list[str]

        async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            self.calls.append(self.name)
            return self.status

    calls: list[str] = []
    profile = Profile([Binder("A", new_status(Code.SKIP), calls), Binder("B", None, calls), Binder("C", None, calls)])
    assert await profile.run_bind(CycleState(), make_pod(), "n") is None
    assert calls == ["A", "B"]
    failing = Profile([Binder("A", new_status(Code.ERROR, "nope"), [])])
    status = await failing.run_bind(CycleState(), make_pod(), "n")
    assert status is not None and status.message() == 'running Bind plugin "A": nope'


def test_exceptions_become_error_statuses() -> None:
    class Broken:
        name = "Broken"

        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            raise ValueError("bug")

    status = Profile([Broken()]).run_filter(CycleState(), make_pod(), NodeInfo(make_node()))
    assert status is not None and status.code == Code.ERROR
    assert status.message() == 'running "Broken" filter plugin: bug'


@pytest.mark.parametrize(
    ("reverse", "values", "expected"),
    [
        # helper.TestDefaultNormalizeScore of kube-scheduler
        (False, [1, 2, 3, 4], [25, 50, 75, 100]),
        (True, [1, 2, 3, 4], [75, 50, 25, 0]),
        (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
        (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
        (False, [1, 1, 1, 1], [100, 100, 100, 100]),
        (False, [1, 0, 1, 1], [100, 0, 100, 100]),
        (True, [0, 1, 0, 1], [100, 0, 100, 0]),
        (False, [3, 0, 1], [100, 0, 33]),
        (True, [3, 0, 1], [0, 100, 67]),
        (True, [7, 7], [0, 0]),
        (False, [100, 1, 50], [100, 1, 50]),
        # all zero: reversed, every node gets the maximum; otherwise they stay 0
        (False, [0, 0, 0], [0, 0, 0]),
        (True, [0, 0, 0], [100, 100, 100]),
        (True, [], []),
    ],
)
def test_default_normalization(reverse: bool, values: list[int], expected: list[int]) -> None:
    assert default_normalized(MAX_NODE_SCORE, reverse, values) == expected
    scores = [NodeScore(f"n{i}", v) for i, v in enumerate(values)]
    default_normalize_score(MAX_NODE_SCORE, reverse, scores)
    assert [s.score for s in scores] == expected


class TaintCountPlugin(TaintToleration):
    """Scores each node by its taint count, normalized as TaintToleration normalizes."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        assert node_info.node is not None
        return len(node_info.node.get("spec", {}).get("taints") or []), None


class TaintCountByNodeScores(TaintCountPlugin):
    default_normalize_reverse = None  # the NodeScore path: normalize_score is called


def test_a_plugin_declaring_default_normalization_scores_as_its_normalize_score_does() -> None:
    nodes = [
        NodeInfo(make_node(f"n{i}", taints=[{"key": f"k{j}", "effect": "PreferNoSchedule"} for j in range(i % 4)]))
        for i in range(9)
    ]
    plain = Profile([TaintCountPlugin()], remember=False)
    by_node_scores = Profile([TaintCountByNodeScores()], remember=False)
    assert plain._default_normalize == {"TaintToleration": True} and by_node_scores._default_normalize == {}
    got = plain.run_score(CycleState(), make_pod(), nodes)
    want = by_node_scores.run_score(CycleState(), make_pod(), nodes)
    assert got == want and len(set(got[0])) > 1
