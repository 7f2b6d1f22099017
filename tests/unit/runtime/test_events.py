"""The event recorder's Events and their aggregation."""

from __future__ import annotations

from datetime import UTC, datetime

from services.runtime.events import EventRecorder, make_event

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "demo", "uid": "u1"}}


def test_make_event_has_kubernetes_shape() -> None:
    event = make_event(
        POD,
        type_="Warning",
        reason="FailedScheduling",
        message="0/1 nodes are available",
        component="default-scheduler",
        now=datetime(2026, 11, 29, 10, 0, tzinfo=UTC),
    )
    assert event["involvedObject"] == {
        "kind": "Pod",
        "name": "web",
        "apiVersion": "v1",
        "namespace": "demo",
        "uid": "u1",
    }
    assert event["metadata"]["namespace"] == "demo"
    assert event["metadata"]["name"].startswith("web.")
    assert (event["count"], event["firstTimestamp"], event["lastTimestamp"]) == (
        1,
        "2026-11-29T10:00:00Z",
        "2026-11-29T10:00:00Z",
    )
    assert event["source"] == {"component": "default-scheduler"}


def test_repeats_are_aggregated_into_one_event() -> None:
    recorder = EventRecorder(bus=None, component="default-scheduler")  # type: ignore[arg-type]
    first = recorder.build(POD, "Warning", "FailedScheduling", "m")
    second = recorder.build(POD, "Warning", "FailedScheduling", "m")
    other = recorder.build(POD, "Warning", "FailedScheduling", "different")
    assert second["metadata"]["name"] == first["metadata"]["name"]
    assert second["count"] == 2 and second["firstTimestamp"] == first["firstTimestamp"]
    assert other["metadata"]["name"] != first["metadata"]["name"] and other["count"] == 1
