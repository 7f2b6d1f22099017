"""NodeName: filter table (mirrors node_name_test.go) and its registration."""

from __future__ import annotations

from typing import Any

import pytest

from services.scheduler.cluster_events import ActionType
from services.scheduler.framework import CycleState
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins.node_name import ERR_REASON, NodeName
from services.scheduler.status import Code, new_status

from .builders import make_node, make_pod


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(make_pod(), make_node("foo"), None, id="no host specified"),
        pytest.param(make_pod(node_name="foo"), make_node("foo"), None, id="host matches"),
        pytest.param(
            make_pod(node_name="bar"),
            make_node("foo"),
            new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON),
            id="host doesn't match",
        ),
    ],
)
def test_filter(pod: dict[str, Any], node: dict[str, Any], want: Any) -> None:
    assert NodeName().filter(CycleState(), pod, NodeInfo(node)) == want


def test_filter_without_node_is_an_error() -> None:
    status = NodeName().filter(CycleState(), make_pod(), NodeInfo())
    assert status == new_status(Code.ERROR, "node not found")


def test_reason_and_events() -> None:
    assert ERR_REASON == "node(s) didn't match the requested node name"
    [registration] = NodeName().events_to_register()
    assert registration.event.action_type == ActionType.ADD and registration.hint is None
