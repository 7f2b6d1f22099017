"""Status responses: codes, reasons and messages clients branch on."""

from __future__ import annotations

import asyncio
from typing import Any

from services.api.machinery.field_errors import ErrorType, FieldError
from services.api.machinery.status import StatusError, invalid

from .memory_backend import MemoryBackend

PODS = "/api/v1/namespaces/ns/pods"


async def status_of(resp: Any) -> dict[str, Any]:
    doc: dict[str, Any] = await resp.json()
    assert doc["kind"] == "Status" and doc["apiVersion"] == "v1" and doc["status"] == "Failure"
    assert doc["code"] == resp.status
    return doc


async def test_unknown_paths(client: Any) -> None:
    for path in ("/api/v1/widgets", "/apis/nope.io/v1/things", "/nothing/here", "/api/v9"):
        r = await client.get(path)
        doc = await status_of(r)
        assert r.status == 404 and doc["reason"] == "NotFound"
        assert doc["message"] == "the server could not find the requested resource"


async def test_not_found_object(client: Any) -> None:
    r = await client.get("/apis/resource.k8s.io/v1alpha3/namespaces/ns/resourceclaims/c")
    doc = await status_of(r)
    assert doc["message"] == 'resourceclaims.resource.k8s.io "c" not found'
    assert doc["details"] == {"name": "c", "group": "resource.k8s.io", "kind": "resourceclaims"}


async def test_method_not_allowed(client: Any) -> None:
    for method, path in (
        ("POST", PODS + "/p"),
        ("PUT", PODS),
        ("PATCH", PODS),
        ("POST", "/api/v1/pods"),
        ("DELETE", "/api/v1/namespaces"),
    ):
        r = await client.request(method, path, data=b"{}")
        assert r.status == 405, (method, path)
        assert (await status_of(r))["reason"] == "MethodNotAllowed"


async def test_not_acceptable(client: Any) -> None:
    # Protobuf is served (test_protobuf_http); a Table is not, so this Accept offers nothing we speak.
    table = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"
    r = await client.get(PODS, headers={"Accept": table})
    doc = await status_of(r)
    assert r.status == 406 and doc["reason"] == "NotAcceptable"
    assert doc["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf"
    )
    r = await client.get(PODS, headers={"Accept": table + ", application/json"})
    assert r.status == 200 and (await r.json())["kind"] == "PodList"


async def test_bad_request_bodies(client: Any) -> None:
    r = await client.post(PODS, data=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status == 400 and (await status_of(r))["reason"] == "BadRequest"
    r = await client.post(PODS, data=b"", headers={"Content-Type": "application/json"})
    assert r.status == 400
    r = await client.post(PODS, data=b"\x00", headers={"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert r.status == 400 and (await status_of(r))["message"] == (
        "the object provided is unrecognized (must be of type Pod): provided data does not appear to be a "
        "protobuf message, expected prefix [107 56 115 0] (00)"
    )
    r = await client.post(PODS, data=b"\x00", headers={"Content-Type": "application/cbor"})
    assert r.status == 415 and (await status_of(r))["reason"] == "UnsupportedMediaType"
    r = await client.get(PODS + "?limit=ten")
    assert r.status == 400
    r = await client.get(PODS + "?labelSelector=a%20b")
    doc = await status_of(r)
    assert doc["message"] == "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"


async def test_body_limit(make_client: Any) -> None:
    client = await make_client(max_body_bytes=1024)
    big = {"metadata": {"name": "p", "annotations": {"a": "x" * 2000}}}
    r = await client.post(PODS, json=big)
    assert r.status == 413
    doc = await status_of(r)
    assert (
        doc["reason"] == "RequestEntityTooLarge" and doc["message"] == "Request entity too large: limit is 1024"
    )

    async def chunks() -> Any:  # no Content-Length: the limit applies while reading
        for _ in range(4):
            yield b"x" * 512

    r = await client.post(PODS, data=chunks(), headers={"Content-Type": "application/json"})
    assert r.status == 413


class FailingBackend(MemoryBackend):
    def __init__(self, error: BaseException | None = None, delay: float = 0.0) -> None:
        super().__init__()
        self.error = error
        self.delay = delay

    async def write(self, request: Any) -> Any:
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return await super().write(request)


async def test_backend_status_errors_pass_through(make_client: Any) -> None:
    err = invalid(
        "resource.k8s.io", "ResourceClaim", "c", [FieldError(ErrorType.REQUIRED, "spec.devices.requests[0].name")]
    )
    client = await make_client(backend=FailingBackend(err))
    r = await client.post(
        "/apis/resource.k8s.io/v1alpha3/namespaces/ns/resourceclaims", json={"metadata": {"name": "c"}}
    )
    doc = await status_of(r)
    assert r.status == 422 and doc["reason"] == "Invalid"
    assert (
        doc["message"] == 'ResourceClaim.resource.k8s.io "c" is invalid: spec.devices.requests[0].name: Required value'
    )
    assert doc["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.devices.requests[0].name"}
    ]


async def test_internal_error_and_timeout(make_client: Any) -> None:
    client = await make_client(backend=FailingBackend(RuntimeError("boom")))
    r = await client.post(PODS, json={"metadata": {"name": "p"}})
    doc = await status_of(r)
    assert r.status == 500 and doc["reason"] == "InternalError" and doc["message"] == "Internal error occurred: boom"
    client = await make_client(backend=FailingBackend(delay=1.0), write_timeout=0.05)
    r = await client.post(PODS, json={"metadata": {"name": "p"}})
    doc = await status_of(r)
    assert r.status == 504 and doc["reason"] == "Timeout"


async def test_gone_from_backend_list(make_client: Any) -> None:
    class GoneBackend(MemoryBackend):
        async def list(self, *args: Any, **kwargs: Any) -> Any:
            raise StatusError(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": "The provided continue parameter is too old",
                    "reason": "Expired",
                    "code": 410,
                }
            )

    client = await make_client(backend=GoneBackend())
    r = await client.get(PODS + "?continue=abc")
    assert r.status == 410 and (await status_of(r))["reason"] == "Expired"


async def test_yaml_errors_when_yaml_asked(client: Any) -> None:
    r = await client.get(PODS + "/missing", headers={"Accept": "application/yaml"})
    assert r.status == 404 and r.headers["Content-Type"].startswith("application/yaml")
    assert "reason: NotFound" in await r.text()


async def test_timeout_query_parameter_shortens_write_deadline(make_client: Any) -> None:
    client = await make_client(backend=FailingBackend(delay=1.0), write_timeout=30)
    r = await client.post(PODS + "?timeout=50ms", json={"metadata": {"name": "p"}})
    assert r.status == 504
