"""events.k8s.io/v1 ↔ core/v1 Event: every renamed field, both ways, and round trips.

The mapping is Kubernetes' (pkg/apis/events/v1/conversion.go with
pkg/apis/core/v1/conversion.go): an Event stored once is shown by both groups.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.api.machinery import conversion
from services.api.machinery.conversions.events_v1 import core_to_events_v1, events_v1_to_core
from services.api.types import registry

REF = {"kind": "Pod", "namespace": "default", "name": "web-0", "uid": "u-1", "apiVersion": "v1"}
SOURCE = {"component": "kubelet", "host": "node-1"}
T1, T2 = "2026-12-02T08:00:00Z", "2026-12-02T08:01:00Z"
MICRO = "2026-12-02T08:00:00.123456Z"

# (core/v1 field, value, events.k8s.io/v1 field)
MAPPED = [
    ("involvedObject", REF, "regarding"),
    ("message", "pulled", "note"),
    ("reportingComponent", "kubelet", "reportingController"),
    ("source", SOURCE, "deprecatedSource"),
    ("firstTimestamp", T1, "deprecatedFirstTimestamp"),
    ("lastTimestamp", T2, "deprecatedLastTimestamp"),
    ("count", 3, "deprecatedCount"),
    # same name in both groups
    ("reason", "Pulled", "reason"),
    ("type", "Normal", "type"),
    ("action", "Pulling", "action"),
    ("reportingInstance", "node-1", "reportingInstance"),
    ("eventTime", MICRO, "eventTime"),
    ("series", {"count": 2, "lastObservedTime": MICRO}, "series"),
    ("related", {"kind": "Node", "name": "node-1"}, "related"),
    ("metadata", {"name": "e", "namespace": "default"}, "metadata"),
]


@pytest.mark.parametrize(("core_field", "value", "v1_field"), MAPPED, ids=[m[0] for m in MAPPED])
def test_each_field_maps_both_ways(core_field: str, value: Any, v1_field: str) -> None:
    core = {"apiVersion": "v1", "kind": "Event", core_field: value}
    v1 = {"apiVersion": "events.k8s.io/v1", "kind": "Event", v1_field: value}
    assert core_to_events_v1(core) == v1
    assert events_v1_to_core(v1) == core


def _full_core() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", **{core: copy.deepcopy(value) for core, value, _ in MAPPED}}


@pytest.mark.parametrize(
    "obj",
    [
        _full_core(),
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "legacy"}, "involvedObject": {}, "source": {}},
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "nulls"}, "firstTimestamp": None, "eventTime": None},
    ],
    ids=["every-field", "legacy-empty-structs", "null-timestamps"],
)
def test_core_round_trip(obj: dict[str, Any]) -> None:
    before = copy.deepcopy(obj)
    assert events_v1_to_core(core_to_events_v1(obj)) == obj
    assert obj == before  # pure: the input is not changed


def test_events_v1_round_trip() -> None:
    v1 = core_to_events_v1(_full_core())
    assert core_to_events_v1(events_v1_to_core(v1)) == v1
    assert set(v1) >= {"regarding", "note", "reportingController", "deprecatedSource", "deprecatedCount"}
    assert not set(v1) & {"involvedObject", "message", "reportingComponent", "source", "count"}


def test_core_empty_strings_go_has_no_omitempty_for_are_dropped() -> None:
    # core/v1 writes reportingComponent and reportingInstance without omitempty; events.k8s.io/v1 has it.
    core = {"apiVersion": "v1", "kind": "Event", "reportingComponent": "", "reportingInstance": ""}
    assert core_to_events_v1(core) == {"apiVersion": "events.k8s.io/v1", "kind": "Event"}


def test_the_view_is_a_qualified_version_of_the_core_row() -> None:
    view = registry.by_resource("events.k8s.io", "events")
    core = registry.by_resource("", "events")
    assert view is not None and core is not None and view.view_of == ""
    assert registry.storage_of(view) is core and registry.storage_of(core) is core
    assert registry.qualified_version(view, "v1") == "events.k8s.io/v1"
    assert registry.qualified_version(core, "v1") == "v1"
    assert registry.view_versions(core) == ("events.k8s.io/v1",)
    assert registry.view_for(core, "events.k8s.io/v1") == (view, "v1")
    assert registry.view_for(core, "v1") == (core, "v1")
    assert view not in registry.STORED_RESOURCES
    stored = conversion.to_storage(core_to_events_v1(_full_core()), group="", kind="Event", version="events.k8s.io/v1")
    assert stored == _full_core()
    shown = conversion.from_storage(_full_core(), group="", kind="Event", version="events.k8s.io/v1")
    assert shown["apiVersion"] == "events.k8s.io/v1" and shown["regarding"] == REF
