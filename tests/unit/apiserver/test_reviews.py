"""SelfSubjectReview, SelfSubjectAccessReview and SelfSubjectRulesReview over HTTP: answered, never stored.

Shapes and messages as kube-apiserver 1.37's pkg/registry/authentication/selfsubjectreview,
pkg/registry/authorization/selfsubject{access,rules}review and pkg/apis/authorization/validation (a bad
value printed as apimachinery 0.37's field.Error does: JSON, the internal struct's untagged field names).
"""

from __future__ import annotations

from typing import Any

import pytest

from services.apiserver.http.auth import TokenAuthenticator

from .memory_backend import MemoryBackend

TOKENS = """admin-token,admin,uid-admin,"system:masters"
node-token,system:node:node-1,uid-node-1,"system:nodes"
bob-token,bob,uid-bob
"""
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSRR = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def access_review(**attributes: str) -> dict[str, Any]:
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }


@pytest.fixture
async def tokens_client(make_client: Any) -> Any:
    return await make_client(authenticator=TokenAuthenticator.from_text(TOKENS), anonymous=False)


async def test_who_am_i(tokens_client: Any) -> None:
    r = await tokens_client.post(
        SSR, json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, headers=bearer("node-token")
    )
    assert r.status == 201
    doc = await r.json()
    assert (doc["kind"], doc["apiVersion"]) == ("SelfSubjectReview", "authentication.k8s.io/v1")
    assert doc["status"] == {
        "userInfo": {
            "username": "system:node:node-1",
            "uid": "uid-node-1",
            "groups": ["system:nodes", "system:authenticated"],
        }
    }
    assert doc["metadata"]["creationTimestamp"]


async def test_who_am_i_anonymously(client: Any) -> None:
    r = await client.post(SSR, json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    doc = await r.json()
    assert doc["status"] == {"userInfo": {"username": "system:anonymous", "groups": ["system:unauthenticated"]}}


@pytest.mark.parametrize(
    ("token", "attributes", "allowed"),
    [
        ("admin-token", {"verb": "create", "group": "resource.k8s.io", "resource": "resourceclaims"}, True),
        ("bob-token", {"verb": "create", "group": "resource.k8s.io", "resource": "resourceclaims"}, False),
        ("bob-token", {"verb": "list", "group": "resource.k8s.io", "resource": "resourceclaims"}, True),
        ("node-token", {"verb": "create", "group": "resource.k8s.io", "resource": "resourceslices"}, True),
        ("node-token", {"verb": "update", "group": "", "resource": "pods", "subresource": "status"}, True),
        ("node-token", {"verb": "update", "group": "", "resource": "pods"}, False),
        ("node-token", {"verb": "update", "group": "coordination.k8s.io", "resource": "leases"}, True),
        ("node-token", {"verb": "create", "group": "example.com", "resource": "resourceslices"}, False),
    ],
)
async def test_can_i(tokens_client: Any, backend: MemoryBackend, token: str, attributes: Any, allowed: bool) -> None:
    body = access_review(namespace="default", **attributes)
    r = await tokens_client.post(SSAR, json=body, headers=bearer(token))
    assert r.status == 201
    doc = await r.json()
    assert doc["spec"] == body["spec"]
    assert doc["status"] == {"allowed": allowed}


async def test_can_i_a_non_resource_url(tokens_client: Any) -> None:
    body = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1"}
    for verb, allowed in (("get", True), ("post", False)):
        body["spec"] = {"nonResourceAttributes": {"path": "/version", "verb": verb}}
        doc = await (await tokens_client.post(SSAR, json=body, headers=bearer("bob-token"))).json()
        assert doc["status"] == {"allowed": allowed}


async def test_an_access_review_names_one_kind_of_attributes(tokens_client: Any) -> None:
    body: dict[str, Any] = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "spec": {}}
    r = await tokens_client.post(SSAR, json=body, headers=bearer("bob-token"))
    assert r.status == 422
    assert (await r.json())["message"] == (
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec: Invalid value: null: '
        "exactly one of nonResourceAttributes or resourceAttributes must be specified"
    )
    body["spec"] = {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/", "verb": "get"}}
    r = await tokens_client.post(SSAR, json=body, headers=bearer("bob-token"))
    assert r.status == 422
    assert (await r.json())["message"] == (
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec: Invalid value: '
        '{"Path":"/","Verb":"get"}: '
        "exactly one of nonResourceAttributes or resourceAttributes must be specified"
    )


async def test_rules_review(tokens_client: Any) -> None:
    body = {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1", "spec": {"namespace": "default"}}
    doc = await (await tokens_client.post(SSRR, json=body, headers=bearer("bob-token"))).json()
    assert doc["status"] == {
        "resourceRules": [{"verbs": ["get", "list", "watch"], "apiGroups": ["*"], "resources": ["*"]}],
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["*"]}],
        "incomplete": False,
    }
    body["spec"] = {}
    r = await tokens_client.post(SSRR, json=body, headers=bearer("bob-token"))
    assert (r.status, (await r.json())["message"]) == (400, "no namespace on request")


async def test_reviews_are_created_only_and_stored_nowhere(tokens_client: Any, backend: MemoryBackend) -> None:
    for path in (SSAR, SSRR, SSR, SSR + "/x"):
        r = await tokens_client.get(path, headers=bearer("admin-token"))
        assert r.status == 405, path
    body = access_review(verb="get", resource="pods")
    body["spec"]["bogus"] = True
    r = await tokens_client.post(SSAR + "?fieldValidation=Strict", json=body, headers=bearer("admin-token"))
    assert r.status == 400 and 'unknown field "spec.bogus"' in (await r.json())["message"]
    assert backend.requests == [] and backend.objects == {}
