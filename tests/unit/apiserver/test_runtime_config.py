"""``--runtime-config``: kube-apiserver's syntax turns API versions off and on, everywhere at once.

The parse rules follow k8s.io/apiserver/pkg/server/resourceconfig/helpers.go
(``MergeAPIResourceConfigs``): ``api/all`` first, then ``api/ga|beta|alpha``,
then single group-versions; a bare key means ``true``. A disabled version is
404 at every URL under it and absent from discovery and OpenAPI, as in
kube-apiserver.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from services.api.types.served import RuntimeConfigError, ServedVersions, parse_runtime_config

ALL = ["v1", "v1beta2", "v1beta1", "v1alpha3"]
RG = "resource.k8s.io"


@pytest.mark.parametrize(
    ("text", "served"),
    [
        ("", ALL),
        ("resource.k8s.io/v1beta1=false", ["v1", "v1beta2", "v1alpha3"]),
        ("resource.k8s.io/v1alpha3=false,resource.k8s.io/v1beta2=false", ["v1", "v1beta1"]),
        ("api/alpha=false", ["v1", "v1beta2", "v1beta1"]),
        ("api/beta=false", ["v1", "v1alpha3"]),
        ("api/beta=false,resource.k8s.io/v1beta1=true", ["v1", "v1beta1", "v1alpha3"]),
        ("api/all=false,api/legacy=true,resource.k8s.io/v1=true", ["v1"]),
        ("api/all=false,v1=true,resource.k8s.io/v1alpha3", ["v1alpha3"]),  # a bare key is true
        ("api/all=true,resource.k8s.io/v1=0", ["v1beta2", "v1beta1", "v1alpha3"]),
    ],
)
def test_runtime_config_table(text: str, served: list[str]) -> None:
    config = parse_runtime_config(text)
    assert list(config.versions(RG)) == served
    assert config.versions("") == ("v1",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("resource.k8s.io/v1beta1=maybe", "invalid value of resource.k8s.io/v1beta1: maybe, err: strconv.ParseBool"),
        ("resource.k8s.io/v9=false", "unknown api groups resource.k8s.io/v9"),
        ("api/all=false", "the core API (v1) cannot be disabled"),
    ],
)
def test_runtime_config_errors(text: str, message: str) -> None:
    with pytest.raises(RuntimeConfigError, match=re.escape(message)):
        parse_runtime_config(text)


async def _json(client: Any, path: str, **kwargs: Any) -> Any:
    r = await client.get(path, **kwargs)
    assert r.status == 200, path
    return await r.json()


async def test_a_disabled_version_is_404_and_absent_from_discovery_and_openapi(make_client: Any) -> None:
    served = parse_runtime_config("resource.k8s.io/v1beta1=false")
    client = await make_client(served=served, openapi=None)
    for path in (
        "/apis/resource.k8s.io/v1beta1",
        "/apis/resource.k8s.io/v1beta1/resourceclaims",
        "/apis/resource.k8s.io/v1beta1/namespaces/default/resourceclaims/x",
        "/openapi/v3/apis/resource.k8s.io/v1beta1",
    ):
        r = await client.get(path)
        assert r.status == 404, path
    assert (await client.get("/apis/resource.k8s.io/v1/resourceclaims")).status == 200
    group = await _json(client, "/apis/resource.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta2", "v1alpha3"]
    groups = await _json(client, "/apis")
    assert [v["version"] for v in groups["groups"][0]["versions"]] == ["v1", "v1beta2", "v1alpha3"]
    aggregated = await _json(
        client, "/apis", headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}
    )
    assert [v["version"] for v in aggregated["items"][0]["versions"]] == ["v1", "v1beta2", "v1alpha3"]
    index = await _json(client, "/openapi/v3")
    assert "apis/resource.k8s.io/v1beta1" not in index["paths"] and "apis/resource.k8s.io/v1" in index["paths"]
    v2 = await _json(client, "/openapi/v2")
    assert not any(p.startswith("/apis/resource.k8s.io/v1beta1/") for p in v2["paths"])
    assert any(p.startswith("/apis/resource.k8s.io/v1beta2/") for p in v2["paths"])


async def test_with_v1_off_the_next_version_is_preferred(make_client: Any) -> None:
    client = await make_client(served=parse_runtime_config("resource.k8s.io/v1=false"), openapi=None)
    group = await _json(client, "/apis/resource.k8s.io")
    assert group["preferredVersion"] == {"groupVersion": "resource.k8s.io/v1beta2", "version": "v1beta2"}
    assert (await client.get("/apis/resource.k8s.io/v1/deviceclasses")).status == 404


async def test_every_resource_version_off_leaves_no_group(make_client: Any) -> None:
    client = await make_client(served=parse_runtime_config("api/all=false,v1=true"), openapi=None)
    assert (await client.get("/apis/resource.k8s.io")).status == 404
    assert (await _json(client, "/apis"))["groups"] == []
    assert (await client.get("/api/v1/pods")).status == 200


def test_kinds_follow_their_versions() -> None:
    served = ServedVersions()
    kinds = {v: sorted(rt.kind for rt in served.resources(RG, v)) for v in ALL}
    core = ["DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"]
    assert kinds == {
        "v1": sorted([*core, "DeviceTaintRule"]),
        "v1beta2": sorted([*core, "DeviceTaintRule"]),
        "v1beta1": core,
        "v1alpha3": sorted([*core, "PodSchedulingContext"]),
    }
