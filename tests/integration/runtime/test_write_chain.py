"""`Client.write_chain` through a running committer, on both backends: dependent writes sent at once."""

from __future__ import annotations

from services.api.machinery.status import StatusError
from services.bus import open_bus
from services.runtime.client import Client
from services.testing.harness import ADMIN, LogHarness
from topics.declarations import declarations

GROUP, CLAIMS = "resource.k8s.io", "resourceclaims"
FINALIZER = "resource.kubernetes.io/delete-protection"


def claim(name: str) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }


async def test_finalizer_then_status_in_one_trip(log: LogHarness) -> None:
    client = await log.client()
    created = await client.create(GROUP, CLAIMS, claim("c"))
    meta = created["metadata"]
    with_finalizer = {**created, "metadata": {**meta, "finalizers": [FINALIZER]}}
    reserved = {
        **with_finalizer,
        "metadata": {k: v for k, v in with_finalizer["metadata"].items() if k != "resourceVersion"},
        "status": {
            "allocation": {
                "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "g0"}]}
            },
            "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}],
        },
    }
    results = await client.write_chain(
        [
            client.request("update", GROUP, CLAIMS, "default", "c", obj=with_finalizer),
            client.request("update_status", GROUP, CLAIMS, "default", "c", obj=reserved, after_version=True),
        ]
    )
    first, second = results
    assert isinstance(first, dict) and isinstance(second, dict), results
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    # Read-your-writes: the client's informer has both by the time the chain returns.
    stored = client.get(GROUP, CLAIMS, "default", "c")
    assert stored is not None
    assert stored["metadata"]["finalizers"] == [FINALIZER]
    assert stored["status"]["reservedFor"][0]["name"] == "p"


async def test_a_failed_write_stops_the_rest_of_the_chain(log: LogHarness) -> None:
    client = await log.client()
    await client.create(GROUP, CLAIMS, claim("taken"))
    results = await client.write_chain(
        [
            client.request("create", GROUP, CLAIMS, "default", "taken", obj=claim("taken")),
            client.request("create", GROUP, CLAIMS, "default", "second", obj=claim("second")),
        ]
    )
    first, second = results
    assert isinstance(first, StatusError) and first.status["reason"] == "AlreadyExists"
    assert isinstance(second, StatusError) and second.code == 409
    assert "was not applied" in second.status["message"]
    assert client.get(GROUP, CLAIMS, "default", "second") is None


async def test_no_answer_is_every_writes_answer(url: str) -> None:
    """No committer: the chain's timeout answers each write (any may have been applied); nothing raises."""
    bus = open_bus(url)
    await bus.start()
    try:
        await bus.ensure_topics(declarations())
        client = Client(bus, user=ADMIN, timeout=0.3, attempts=1)
        await client.start()
        try:
            results = await client.write_chain(
                [
                    client.request("create", GROUP, CLAIMS, "default", "a", obj=claim("a")),
                    client.request("create", GROUP, CLAIMS, "default", "b", obj=claim("b")),
                ]
            )
        finally:
            await client.close()
    finally:
        await bus.close()
    assert len(results) == 2
    for result in results:
        assert isinstance(result, StatusError) and result.code == 504, result
