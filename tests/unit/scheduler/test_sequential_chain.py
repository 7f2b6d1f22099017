"""A chain decided one write at a time (in-memory clients): the committer's rule, write by write."""

from __future__ import annotations

import copy
from typing import Any

from services.api.machinery.status import StatusError
from services.scheduler.client import PODS, RESOURCE_CLAIMS, Write

from .fake_client import FakeClient


def claim(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {}}


def without_version(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}}


async def test_a_chain_applies_each_write_on_the_version_the_one_before_wrote() -> None:
    client = FakeClient()
    stored = client.put(RESOURCE_CLAIMS, claim("c"))
    finalized = {**stored, "metadata": {**stored["metadata"], "finalizers": ["f"]}}
    reserved = {**without_version(finalized), "status": {"reservedFor": [{"name": "p"}]}}
    first, second = await client.write_chain(
        [
            Write("update", RESOURCE_CLAIMS, obj=finalized),
            Write("update_status", RESOURCE_CLAIMS, obj=reserved, after_version=True),
        ]
    )
    assert isinstance(first, dict) and isinstance(second, dict)
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    assert client.stored(RESOURCE_CLAIMS, "c", "default") == second
    assert second["metadata"]["finalizers"] == ["f"] and second["status"] == {"reservedFor": [{"name": "p"}]}
    assert client.trips == [["update resourceclaims", "update resourceclaims/status"]]


async def test_writes_after_a_refused_one_are_refused_unapplied() -> None:
    client = FakeClient()
    stored = client.put(RESOURCE_CLAIMS, claim("c"))
    client.put(RESOURCE_CLAIMS, stored)  # someone else wrote: stored's version is old
    before = client.stored(RESOURCE_CLAIMS, "c", "default")
    pod = client.put(PODS, {"metadata": {"name": "p", "namespace": "default"}, "spec": {}})
    binding = {"metadata": {"name": "p", "namespace": "default"}, "target": {"name": "n"}}
    first, second, third = await client.write_chain(
        [
            Write("update", RESOURCE_CLAIMS, obj={**stored, "metadata": {**stored["metadata"], "finalizers": ["f"]}}),
            Write("update_status", RESOURCE_CLAIMS, obj={**without_version(stored), "status": {}}, after_version=True),
            Write("create", PODS, obj=binding, namespace="default", subresource="binding"),
        ]
    )
    assert isinstance(first, StatusError) and first.code == 409 and "the object has been modified" in str(first)
    for refused in (second, third):
        assert isinstance(refused, StatusError) and (refused.code, refused.reason) == (409, "Conflict")
        assert "not applied: the request it was sent after (" in str(refused)
        assert str(refused).endswith(") was not applied")
    assert client.stored(RESOURCE_CLAIMS, "c", "default") == before
    assert client.stored(PODS, "p", "default") == pod  # not bound
    assert client.verbs() == ["update resourceclaims"]  # the refused ones never reached the objects
    assert client.trips == [["update resourceclaims", "update resourceclaims/status", "create pods/binding"]]


async def test_after_version_refuses_a_write_someone_came_before() -> None:
    client = FakeClient()
    stored = client.put(RESOURCE_CLAIMS, claim("c"))

    def interleave(verb: str, what: str, obj: object) -> None:
        if what == "resourceclaims/status":  # another writer, between the chain's two writes
            current = client.stored(RESOURCE_CLAIMS, "c", "default")
            assert current is not None
            client.put(RESOURCE_CLAIMS, current)

    client.reactors.append(interleave)
    first, second = await client.write_chain(
        [
            Write("update", RESOURCE_CLAIMS, obj=copy.deepcopy(stored)),
            Write("update_status", RESOURCE_CLAIMS, obj={**without_version(stored), "status": {}}, after_version=True),
        ]
    )
    assert isinstance(first, dict)
    assert isinstance(second, StatusError) and second.code == 409 and "the object has been modified" in str(second)


async def test_after_version_on_another_object_is_refused() -> None:
    client = FakeClient()
    a = client.put(RESOURCE_CLAIMS, claim("a"))
    b = client.put(RESOURCE_CLAIMS, claim("b"))
    first, second = await client.write_chain(
        [
            Write("update", RESOURCE_CLAIMS, obj=a),
            Write("update_status", RESOURCE_CLAIMS, obj={**without_version(b), "status": {}}, after_version=True),
        ]
    )
    assert isinstance(first, dict)
    assert isinstance(second, StatusError) and second.code == 409 and "the object has been modified" in str(second)
    assert "status" not in (client.stored(RESOURCE_CLAIMS, "b", "default") or {})
