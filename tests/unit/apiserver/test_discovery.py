"""Discovery: legacy and aggregated documents, subresources, ETags."""

from __future__ import annotations

from typing import Any

from services.apiserver.discovery import ITEM_VERBS, version_info
from services.apiserver.http.negotiation import DISCOVERY_V2

KUBECTL_DISCOVERY_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)


async def test_version(client: Any) -> None:
    r = await client.get("/version")
    doc = await r.json()
    # The default --emulated-version, 1.37; kube-apiserver 1.37 adds the emulation fields
    # (k8s.io/apimachinery/pkg/version.Info, component-base/compatibility's effectiveVersion.Info).
    assert doc["gitVersion"] == "v1.37.0-draplane"
    # minor: what picks a JSON-speaking kubectl (services.apiserver.discovery.CLIENT_MINOR).
    assert (doc["major"], doc["minor"]) == ("1", "31")
    assert (doc["emulationMajor"], doc["emulationMinor"]) == ("1", "37")
    assert (doc["minCompatibilityMajor"], doc["minCompatibilityMinor"]) == ("1", "36")


def test_version_at_emulated_1_31() -> None:
    doc = version_info("1.31")
    assert doc["gitVersion"] == "v1.31.0-draplane"
    assert (doc["major"], doc["minor"], doc["emulationMinor"], doc["minCompatibilityMinor"]) == ("1", "31", "31", "30")


async def test_legacy_api_and_apis(client: Any) -> None:
    doc = await (await client.get("/api")).json()
    assert doc["kind"] == "APIVersions" and doc["versions"] == ["v1"]
    doc = await (await client.get("/apis")).json()
    assert doc["kind"] == "APIGroupList"
    assert [g["name"] for g in doc["groups"]] == [
        "resource.k8s.io",
        "coordination.k8s.io",
        "apps",
        "policy",
        "storage.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
    ]
    assert doc["groups"][0]["preferredVersion"]["groupVersion"] == "resource.k8s.io/v1"
    assert [v["version"] for v in doc["groups"][0]["versions"]] == ["v1", "v1beta2", "v1beta1", "v1alpha3"]
    doc = await (await client.get("/apis/resource.k8s.io")).json()
    assert doc["kind"] == "APIGroup" and doc["name"] == "resource.k8s.io"
    assert doc["preferredVersion"] == {"groupVersion": "resource.k8s.io/v1", "version": "v1"}


async def test_resource_lists(client: Any) -> None:
    doc = await (await client.get("/api/v1")).json()
    assert doc["kind"] == "APIResourceList" and doc["groupVersion"] == "v1"
    by_name = {r["name"]: r for r in doc["resources"]}
    pods = by_name["pods"]
    assert pods["namespaced"] is True and pods["kind"] == "Pod" and pods["shortNames"] == ["po"]
    assert pods["categories"] == ["all"] and pods["singularName"] == "pod"
    assert set(pods["verbs"]) == {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
    assert by_name["pods/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["pods/binding"]["verbs"] == ["create"] and by_name["pods/binding"]["kind"] == "Binding"
    assert "namespaces/status" in by_name and "nodes/status" in by_name
    assert "deletecollection" not in by_name["namespaces"]["verbs"]
    assert by_name["nodes"]["namespaced"] is False
    doc = await (await client.get("/apis/resource.k8s.io/v1alpha3")).json()
    by_name = {r["name"]: r for r in doc["resources"]}
    assert {
        "deviceclasses",
        "resourceclaims",
        "resourceclaims/status",
        "resourceclaimtemplates",
        "resourceslices",
        "podschedulingcontexts",
        "podschedulingcontexts/status",
    } <= set(by_name)
    assert by_name["resourceslices"]["namespaced"] is False
    assert "devicetaintrules" not in by_name
    # Kubernetes 1.37's kinds per version (pkg/registry/resource/rest/storage_resource.go).
    core_kinds = {
        "deviceclasses",
        "resourceclaims",
        "resourceclaims/status",
        "resourceclaimtemplates",
        "resourceslices",
    }
    for version, extra in (
        ("v1", {"devicetaintrules", "devicetaintrules/status"}),
        ("v1beta2", {"devicetaintrules", "devicetaintrules/status"}),
        ("v1beta1", set()),
    ):
        doc = await (await client.get(f"/apis/resource.k8s.io/{version}")).json()
        assert {r["name"] for r in doc["resources"]} == core_kinds | extra, version
        # The storage version is one, so its hash is the same in every version.
        hashes = {r["name"]: r.get("storageVersionHash") for r in doc["resources"]}
        assert hashes["resourceclaims"] == by_name["resourceclaims"]["storageVersionHash"]


async def test_aggregated_discovery(client: Any) -> None:
    r = await client.get("/apis", headers={"Accept": KUBECTL_DISCOVERY_ACCEPT})
    assert r.headers["Content-Type"] == DISCOVERY_V2
    doc = await r.json()
    assert doc["kind"] == "APIGroupDiscoveryList" and doc["apiVersion"] == "apidiscovery.k8s.io/v2"
    group, *others = doc["items"]
    assert group["metadata"]["name"] == "resource.k8s.io"
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta2", "v1beta1", "v1alpha3"]
    assert [g["metadata"]["name"] for g in others] == [
        "coordination.k8s.io",
        "apps",
        "policy",
        "storage.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
    ]
    resources = {r["resource"]: r for r in group["versions"][0]["resources"]}
    assert "podschedulingcontexts" not in resources and "devicetaintrules" in resources
    claims = resources["resourceclaims"]
    assert claims["scope"] == "Namespaced"
    assert claims["responseKind"] == {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}
    assert claims["subresources"][0]["subresource"] == "status"
    r = await client.get("/api", headers={"Accept": KUBECTL_DISCOVERY_ACCEPT})
    doc = await r.json()
    (core,) = doc["items"]
    assert core["metadata"]["name"] == ""
    resources = {r["resource"]: r for r in core["versions"][0]["resources"]}
    pods = resources["pods"]
    # As kube-apiserver 1.31 lists them (its /api discovery), for the subresources draplane answers.
    assert {s["subresource"]: (s["responseKind"]["kind"], s["verbs"]) for s in pods["subresources"]} == {
        "attach": ("PodAttachOptions", ["create", "get"]),
        "binding": ("Binding", ["create"]),
        "exec": ("PodExecOptions", ["create", "get"]),
        "log": ("Pod", ["get"]),
        "portforward": ("PodPortForwardOptions", ["create", "get"]),
        "status": ("Pod", ["get", "patch", "update"]),
    }
    # Services: stored (for upstream kube-scheduler's informers, and kubectl cluster-info finds the type).
    services = resources["services"]
    assert services["verbs"] == [v for v in ITEM_VERBS if v != "deletecollection"] and services["shortNames"] == ["svc"]
    assert services["categories"] == ["all"]
    assert services["scope"] == "Namespaced" and [s["subresource"] for s in services["subresources"]] == ["status"]


async def test_etag_not_modified(client: Any) -> None:
    r = await client.get("/api/v1")
    etag = r.headers["ETag"]
    r = await client.get("/api/v1", headers={"If-None-Match": etag})
    assert r.status == 304


async def test_discovery_refuses_writes(client: Any) -> None:
    r = await client.post("/api/v1", data=b"{}")
    assert r.status == 405
    assert (await r.json())["reason"] == "MethodNotAllowed"


async def test_leases_and_reviews_as_kubernetes_lists_them(client: Any) -> None:
    """Leases are a stored, namespaced resource; the self-subject reviews are create-only and stored nowhere.

    Expected from kube-apiserver 1.31's /apis/authorization.k8s.io/v1: the reviews have the one verb
    ``create`` and no ``storageVersionHash``."""
    doc = await (await client.get("/apis/coordination.k8s.io/v1")).json()
    (leases,) = doc["resources"]
    assert (leases["name"], leases["kind"], leases["namespaced"]) == ("leases", "Lease", True)
    assert set(leases["verbs"]) == {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
    doc = await (await client.get("/apis/authorization.k8s.io/v1")).json()
    assert doc["resources"] == [
        {
            "name": "selfsubjectaccessreviews",
            "singularName": "selfsubjectaccessreview",
            "namespaced": False,
            "kind": "SelfSubjectAccessReview",
            "verbs": ["create"],
        },
        {
            "name": "selfsubjectrulesreviews",
            "singularName": "selfsubjectrulesreview",
            "namespaced": False,
            "kind": "SelfSubjectRulesReview",
            "verbs": ["create"],
        },
    ]
    doc = await (await client.get("/apis/authentication.k8s.io/v1")).json()
    assert [(r["name"], r["verbs"]) for r in doc["resources"]] == [("selfsubjectreviews", ["create"])]
    doc = await (await client.get("/apis/authentication.k8s.io")).json()
    assert doc["preferredVersion"] == {"groupVersion": "authentication.k8s.io/v1", "version": "v1"}
