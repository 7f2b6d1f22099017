"""Fuzzed query parameters of LIST and WATCH, and fuzzed URLs and methods: a Status, never a 5xx.

LIST gets random combinations of ``labelSelector`` and ``fieldSelector`` (from
a small grammar of real operators, keys and values, and from random text),
``resourceVersion`` (numbers, huge numbers, negatives, words),
``resourceVersionMatch``, ``limit``, ``continue`` (real tokens, tokens with a
byte flipped, base64 of random JSON, junk), ``timeoutSeconds``,
``sendInitialEvents`` and ``allowWatchBookmarks``. WATCH gets the same; a
watch that is accepted is read until its first event (or briefly) and
closed, and an ``ERROR`` event in it must carry a 4xx Status too. Random
paths under ``/api`` and ``/apis`` with every method probe the router.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib

import orjson
import pytest
import yarl
from hypothesis import given
from hypothesis import strategies as st

from services.api import protobuf
from tests.fuzz.fuzz_support import (
    CASES,
    CODES,
    NS,
    RESOURCES,
    Answer,
    FuzzApi,
    check_answer,
    check_status,
    collection_path,
    fuzz_settings,
    one_in,
    parse_body,
    pct,
)
from tests.fuzz.mutations import JSON, TRICKY_STRINGS, dumps

pytestmark = pytest.mark.asyncio(loop_scope="module")

_KEYS = st.sampled_from(
    ["app", "team", "app.kubernetes.io/name", "example.com/x", "a/b/c", "", "-", "UPPER", "x" * 64, "ñ"]
)
_VALUES = st.sampled_from(["web", "ml", "", "a-b", "x" * 64, "(", ")", ",", "!", "=", "ñ", "v1,v2"])
_OPS = st.sampled_from(["=", "==", "!=", " in ", " notin ", "", "!", " gt ", " lt ", ">", "<", " exists "])


@st.composite
def label_selector(draw: st.DrawFn) -> str:
    def term() -> str:
        key, op = draw(_KEYS), draw(_OPS)
        if op.strip() in ("in", "notin"):
            values = draw(st.lists(_VALUES, max_size=3))
            return f"{key}{op}({','.join(values)})"
        if op in ("", "!"):
            return f"{op}{key}"
        return f"{key}{op}{draw(_VALUES)}"

    if draw(st.booleans()):
        return ",".join(term() for _ in range(draw(st.integers(1, 3))))
    return draw(st.text(max_size=20) | st.sampled_from(TRICKY_STRINGS))


@st.composite
def field_selector(draw: st.DrawFn) -> str:
    fields = st.sampled_from(
        ["metadata.name", "metadata.namespace", "spec.nodeName", "status.phase", "spec.driver", "spec.x", "", "a"]
    )

    def term() -> str:
        value = draw(_VALUES | st.sampled_from(["a\\,b", "a\\=b", "\\", "worker-1"]))
        return f"{draw(fields)}{draw(st.sampled_from(['=', '==', '!=', '', '>', '=!']))}{value}"

    if draw(st.booleans()):
        return ",".join(term() for _ in range(draw(st.integers(1, 3))))
    return draw(st.text(max_size=20) | st.sampled_from(TRICKY_STRINGS))


_RESOURCE_VERSIONS = st.sampled_from(
    ["0", "1", "2", "9" * 30, "-1", "abc", "1.5", " 1", "0x10", "", "18446744073709551616", "3e2"]
) | st.integers(min_value=-5, max_value=10**20).map(str)


@st.composite
def continue_token(draw: st.DrawFn, real: str | None) -> str:
    kind = draw(st.sampled_from(["real", "flipped", "json", "junk"]))
    if kind == "real" and real:
        return real
    if kind == "flipped" and real:
        raw = bytearray(real.encode())
        i = draw(st.integers(0, len(raw) - 1))
        raw[i] = draw(st.integers(33, 126))
        return raw.decode()
    if kind == "json":
        return base64.urlsafe_b64encode(dumps(draw(JSON))).decode()
    return draw(st.text(max_size=30) | st.sampled_from(["=", "====", "e30", "bnVsbA", "W10"]))


@st.composite
def list_query(draw: st.DrawFn, real_continue: str | None) -> str:
    params: dict[str, st.SearchStrategy[str]] = {
        "labelSelector": label_selector(),
        "fieldSelector": field_selector(),
        "resourceVersion": _RESOURCE_VERSIONS,
        "resourceVersionMatch": st.sampled_from(["Exact", "NotOlderThan", "", "exact", "Any"]),
        "limit": st.sampled_from(["1", "0", "-1", "500", "99999999999999999999", "x", "1.5"]),
        "continue": continue_token(real_continue),
        "timeoutSeconds": st.sampled_from(["1", "0", "-1", "x", "99999999999999999999"]),
        "sendInitialEvents": st.sampled_from(["true", "false", "x"]),
        "allowWatchBookmarks": st.sampled_from(["true", "false", "x"]),
        "includeObject": st.sampled_from(["None", "Object", "Metadata", "x"]),
    }
    names = draw(st.lists(st.sampled_from(sorted(params)), max_size=4, unique=True))
    return "&".join(f"{n}={pct(draw(params[n]))}" for n in names)


_ACCEPTS = [
    None,
    "application/json",
    "application/yaml",
    "application/json;as=Table;g=meta.k8s.io;v=v1",
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    "application/vnd.kubernetes.protobuf",
    "text/html",
    ";;;",
]


async def _first_continue(api: FuzzApi, path: str) -> str | None:
    answer = await api.request("GET", path, query="limit=1")
    doc = answer.doc if isinstance(answer.doc, dict) else {}
    token = (doc.get("metadata") or {}).get("continue")
    return token if isinstance(token, str) else None


@fuzz_settings(150)
@given(data=st.data())
async def test_list_query_parameters_get_a_status_never_a_5xx(api: FuzzApi, data: st.DataObject) -> None:
    rt = data.draw(st.sampled_from(RESOURCES), label="resource")
    path = data.draw(st.sampled_from([collection_path(rt), collection_path(rt, "absent-ns")]), label="path")
    if not rt.namespaced:
        path = collection_path(rt)
    query = data.draw(list_query(await _first_continue(api, path)), label="query")
    accept = data.draw(st.sampled_from(_ACCEPTS), label="accept")
    await api.send("list query", "GET", path, query=query, headers={"Accept": accept} if accept else None)


@fuzz_settings(80)
@given(data=st.data())
async def test_watch_query_parameters_get_a_status_never_a_5xx(api: FuzzApi, data: st.DataObject) -> None:
    rt = data.draw(st.sampled_from(RESOURCES), label="resource")
    path = collection_path(rt)
    query = "watch=1&" + data.draw(list_query(None), label="query")
    accept = data.draw(st.sampled_from(_ACCEPTS), label="accept")
    CASES["watch query"] += 1
    url = yarl.URL(api.url + path + "?" + query, encoded=True)
    async with api.session.get(url, headers={"Accept": accept} if accept else None) as resp:
        CODES[("watch query", resp.status)] += 1
        if resp.status != 200:
            raw = await resp.read()
            check_answer(Answer("GET", path + "?" + query, resp.status, raw, parse_body(raw, resp.content_type)))
            return
        # Accepted: the first event (initial events come at once), or nothing for a moment.
        line = b""
        framed = "protobuf" in resp.content_type  # length-prefixed protobuf frames, not JSON lines
        with contextlib.suppress(TimeoutError):
            line = await asyncio.wait_for(resp.content.read(4096) if framed else resp.content.readline(), 0.2)
    if framed and line:
        frames, _ = protobuf.decode_watch_frames(line)
        line = orjson.dumps({"type": frames[0][0], "object": frames[0][1]}) if frames else b""
    if line.strip():
        event = parse_body(line, "json")
        assert isinstance(event, dict) and event.get("type") in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR")
        if event["type"] == "ERROR":
            status = event["object"]
            check_status(Answer("GET", path, int(status.get("code", 0)), line, status))


_JUNK = st.sampled_from(["..", ".", "%2F", "%00", "%ff", "%0A", "", "x" * 300, "a%20b", "UPPER", "*"]) | st.text(
    max_size=8
).map(pct)
_PLURALS = st.sampled_from([rt.plural for rt in RESOURCES] + ["pods", "nodes", "configmaps", "bindings"])


_PREFIXES = [
    ["api", "v1"],
    ["apis", "resource.k8s.io", "v1alpha3"],
    ["apis", "resource.k8s.io", "v1beta1"],
    ["api"],
    ["apis"],
    ["apis", "resource.k8s.io"],
    ["openapi", "v3"],
    ["version"],
    ["healthz"],
    [],
]


@st.composite
def api_path(draw: st.DrawFn) -> list[str]:
    """Segments shaped like Kubernetes' URLs — mostly right for a served resource — each sometimes junk."""

    def piece(real: str | st.SearchStrategy[str]) -> str:
        if draw(one_in(6)):
            return draw(_JUNK)
        return real if isinstance(real, str) else draw(real)

    if draw(one_in(6)):
        return [piece(p) for p in draw(st.sampled_from(_PREFIXES))]
    rt = draw(st.sampled_from(RESOURCES))
    segments = [piece(p) for p in (["apis", rt.group, rt.version] if rt.group else ["api", rt.version])]
    if draw(one_in(5)):
        segments.append("watch")
    if rt.namespaced and draw(st.integers(0, 3)) > 0:
        segments += ["namespaces", piece(st.sampled_from([NS, "absent", "default"]))]
    segments.append(piece(_PLURALS) if draw(one_in(4)) else piece(rt.plural))
    if draw(st.booleans()):
        segments.append(piece(st.sampled_from(["fuzz-fixture", "fuzz-fixture-ns", "absent", "fuzz-path"])))
        if draw(st.booleans()):
            segments.append(piece(st.sampled_from(["status", "binding", "finalize", "scale", "log"])))
    if draw(one_in(8)):
        segments += draw(st.lists(_JUNK, max_size=3))
    return segments


@fuzz_settings(150)
@given(data=st.data())
async def test_random_paths_and_methods_get_a_status_never_a_5xx(api: FuzzApi, data: st.DataObject) -> None:
    segments = data.draw(api_path(), label="segments")
    path = "/" + "/".join(segments)
    method = data.draw(st.sampled_from(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]), label="method")
    body = b'{"metadata":{"name":"fuzz-path"}}' if method in ("POST", "PUT", "PATCH") else None
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    if method == "DELETE":
        method = "GET"  # deleting collections would remove the seeded fixtures; deletes are fuzzed elsewhere
    # A path may name a watch (/watch/…): timeoutSeconds=1 ends it rather than the client's timeout.
    await api.send(
        "random path", method, path, body=body, content_type=content_type if body else None, query="timeoutSeconds=1"
    )
