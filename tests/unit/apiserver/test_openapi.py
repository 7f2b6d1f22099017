"""OpenAPI: what kubectl needs to trust server-side field validation and to patch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import pytest

from services.api.types.registry import RESOURCES
from services.apiserver.openapi import gv_key


async def _v3(client: Any, key: str) -> dict[str, Any]:
    index = await (await client.get("/openapi/v3", headers={"Accept": "application/json"})).json()
    url = index["paths"][key]["serverRelativeURL"]
    assert "?hash=" in url
    r = await client.get(url)
    assert r.status == 200
    doc: dict[str, Any] = await r.json()
    return doc


@pytest.mark.parametrize(
    ("rt", "version"), [(rt, v) for rt in RESOURCES for v in rt.versions], ids=lambda x: getattr(x, "kind", x)
)
async def test_every_kind_has_patch_with_gvk_and_field_validation(client: Any, rt: Any, version: str) -> None:
    """kubectl's QueryParamVerifierV3 looks for exactly this; without it kubectl validates client-side."""
    doc = await _v3(client, gv_key(rt.group, version))
    found = False
    for item in doc["paths"].values():
        op = item.get("patch")
        if not op or op["x-kubernetes-group-version-kind"] != {
            "group": rt.group,
            "kind": rt.kind,
            "version": version,
        }:
            continue
        names = {p["name"] for p in op["parameters"] if p["in"] == "query"}
        assert {"fieldValidation", "fieldManager", "dryRun", "force"} <= names
        assert "application/strategic-merge-patch+json" in op["requestBody"]["content"]
        found = True
    assert found, f"no PATCH operation for {rt.kind}"


async def test_schemas_carry_gvk_and_patch_markers(client: Any) -> None:
    doc = await _v3(client, "api/v1")
    schemas = doc["components"]["schemas"]
    pod = schemas["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}
    ports = schemas["io.k8s.api.core.v1.Container"]["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    meta = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
    time_ref = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"
    assert meta["creationTimestamp"]["allOf"] == [{"$ref": time_ref}]  # Kubernetes' v3 spelling
    assert meta["creationTimestamp"]["description"].startswith("CreationTimestamp is a timestamp")
    assert {k: meta["generation"][k] for k in ("type", "format")} == {"type": "integer", "format": "int64"}
    # every $ref resolves inside the document
    text = str(doc)
    for name in schemas:
        assert name in text
    for ref in _refs(doc):
        assert ref.removeprefix("#/components/schemas/") in schemas, ref


async def test_resource_group_document(client: Any) -> None:
    doc = await _v3(client, "apis/resource.k8s.io/v1alpha3")
    schemas = doc["components"]["schemas"]
    status = schemas["io.k8s.api.resource.v1alpha3.ResourceClaimStatus"]["properties"]
    assert status["reservedFor"]["x-kubernetes-patch-merge-key"] == "uid"
    assert "io.k8s.api.resource.v1alpha3.ResourceClaimList" in schemas
    assert "/apis/resource.k8s.io/v1alpha3/namespaces/{namespace}/resourceclaims/{name}/status" in doc["paths"]


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        out = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        for v in node.values():
            out.extend(_refs(v))
        return out
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


async def test_v2_json_and_protobuf(client: Any) -> None:
    r = await client.get("/openapi/v2", headers={"Accept": "application/json"})
    doc = await r.json()
    assert doc["swagger"] == "2.0"
    patch = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" in patch["consumes"]
    assert any(p["name"] == "fieldValidation" and p["in"] == "query" for p in patch["parameters"])
    assert "#/components/" not in (await r.text())
    r = await client.get(
        "/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
    )
    assert r.status == 406
    assert (await r.json())["reason"] == "NotAcceptable"


async def test_unknown_v3_group_version_is_404(client: Any) -> None:
    r = await client.get("/openapi/v3/apis/example.com/v1")
    assert r.status == 404


async def test_namespaces_finalize_is_described_as_put_only(client: Any) -> None:
    """kube-apiserver's /openapi/v3/api/v1: replaceCoreV1NamespaceFinalize, and no other verb on that path."""
    doc = await _v3(client, gv_key("", "v1"))
    item = doc["paths"]["/api/v1/namespaces/{name}/finalize"]
    assert item["put"]["operationId"] == "replaceCoreV1NamespaceFinalize"
    assert not {"get", "patch", "post", "delete"} & set(item)


@pytest.mark.parametrize(
    ("key", "path", "operation", "kind"),
    [
        (
            "apis/authentication.k8s.io/v1",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            "createAuthenticationV1SelfSubjectReview",
            "SelfSubjectReview",
        ),
        (
            "apis/authorization.k8s.io/v1",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            "createAuthorizationV1SelfSubjectAccessReview",
            "SelfSubjectAccessReview",
        ),
        (
            "apis/authorization.k8s.io/v1",
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            "createAuthorizationV1SelfSubjectRulesReview",
            "SelfSubjectRulesReview",
        ),
    ],
)
async def test_reviews_are_post_only(client: Any, key: str, path: str, operation: str, kind: str) -> None:
    """As kube-apiserver's /openapi/v3 has them: one path, one POST, the kind's own schema in and out."""
    doc = await _v3(client, key)
    item = doc["paths"][path]
    assert set(item) == {"post", "parameters"}
    post = item["post"]
    assert post["operationId"] == operation
    assert post["x-kubernetes-group-version-kind"] == {"group": key.split("/")[1], "kind": kind, "version": "v1"}
    schema = post["requestBody"]["content"]["*/*"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert schema.endswith(f".v1.{kind}") and schema in doc["components"]["schemas"]
    v2 = await (await client.get("/openapi/v2", headers={"Accept": "application/json"})).json()
    assert set(v2["paths"][path]) == {"post", "parameters"}


async def test_a_v3_document_asked_for_by_its_hash_may_be_cached_for_a_year(client: Any) -> None:
    """kube-openapi's handler3: ``?hash=`` of the index → ``public, immutable`` and Expires a year out (so
    kubectl's HTTP cache stops asking); an outdated hash → 301 to the current URL; no hash → revalidated.

    Checked against kube-apiserver 1.31.14 (built by ops/upstream, 2026-12-02): /openapi/v3/api/v1?hash=<index's>
    answered 200 "public, immutable" with Expires a year out; ?hash=0123 answered 301 with Location the index's
    URL and "no-cache, private"; no hash answered 200 "no-cache, private" with an ETag."""
    index = await (await client.get("/openapi/v3")).json()
    url = index["paths"]["api/v1"]["serverRelativeURL"]
    r = await client.get(url)
    assert r.status == 200
    assert r.headers["Cache-Control"] == "public, immutable"
    assert r.headers["Vary"] == "Accept"
    expires = parsedate_to_datetime(r.headers["Expires"])
    assert timedelta(days=364) < expires - datetime.now(UTC) <= timedelta(days=366)

    for unhashed in ("/openapi/v3/api/v1", "/openapi/v3"):
        r = await client.get(unhashed)
        assert r.status == 200 and r.headers["Cache-Control"] == "no-cache, private" and "Expires" not in r.headers
        again = await client.get(unhashed, headers={"If-None-Match": r.headers["ETag"]})
        assert again.status == 304

    r = await client.get("/openapi/v3/api/v1?hash=0123ABCD", allow_redirects=False)
    assert r.status == 301
    assert r.headers["Location"] == url
