"""resource.k8s.io in every served version on a running stack: v1, v1beta2, v1beta1 and v1alpha3, one storage form.

An object written in any version reads back in every other one (each in its
own shape, the same object), lists and watches come in the version asked for,
and kubectl sees the same claims under every version's name. Runs on the
embedded log and on Kafka (the ``stack`` fixture).
"""

from __future__ import annotations

import json
import ssl
import uuid
from typing import Any

import aiohttp
import pytest

from services.api.machinery.conversion import to_storage
from services.kube.times import parse_time
from tests.e2e.conftest import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

RG = "resource.k8s.io"
VERSIONS = ["v1", "v1beta2", "v1beta1", "v1alpha3"]
CLASS = "gpu.example.com"


def claim_in(version: str, ns: str, name: str) -> dict[str, Any]:
    """The same claim as a client of ``version`` writes it (v1 and v1beta2 nest a request under ``exactly``)."""
    fields = {"deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 2}
    request = {"name": "gpu", "exactly": fields} if version in ("v1", "v1beta2") else {"name": "gpu", **fields}
    return {
        "apiVersion": f"{RG}/{version}",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns, "labels": {"written-in": version}},
        "spec": {"devices": {"requests": [request]}},
    }


def slice_in(version: str, name: str) -> dict[str, Any]:
    """The same slice as a client of ``version`` writes it (``basic`` up to v1beta1, bare capacity in v1alpha3)."""
    attributes = {"index": {"int": 0}, "model": {"string": "LATEST-GPU-MODEL"}}
    capacity: dict[str, Any] = {"memory": "80Gi"} if version == "v1alpha3" else {"memory": {"value": "80Gi"}}
    if version in ("v1", "v1beta2"):
        device: dict[str, Any] = {"name": "gpu-0", "attributes": attributes, "capacity": capacity}
    else:
        device = {"name": "gpu-0", "basic": {"attributes": attributes, "capacity": capacity}}
    return {
        "apiVersion": f"{RG}/{version}",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": CLASS,
            "nodeName": "node-1",
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": [device],
        },
    }


class Http:
    """Raw HTTPS requests to the stack, as a Go client makes them."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.ssl = ssl.create_default_context(cafile=str(stack.ca_cert))
        self.headers = {"Authorization": f"Bearer {stack.token}"}

    async def call(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json") -> Any:
        async with aiohttp.ClientSession() as session:
            data = json.dumps(body) if body is not None else None
            headers = {**self.headers, "Content-Type": content_type}
            async with session.request(method, self.stack.url + path, data=data, headers=headers, ssl=self.ssl) as r:
                text = await r.text()
                assert r.status < 300, f"{method} {path}: {r.status} {text}"
                return json.loads(text) if text.strip().startswith("{") else text


def hub_spec(obj: dict[str, Any], version: str) -> Any:
    """The object's spec in the storage form (how every version's shape is compared)."""
    return to_storage(obj, group=RG, kind=obj["kind"], version=version)["spec"]


async def new_namespace(stack: Stack) -> str:
    ns = f"v-{uuid.uuid4().hex[:8]}"
    await stack.kubectl("create", "namespace", ns)
    return ns


@pytest.mark.parametrize("writer", VERSIONS)
async def test_a_claim_written_in_one_version_reads_back_in_every_other(stack: Stack, writer: str) -> None:
    http = Http(stack)
    ns = await new_namespace(stack)
    created = await http.call("POST", f"/apis/{RG}/{writer}/namespaces/{ns}/resourceclaims", claim_in(writer, ns, "c"))
    assert created["apiVersion"] == f"{RG}/{writer}"
    expected = hub_spec(claim_in("v1alpha3", ns, "c"), "v1alpha3")
    for reader in VERSIONS:
        got = await http.call("GET", f"/apis/{RG}/{reader}/namespaces/{ns}/resourceclaims/c")
        assert got["apiVersion"] == f"{RG}/{reader}"
        assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        assert got["metadata"]["uid"] == created["metadata"]["uid"]
        request = got["spec"]["devices"]["requests"][0]
        assert ("exactly" in request) == (reader in ("v1", "v1beta2")), reader
        assert hub_spec(got, reader) == expected, reader
        listed = await http.call("GET", f"/apis/{RG}/{reader}/namespaces/{ns}/resourceclaims")
        assert listed["apiVersion"] == f"{RG}/{reader}" and listed["kind"] == "ResourceClaimList"
        assert [hub_spec({**item, "kind": "ResourceClaim"}, reader) for item in listed["items"]] == [expected]


@pytest.mark.parametrize("writer", VERSIONS)
async def test_a_slice_written_in_one_version_reads_back_in_every_other(stack: Stack, writer: str) -> None:
    http = Http(stack)
    name = f"s-{writer}-{uuid.uuid4().hex[:6]}"
    await http.call("POST", f"/apis/{RG}/{writer}/resourceslices", slice_in(writer, name))
    for reader in VERSIONS:
        got = await http.call("GET", f"/apis/{RG}/{reader}/resourceslices/{name}")
        assert got["apiVersion"] == f"{RG}/{reader}"
        want = slice_in(reader, name)
        assert got["spec"]["devices"] == want["spec"]["devices"], reader
        assert got["spec"]["nodeName"] == "node-1"
        # Field selectors are the same in every version (they match the stored object).
        selected = await http.call(
            "GET", f"/apis/{RG}/{reader}/resourceslices?fieldSelector=spec.nodeName%3Dnode-1,metadata.name%3D{name}"
        )
        assert [i["metadata"]["name"] for i in selected["items"]] == [name]
        assert selected["items"][0]["spec"]["devices"] == want["spec"]["devices"]
    await http.call("DELETE", f"/apis/{RG}/v1/resourceslices/{name}")


async def test_a_watch_sends_events_in_the_version_it_was_opened_in(stack: Stack) -> None:
    http = Http(stack)
    ns = await new_namespace(stack)
    listed = await http.call("GET", f"/apis/{RG}/v1/namespaces/{ns}/resourceclaims")
    rv = listed["metadata"]["resourceVersion"]
    await http.call("POST", f"/apis/{RG}/v1beta1/namespaces/{ns}/resourceclaims", claim_in("v1beta1", ns, "w"))
    for version in ("v1", "v1alpha3"):
        text = await http.call(
            "GET", f"/apis/{RG}/{version}/namespaces/{ns}/resourceclaims?watch=1&resourceVersion={rv}&timeoutSeconds=1"
        )
        events = [json.loads(line) for line in (text if isinstance(text, str) else json.dumps(text)).splitlines()]
        (added,) = [e for e in events if e["type"] == "ADDED"]
        assert added["object"]["apiVersion"] == f"{RG}/{version}"
        assert ("exactly" in added["object"]["spec"]["devices"]["requests"][0]) == (version == "v1")


async def test_kubectl_lists_the_same_claims_under_every_version(stack: Stack) -> None:
    k = stack.kubectl
    ns = await new_namespace(stack)
    for version in VERSIONS:
        await k("create", "-f", "-", stdin=json.dumps(claim_in(version, ns, f"claim-{version}")))
    names = sorted(f"claim-{v}" for v in VERSIONS)
    for resource in (
        "resourceclaims",
        "resourceclaims.v1beta1.resource.k8s.io",
        "resourceclaims.v1alpha3.resource.k8s.io",
    ):
        out = json.loads((await k("get", resource, "-n", ns, "-o", "json")).out)
        assert sorted(item["metadata"]["name"] for item in out["items"]) == names, resource
        version = resource.split(".")[1] if "." in resource else "v1"
        assert {item["apiVersion"] for item in out["items"]} == {f"{RG}/{version}"}
        table = (await k("get", resource, "-n", ns)).out.splitlines()
        assert table[0].split() == ["NAME", "STATE", "AGE"]
        assert sorted(line.split()[0] for line in table[1:]) == names


async def test_kubectl_explain_prints_the_v1_descriptions(stack: Stack) -> None:
    out = (await stack.kubectl("explain", "resourceclaim.spec.devices.requests.exactly")).out
    assert "VERSION:    v1" in out
    # Kubernetes 1.37's own descriptions (its schemas, through OpenAPI v3), of the field and of one below it.
    assert "Exactly specifies the details for a single request that must be met exactly" in out
    assert "DeviceClassName references a specific DeviceClass" in out


async def test_a_device_taint_rule_is_served_in_v1_and_v1beta2_only(stack: Stack) -> None:
    http = Http(stack)
    name = f"taint-{uuid.uuid4().hex[:6]}"
    rule = {
        "apiVersion": f"{RG}/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {"deviceSelector": {"driver": CLASS}, "taint": {"key": "example.com/broken", "effect": "NoSchedule"}},
    }
    await http.call("POST", f"/apis/{RG}/v1/devicetaintrules", rule)
    got = await http.call("GET", f"/apis/{RG}/v1beta2/devicetaintrules/{name}")
    stamped = got["spec"]["taint"].pop("timeAdded")  # the server's, as kube-apiserver defaults it
    assert parse_time(stamped) is not None and stamped.endswith("Z")
    assert got["apiVersion"] == f"{RG}/v1beta2" and got["spec"] == rule["spec"]
    assert got["metadata"]["generation"] == 1
    bad = {**rule, "metadata": {"name": "Not_A_Name"}}
    out = await stack.kubectl("create", "-f", "-", stdin=json.dumps(bad), ok=False)
    assert out.code != 0 and "metadata.name: Invalid value" in out.err
    missing = await stack.kubectl("get", "--raw", f"/apis/{RG}/v1beta1/devicetaintrules", ok=False)
    assert missing.code != 0 and "the server could not find the requested resource" in missing.err
