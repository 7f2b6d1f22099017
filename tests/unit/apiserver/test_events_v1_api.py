"""events.k8s.io/v1 at the REST edge: discovery, OpenAPI, field selectors and tables of the view of core Events.

Expectations are kube-apiserver 1.31's: ``GET /apis/events.k8s.io/v1`` lists
``events`` (shortName ``ev``, every verb but none of subresources), the group's
field labels are those of pkg/apis/events/v1/conversion.go
(AddFieldLabelConversionsForEvent) and both groups print with one printer.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from services.api.machinery.conversions.events_v1 import core_to_events_v1
from services.api.machinery.selectors import SelectorError, object_filter
from services.api.types import registry
from services.apiserver import tables

VIEW = registry.by_resource("events.k8s.io", "events")
CORE_EVENTS = registry.by_resource("", "events")
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

STORED: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "web-0.scheduled", "namespace": "default", "creationTimestamp": "2026-12-02T08:00:00Z"},
    "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web-0", "uid": "u-1", "apiVersion": "v1"},
    "reason": "Scheduled",
    "message": "Successfully assigned default/web-0 to node-1",
    "type": "Normal",
    "eventTime": "2026-12-02T08:00:00.000000Z",
    "reportingComponent": "default-scheduler",
    "reportingInstance": "sched-1",
    "action": "Binding",
    "source": {},
}


async def test_api_resource_list_and_group(client: Any) -> None:
    doc = await (await client.get("/apis/events.k8s.io/v1")).json()
    assert doc["groupVersion"] == "events.k8s.io/v1"
    (events,) = doc["resources"]
    assert (events["name"], events["singularName"], events["kind"], events["namespaced"]) == (
        "events",
        "event",
        "Event",
        True,
    )
    assert events["verbs"] == VERBS and events["shortNames"] == ["ev"]
    core = {r["name"]: r for r in (await (await client.get("/api/v1")).json())["resources"]}
    # One storage: the same storage version hash as core's Events.
    assert events["storageVersionHash"] == core["events"]["storageVersionHash"]
    group = await (await client.get("/apis/events.k8s.io")).json()
    assert group["preferredVersion"] == {"groupVersion": "events.k8s.io/v1", "version": "v1"}


async def test_aggregated_discovery_lists_the_group(client: Any) -> None:
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    doc = await (await client.get("/apis", headers={"Accept": accept})).json()
    (group,) = [g for g in doc["items"] if g["metadata"]["name"] == "events.k8s.io"]
    (version,) = group["versions"]
    (events,) = version["resources"]
    assert events["responseKind"] == {"group": "events.k8s.io", "version": "v1", "kind": "Event"}
    assert events["verbs"] == VERBS and events["shortNames"] == ["ev"] and events["scope"] == "Namespaced"


async def test_openapi_v3_has_the_group_with_patch_field_validation(client: Any) -> None:
    index = await (await client.get("/openapi/v3")).json()
    assert "apis/events.k8s.io/v1" in index["paths"]
    doc = orjson.loads(await (await client.get("/openapi/v3/apis/events.k8s.io/v1")).read())
    item = doc["paths"]["/apis/events.k8s.io/v1/namespaces/{namespace}/events/{name}"]
    assert {"get", "put", "patch", "delete"} <= set(item)
    assert "fieldValidation" in [p.get("name") for p in item["patch"]["parameters"]]
    assert "io.k8s.api.events.v1.Event" in doc["components"]["schemas"]


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("regarding.name=web-0", True),
        ("regarding.kind=Pod,regarding.namespace=default", True),
        ("regarding.uid=u-2", False),
        ("regarding.apiVersion=v1", True),
        ("reportingController=default-scheduler", True),
        ("reportingController!=default-scheduler", False),
        ("reason=Scheduled,type=Normal", True),
        ("metadata.name=web-0.scheduled", True),
        ("metadata.namespace=kube-system", False),
    ],
)
def test_field_selectors_select_stored_core_events(selector: str, matches: bool) -> None:
    assert VIEW is not None
    match = object_filter(VIEW, field_selector=selector)
    assert match is not None and match(STORED) is matches


@pytest.mark.parametrize("label", ["involvedObject.name", "source", "reportingComponent", "note"])
def test_core_only_field_labels_are_refused(label: str) -> None:
    assert VIEW is not None
    with pytest.raises(SelectorError, match=f"^field label not supported: {label}$"):
        object_filter(VIEW, field_selector=f"{label}=x")


def test_both_groups_print_the_same_row() -> None:
    assert VIEW is not None and CORE_EVENTS is not None
    now = 1796198460.0  # 2026-12-02T08:01:00Z
    core = tables.table(CORE_EVENTS, [STORED], now=now)
    view = tables.table(VIEW, [core_to_events_v1(STORED)], now=now)
    assert [c["name"] for c in view["columnDefinitions"]] == [c["name"] for c in core["columnDefinitions"]]
    assert view["rows"][0]["cells"] == core["rows"][0]["cells"]
    assert view["rows"][0]["cells"][1:4] == ["Normal", "Scheduled", "pod/web-0"]
