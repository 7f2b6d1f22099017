"""The one fold of ``objects`` records (informer and replay use it): read a record, apply the change."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from services.bus.port import Record
from services.runtime.log_fold import MalformedRecord, ObjectChange, Tables, fold, read_change
from topics.envelope import EventType, encode_event, object_key

RG = "resource.k8s.io"


def pod(name: str, *, v: str = "", rv: str = "999") -> dict[str, Any]:
    labels = {"v": v} if v else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv,
                                                            "labels": labels}}  # fmt: skip


def rec(offset: int, type_: EventType | None, name: str = "a", *, v: str = "", resource: str = "pods") -> Record:
    key = object_key("" if resource == "pods" else RG, resource, "ns", name).encode()
    value = None if type_ is None else encode_event(type_, pod(name, v=v), request_id="req-1")
    return Record("objects", 0, offset, 1000 + offset, key, value)


def raw(offset: int, key: bytes | None, value: bytes) -> Record:
    return Record("objects", 0, offset, 1000 + offset, key, value)


def test_a_record_reads_as_its_change_with_the_offset_as_resource_version() -> None:
    change = read_change(rec(7, "MODIFIED", v="2"))
    assert change is not None
    assert change[:6] == ("MODIFIED", "core/pods/ns/a", "", "pods", "ns", "a")
    assert change.obj["metadata"]["resourceVersion"] == "7", "stamped from the offset, never from the payload"
    assert change.request_id == "req-1"
    assert not change.deleted


def test_a_tombstone_changes_nothing() -> None:
    assert read_change(rec(3, None)) is None


def test_kinds_not_asked_for_are_not_decoded() -> None:
    undecodable = raw(4, object_key(RG, "resourceclaims", "ns", "c").encode(), b"not json")
    assert read_change(undecodable, kinds={("", "pods")}) is None
    with pytest.raises(MalformedRecord):
        read_change(undecodable, kinds={(RG, "resourceclaims")})


@pytest.mark.parametrize(
    "record",
    [
        raw(1, b"\xff\xfe", encode_event("ADDED", pod("a"))),
        raw(1, b"core/pods/too-short", encode_event("ADDED", pod("a"))),
        raw(1, None, encode_event("ADDED", pod("a"))),
        raw(1, b"core/pods/ns/a", b"{not json"),
        raw(1, b"core/pods/ns/a", orjson.dumps({"v": 1, "type": "CHANGED", "object": pod("a")})),
        raw(1, b"core/pods/ns/a", orjson.dumps({"v": 1, "type": "ADDED", "object": {"kind": "Pod"}})),
        raw(1, b"core/pods/ns/a", orjson.dumps({"v": 1, "type": "ADDED", "object": []})),
    ],
    ids=["key not utf-8", "key too short", "no key", "value not json", "unknown type", "no metadata", "not an object"],
)
def test_a_malformed_record_raises_for_the_caller_to_count_and_skip(record: Record) -> None:
    with pytest.raises(MalformedRecord):
        read_change(record)


def test_the_fold_puts_on_added_and_modified_and_removes_on_deleted() -> None:
    tables: Tables = {}
    history = [rec(1, "ADDED", v="1"), rec(2, "MODIFIED", v="2"), rec(3, "ADDED", "b"), rec(4, "DELETED", v="2")]
    olds = []
    for record in history:
        change = read_change(record)
        assert isinstance(change, ObjectChange)
        old = fold(tables, change)
        olds.append(None if old is None else old["metadata"]["resourceVersion"])
    assert olds == [None, "1", None, "2"], "fold returns the object a change replaced or removed"
    assert {k: o["metadata"]["resourceVersion"] for k, o in tables[("", "pods")].items()} == {("ns", "b"): "3"}


def test_deleting_what_is_not_there_is_a_no_op() -> None:
    tables: Tables = {}
    change = read_change(rec(1, "DELETED"))
    assert change is not None
    assert fold(tables, change) is None
    assert tables == {("", "pods"): {}}
