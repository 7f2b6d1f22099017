"""Each object version is encoded once and its bytes reused by every watcher, list and get.

`services.apiserver.encoded_objects.EncodedObjects` is a least-recently-used map bounded by bytes; the HTTP
handlers assemble bodies from its entries. The assembled bodies must be the bytes encoding the whole response
gives (`services.api.protobuf.encode`, whose bytes equal Go's: tests/unit/protobuf/test_proto_golden.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from services.api import protobuf
from services.api.types.registry import by_resource
from services.apiserver.encoded_objects import Encoded, EncodedObjects
from services.apiserver.http.server import SETTINGS

PB = "application/vnd.kubernetes.protobuf"
ACCEPT = {"Accept": PB + ", */*"}
PODS = "/api/v1/namespaces/ns/pods"
POD_RT = by_resource("", "pods")
METADATA = f"{PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,{PB};as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def key(name: str) -> Any:
    return ("", "v1", "", "pods", "ns", name, "1", "object", "protobuf")


def enc(size: int) -> Encoded:
    return Encoded("v1", "Pod", b"x" * size)


@pytest.mark.parametrize(
    ("max_bytes", "sizes", "kept"),
    [
        (100, [40, 40], ["a", "b"]),  # both fit
        (100, [40, 40, 40], ["b", "c"]),  # the least recently used goes
        (100, [150], []),  # larger than the whole budget: answered, never kept
        (100, [100, 1], ["b"]),
    ],
)
def test_bounded_by_bytes(max_bytes: int, sizes: list[int], kept: list[str]) -> None:
    cache = EncodedObjects(max_bytes=max_bytes)
    names = "abcdefgh"
    for name, size in zip(names, sizes, strict=False):
        assert cache.get(key(name), lambda size=size: enc(size)).data == b"x" * size
    assert [k[5] for k in cache._entries] == kept
    assert cache.size == sum(len(e.data) for e in cache._entries.values()) <= max_bytes


def test_a_hit_is_recently_used_and_not_made_again() -> None:
    cache = EncodedObjects(max_bytes=100)
    cache.get(key("a"), lambda: enc(40))
    cache.get(key("b"), lambda: enc(40))
    made: list[str] = []
    assert cache.get(key("a"), lambda: made.append("a") or enc(1)).data == b"x" * 40
    cache.get(key("c"), lambda: enc(40))  # drops b, not the just-used a
    assert made == [] and (cache.hits, cache.misses) == (1, 3)
    assert [k[5] for k in cache._entries] == ["a", "c"]


def test_a_failed_encoding_keeps_nothing() -> None:
    cache = EncodedObjects()

    def fail() -> Encoded:
        raise protobuf.ProtobufEncodeError("bad")

    with pytest.raises(protobuf.ProtobufEncodeError):
        cache.get(key("a"), fail)
    assert len(cache) == 0 and cache.size == 0


# ------------------------------------------------------------------------- through the HTTP app


def seed_pods(backend: Any, n: int) -> None:
    for i in range(n):
        backend.seed(
            POD_RT,
            {
                "metadata": {"name": f"p{i}", "namespace": "ns", "labels": {"i": str(i)}},
                "spec": {"containers": [{"name": "c", "image": "x"}], "nodeName": f"n{i}"},
            },
        )


async def test_list_and_get_bodies_equal_encoding_the_whole_answer(client: Any, backend: Any) -> None:
    seed_pods(backend, 3)
    for path in (PODS, PODS + "/p1", PODS + "?limit=2"):
        as_json = await (await client.get(path)).read()
        for _ in range(2):  # encoded, then from the kept bytes
            r = await client.get(path, headers=ACCEPT)
            assert r.status == 200 and r.headers["Content-Type"] == PB
            assert await r.read() == protobuf.encode(orjson.loads(as_json)), path
            assert await (await client.get(path)).read() == as_json  # JSON from kept bytes too
    # Metadata only (kube-controller-manager's garbage collector), from the same object versions.
    for path in (PODS, PODS + "/p2"):
        as_json = orjson.loads(
            await (await client.get(path, headers={"Accept": METADATA.replace(PB, "application/json")})).read()
        )
        r = await client.get(path, headers={"Accept": METADATA})
        assert await r.read() == protobuf.encode(as_json)
        assert as_json["kind"].startswith("PartialObjectMetadata")


async def test_an_empty_list(client: Any) -> None:
    r = await client.get(PODS, headers=ACCEPT)
    raw = await r.read()
    as_json = orjson.loads(await (await client.get(PODS)).read())
    assert as_json["items"] == [] and raw == protobuf.encode(as_json)
    doc = protobuf.decode(raw)
    assert (doc["kind"], doc["items"]) == ("PodList", None)  # no items on the wire: Go's JSON of it shows null


async def test_watchers_share_one_encoding_per_object_version(client: Any, backend: Any) -> None:
    settings = client.server.app[SETTINGS]
    seed_pods(backend, 1)
    streams = [await client.get(PODS + "?watch=1", headers=ACCEPT) for _ in range(3)]
    json_stream = await client.get(PODS + "?watch=1")
    await backend.wait_for_watches(4)

    async def frames(resp: Any, count: int) -> bytes:
        buf = b""
        while True:
            events, _ = protobuf.decode_watch_frames(buf)
            if len(events) >= count:
                return buf
            buf += await asyncio.wait_for(resp.content.read(65536), 5)

    seen = [await frames(s, 1) for s in streams]
    assert (
        seen[0]
        == seen[1]
        == seen[2]
        == protobuf.encode_watch_frame("ADDED", protobuf.decode_watch_frames(seen[0])[0][0][1])
    )
    misses = settings.encodings.misses
    backend.seed(POD_RT, {"metadata": {"name": "q", "namespace": "ns"}})
    after = [await frames(s, 1) for s in streams]
    assert after[0] == after[1] == after[2]
    [(kind, obj)] = protobuf.decode_watch_frames(after[0])[0]
    assert (kind, obj["metadata"]["name"]) == ("ADDED", "q")
    assert after[0] == protobuf.encode_watch_frame("ADDED", obj)
    line = b""
    while line.count(b"\n") < 2:
        line += await asyncio.wait_for(json_stream.content.read(65536), 5)
    assert orjson.loads(line.splitlines()[1]) == {
        "type": "ADDED",
        "object": orjson.loads(await (await client.get(PODS + "/q")).read()),
    }
    # One protobuf and one JSON encoding of the new version for four watchers; the gets above reused them.
    assert settings.encodings.misses - misses == 2
    for s in (*streams, json_stream):
        s.close()


async def test_each_url_version_gets_its_own_encoding(client: Any, backend: Any) -> None:
    claim = {
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }
    backend.seed(by_resource("resource.k8s.io", "resourceclaims"), claim)
    for version in ("v1", "v1beta2", "v1", "v1beta1"):
        r = await client.get(f"/apis/resource.k8s.io/{version}/namespaces/ns/resourceclaims/c", headers=ACCEPT)
        got = protobuf.decode(await r.read())
        assert got["apiVersion"] == f"resource.k8s.io/{version}"
        as_json = orjson.loads(
            await (await client.get(f"/apis/resource.k8s.io/{version}/namespaces/ns/resourceclaims/c")).read()
        )
        assert got == protobuf.decode(protobuf.encode(as_json))
