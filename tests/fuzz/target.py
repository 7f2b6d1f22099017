"""The seeded state of a fuzz target and the liveness check every fuzz test ends with."""

from __future__ import annotations

from tests.fuzz.fuzz_support import FIXTURE, NS_OBJECT, RESOURCES, FuzzApi, collection_path, object_path, rt_of
from tests.fuzz.mutations import base_manifest, unique_name

TOKEN = "fuzz-admin-token"  # a system:masters user of the target's token file


async def seed(api: FuzzApi) -> None:
    await api.json("POST", "/api/v1/namespaces", NS_OBJECT)
    for rt in RESOURCES:
        name = f"{FIXTURE}-ns" if rt.kind == "Namespace" else FIXTURE
        await api.json("POST", collection_path(rt), base_manifest(rt.kind, name))


async def assert_still_serving(api: FuzzApi) -> None:
    health = await api.request("GET", "/healthz")
    assert (health.status, health.body) == (200, b"ok")
    pod = await api.json("GET", object_path(rt_of("Pod"), FIXTURE))
    assert pod["metadata"]["name"] == FIXTURE
    claim = base_manifest("ResourceClaim", unique_name("alive"))
    created = await api.json("POST", collection_path(rt_of("ResourceClaim")), claim)
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
