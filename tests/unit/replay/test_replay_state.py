"""The point-in-time fold: records in, the objects as they were out (no broker)."""

from __future__ import annotations

from typing import Any

import pytest

from services.bus.port import Record
from services.replay.state import ObjectState, Stop
from topics.envelope import EventType, encode_event, object_key

RG = "resource.k8s.io"


def obj(name: str, namespace: str = "ns", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "999"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def rec(offset: int, type_: EventType | None, name: str, *, ts: int | None = None, group: str = "",
        resource: str = "pods", namespace: str = "ns", **labels: str) -> Record:  # fmt: skip
    key = object_key(group, resource, namespace, name).encode()
    value = None if type_ is None else encode_event(type_, obj(name, namespace, **labels))
    return Record("objects", 0, offset, ts if ts is not None else 1000 + offset, key, value)


# a: created at 1, updated at 3, deleted at 5 (tombstone at 6); b: created at 4; a claim at 2.
HISTORY = [
    rec(1, "ADDED", "a", v="1"),
    rec(2, "ADDED", "gpu", group=RG, resource="resourceclaims"),
    rec(3, "MODIFIED", "a", v="2"),
    rec(4, "ADDED", "b"),
    rec(5, "DELETED", "a", v="2"),
    rec(6, None, "a"),
]


def pods(state: ObjectState) -> dict[str, tuple[str, str | None]]:
    """name -> (resourceVersion, label v)."""
    return {
        o["metadata"]["name"]: (o["metadata"]["resourceVersion"], (o["metadata"].get("labels") or {}).get("v"))
        for o in state.list("", "pods")
    }


@pytest.mark.parametrize(
    ("stop", "expected", "last"),
    [
        (Stop(offset=0), {}, None),
        (Stop(offset=1), {"a": ("1", "1")}, 1),
        (Stop(offset=2), {"a": ("1", "1")}, 2),  # the claim's record counts for the resourceVersion
        (Stop(offset=3), {"a": ("3", "2")}, 3),
        (Stop(offset=4), {"a": ("3", "2"), "b": ("4", None)}, 4),
        (Stop(offset=5), {"b": ("4", None)}, 5),
        (Stop(offset=6), {"b": ("4", None)}, 6),
        (Stop(offset=100), {"b": ("4", None)}, 6),
        (Stop(), {"b": ("4", None)}, 6),
        (Stop(time_ms=1002), {"a": ("1", "1")}, 2),
        (Stop(time_ms=1003), {"a": ("3", "2")}, 3),
        (Stop(time_ms=999), {}, None),
        (Stop(offset=4, time_ms=1003), {"a": ("3", "2")}, 3),  # the earlier of the two
    ],
)
def test_state_at_a_point(stop: Stop, expected: dict[str, tuple[str, str | None]], last: int | None) -> None:
    state = ObjectState()
    state.fold(HISTORY, stop)
    assert pods(state) == expected
    assert state.last_offset == last


def test_fold_reports_when_it_passed_the_point() -> None:
    state = ObjectState()
    assert state.fold(HISTORY[:2], Stop(offset=3)) is True  # not there yet: read on
    assert state.fold(HISTORY[2:], Stop(offset=3)) is False
    assert state.records == 3


def test_resource_version_is_the_offset_not_the_payload() -> None:
    state = ObjectState()
    state.fold(HISTORY[:1])
    a = state.get("", "pods", "ns", "a")
    assert a is not None and a["metadata"]["resourceVersion"] == "1"


def test_kinds_limit_what_is_kept() -> None:
    state = ObjectState(kinds={(RG, "resourceclaims")})
    state.fold(HISTORY)
    assert state.list("", "pods") == []
    assert [o["metadata"]["name"] for o in state.list(RG, "resourceclaims")] == ["gpu"]
    assert state.kinds() == [(RG, "resourceclaims")]
    assert state.last_offset == 6


def test_list_by_namespace_sorted() -> None:
    state = ObjectState()
    state.fold([rec(1, "ADDED", "z", namespace="one"), rec(2, "ADDED", "b", namespace="two"),
                rec(3, "ADDED", "a", namespace="one")])  # fmt: skip
    assert [o["metadata"]["name"] for o in state.list("", "pods", "one")] == ["a", "z"]
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in state.list("", "pods")] == [
        ("one", "a"),
        ("one", "z"),
        ("two", "b"),
    ]


def test_malformed_records_are_skipped_and_reported() -> None:
    state = ObjectState()
    bad_value = Record("objects", 0, 2, 1002, b"core/pods/ns/x", b"{not json")
    bad_key = Record("objects", 0, 3, 1003, b"no-slashes", encode_event("ADDED", obj("y")))
    state.fold([rec(1, "ADDED", "a"), bad_value, bad_key, rec(4, "ADDED", "b")])
    assert sorted(pods(state)) == ["a", "b"]
    assert [s.offset for s in state.skipped] == [2, 3]
