"""NodeAffinity: PreFilter, Filter, Score and hint tables (mirrors node_affinity_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from services.scheduler.cluster_events import NODE_ADD
from services.scheduler.framework import CycleState, NodeScore, PreFilterResult, QueueingHint
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins.node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
)
from services.scheduler.queueing_hints import QueueingHintFunction, run_hint
from services.scheduler.status import Code, new_status

from .builders import make_node, make_pod

UNRESOLVABLE = new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def term(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if exprs:
        out["matchExpressions"] = list(exprs)
    if fields is not None:
        out["matchFields"] = fields
    return out


FILTER_CASES = [
    ("no selector", make_pod(), {}, None),
    ("missing labels", make_pod(node_selector={"foo": "bar"}), {}, UNRESOLVABLE),
    ("same labels", make_pod(node_selector={"foo": "bar"}), {"foo": "bar"}, None),
    ("node labels are superset", make_pod(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, None),
    ("node labels are subset", make_pod(node_selector={"foo": "bar", "baz": "blah"}), {"foo": "bar"}, UNRESOLVABLE),
    (
        "Pod with matchExpressions using In operator that matches the existing node",
        make_pod(affinity=required(term(expr("foo", "In", "bar", "value2")))),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with matchExpressions using Gt operator that matches the existing node",
        make_pod(affinity=required(term(expr("kernel-version", "Gt", "0204")))),
        {"kernel-version": "0206"},
        None,
    ),
    (
        "Pod with matchExpressions using NotIn operator that matches the existing node",
        make_pod(affinity=required(term(expr("mem-type", "NotIn", "DDR", "DDR2")))),
        {"mem-type": "DDR3"},
        None,
    ),
    (
        "Pod with matchExpressions using Exists operator that matches the existing node",
        make_pod(affinity=required(term(expr("GPU", "Exists")))),
        {"GPU": "NVIDIA-GRID-K1"},
        None,
    ),
    (
        "Pod with affinity that don't match node's labels won't schedule onto the node",
        make_pod(affinity=required(term(expr("foo", "In", "value1", "value2")))),
        {"foo": "bar"},
        UNRESOLVABLE,
    ),
    (
        "Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
        make_pod(affinity=required(term())),
        {"foo": "bar"},
        UNRESOLVABLE,
    ),
    ("Pod with no Affinity will schedule onto a node", make_pod(affinity={}), {"foo": "bar"}, None),
    (
        "Pod with Affinity but nil NodeSelector will schedule onto a node",
        make_pod(affinity={"nodeAffinity": {}}),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with multiple matchExpressions ANDed that matches the existing node",
        make_pod(affinity=required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))),
        {"GPU": "NVIDIA-GRID-K1"},
        None,
    ),
    (
        "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
        make_pod(affinity=required(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))),
        {"GPU": "NVIDIA-GRID-K1"},
        UNRESOLVABLE,
    ),
    (
        "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto "
        "the node",
        make_pod(
            affinity=required(term(expr("foo", "In", "bar", "value2")), term(expr("diffkey", "In", "wrong", "value2")))
        ),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied",
        make_pod(node_selector={"foo": "bar"}, affinity=required(term(expr("foo", "Exists")))),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
        "deprecating) is not satisfied, won't schedule onto the node",
        make_pod(node_selector={"foo": "bar"}, affinity=required(term(expr("foo", "Exists")))),
        {"foo": "barrrrrr"},
        UNRESOLVABLE,
    ),
    (
        "Pod with an invalid value in Affinity term won't be scheduled onto the node",
        make_pod(affinity=required(term(expr("foo", "NotIn", "invalid value: ___@#$%^")))),
        {"foo": "bar"},
        UNRESOLVABLE,
    ),
    (
        "Pod with an invalid operator is skipped, other terms still match",
        make_pod(affinity=required(term(expr("foo", "Bogus", "x")), term(expr("foo", "In", "bar")))),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with Gt operator and a non-integer label does not match",
        make_pod(affinity=required(term(expr("v", "Gt", "3")))),
        {"v": "abc"},
        UNRESOLVABLE,
    ),
    ("Pod with Lt operator that matches", make_pod(affinity=required(term(expr("v", "Lt", "3")))), {"v": "2"}, None),
    (
        "Pod with DoesNotExist operator that matches",
        make_pod(affinity=required(term(expr("v", "DoesNotExist")))),
        {},
        None,
    ),
    (
        "Pod with matchFields using In operator that matches the existing node",
        make_pod(affinity=required(term(fields=[expr("metadata.name", "In", "node1")]))),
        {},
        None,
    ),
    (
        "Pod with matchFields using In operator that does not match the existing node",
        make_pod(affinity=required(term(fields=[expr("metadata.name", "In", "node2")]))),
        {},
        UNRESOLVABLE,
    ),
    (
        "Pod with two terms: matchFields does not match, but matchExpressions matches",
        make_pod(
            affinity=required(term(fields=[expr("metadata.name", "In", "node2")]), term(expr("foo", "In", "bar")))
        ),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with one term: matchFields does not match, but matchExpressions matches",
        make_pod(affinity=required(term(expr("foo", "In", "bar"), fields=[expr("metadata.name", "In", "node2")]))),
        {"foo": "bar"},
        UNRESOLVABLE,
    ),
    (
        "Pod with one term: both matchFields and matchExpressions match",
        make_pod(affinity=required(term(expr("foo", "In", "bar"), fields=[expr("metadata.name", "In", "node1")]))),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with two terms: both matchFields and matchExpressions do not match",
        make_pod(
            affinity=required(term(fields=[expr("metadata.name", "In", "node2")]), term(expr("foo", "In", "not-match")))
        ),
        {"foo": "bar"},
        UNRESOLVABLE,
    ),
    (
        "Pod with matchFields NotIn that excludes another node",
        make_pod(affinity=required(term(fields=[expr("metadata.name", "NotIn", "node2")]))),
        {},
        None,
    ),
]


@pytest.mark.parametrize(("pod", "labels", "want"), [pytest.param(*c[1:], id=c[0]) for c in FILTER_CASES])
def test_filter(pod: dict[str, Any], labels: dict[str, str], want: Any) -> None:
    plugin = NodeAffinity()
    node = make_node("node1", labels=labels)
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.filter(state, pod, NodeInfo(node)) == want
    # Filter works from scratch when PreFilter did not run.
    assert plugin.filter(CycleState(), pod, NodeInfo(node)) == want


@pytest.mark.parametrize(
    ("pod", "want_result", "want_status"),
    [
        pytest.param(make_pod(), None, new_status(Code.SKIP), id="no affinity: skip"),
        pytest.param(make_pod(node_selector={"a": "b"}), None, None, id="only nodeSelector"),
        pytest.param(
            make_pod(affinity=required(term(fields=[expr("metadata.name", "In", "node1")]))),
            PreFilterResult(frozenset({"node1"})),
            None,
            id="matchFields with a single node",
        ),
        pytest.param(
            make_pod(
                affinity=required(
                    term(fields=[expr("metadata.name", "In", "node1")]),
                    term(fields=[expr("metadata.name", "In", "node2")]),
                )
            ),
            PreFilterResult(frozenset({"node1", "node2"})),
            None,
            id="terms are ORed",
        ),
        pytest.param(
            make_pod(
                affinity=required(
                    term(fields=[expr("metadata.name", "In", "node1"), expr("metadata.name", "In", "node2")])
                )
            ),
            None,
            new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT),
            id="requirements ANDed conflict",
        ),
        pytest.param(
            make_pod(
                affinity=required(term(fields=[expr("metadata.name", "In", "node1")]), term(expr("foo", "In", "bar")))
            ),
            None,
            None,
            id="a term without node name means all nodes",
        ),
    ],
)
def test_pre_filter(pod: dict[str, Any], want_result: Any, want_status: Any) -> None:
    assert NodeAffinity().pre_filter(CycleState(), pod, []) == (want_result, want_status)


def test_added_affinity_is_enforced() -> None:
    plugin = NodeAffinity(
        added_affinity={
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("zone", "In", "a"))]}
        }
    )
    pod = make_pod()
    state = CycleState()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    assert plugin.filter(state, pod, NodeInfo(make_node(labels={"zone": "a"}))) is None
    assert plugin.filter(state, pod, NodeInfo(make_node(labels={"zone": "b"}))) == new_status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED
    )


def preferred(*weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": w, "preference": t} for w, t in weighted]
        }
    }


def test_score_and_normalize() -> None:
    """TestNodeAffinityPriority: weights summed, then scaled so the best node gets 100."""
    pod = make_pod(
        affinity=preferred(
            (2, term(expr("foo", "In", "bar"))),
            (4, term(expr("key", "In", "value"))),
            (5, term(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))),
        )
    )
    nodes = {
        "node1": {"foo": "bar"},
        "node2": {"key": "value"},
        "node3": {"foo": "bar", "key": "value", "az": "az1"},
        "node4": {"other": "x"},
    }
    plugin = NodeAffinity()
    state = CycleState()
    assert plugin.pre_score(state, pod, []) is None
    scores = []
    for name, labels in nodes.items():
        value, status = plugin.score(state, pod, NodeInfo(make_node(name, labels=labels)))
        assert status is None
        scores.append(NodeScore(name, value))
    assert [s.score for s in scores] == [2, 4, 11, 0]
    plugin.normalize_score(state, pod, scores)
    assert [s.score for s in scores] == [18, 36, 100, 0]


def test_pre_score_skips_without_preferences() -> None:
    assert NodeAffinity().pre_score(CycleState(), make_pod(), []) == new_status(Code.SKIP)


HINT_POD = make_pod(affinity=required(term(expr("foo", "In", "bar"))))


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(HINT_POD, None, {"kind": "Pod"}, QueueingHint.QUEUE, id="backoff-wrong-new-object"),
        pytest.param(HINT_POD, None, make_node(labels={"foo": "bar"}), QueueingHint.QUEUE, id="queue-on-add"),
        pytest.param(
            HINT_POD, None, make_node(labels={"foo": "baz"}), QueueingHint.QUEUE_SKIP, id="skip-unrelated-add"
        ),
        pytest.param(
            HINT_POD,
            make_node(labels={"foo": "baz"}),
            make_node(labels={"foo": "bar"}),
            QueueingHint.QUEUE,
            id="queue-on-label-change-to-match",
        ),
        pytest.param(
            HINT_POD,
            make_node(labels={"foo": "bar"}),
            make_node(labels={"foo": "bar", "x": "y"}),
            QueueingHint.QUEUE_SKIP,
            id="skip-update-that-was-already-matching",
        ),
        pytest.param(
            HINT_POD,
            make_node(labels={"foo": "baz"}),
            make_node(labels={"foo": "qux"}),
            QueueingHint.QUEUE_SKIP,
            id="skip-update-still-not-matching",
        ),
        pytest.param(
            make_pod(node_selector={"foo": "bar"}),
            None,
            make_node(labels={"foo": "bar"}),
            QueueingHint.QUEUE,
            id="nodeSelector-queue-on-add",
        ),
    ],
)
def test_is_schedulable_after_node_change(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    plugin = NodeAffinity()
    fn = QueueingHintFunction(plugin.name, plugin.is_schedulable_after_node_change)
    assert run_hint(fn, pod, old, new, NODE_ADD) == want


def test_hint_honours_added_affinity() -> None:
    plugin = NodeAffinity(
        added_affinity={
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("zone", "In", "a"))]}
        }
    )
    assert plugin.is_schedulable_after_node_change(make_pod(), None, make_node(labels={"zone": "b"})) == (
        QueueingHint.QUEUE_SKIP
    )
    assert plugin.is_schedulable_after_node_change(make_pod(), None, make_node(labels={"zone": "a"})) == (
        QueueingHint.QUEUE
    )


def test_reason_texts() -> None:
    assert ERR_REASON_POD == "node(s) didn't match Pod's node affinity/selector"
    assert ERR_REASON_CONFLICT == "pod affinity terms conflict"
