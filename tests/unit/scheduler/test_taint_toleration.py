"""TaintToleration: filter, score and hint tables (mirrors taint_toleration_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from services.scheduler.cluster_events import NODE_ADD
from services.scheduler.framework import CycleState, NodeScore, QueueingHint
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins.taint_toleration import TaintToleration
from services.scheduler.queueing_hints import QueueingHintFunction, run_hint
from services.scheduler.status import Code, new_status
from services.scheduler.taints import tolerates

from .builders import make_node, make_pod, taint, toleration


def untolerated(key: str, value: str) -> Any:
    return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) had untolerated taint {{{key}: {value}}}")


@pytest.mark.parametrize(
    ("tolerations", "taints", "want"),
    [
        pytest.param(
            [],
            [taint("dedicated", "user1")],
            untolerated("dedicated", "user1"),
            id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        ),
        pytest.param(
            [toleration("dedicated", value="user1", effect="NoSchedule")],
            [taint("dedicated", "user1")],
            None,
            id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        ),
        pytest.param(
            [toleration("dedicated", operator="Equal", value="user2", effect="NoSchedule")],
            [taint("dedicated", "user1")],
            untolerated("dedicated", "user1"),
            id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        ),
        pytest.param(
            [toleration("foo", operator="Exists", effect="NoSchedule")],
            [taint("foo", "bar")],
            None,
            id="A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates "
            "the taints on the node",
        ),
        pytest.param(
            [
                toleration("dedicated", operator="Equal", value="user2", effect="NoSchedule"),
                toleration("foo", operator="Exists", effect="NoSchedule"),
            ],
            [taint("dedicated", "user2"), taint("foo", "bar")],
            None,
            id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
        ),
        pytest.param(
            [toleration("foo", operator="Equal", value="bar", effect="PreferNoSchedule")],
            [taint("foo", "bar")],
            untolerated("foo", "bar"),
            id="A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
            "effect doesn't match, can't be scheduled onto the node",
        ),
        pytest.param(
            [toleration("foo", operator="Equal", value="bar")],
            [taint("foo", "bar")],
            None,
            id="The pod has a toleration that keys and values match the taint on the node, the effect of "
            "toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
        ),
        pytest.param(
            [toleration("dedicated", operator="Equal", value="user2", effect="NoSchedule")],
            [taint("dedicated", "user1", "PreferNoSchedule")],
            None,
            id="The pod has a toleration that key and value don't match the taint on the node, but the effect "
            "of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        ),
        pytest.param(
            [],
            [taint("dedicated", "user1", "PreferNoSchedule")],
            None,
            id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be "
            "scheduled onto the node",
        ),
        pytest.param([], [taint("node-role", "x", "NoExecute")], untolerated("node-role", "x"), id="NoExecute filters"),
        pytest.param([], [taint("node-role")], untolerated("node-role", ""), id="empty taint value is rendered empty"),
    ],
)
def test_filter(tolerations: list[dict[str, Any]], taints: list[dict[str, Any]], want: Any) -> None:
    pod = make_pod(tolerations=tolerations)
    assert TaintToleration().filter(CycleState(), pod, NodeInfo(make_node(taints=taints))) == want


def test_filter_reports_first_untolerated_taint() -> None:
    node = make_node(taints=[taint("a", "1", "PreferNoSchedule"), taint("b", "2"), taint("c", "3")])
    assert TaintToleration().filter(CycleState(), make_pod(), NodeInfo(node)) == untolerated("b", "2")


@pytest.mark.parametrize(
    ("tol", "t", "want"),
    [
        (toleration("", operator="Exists"), taint("any", "thing", "NoExecute"), True),
        (toleration("k", operator="Exists"), taint("k", "v"), True),
        (toleration("k", value="v"), taint("k", "v"), True),
        (toleration("k", value="v"), taint("k", "w"), False),
        (toleration("k", operator="Bogus"), taint("k", "v"), False),
        (toleration("other", operator="Exists"), taint("k", "v"), False),
    ],
)
def test_toleration_matching(tol: dict[str, Any], t: dict[str, Any], want: bool) -> None:
    assert tolerates(tol, t) is want


def test_score() -> None:
    """TestTaintTolerationScore: more intolerable PreferNoSchedule taints, lower score."""
    pod = make_pod(tolerations=[toleration("cpu-type", operator="Equal", value="arm64", effect="PreferNoSchedule")])
    nodes = [
        make_node("nodeA", taints=[taint("cpu-type", "arm64", "PreferNoSchedule")]),
        make_node(
            "nodeB",
            taints=[taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")],
        ),
        make_node(
            "nodeC",
            taints=[taint("cpu-type", "x86", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")],
        ),
        make_node("nodeD", taints=[taint("foo", "bar", "NoSchedule")]),
    ]
    plugin = TaintToleration()
    state = CycleState()
    assert plugin.pre_score(state, pod, []) is None
    scores = [NodeScore(n["metadata"]["name"], plugin.score(state, pod, NodeInfo(n))[0]) for n in nodes]
    assert [s.score for s in scores] == [0, 1, 2, 0]
    plugin.normalize_score(state, pod, scores)
    assert [s.score for s in scores] == [100, 50, 0, 100]


def test_normalize_all_zero_is_max() -> None:
    scores = [NodeScore("a", 0), NodeScore("b", 0)]
    TaintToleration().normalize_score(CycleState(), make_pod(), scores)
    assert [s.score for s in scores] == [100, 100]


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(make_pod(), None, {"kind": "Pod"}, QueueingHint.QUEUE, id="backoff-wrong-new-object"),
        pytest.param(
            make_pod(),
            None,
            make_node(taints=[taint("k", "v")]),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-untoleratedtaint-node-added",
        ),
        pytest.param(
            make_pod(tolerations=[toleration("k", value="v", effect="NoSchedule")]),
            None,
            make_node(taints=[taint("k", "v")]),
            QueueingHint.QUEUE,
            id="queue-on-toleratedtaint-node-added",
        ),
        pytest.param(
            make_pod(tolerations=[toleration("k", value="v", effect="NoSchedule")]),
            make_node(taints=[taint("k", "v")]),
            make_node(taints=[taint("k", "v"), taint("a", "b", "NoExecute")]),
            QueueingHint.QUEUE_SKIP,
            id="skip-unrelated-change",
        ),
        pytest.param(
            make_pod(tolerations=[toleration("k", value="v", effect="NoSchedule")]),
            make_node(taints=[taint("k", "v"), taint("a", "b", "NoExecute")]),
            make_node(taints=[taint("k", "v")]),
            QueueingHint.QUEUE,
            id="queue-on-taint-change",
        ),
        pytest.param(
            make_pod(),
            make_node(taints=[taint("k", "v")]),
            make_node(taints=[]),
            QueueingHint.QUEUE,
            id="queue-when-untolerated-taint-removed",
        ),
    ],
)
def test_is_schedulable_after_node_change(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    plugin = TaintToleration()
    fn = QueueingHintFunction(plugin.name, plugin.is_schedulable_after_node_change)
    assert run_hint(fn, pod, old, new, NODE_ADD) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            make_pod(uid="a"),
            make_pod(uid="a", tolerations=[toleration("k", operator="Exists")]),
            QueueingHint.QUEUE,
            id="queue-when-the-unsched-pod-gets-toleration",
        ),
        pytest.param(
            make_pod(uid="b"),
            make_pod(uid="b", tolerations=[toleration("k", operator="Exists")]),
            QueueingHint.QUEUE_SKIP,
            id="skip-when-other-pod",
        ),
    ],
)
def test_is_schedulable_after_pod_toleration_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert TaintToleration().is_schedulable_after_pod_toleration_change(make_pod(uid="a"), old, new) == want
