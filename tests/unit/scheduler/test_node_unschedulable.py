"""NodeUnschedulable: filter and hint tables (mirrors node_unschedulable_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from services.scheduler.cluster_events import NODE_ADD
from services.scheduler.framework import CycleState, QueueingHint
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins.node_unschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable
from services.scheduler.queueing_hints import QueueingHintFunction, run_hint
from services.scheduler.status import Code, new_status

from .builders import make_node, make_pod, toleration

UNSCHEDULABLE_TOLERATION = toleration("node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule")


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(
            make_pod(),
            make_node(unschedulable=True),
            new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE),
            id="does not schedule pod to unschedulable node",
        ),
        pytest.param(make_pod(), make_node(unschedulable=False), None, id="schedule pod to normal node"),
        pytest.param(
            make_pod(
                tolerations=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "operator": "Exists"}]
            ),
            make_node(unschedulable=True),
            None,
            id="schedule pod with toleration to unschedulable node",
        ),
    ],
)
def test_filter(pod: dict[str, Any], node: dict[str, Any], want: Any) -> None:
    assert NodeUnschedulable().filter(CycleState(), pod, NodeInfo(node)) == want


def test_reason_text() -> None:
    assert ERR_REASON_UNSCHEDULABLE == "node(s) were unschedulable"


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, {"kind": "Pod"}, QueueingHint.QUEUE, id="backoff-wrong-new-object"),
        pytest.param({"kind": "Pod"}, make_node(), QueueingHint.QUEUE, id="backoff-wrong-old-object"),
        pytest.param(
            None, make_node(unschedulable=True), QueueingHint.QUEUE_SKIP, id="skip-queue-on-unschedulable-node-added"
        ),
        pytest.param(None, make_node(unschedulable=False), QueueingHint.QUEUE, id="queue-on-schedulable-node-added"),
        pytest.param(
            make_node(unschedulable=True, labels={"a": "b"}),
            make_node(unschedulable=True),
            QueueingHint.QUEUE_SKIP,
            id="skip-unrelated-change",
        ),
        pytest.param(
            make_node(unschedulable=True),
            make_node(unschedulable=False),
            QueueingHint.QUEUE,
            id="queue-on-unschedulable-field-change",
        ),
        pytest.param(
            make_node(unschedulable=False),
            make_node(unschedulable=True),
            QueueingHint.QUEUE_SKIP,
            id="skip-node-cordoned",
        ),
    ],
)
def test_is_schedulable_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    plugin = NodeUnschedulable()
    fn = QueueingHintFunction(plugin.name, plugin.is_schedulable_after_node_change)
    assert run_hint(fn, make_pod(), old, new, NODE_ADD) == want


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(make_pod(uid="a"), None, {"kind": "Node"}, QueueingHint.QUEUE, id="backoff-wrong-new-object"),
        pytest.param(
            make_pod(uid="a"),
            make_pod(uid="a"),
            make_pod(uid="a", tolerations=[UNSCHEDULABLE_TOLERATION]),
            QueueingHint.QUEUE,
            id="queue-when-the-unsched-pod-gets-toleration",
        ),
        pytest.param(
            make_pod(uid="a"),
            make_pod(uid="a"),
            make_pod(uid="a", tolerations=[toleration("foo", operator="Exists", effect="NoSchedule")]),
            QueueingHint.QUEUE_SKIP,
            id="skip-when-the-new-toleration-is-unrelated",
        ),
        pytest.param(
            make_pod(uid="a"),
            make_pod(uid="b"),
            make_pod(uid="b", tolerations=[UNSCHEDULABLE_TOLERATION]),
            QueueingHint.QUEUE_SKIP,
            id="skip-when-another-pod-gets-toleration",
        ),
    ],
)
def test_is_schedulable_after_pod_toleration_change(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    plugin = NodeUnschedulable()
    fn = QueueingHintFunction(plugin.name, plugin.is_schedulable_after_pod_toleration_change)
    assert run_hint(fn, pod, old, new, NODE_ADD) == want


def test_registered_events() -> None:
    events = {(r.event.resource, int(r.event.action_type)) for r in NodeUnschedulable().events_to_register()}
    assert events == {("Node", 1 | 16), ("Pod", 512)}
