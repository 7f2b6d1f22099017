"""Protobuf on the wire through the HTTP app: every verb, subresources, errors, metadata, watch, discovery.

What a client-go client with ``ContentType: application/vnd.kubernetes.protobuf`` sends (kube-scheduler's
and kube-controller-manager's defaults): ``Accept: application/vnd.kubernetes.protobuf, */*`` and
protobuf bodies. Expected Content-Types are kube-apiserver's (see test_negotiation_protobuf).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import yaml

from services.api import protobuf
from services.api.types.registry import by_resource

PB = "application/vnd.kubernetes.protobuf"
PB_WATCH = PB + ";stream=watch"
ACCEPT = {"Accept": PB + ", */*"}
SEND = {"Content-Type": PB, **ACCEPT}
PODS = "/api/v1/namespaces/ns/pods"
CLAIMS = "/apis/resource.k8s.io/v1beta1/namespaces/ns/resourceclaims"
POD_RT = by_resource("", "pods")
METADATA_LIST = (
    f"{PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)
UNKNOWN_FORMAT = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json, application/yaml, application/vnd.kubernetes.protobuf"
)


@pytest.fixture
def codec() -> Any:
    return protobuf


def pod(name: str = "p1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }


def claim(name: str = "c1") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }


async def pb(resp: Any, codec: Any, status: int = 200) -> dict[str, Any]:
    """The response's protobuf body decoded, after checking its status and Content-Type."""
    raw = await resp.read()
    assert resp.status == status, raw[:300]
    assert resp.headers["Content-Type"] == PB
    assert raw.startswith(b"k8s\x00")
    doc: dict[str, Any] = codec.decode(raw)
    return doc


async def test_create_get_list_update_patch_delete_in_protobuf(client: Any, codec: Any) -> None:
    created = await pb(await client.post(PODS, data=codec.encode(pod()), headers=SEND), codec, 201)
    assert (created["kind"], created["metadata"]["name"]) == ("Pod", "p1")
    assert created["metadata"]["resourceVersion"]

    got = await pb(await client.get(PODS + "/p1", headers=ACCEPT), codec)
    assert got["metadata"]["uid"] == created["metadata"]["uid"]

    listed = await pb(await client.get(PODS, headers=ACCEPT), codec)
    assert listed["kind"] == "PodList" and [i["metadata"]["name"] for i in listed["items"]] == ["p1"]
    assert listed["metadata"]["resourceVersion"]

    got["metadata"]["labels"] = {"a": "1"}
    updated = await pb(await client.put(PODS + "/p1", data=codec.encode(got), headers=SEND), codec)
    assert updated["metadata"]["labels"] == {"a": "1"}

    patch_headers = {"Content-Type": "application/merge-patch+json", **ACCEPT}
    patched = await pb(
        await client.patch(PODS + "/p1", data=b'{"metadata":{"labels":{"b":"2"}}}', headers=patch_headers), codec
    )
    assert patched["metadata"]["labels"] == {"a": "1", "b": "2"}

    options = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0, "propagationPolicy": "Orphan"}
    resp = await client.delete(PODS + "/p1", data=codec.encode(options), headers=SEND)
    deleted = codec.decode(await resp.read())
    assert resp.status == 200 and resp.headers["Content-Type"] == PB
    assert deleted["kind"] in ("Pod", "Status")


async def test_delete_options_body_reaches_the_committer(client: Any, backend: Any, codec: Any) -> None:
    await client.post(PODS, data=codec.encode(pod()), headers=SEND)
    options = {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "gracePeriodSeconds": 5,
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }
    resp = await client.delete(PODS + "/p1", data=codec.encode(options), headers=SEND)
    assert resp.status == 200
    request = backend.requests[-1]
    assert (request.op, request.options["gracePeriodSeconds"], request.options["propagationPolicy"]) == (
        "delete",
        5,
        "Foreground",
    )
    assert request.options["dryRun"] == ["All"]


async def test_resource_claim_round_trip(client: Any, backend: Any, codec: Any) -> None:
    created = await pb(await client.post(CLAIMS, data=codec.encode(claim()), headers=SEND), codec, 201)
    assert created["apiVersion"] == "resource.k8s.io/v1beta1" and created["kind"] == "ResourceClaim"
    assert backend.requests[-1].object["spec"] == claim()["spec"]
    created["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}
    status = await pb(await client.put(CLAIMS + "/c1/status", data=codec.encode(created), headers=SEND), codec)
    assert status["status"]["reservedFor"][0]["uid"] == "u1"
    assert backend.requests[-1].op == "update_status"


async def test_binding_answers_status_in_protobuf(client: Any, codec: Any) -> None:
    await client.post(PODS, data=codec.encode(pod("b1")), headers=SEND)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "b1"},
        "target": {"kind": "Node", "name": "n"},
    }
    status = await pb(await client.post(PODS + "/b1/binding", data=codec.encode(binding), headers=SEND), codec, 201)
    assert (status["kind"], status["status"]) == ("Status", "Success")
    got = await pb(await client.get(PODS + "/b1", headers=ACCEPT), codec)
    assert got["spec"]["nodeName"] == "n"


async def test_errors_are_status_in_protobuf(client: Any, codec: Any) -> None:
    status = await pb(await client.get(PODS + "/absent", headers=ACCEPT), codec, 404)
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "NotFound", 404)
    assert status["message"] == 'pods "absent" not found'
    await client.post(PODS, data=codec.encode(pod()), headers=SEND)
    conflict = await pb(await client.post(PODS, data=codec.encode(pod()), headers=SEND), codec, 409)
    assert conflict["reason"] == "AlreadyExists"
    # A client that asked for JSON (or only a transformation, here a Table) gets its errors in JSON.
    table_only = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
    r = await client.get(PODS + "/absent", headers=table_only)
    assert r.status == 404 and r.headers["Content-Type"] == "application/json"
    assert (await r.json())["reason"] == "NotFound"


async def test_malformed_and_mismatched_bodies(client: Any, codec: Any) -> None:
    # Not protobuf at all: the protobuf serializer's error, as create.go's transformDecodeError words it.
    r = await client.post(PODS, data=b'{"kind":"Pod"}', headers=SEND)
    status = await pb(r, codec, 400)
    assert status["message"] == (
        "the object provided is unrecognized (must be of type Pod): provided data does not appear to be a "
        'protobuf message, expected prefix [107 56 115 0] ({"kind":"Pod"})'
    )
    r = await client.post(PODS, data=b"k8s\x00\xff\xfe", headers=SEND)
    status = await pb(r, codec, 400)
    assert status["reason"] == "BadRequest"
    assert status["message"].startswith("the object provided is unrecognized (must be of type Pod): ")
    # An envelope naming another kind or version: the same errors as the JSON body gets.
    for path, body in ((PODS, claim()), (CLAIMS, pod()), (CLAIMS, {**claim(), "apiVersion": "resource.k8s.io/v1"})):
        as_json = await client.post(path, json=body)
        as_protobuf = await client.post(path, data=codec.encode(body), headers={"Content-Type": PB})
        assert as_json.status == as_protobuf.status == 400
        assert (await as_json.json())["message"] == (await as_protobuf.json())["message"]
    # A type nobody decodes: 415 listing the body types.
    r = await client.post(PODS, data=b"x", headers={"Content-Type": "text/plain", **ACCEPT})
    status = await pb(r, codec, 415)
    assert (status["reason"], status["message"]) == ("UnsupportedMediaType", UNKNOWN_FORMAT)


async def test_partial_object_metadata_in_protobuf(client: Any, backend: Any, codec: Any) -> None:
    backend.seed(POD_RT, {"metadata": {"name": "a", "namespace": "ns", "labels": {"x": "1"}}, "spec": {"n": 1}})
    listed = await pb(await client.get(PODS, headers={"Accept": METADATA_LIST}), codec)
    assert (listed["kind"], listed["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert listed["items"][0]["metadata"]["labels"] == {"x": "1"} and "spec" not in listed["items"][0]
    accept = f"{PB};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
    one = await pb(await client.get(PODS + "/a", headers={"Accept": accept}), codec)
    assert (one["kind"], one["metadata"]["name"]) == ("PartialObjectMetadata", "a")


async def test_tables_stay_json(client: Any, backend: Any, codec: Any) -> None:
    backend.seed(POD_RT, {"metadata": {"name": "a", "namespace": "ns"}})
    table_pb = f"{PB};as=Table;v=v1;g=meta.k8s.io"
    r = await client.get(PODS, headers={"Accept": table_pb})
    assert r.status == 406 and r.headers["Content-Type"] == "application/json"  # nothing left to answer errors in
    r = await client.get(PODS, headers={"Accept": f"{table_pb},{PB}"})
    assert (await pb(r, codec))["kind"] == "PodList"  # kube-apiserver answers the next clause
    r = await client.get(PODS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io," + PB})
    assert r.headers["Content-Type"] == "application/json" and (await r.json())["kind"] == "Table"


async def test_json_is_unchanged(client: Any, backend: Any) -> None:
    backend.seed(POD_RT, {"metadata": {"name": "a", "namespace": "ns"}})
    for accept in (None, "application/json", "*/*", "application/json, application/vnd.kubernetes.protobuf"):
        r = await client.get(PODS + "/a", headers={"Accept": accept} if accept else None)
        assert r.status == 200 and r.headers["Content-Type"] == "application/json"
        assert (await r.json())["metadata"]["name"] == "a"


# ----------------------------------------------------------------------------- watch


class Frames:
    """Reads a protobuf watch stream frame by frame."""

    def __init__(self, resp: Any, codec: Any) -> None:
        self.resp, self.codec, self.buf = resp, codec, b""
        self.pending: list[dict[str, Any]] = []

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        while not self.pending:
            chunk = await asyncio.wait_for(self.resp.content.read(65536), timeout)
            assert chunk, "stream ended"
            events, self.buf = self.codec.decode_watch_frames(self.buf + chunk)
            self.pending.extend({"type": t, "object": o} for t, o in events)
        return self.pending.pop(0)


async def test_watch_in_protobuf_frames(client: Any, backend: Any, codec: Any) -> None:
    backend.seed(POD_RT, {"metadata": {"name": "a", "namespace": "ns"}})
    resp = await client.get(PODS + "?watch=1&allowWatchBookmarks=true", headers=ACCEPT)
    assert resp.status == 200 and resp.headers["Content-Type"] == PB_WATCH
    frames = Frames(resp, codec)
    ev = await frames.next()
    assert ev["type"] == "ADDED" and ev["object"]["kind"] == "Pod" and ev["object"]["metadata"]["name"] == "a"
    await client.post(PODS, data=codec.encode(pod("b")), headers=SEND)
    ev = await frames.next()
    assert (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", "b")
    await backend.wait_for_watches(1)
    backend.send_bookmark()
    ev = await frames.next()
    assert ev["type"] == "BOOKMARK"
    assert ev["object"]["kind"] == "Pod" and ev["object"]["metadata"]["resourceVersion"] == str(backend.rv)
    resp.close()


async def test_watch_stream_media_type_and_metadata(client: Any, backend: Any, codec: Any) -> None:
    backend.seed(POD_RT, {"metadata": {"name": "a", "namespace": "ns", "labels": {"x": "1"}}})
    resp = await client.get(PODS + "?watch=1", headers={"Accept": PB_WATCH})
    assert resp.headers["Content-Type"] == PB_WATCH
    assert (await Frames(resp, codec).next())["object"]["metadata"]["name"] == "a"
    resp.close()
    accept = f"{PB};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
    resp = await client.get(PODS + "?watch=1", headers={"Accept": accept})
    ev = await Frames(resp, codec).next()
    assert ev["object"]["kind"] == "PartialObjectMetadata" and ev["object"]["metadata"]["labels"] == {"x": "1"}
    resp.close()
    # YAML cannot be streamed: 406 listing the stream types (NegotiateOutputMediaTypeStream).
    # The Status itself is negotiated as any error (ErrorNegotiated): YAML.
    r = await client.get(PODS + "?watch=1", headers={"Accept": "application/yaml"})
    assert r.status == 406 and r.headers["Content-Type"] == "application/yaml"
    assert yaml.safe_load(await r.read())["message"] == (
        "only the following media types are accepted: application/json;stream=watch, "
        "application/vnd.kubernetes.protobuf;stream=watch"
    )


async def test_watch_expired_is_a_status_frame(client: Any, backend: Any, codec: Any) -> None:
    backend.seed(POD_RT, {"metadata": {"name": "a", "namespace": "ns"}})
    backend.oldest = backend.rv
    resp = await client.get(PODS + "?watch=1&resourceVersion=1", headers=ACCEPT)
    assert resp.status == 200 and resp.headers["Content-Type"] == PB_WATCH
    frames = Frames(resp, codec)
    ev = await frames.next()
    assert ev["type"] == "ERROR"
    assert (ev["object"]["kind"], ev["object"]["code"], ev["object"]["reason"]) == ("Status", 410, "Expired")
    assert await resp.content.read() == b""  # the stream ends


# ------------------------------------------------------------------------- discovery


async def test_discovery_as_client_go_asks(client: Any, codec: Any) -> None:
    # client-go's discovery always asks JSON first for /api and /apis (aggregated v2, then v1).
    v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    r = await client.get("/apis", headers={"Accept": f"{v2},application/json"})
    assert r.headers["Content-Type"] == v2 and (await r.json())["kind"] == "APIGroupDiscoveryList"
    # The legacy documents with a protobuf client's Accept: protobuf, as kube-apiserver answers.
    for path, kind in (("/api", "APIVersions"), ("/apis", "APIGroupList"), ("/api/v1", "APIResourceList")):
        doc = await pb(await client.get(path, headers={"Accept": f"{PB},application/json"}), codec)
        assert doc["kind"] == kind
    r = await client.get("/apis/resource.k8s.io", headers={"Accept": f"{PB},application/json"})
    assert (await pb(r, codec))["kind"] == "APIGroup"
    # Aggregated discovery in protobuf, with the GVK in the Content-Type.
    r = await client.get("/api", headers={"Accept": f"{PB};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    raw = await r.read()
    assert r.status == 200
    assert r.headers["Content-Type"] == f"{PB};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert codec.decode(raw)["kind"] == "APIGroupDiscoveryList"
    etag = r.headers["ETag"]
    r = await client.get(
        "/api", headers={"Accept": f"{PB};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "If-None-Match": etag}
    )
    assert r.status == 304


async def test_leader_election_and_events_in_protobuf(client: Any, codec: Any) -> None:
    # What kube-scheduler and kube-controller-manager write first: their Lease, then events.k8s.io/v1 Events.
    leases = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0},
    }
    created = await pb(await client.post(leases, data=codec.encode(lease), headers=SEND), codec, 201)
    assert created["spec"]["holderIdentity"] == "a" and created["spec"]["leaseDurationSeconds"] == 15
    created["spec"]["holderIdentity"] = "b"
    renewed = await pb(await client.put(leases + "/kube-scheduler", data=codec.encode(created), headers=SEND), codec)
    assert renewed["spec"]["holderIdentity"] == "b"
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "p.1", "namespace": "ns"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-a",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "ns", "name": "p"},
        "note": "Successfully assigned ns/p to n",
        "type": "Normal",
    }
    events = "/apis/events.k8s.io/v1/namespaces/ns/events"
    posted = await pb(await client.post(events, data=codec.encode(event), headers=SEND), codec, 201)
    assert (posted["apiVersion"], posted["kind"], posted["reason"]) == ("events.k8s.io/v1", "Event", "Scheduled")
    assert posted["regarding"]["name"] == "p"
