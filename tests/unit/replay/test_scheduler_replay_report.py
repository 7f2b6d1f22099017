"""How replay --scheduler prints its report: a line per difference, a summary, or one JSON document."""

from __future__ import annotations

from services.replay.scheduler_diff import AttemptView, RecordedAttempt
from services.replay.scheduler_report import (
    Comparison,
    NotReplayed,
    Report,
    describe,
    difference_line,
    rejections_text,
    render_json,
    render_text,
    summary_line,
)

T0 = 1_795_953_600_250  # 2026-11-29T12:00:00.250Z
RECORDED = AttemptView("scheduled", "node-1", {"default/gpu": ("gpu=gpu.example.com/node-1/gpu-0",)})
REPLAYED = AttemptView(
    "unschedulable", rejections={"node-1": "DynamicResources", "node-2": "DynamicResources"}, message="0/2 nodes"
)


def attempt(*, exact: bool = True) -> RecordedAttempt:
    record = {"pod": "default/train", "uid": "u-1", "attempt": 2, "cycle": 7}
    return RecordedAttempt(41, record, 23, T0, exact=exact)


def test_describe_names_node_and_devices_or_the_rejecting_plugins() -> None:
    assert describe(RECORDED) == "scheduled on node-1 [claim default/gpu: gpu=gpu.example.com/node-1/gpu-0]"
    assert describe(AttemptView("scheduled", "node-3")) == "scheduled on node-3"
    assert describe(REPLAYED) == "unschedulable (DynamicResources on node-1, node-2)"
    assert describe(AttemptView("error", message="boom")) == "error (boom)"


def test_rejections_are_grouped_by_plugin_largest_group_first_and_shortened() -> None:
    rejections = {f"node-{i}": "DynamicResources" for i in range(1, 8)} | {"node-9": "NodeResourcesFit"}
    assert rejections_text(rejections) == (
        "DynamicResources on node-1, node-2, node-3, node-4, node-5 and 2 more; NodeResourcesFit on node-9"
    )


def test_a_difference_line_names_pod_attempt_point_both_sides_and_the_aspects() -> None:
    line = difference_line(Comparison(attempt(), RECORDED, REPLAYED, ("result", "node")))
    assert line == (
        "default/train attempt 2 (cycle 7, at 22): recorded scheduled on node-1 "
        "[claim default/gpu: gpu=gpu.example.com/node-1/gpu-0]; replayed unschedulable "
        "(DynamicResources on node-1, node-2) — result, node differ"
    )
    single = difference_line(Comparison(attempt(exact=False), RECORDED, RECORDED, ("allocation",)))
    assert "(cycle 7, at 22, estimated from its time)" in single
    assert single.endswith("— allocation differs")


def report() -> Report:
    same = Comparison(attempt(), RECORDED, RECORDED, ())
    different = Comparison(attempt(), RECORDED, REPLAYED, ("result",))
    return Report([same, different, same], [NotReplayed(attempt(), "pod version 9 is not in the objects log")])


def test_the_text_report_lists_differences_then_what_was_not_replayed_then_the_summary() -> None:
    lines = render_text(report()).splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("default/train attempt 2 (cycle 7, at 22): recorded scheduled")
    assert lines[1] == "default/train attempt 2 (cycle 7, at 22): not replayed: pod version 9 is not in the objects log"
    assert lines[2] == "replay-scheduler: attempts=3 same=2 different=1 not-replayed=1"


def test_the_summary_alone_when_everything_was_replayed_alike() -> None:
    only_same = Report([Comparison(attempt(), RECORDED, RECORDED, ())])
    assert summary_line(only_same) == "replay-scheduler: attempts=1 same=1 different=0"
    assert render_text(Report()) == "replay-scheduler: attempts=0 same=0 different=0\n"


def test_the_json_report_carries_counts_and_each_difference() -> None:
    doc = render_json(report())
    assert (doc["attempts"], doc["same"], doc["different"], doc["notReplayed"]) == (3, 2, 1, 1)
    (difference,) = doc["differences"]
    assert difference == {
        "pod": "default/train",
        "uid": "u-1",
        "attempt": 2,
        "cycle": 7,
        "time": "2026-11-29T12:00:00.250Z",
        "resourceVersion": "22",
        "exact": True,
        "decisionOffset": 41,
        "differ": ["result"],
        "recorded": {
            "result": "scheduled",
            "node": "node-1",
            "allocation": {"default/gpu": ["gpu=gpu.example.com/node-1/gpu-0"]},
        },
        "replayed": {
            "result": "unschedulable",
            "rejections": {"node-1": "DynamicResources", "node-2": "DynamicResources"},
            "message": "0/2 nodes",
        },
    }
    assert doc["notReplayedAttempts"][0]["reason"] == "pod version 9 is not in the objects log"
