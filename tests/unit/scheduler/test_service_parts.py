"""The pure parts of the scheduler service: messages, conditions, decision records, explain's text."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from services.scheduler import decisions, rejections
from services.scheduler.explain import render_pod
from services.scheduler.pod_condition import condition_patch
from services.scheduler.service import NOTE_LENGTH_LIMIT, between_cycles, truncate_message, visible_pod
from services.scheduler.status import Code, new_status
from topics.envelope import MalformedRecord

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_event_messages_are_cut_at_kubes_note_length_limit() -> None:
    assert truncate_message("short") == "short"
    exact = "x" * NOTE_LENGTH_LIMIT
    assert truncate_message(exact) == exact
    cut = truncate_message("y" * (NOTE_LENGTH_LIMIT + 1))
    assert len(cut) == NOTE_LENGTH_LIMIT and cut.endswith("y ...")


@pytest.mark.parametrize(
    ("phase", "visible"), [("Pending", True), ("Running", True), ("Succeeded", False), ("Failed", False)]
)
def test_terminal_pods_are_invisible_to_the_scheduler(phase: str, visible: bool) -> None:
    pod = {"metadata": {"name": "p"}, "status": {"phase": phase}}
    assert (visible_pod(pod) is pod) is visible


def test_condition_is_written_only_when_reason_or_message_change() -> None:
    pod: dict = {"status": {}}
    patch = condition_patch(pod, reason="Unschedulable", message="0/1 nodes are available: x.", now=NOW)
    assert patch == {
        "status": {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/1 nodes are available: x.",
                    "lastTransitionTime": "2026-01-02T03:04:05Z",
                }
            ]
        }
    }
    written = {"status": {"conditions": patch["status"]["conditions"]}}
    assert condition_patch(written, reason="Unschedulable", message="0/1 nodes are available: x.", now=NOW) is None
    later = datetime(2026, 1, 2, 3, 9, 0, tzinfo=UTC)
    changed = condition_patch(written, reason="Unschedulable", message="0/1 nodes are available: y.", now=later)
    assert changed is not None
    # Still False: the transition time stays that of the first failure.
    assert changed["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-02T03:04:05Z"


def test_decision_records_round_trip_and_reject_garbage() -> None:
    record = decisions.with_context(
        {"pod": "default/p", "uid": "u", "attempt": 1, "result": "scheduled", "node": "n1"},
        started=NOW,
        pod_resource_version="42",
        cycle=7,
    )
    record = decisions.with_binding(record, node="n1", bound=True)
    out = decisions.decision_record(record)
    assert out.topic == "decisions" and out.key == b"default/p"
    assert decisions.decode_decision(out.value) == {
        "pod": "default/p",
        "uid": "u",
        "attempt": 1,
        "result": "scheduled",
        "node": "n1",
        "time": "2026-01-02T03:04:05.000Z",
        "podResourceVersion": "42",
        "cycle": 7,
        "binding": {"result": "bound", "node": "n1"},
    }
    for bad in (None, b"nope", b"[]", b'{"v": 99, "pod": "a", "result": "x"}', b'{"v": 1, "result": "x"}'):
        with pytest.raises(MalformedRecord):
            decisions.decode_decision(bad)


def test_a_failed_binding_is_the_attempts_message() -> None:
    failed = decisions.with_binding({"result": "scheduled"}, node="n1", bound=False, message="conflict")
    assert failed["binding"] == {"result": "failed", "node": "n1", "message": "conflict"}
    assert failed["message"] == "conflict"


UNSCHEDULABLE = {
    "pod": "default/train",
    "uid": "u1",
    "attempt": 1,
    "time": "2026-01-02T03:04:05.000Z",
    "result": "unschedulable",
    "message": "0/3 nodes are available: 1 Insufficient cpu, 2 cannot allocate all claims. still not schedulable",
    "rejected": [
        {
            "plugin": "DynamicResources",
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["cannot allocate all claims"],
            "nodes": ["n2", "n3"],
        },
        {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"], "nodes": ["n1"]},
    ],
}
# The same attempt as records made before the grouped form had it: one entry per node.
UNSCHEDULABLE_PER_NODE = {
    **{k: v for k, v in UNSCHEDULABLE.items() if k != "rejected"},
    "rejections": {
        "n1": {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]},
        "n2": {
            "plugin": "DynamicResources",
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["cannot allocate all claims"],
        },
        "n3": {
            "plugin": "DynamicResources",
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["cannot allocate all claims"],
        },
    },
}
SCHEDULED = {
    "pod": "default/train",
    "uid": "u1",
    "attempt": 2,
    "time": "2026-01-02T03:04:07.000Z",
    "result": "scheduled",
    "node": "n2",
    "evaluatedNodes": 3,
    "feasibleNodes": 2,
    "rejected": [
        {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"], "nodes": ["n1"]}
    ],
    "scores": {"n2": 300, "n3": 250},
    "plugins": {
        "DynamicResources": {
            "node": "n2",
            "allocations": {
                "default/train-gpu": {
                    "devices": {
                        "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n2", "device": "gpu-1"}]
                    }
                }
            },
        }
    },
    "binding": {"result": "bound", "node": "n2"},
}


def test_rejections_are_grouped_by_plugin_and_reason_largest_first_in_either_form() -> None:
    expected = [
        ("DynamicResources", "UnschedulableAndUnresolvable", "cannot allocate all claims", ["n2", "n3"]),
        ("NodeResourcesFit", "Unschedulable", "Insufficient cpu", ["n1"]),
    ]
    assert rejections.groups(UNSCHEDULABLE) == expected
    assert rejections.groups(UNSCHEDULABLE_PER_NODE) == expected
    assert rejections.by_node(UNSCHEDULABLE) == rejections.by_node(UNSCHEDULABLE_PER_NODE)
    assert rejections.by_node({"result": "scheduled"}) == {} and not rejections.listed({"result": "scheduled"})


def test_a_cycles_statuses_become_one_group_per_verdict() -> None:
    full = new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims").with_plugin("DynamicResources")
    same_again = new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims").with_plugin(
        "DynamicResources"
    )
    cpu = new_status(Code.UNSCHEDULABLE, "Insufficient cpu").with_plugin("NodeResourcesFit")
    encoded = rejections.encode({"n4": full, "n1": cpu, "n2": full, "n3": same_again})
    assert encoded == [
        {
            "plugin": "DynamicResources",
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["cannot allocate all claims"],
            "nodes": ["n2", "n3", "n4"],
        },
        {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"], "nodes": ["n1"]},
    ]
    assert rejections.encode({}) == []


def test_explain_renders_every_attempt_for_a_person() -> None:
    assert render_pod("default/train", [UNSCHEDULABLE, SCHEDULED]) == (
        "Pod default/train: 2 attempt(s)\n"
        "\n"
        "Attempt 1  2026-01-02T03:04:05.000Z  Unschedulable\n"
        "  message: 0/3 nodes are available: 1 Insufficient cpu, 2 cannot allocate all claims. still not schedulable\n"
        "  rejected on 3 node(s):\n"
        "    DynamicResources (UnschedulableAndUnresolvable): cannot allocate all claims\n"
        "      2 node(s): n2, n3\n"
        "    NodeResourcesFit (Unschedulable): Insufficient cpu\n"
        "      1 node(s): n1\n"
        "\n"
        "Attempt 2  2026-01-02T03:04:07.000Z  Scheduled → n2 (bound)\n"
        "  rejected on 1 node(s):\n"
        "    NodeResourcesFit (Unschedulable): Insufficient cpu\n"
        "      1 node(s): n1\n"
        "  nodes: 3 evaluated, 2 feasible\n"
        "  score of n2: 300 (best: n2=300, n3=250)\n"
        "  allocation:\n"
        "    claim default/train-gpu:\n"
        "      request gpu: gpu.example.com/n2/gpu-1\n"
    )


def test_explain_shortens_long_node_lists_unless_asked() -> None:
    many = [{"plugin": "P", "code": "Unschedulable", "reasons": ["r"], "nodes": [f"node-{i:02d}" for i in range(25)]}]
    record = {**UNSCHEDULABLE, "rejected": many}
    assert "node-09, … and 15 more" in render_pod("default/train", [record])
    assert "node-24" in render_pod("default/train", [record], max_nodes=None)
    assert render_pod("default/x", []) == "No scheduling attempts recorded for pod default/x.\n"


async def test_between_two_cycles_a_binding_task_and_the_send_it_starts_both_run() -> None:
    """The binding task of the cycle just done gets to its requests' send, and the bus's append task that
    send starts runs too, before the scheduling loop goes on to the next cycle."""
    ran: list[str] = []
    started: list[asyncio.Task[None]] = []

    async def append() -> None:  # as the embedded bus's drain task
        ran.append("append")

    async def binding() -> None:  # as a binding task: its first step sends, which starts the append task
        ran.append("binding")
        started.append(asyncio.create_task(append()))
        await asyncio.Event().wait()  # then waits for the committer's reply

    task = asyncio.create_task(binding())
    await between_cycles()
    assert ran == ["binding", "append"]
    task.cancel()


def test_an_attempts_start_is_read_from_its_decision_record() -> None:
    # What `with_context` writes (`rfc3339_ms`) reads back to the same millisecond.
    at = datetime(2026, 12, 3, 13, 0, 0, 123000, tzinfo=UTC)
    record = decisions.with_context({}, started=at, pod_resource_version="1", cycle=1)
    assert record["time"] == "2026-12-03T13:00:00.123Z"
    assert decisions.attempt_started_ms(record) == round(at.timestamp() * 1000)


def test_a_decision_without_a_readable_time_has_no_start() -> None:
    assert decisions.attempt_started_ms({}) is None
    assert decisions.attempt_started_ms({"time": "yesterday"}) is None
    assert decisions.attempt_started_ms({"time": 17}) is None
