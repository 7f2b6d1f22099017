"""LIST: kinds, selectors, paging and the metadata-only form."""

from __future__ import annotations

from typing import Any

from services.api.types.registry import by_resource

PODS_RT = by_resource("", "pods")


def seed(backend: Any, ns: str, name: str, node: str = "", **labels: str) -> None:
    backend.seed(PODS_RT, {"metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": {"nodeName": node}})


async def test_list_shape_and_namespaces(client: Any, backend: Any) -> None:
    seed(backend, "a", "p1")
    seed(backend, "b", "p2")
    doc = await (await client.get("/api/v1/namespaces/a/pods")).json()
    assert doc["kind"] == "PodList" and doc["apiVersion"] == "v1"
    assert doc["metadata"]["resourceVersion"] == str(backend.rv)
    assert [i["metadata"]["name"] for i in doc["items"]] == ["p1"]
    doc = await (await client.get("/api/v1/pods")).json()
    assert [i["metadata"]["name"] for i in doc["items"]] == ["p1", "p2"]
    doc = await (await client.get("/apis/resource.k8s.io/v1alpha3/resourceslices")).json()
    assert doc == {
        "kind": "ResourceSliceList",
        "apiVersion": "resource.k8s.io/v1alpha3",
        "metadata": {"resourceVersion": str(backend.rv)},
        "items": [],
    }


async def test_selectors(client: Any, backend: Any) -> None:
    seed(backend, "a", "p1", "n1", app="web")
    seed(backend, "a", "p2", "n2", app="web")
    seed(backend, "a", "p3", "n1", app="db")
    q = "/api/v1/pods?labelSelector=app%3Dweb&fieldSelector=spec.nodeName%3Dn1"
    doc = await (await client.get(q)).json()
    assert [i["metadata"]["name"] for i in doc["items"]] == ["p1"]
    doc = await (await client.get("/api/v1/pods?labelSelector=app%20notin%20(web)")).json()
    assert [i["metadata"]["name"] for i in doc["items"]] == ["p3"]


async def test_limit_and_continue(client: Any, backend: Any) -> None:
    for i in range(5):
        seed(backend, "a", f"p{i}")
    doc = await (await client.get("/api/v1/namespaces/a/pods?limit=2")).json()
    assert [i["metadata"]["name"] for i in doc["items"]] == ["p0", "p1"]
    assert doc["metadata"]["remainingItemCount"] == 3
    token = doc["metadata"]["continue"]
    doc = await (await client.get(f"/api/v1/namespaces/a/pods?limit=2&continue={token}")).json()
    assert [i["metadata"]["name"] for i in doc["items"]] == ["p2", "p3"]
    doc = await (await client.get(f"/api/v1/namespaces/a/pods?limit=2&continue={doc['metadata']['continue']}")).json()
    assert [i["metadata"]["name"] for i in doc["items"]] == ["p4"] and "continue" not in doc["metadata"]


async def test_partial_object_metadata_list(client: Any, backend: Any) -> None:
    seed(backend, "a", "p1")
    accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
    doc = await (await client.get("/api/v1/pods", headers={"Accept": accept})).json()
    assert doc["kind"] == "PartialObjectMetadataList"
    assert doc["items"][0] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": doc["items"][0]["metadata"],
    }
    assert "spec" not in doc["items"][0]


async def test_send_initial_events_forbidden_for_list(client: Any) -> None:
    r = await client.get("/api/v1/pods?sendInitialEvents=true")
    assert r.status == 422


async def test_pretty(client: Any, backend: Any) -> None:
    seed(backend, "a", "p1")
    text = await (await client.get("/api/v1/namespaces/a/pods/p1?pretty=true")).text()
    assert text.startswith('{\n  "')
    text = await (await client.get("/api/v1/namespaces/a/pods/p1")).text()
    assert "\n" not in text


async def test_list_options_that_do_not_go_together(client: Any, backend: Any) -> None:
    """ValidateListOptions (apimachinery meta/internalversion/validation) and etcd3's continue rule, as
    kube-apiserver 1.31 answers them (oracle lrv-continue-with-resource-version-refused)."""
    for i in range(2):
        seed(backend, "a", f"p{i}")
    token = (await (await client.get("/api/v1/namespaces/a/pods?limit=1")).json())["metadata"]["continue"]
    r = await client.get(f"/api/v1/namespaces/a/pods?limit=1&continue={token}&resourceVersion=5")
    assert r.status == 400
    assert (await r.json())["message"] == "specifying resource version is not allowed when using continue"
    r = await client.get(f"/api/v1/namespaces/a/pods?limit=1&continue={token}&resourceVersionMatch=Exact")
    doc = await r.json()
    assert r.status == 422
    assert [(c["reason"], c["message"]) for c in doc["details"]["causes"]] == [
        ("FieldValueForbidden", "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"),
        ("FieldValueForbidden", "Forbidden: resourceVersionMatch is forbidden when continue is provided"),
    ]
    r = await client.get("/api/v1/namespaces/a/pods?resourceVersion=0&resourceVersionMatch=Exact")
    assert (await r.json())["details"]["causes"] == [{
        "reason": "FieldValueForbidden", "field": "resourceVersionMatch",
        "message": 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    }]
    r = await client.get("/api/v1/namespaces/a/pods?resourceVersion=0&resourceVersionMatch=Sometimes")
    assert (await r.json())["details"]["causes"] == [{
        "reason": "FieldValueNotSupported", "field": "resourceVersionMatch",
        "message": 'Unsupported value: "Sometimes": supported values: "Exact", "NotOlderThan", ""',
    }]


async def test_resource_version_match_errors_as_kube_apiserver(client: Any, backend: Any) -> None:
    """ValidateListOptions (k8s.io/apimachinery/pkg/apis/meta/internalversion/validation): reasons per error type,
    "" among the supported values, Exact with resourceVersion 0 forbidden; found by the oracle suite
    (tests/oracle/scenarios/watch.yaml, list-resource-version-match-invalid)."""
    base = "/api/v1/namespaces/a/pods"
    cases = [
        (
            "?resourceVersionMatch=NotOlderThan",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "?resourceVersion=0&resourceVersionMatch=Sometimes",
            "FieldValueNotSupported",
            'Unsupported value: "Sometimes": supported values: "Exact", "NotOlderThan", ""',
        ),
        (
            "?resourceVersion=0&resourceVersionMatch=Exact",
            "FieldValueForbidden",
            'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
    ]
    for query, reason, message in cases:
        r = await client.get(base + query)
        doc = await r.json()
        assert r.status == 422, doc
        assert doc["message"] == f'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: {message}'
        assert doc["details"]["causes"] == [{"reason": reason, "message": message, "field": "resourceVersionMatch"}]
    r = await client.get(base + "?resourceVersion=1&resourceVersionMatch=NotOlderThan&continue=abc")
    causes = (await r.json())["details"]["causes"]
    assert r.status == 422 and causes[0]["message"].endswith("resourceVersionMatch is forbidden when continue is provided")
