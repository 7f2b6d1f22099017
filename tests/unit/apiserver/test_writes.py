"""Writes: the Requests the handlers hand to the committer, and their options."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
import yaml

from services.api.types.registry import by_resource
from topics.envelope import Request

PODS = "/api/v1/namespaces/ns/pods"
CLAIMS = "/apis/resource.k8s.io/v1alpha3/namespaces/ns/resourceclaims"


def pod(name: str = "p1", **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
        **extra,
    }


def last(backend: Any) -> Request:
    request: Request = backend.requests[-1]
    return request


async def test_create_builds_request(client: Any, backend: Any) -> None:
    r = await client.post(
        PODS + "?fieldManager=me&fieldValidation=Strict", json=pod(), headers={"User-Agent": "kubectl/v1.32"}
    )
    assert r.status == 201
    body = await r.json()
    assert body["metadata"]["namespace"] == "ns" and body["metadata"]["resourceVersion"]
    req = last(backend)
    uuid.UUID(req.id)
    assert (req.op, req.group, req.resource, req.namespace, req.name, req.version) == (
        "create",
        "",
        "pods",
        "ns",
        "p1",
        "v1",
    )
    assert req.user.name == "system:anonymous"
    assert req.options == {"dryRun": [], "fieldManager": "me", "fieldValidation": "Strict"}
    assert req.object is not None and req.object["metadata"]["namespace"] == "ns"


async def test_default_field_manager_from_user_agent(client: Any, backend: Any) -> None:
    await client.post(PODS, json=pod(), headers={"User-Agent": "OpenAPI-Generator/31.0.0/python"})
    assert last(backend).options["fieldManager"] == "OpenAPI-Generator"
    assert last(backend).options["fieldValidation"] == "Warn"


async def test_dry_run(client: Any, backend: Any) -> None:
    r = await client.post(PODS + "?dryRun=All", json=pod())
    assert r.status == 201
    assert last(backend).options["dryRun"] == ["All"]
    assert (await client.get(PODS + "/p1")).status == 404
    r = await client.post(PODS + "?dryRun=Nope", json=pod())
    assert r.status == 422
    assert (await r.json())["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Nope"}: supported values: "All"'
    )


async def test_create_checks_against_url(client: Any) -> None:
    r = await client.post(PODS, json=pod(metadata={"name": "p", "namespace": "other"}))
    assert r.status == 400
    assert (await r.json())[
        "message"
    ] == "the namespace of the provided object does not match the namespace sent on the request"
    r = await client.post(PODS, json={**pod(), "apiVersion": "v2"})
    assert (await r.json())[
        "message"
    ] == "the API version in the data (v2) does not match the expected API version (v1)"
    r = await client.post(PODS, json={**pod(), "kind": "Node"})
    assert r.status == 400 and (await r.json())["message"].startswith('Node in version "v1" cannot be handled as a Pod')
    r = await client.post(PODS, json=pod("dup"))
    r = await client.post(PODS, json=pod("dup"))
    doc = await r.json()
    assert r.status == 409 and doc["reason"] == "AlreadyExists" and doc["message"] == 'pods "dup" already exists'


async def test_field_validation_strict_warn_ignore(client: Any, backend: Any) -> None:
    bad = pod("s1")
    bad["spec"]["bogus"] = 1
    bad["spec"]["containers"][0]["foo"] = "bar"
    r = await client.post(PODS + "?fieldValidation=Strict", json=bad)
    assert r.status == 400
    doc = await r.json()
    assert doc["reason"] == "BadRequest"
    assert doc["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'unknown field "spec.containers[0].foo", unknown field "spec.bogus"'  # document order
    )
    r = await client.post(PODS + "?fieldValidation=Warn", json=bad)
    assert r.status == 201
    assert r.headers.getall("Warning") == [
        '299 - "unknown field \\"spec.containers[0].foo\\""',
        '299 - "unknown field \\"spec.bogus\\""',
    ]
    bad["metadata"]["name"] = "s2"
    r = await client.post(PODS + "?fieldValidation=Ignore", json=bad)
    assert r.status == 201 and "Warning" not in r.headers
    r = await client.post(PODS + "?fieldValidation=Loose", json=bad)
    assert r.status == 422


async def test_duplicate_fields_strict(client: Any) -> None:
    raw = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d","name":"e"},"spec":{}}'
    r = await client.post(PODS + "?fieldValidation=Strict", data=raw, headers={"Content-Type": "application/json"})
    assert r.status == 400
    assert (await r.json())["message"].endswith('strict decoding error: duplicate field "metadata.name"')


async def test_yaml_body_and_yaml_output(client: Any) -> None:
    body = yaml.safe_dump(pod("y1"))
    r = await client.post(PODS, data=body, headers={"Content-Type": "application/yaml", "Accept": "application/yaml"})
    assert r.status == 201
    assert r.headers["Content-Type"].startswith("application/yaml")
    doc = yaml.safe_load(await r.text())
    assert doc["metadata"]["name"] == "y1"


async def test_update_and_status_update(client: Any, backend: Any) -> None:
    created = await (await client.post(PODS, json=pod())).json()
    created["metadata"]["labels"] = {"a": "b"}
    r = await client.put(PODS + "/p1", json=created)
    assert r.status == 200
    assert last(backend).op == "update"
    r = await client.put(PODS + "/p1", json=created)  # stale resourceVersion
    assert r.status == 409 and (await r.json())["reason"] == "Conflict"
    current = await (await client.get(PODS + "/p1")).json()
    current["status"] = {"phase": "Running"}
    r = await client.put(PODS + "/p1/status", json=current)
    assert r.status == 200
    req = last(backend)
    assert req.op == "update_status" and req.options["subresource"] == "status"
    r = await client.put(PODS + "/p1", json=pod("other"))
    assert (await r.json())["message"] == "the name of the object (other) does not match the name on the URL (p1)"


async def test_patch_types(client: Any, backend: Any) -> None:
    await client.post(PODS, json=pod())
    cases = [
        ("application/merge-patch+json", {"metadata": {"labels": {"a": "1"}}}, "merge"),
        (
            "application/strategic-merge-patch+json",
            {"spec": {"containers": [{"name": "c", "image": "y"}]}},
            "strategic",
        ),
        ("application/json-patch+json", [{"op": "add", "path": "/metadata/labels/b", "value": "2"}], "json"),
    ]
    for content_type, body, patch_type in cases:
        r = await client.patch(PODS + "/p1", data=orjson.dumps(body), headers={"Content-Type": content_type})
        assert r.status == 200, await r.text()
        req = last(backend)
        assert (req.op, req.patch_type, req.patch, req.name) == ("patch", patch_type, body, "p1")
    doc = await (await client.get(PODS + "/p1")).json()
    assert doc["metadata"]["labels"] == {"a": "1", "b": "2"} and doc["spec"]["containers"][0]["image"] == "y"


async def test_apply_patch(client: Any, backend: Any) -> None:
    body = yaml.safe_dump(pod("a1"))
    r = await client.patch(PODS + "/a1", data=body, headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status == 422
    assert (await r.json())[
        "message"
    ] == 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    await client.post(PODS, json=pod("a1"))
    r = await client.patch(
        PODS + "/a1?fieldManager=kubectl&force=true",
        data=body,
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert r.status == 200, await r.text()
    req = last(backend)
    assert req.patch_type == "apply" and req.options["force"] is True and req.options["fieldManager"] == "kubectl"
    assert req.patch["metadata"]["name"] == "a1"
    r = await client.patch(
        PODS + "/a1?force=true", data=b"{}", headers={"Content-Type": "application/merge-patch+json"}
    )
    assert (await r.json())[
        "message"
    ] == 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'


async def test_patch_status_and_bad_content_type(client: Any, backend: Any) -> None:
    await client.post(
        CLAIMS, json={"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim", "metadata": {"name": "c"}}
    )
    r = await client.patch(
        CLAIMS + "/c/status",
        data=b'{"status":{"allocation":{}}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status == 200
    req = last(backend)
    assert req.options["subresource"] == "status" and req.group == "resource.k8s.io" and req.version == "v1alpha3"
    r = await client.patch(CLAIMS + "/c", data=b"{}", headers={"Content-Type": "text/plain"})
    assert r.status == 415 and (await r.json())["reason"] == "UnsupportedMediaType"


async def test_delete_options_from_query_and_body(client: Any, backend: Any) -> None:
    await client.post(PODS, json=pod("d1"))
    await client.post(PODS, json=pod("d2"))
    r = await client.delete(PODS + "/d1?propagationPolicy=Foreground&gracePeriodSeconds=0&dryRun=All")
    assert r.status == 200
    assert last(backend).options == {
        "dryRun": ["All"],
        "gracePeriodSeconds": 0,
        "propagationPolicy": "Foreground",
        "preconditions": None,
    }
    body = {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Background",
        "preconditions": {"uid": "nope"},
    }
    r = await client.delete(PODS + "/d1", json=body)
    assert r.status == 409
    assert last(backend).options["preconditions"] == {"uid": "nope"}
    r = await client.delete(PODS + "/d1?propagationPolicy=Sometimes")
    assert r.status == 422
    # ValidateDeleteOptions: field.NotSupported, with "nil" among the values (found by the oracle suite).
    message = 'Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan", "nil"'
    assert (await r.json())["details"]["causes"] == [
        {"reason": "FieldValueNotSupported", "message": message, "field": "propagationPolicy"}
    ]
    r = await client.delete(PODS + "/d1")
    assert r.status == 200 and last(backend).op == "delete"
    r = await client.delete(PODS + "/d1")
    assert r.status == 404 and (await r.json())["message"] == 'pods "d1" not found'


async def test_delete_collection(client: Any, backend: Any) -> None:
    for name, app in (("x1", "a"), ("x2", "a"), ("x3", "b")):
        await client.post(PODS, json=pod(name, metadata={"name": name, "labels": {"app": app}}))
    r = await client.delete(PODS + "?labelSelector=app%3Da")
    doc = await r.json()
    assert r.status == 200 and doc["kind"] == "PodList"
    assert sorted(i["metadata"]["name"] for i in doc["items"]) == ["x1", "x2"]
    left = await (await client.get(PODS)).json()
    assert [i["metadata"]["name"] for i in left["items"]] == ["x3"]


async def test_binding(client: Any, backend: Any) -> None:
    await client.post(PODS, json=pod("b1"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "b1"},
        "target": {"kind": "Node", "name": "n1"},
    }
    r = await client.post(PODS + "/b1/binding", json=binding)
    assert r.status == 201, await r.text()
    req = last(backend)
    assert (req.op, req.resource, req.name, req.options["subresource"]) == ("create", "pods", "b1", "binding")
    assert req.object is not None and req.object["target"]["name"] == "n1"
    assert (await (await client.get(PODS + "/b1")).json())["spec"]["nodeName"] == "n1"
    r = await client.put(PODS + "/b1/binding", json=binding)
    assert r.status == 405


async def test_cluster_scoped_create_drops_namespace(client: Any, backend: Any) -> None:
    r = await client.post(
        "/apis/resource.k8s.io/v1alpha3/deviceclasses", json={"metadata": {"name": "gpu", "namespace": "x"}}
    )
    assert r.status == 201
    assert "namespace" not in (last(backend).object or {})["metadata"]
    assert last(backend).namespace == ""
    rt = by_resource("resource.k8s.io", "deviceclasses")
    assert rt is not None and await backend.get(rt, "", "gpu")
