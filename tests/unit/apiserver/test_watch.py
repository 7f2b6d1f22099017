"""Watch streams: chunked JSON lines, resume, bookmarks, 410, timeouts, tables, limits."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from services.api.types.registry import by_resource

PODS = "/api/v1/namespaces/ns/pods"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
POD_RT = by_resource("", "pods")


async def next_event(resp: Any, timeout: float = 5.0) -> dict[str, Any]:
    line = await asyncio.wait_for(resp.content.readline(), timeout)
    assert line, "stream ended"
    doc: dict[str, Any] = orjson.loads(line)
    return doc


def seed(backend: Any, name: str, **labels: str) -> dict[str, Any]:
    obj: dict[str, Any] = backend.seed(POD_RT, {"metadata": {"name": name, "namespace": "ns", "labels": labels}})
    return obj


async def test_watch_streams_initial_and_later_events(client: Any, backend: Any) -> None:
    seed(backend, "a")
    resp = await client.get(PODS + "?watch=1")
    assert resp.status == 200
    assert resp.headers["Transfer-Encoding"] == "chunked"
    assert resp.headers["Content-Type"].startswith("application/json")
    ev = await next_event(resp)
    assert ev["type"] == "ADDED" and ev["object"]["metadata"]["name"] == "a"
    await client.patch(
        PODS + "/a", data=b'{"metadata":{"labels":{"x":"1"}}}', headers={"Content-Type": "application/merge-patch+json"}
    )
    ev = await next_event(resp)
    assert ev["type"] == "MODIFIED" and ev["object"]["metadata"]["labels"] == {"x": "1"}
    await client.delete(PODS + "/a")
    ev = await next_event(resp)
    assert ev["type"] == "DELETED"
    resp.close()


async def test_watch_resumes_after_resource_version(client: Any, backend: Any) -> None:
    first = seed(backend, "a")
    seed(backend, "b")
    seed(backend, "c")
    resp = await client.get(PODS + f"?watch=true&resourceVersion={first['metadata']['resourceVersion']}")
    names = [(await next_event(resp))["object"]["metadata"]["name"] for _ in range(2)]
    assert names == ["b", "c"]
    resp.close()


async def test_watch_path_and_single_object_watch(client: Any, backend: Any) -> None:
    seed(backend, "a")
    seed(backend, "b")
    resp = await client.get("/api/v1/watch/namespaces/ns/pods/b")
    ev = await next_event(resp)
    assert ev["object"]["metadata"]["name"] == "b"
    resp.close()


async def test_watch_with_selectors(client: Any, backend: Any) -> None:
    seed(backend, "a", app="x")
    seed(backend, "b", app="y")
    resp = await client.get(PODS + "?watch=1&labelSelector=app%3Dy")
    ev = await next_event(resp)
    assert ev["object"]["metadata"]["name"] == "b"
    resp.close()
    r = await client.get(PODS + "?watch=1&fieldSelector=spec.bogus%3D1")
    assert r.status == 400 and (await r.json())["message"] == "field label not supported: spec.bogus"


async def test_too_old_resource_version_is_an_error_event(client: Any, backend: Any) -> None:
    seed(backend, "a")
    backend.oldest = backend.rv
    resp = await client.get(PODS + "?watch=1&resourceVersion=5")
    assert resp.status == 200
    ev = await next_event(resp)
    assert ev["type"] == "ERROR"
    assert ev["object"]["code"] == 410 and ev["object"]["reason"] == "Expired"
    assert ev["object"]["message"].startswith("too old resource version: 5")
    assert await resp.content.readline() == b""  # the stream ends


async def test_bookmarks_only_when_asked(client: Any, backend: Any) -> None:
    seed(backend, "a")
    resp = await client.get(PODS + f"?watch=1&resourceVersion={backend.rv}&allowWatchBookmarks=true")
    await backend.wait_for_watches(1)  # the backend's watch has started: the bookmark reaches it
    backend.send_bookmark()
    ev = await next_event(resp)
    assert ev == {
        "type": "BOOKMARK",
        "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": str(backend.rv)}},
    }
    resp.close()
    resp = await client.get(PODS + f"?watch=1&resourceVersion={backend.rv}")
    await backend.wait_for_watches(2)
    backend.send_bookmark()
    seed(backend, "b")  # a later event: had the bookmark been passed on, it would come first
    ev = await next_event(resp)
    assert ev["type"] == "ADDED"  # the bookmark was not passed on
    resp.close()


async def test_send_initial_events(client: Any, backend: Any) -> None:
    seed(backend, "a")
    r = await client.get(PODS + "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true")
    assert r.status == 422
    assert "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan" in (await r.json())["message"]
    resp = await client.get(
        PODS
        + "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion="
    )
    assert resp.status == 422  # resourceVersionMatch needs a resourceVersion
    resp = await client.get(
        PODS
        + "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=0"
    )
    ev = await next_event(resp)
    assert ev["type"] == "ADDED"
    ev = await next_event(resp)
    assert ev["type"] == "BOOKMARK"
    assert ev["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    resp.close()


async def test_timeout_seconds_ends_stream(client: Any, backend: Any) -> None:
    seed(backend, "a")
    resp = await client.get(PODS + "?watch=1&timeoutSeconds=1")
    ev = await next_event(resp)
    assert ev["type"] == "ADDED"
    assert await asyncio.wait_for(resp.content.readline(), 5) == b""


async def test_table_watch_headers_first_only(client: Any, backend: Any) -> None:
    seed(backend, "a")
    seed(backend, "b")
    resp = await client.get(PODS + "?watch=1", headers={"Accept": TABLE})
    first, second = await next_event(resp), await next_event(resp)
    assert first["object"]["kind"] == "Table" and "columnDefinitions" in first["object"]
    assert first["object"]["rows"][0]["cells"][0] == "a"
    assert "columnDefinitions" not in second["object"] and second["object"]["rows"][0]["cells"][0] == "b"
    resp.close()


async def test_watch_limit_per_user(make_client: Any, backend: Any) -> None:
    client = await make_client(max_watches_per_user=1)
    resp = await client.get(PODS + "?watch=1")
    assert resp.status == 200
    r = await client.get(PODS + "?watch=1")
    assert r.status == 429
    assert r.headers["Retry-After"] == "1"
    assert (await r.json())["reason"] == "TooManyRequests"
    resp.close()
    await backend.wait_for_open_watches(0)  # the server noticed the closed stream and freed the slot
    r = await client.get(PODS + "?watch=1&timeoutSeconds=1")
    assert r.status == 200
    r.close()


async def test_head_of_a_watch_is_headers_without_a_stream(client: Any, backend: Any) -> None:
    """A body after a HEAD answer would be read as the next response (found by the random-path fuzz)."""
    seed(backend, "a")
    seed(backend, "b")
    resp = await client.head("/api/v1/watch/namespaces/ns/pods?timeoutSeconds=30")
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("application/json")
    after = await client.get(PODS)  # the connection is still in step
    assert after.status == 200 and len((await after.json())["items"]) == 2


def test_object_leaving_a_selection_is_deleted_as_it_was() -> None:
    """kube's cacheWatcher: the DELETED event of an object that stops matching carries the previous object with the
    change's resourceVersion (found by the oracle suite, watch-label-selector-transitions)."""
    from services.apiserver.watch_cache import Watcher
    from services.runtime.informer import Change

    old = {"metadata": {"name": "a", "labels": {"pick": "yes"}, "resourceVersion": "5"}}
    new = {"metadata": {"name": "a", "labels": {"pick": "no"}, "resourceVersion": "9"}}
    watcher = Watcher("", "pods", None, lambda o: o["metadata"]["labels"].get("pick") == "yes")
    change = Change(9, 0, "MODIFIED", "", "pods", "ns", "a", new, old, None)
    assert watcher.translate(change) == (
        "DELETED",
        {"metadata": {"name": "a", "labels": {"pick": "yes"}, "resourceVersion": "9"}},
    )
    assert old["metadata"]["resourceVersion"] == "5"  # the cached object is not changed
