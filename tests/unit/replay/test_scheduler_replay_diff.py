"""What replay --scheduler compares: views of decision records, the aspects that differ, order and windows."""

from __future__ import annotations

from typing import Any

import pytest

from services.replay.scheduler_diff import (
    AttemptView,
    RecordedAttempt,
    Window,
    attempt_time_ms,
    compare,
    cycle_result,
    estimated_point,
    recorded_position,
    view,
)

T0 = 1_795_000_000_000  # ms since the epoch


def allocation(*devices: tuple[str, str], admin: bool = False) -> dict[str, Any]:
    results = [{"request": "gpu", "driver": "gpu.example.com", "pool": pool, "device": dev} for pool, dev in devices]
    if admin:
        for result in results:
            result["adminAccess"] = True
    return {"devices": {"results": results}, "nodeSelector": {"nodeSelectorTerms": []}}


def scheduled(
    node: str = "node-1", *, passed_over: dict[str, str] | None = None, **claims: dict[str, Any]
) -> dict[str, Any]:
    record: dict[str, Any] = {"pod": "default/a", "uid": "u-a", "attempt": 1, "result": "scheduled", "node": node}
    record["rejected"] = grouped(passed_over or {})
    if claims:
        allocations = {f"default/{name}": alloc for name, alloc in claims.items()}
        record["plugins"] = {"DynamicResources": {"node": node, "allocations": allocations}}
    return record


def grouped(plugin_of: dict[str, str]) -> list[dict[str, Any]]:
    """The record form: one group per plugin (one reason each here)."""
    return [
        {
            "plugin": p,
            "code": "Unschedulable",
            "reasons": ["x"],
            "nodes": sorted(n for n in plugin_of if plugin_of[n] == p),
        }
        for p in sorted(set(plugin_of.values()))
    ]


def unschedulable(**rejections: str) -> dict[str, Any]:
    return {
        "pod": "default/a",
        "uid": "u-a",
        "attempt": 1,
        "result": "unschedulable",
        "message": "0/2 nodes are available",
        "rejected": grouped(rejections),
    }


def per_node(record: dict[str, Any]) -> dict[str, Any]:
    """The same record as written before rejections were grouped (one entry per node)."""
    old = {key: value for key, value in record.items() if key != "rejected"}
    old["rejections"] = {
        node: {"plugin": group["plugin"], "code": group["code"], "reasons": group["reasons"]}
        for group in record.get("rejected", [])
        for node in group["nodes"]
    }
    return old


def test_a_scheduled_record_shows_node_and_devices_per_claim() -> None:
    record = scheduled("node-2", gpu=allocation(("node-2", "gpu-1"), ("node-2", "gpu-0")))
    assert view(record) == AttemptView(
        "scheduled",
        "node-2",
        {"default/gpu": ("gpu=gpu.example.com/node-2/gpu-0", "gpu=gpu.example.com/node-2/gpu-1")},
    )


def test_admin_access_is_part_of_a_device() -> None:
    record = scheduled(gpu=allocation(("node-1", "gpu-0"), admin=True))
    assert view(record).allocation == {"default/gpu": ("gpu=gpu.example.com/node-1/gpu-0 (admin access)",)}


def test_an_unschedulable_record_shows_the_rejecting_plugin_per_node_and_the_message() -> None:
    assert view(unschedulable(**{"node-1": "DynamicResources", "node-2": "NodeResourcesFit"})) == AttemptView(
        "unschedulable",
        rejections={"node-1": "DynamicResources", "node-2": "NodeResourcesFit"},
        message="0/2 nodes are available",
    )


def test_a_failed_binding_still_scheduled_in_its_cycle() -> None:
    record = {
        **scheduled("node-1"),
        "result": "unschedulable",
        "message": "waiting for resource driver",
        "binding": {"result": "failed", "node": "node-1", "message": "waiting for resource driver"},
    }
    assert cycle_result(record) == "scheduled"
    assert view(record) == AttemptView("scheduled", "node-1")


@pytest.mark.parametrize(
    ("recorded", "replayed", "differ"),
    [
        pytest.param(scheduled("node-1"), scheduled("node-1"), (), id="same node"),
        pytest.param(scheduled("node-1"), scheduled("node-2"), ("node",), id="other node"),
        pytest.param(
            scheduled(gpu=allocation(("node-1", "gpu-0"))),
            scheduled(gpu=allocation(("node-1", "gpu-1"))),
            ("allocation",),
            id="other device",
        ),
        pytest.param(
            scheduled(gpu=allocation(("node-1", "gpu-0"), ("node-1", "gpu-1"))),
            scheduled(gpu=allocation(("node-1", "gpu-1"), ("node-1", "gpu-0"))),
            (),
            id="same devices in another order",
        ),
        pytest.param(scheduled(gpu=allocation(("node-1", "gpu-0"))), scheduled(), ("allocation",), id="no allocation"),
        pytest.param(
            scheduled(gpu=allocation(("node-1", "gpu-0"))),
            unschedulable(**{"node-1": "DynamicResources"}),
            ("result", "node", "allocation", "rejections"),
            id="scheduled against unschedulable",
        ),
        pytest.param(
            unschedulable(**{"node-1": "DynamicResources"}),
            unschedulable(**{"node-1": "NodeResourcesFit"}),
            ("rejections",),
            id="another plugin rejects",
        ),
        pytest.param(
            unschedulable(**{"node-1": "DynamicResources"}),
            unschedulable(**{"node-1": "DynamicResources", "node-2": "DynamicResources"}),
            ("rejections",),
            id="another node rejected",
        ),
        pytest.param(
            unschedulable(**{"node-1": "DynamicResources"}),
            {**unschedulable(**{"node-1": "DynamicResources"}), "message": "worded otherwise"},
            (),
            id="messages are not compared",
        ),
        pytest.param(
            scheduled("node-2", passed_over={"node-1": "DynamicResources"}),
            scheduled("node-2", passed_over={"node-1": "NodeResourcesFit"}),
            ("rejections",),
            id="a node passed over for another reason",
        ),
        pytest.param(
            per_node(unschedulable(**{"node-1": "DynamicResources", "node-2": "NodeResourcesFit"})),
            unschedulable(**{"node-1": "DynamicResources", "node-2": "NodeResourcesFit"}),
            (),
            id="a record with one entry per node against the grouped form",
        ),
        pytest.param(
            {key: value for key, value in scheduled("node-2").items() if key != "rejected"},
            scheduled("node-2", passed_over={"node-1": "DynamicResources"}),
            (),
            id="a scheduled record made before they listed passed-over nodes",
        ),
        pytest.param(
            {"pod": "default/a", "result": "error", "message": "boom"},
            {"pod": "default/a", "result": "skipped"},
            ("result",),
            id="error against skipped",
        ),
    ],
)
def test_compare(recorded: dict[str, Any], replayed: dict[str, Any], differ: tuple[str, ...]) -> None:
    assert compare(view(recorded), view(replayed)) == differ


def test_attempt_time_comes_from_the_record_else_from_the_log() -> None:
    assert attempt_time_ms({"time": "2026-11-29T12:00:00.250Z"}, 7) == 1_795_953_600_250
    assert attempt_time_ms({}, 7) == 7
    assert attempt_time_ms({"time": "not a time"}, 7) == 7


def test_recorded_position_is_a_non_negative_integer() -> None:
    assert recorded_position({"objectsPosition": 12}) == 12
    assert recorded_position({}) is None
    assert recorded_position({"objectsPosition": "12"}) is None
    assert recorded_position({"objectsPosition": True}) is None
    assert recorded_position({"objectsPosition": -1}) is None


def test_an_estimated_point_lies_after_the_pod_version_the_attempt_saw() -> None:
    assert estimated_point({"podResourceVersion": "10"}, 30) == 30
    assert estimated_point({"podResourceVersion": "40"}, 30) == 41
    assert estimated_point({}, 30) == 30


def attempt(
    point: int, *, time_ms: int = T0, cycle: int = 1, offset: int = 0, pod: str = "default/a"
) -> RecordedAttempt:
    return RecordedAttempt(offset, {"pod": pod, "cycle": cycle}, point, time_ms)


def test_attempts_sort_by_point_then_time_then_cycle() -> None:
    # Decisions of bound pods are written after binding, so log order is not attempt order;
    # a restarted scheduler counts cycles from 1 again, later in time.
    racer = attempt(23, cycle=3, offset=5)
    loser = attempt(23, cycle=4, offset=2)
    restarted = attempt(23, time_ms=T0 + 60_000, cycle=1, offset=6)
    earlier = attempt(14, cycle=9, offset=7)
    ordered = sorted([restarted, loser, racer, earlier], key=RecordedAttempt.sort_key)
    assert ordered == [earlier, racer, loser, restarted]


def test_an_attempt_saw_the_state_just_below_its_point() -> None:
    assert attempt(23).seen == 22


@pytest.mark.parametrize(
    ("window", "selected"),
    [
        (Window(), True),
        (Window(start=("offset", 22)), True),
        (Window(start=("offset", 23)), False),
        (Window(until=("offset", 22)), True),
        (Window(until=("offset", 21)), False),
        (Window(start=("time", T0)), True),
        (Window(start=("time", T0 + 1)), False),
        (Window(until=("time", T0)), True),
        (Window(until=("time", T0 - 1)), False),
        (Window(namespace="default"), True),
        (Window(namespace="other"), False),
        (Window(namespace="default", name="a"), True),
        (Window(name="b"), False),
    ],
)
def test_window(window: Window, selected: bool) -> None:
    assert window.contains(attempt(23)) is selected
