"""Mutated manifests of every kind, random JSON and raw bytes, sent to the REST API: a Status, never a 5xx.

Each case is one request to the running stack: a create (POST), an update
(PUT) or a status update of the seeded fixture object, or a pods/binding,
with a body from `tests.fuzz.mutations` and fuzzed write options
(fieldValidation, dryRun, fieldManager, pretty). See `fuzz_support` for the
properties every answer must have.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.fuzz_support import (
    FIXTURE,
    KINDS,
    RESOURCES,
    FuzzApi,
    collection_path,
    fuzz_settings,
    object_path,
    one_in,
    pct,
    rt_of,
)
from tests.fuzz.mutations import JSON, base_manifest, dumps, encode, mutate

pytestmark = pytest.mark.asyncio(loop_scope="module")

_OPTION_VALUES = {
    "fieldValidation": st.sampled_from(["Strict", "Warn", "Ignore", "", "strict", "All", "\u00e9"]),
    "dryRun": st.sampled_from(["All", "", "all", "None", "All,All"]),
    "fieldManager": st.sampled_from(["fuzz", "", "x" * 129, "kubectl/v1.31", "a\u0000b", "\u202e"])
    | st.text(max_size=20),
    "pretty": st.sampled_from(["true", "1", "maybe", ""]),
    # A short ?timeout= is a 504 by design (the client asked for it); only harmless values here.
    "timeout": st.sampled_from(["30s", "1m", "-1s", "abc", "99999h", "1.5h", ""]),
    "force": st.sampled_from(["true", "false", "x"]),
}


@st.composite
def write_query(draw: st.DrawFn) -> str:
    """Query options of a write, percent-encoded, sometimes with a malformed tail."""
    names = draw(st.lists(st.sampled_from(sorted(_OPTION_VALUES)), max_size=3))
    parts = [f"{n}={pct(draw(_OPTION_VALUES[n]))}" for n in names]
    if draw(one_in(10)):
        parts.append(draw(st.sampled_from(["%zz", "a=%ff", "&&", "dryRun=All&dryRun=x", "=", "%00=%00"])))
    return "&".join(parts)


def _binding() -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": FIXTURE},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "worker-1"},
    }


@pytest.mark.parametrize("kind", KINDS)
@fuzz_settings(120)
@given(data=st.data())
async def test_mutated_manifests_get_a_status_never_a_5xx(api: FuzzApi, kind: str, data: st.DataObject) -> None:
    rt = rt_of(kind)
    fixture = f"{FIXTURE}-ns" if kind == "Namespace" else FIXTURE
    verbs = [
        "create",
        "create",
        "update",
        *(["status"] if rt.has_status else []),
        *(["binding"] if kind == "Pod" else []),
    ]
    verb = data.draw(st.sampled_from(verbs), label="verb")
    if verb == "create":
        method, path, base = "POST", collection_path(rt), base_manifest(kind)
    elif verb == "update":
        method, path, base = "PUT", object_path(rt, fixture), base_manifest(kind, fixture)
    elif verb == "status":
        method, path = "PUT", object_path(rt, fixture, "status")
        base = base_manifest(kind, fixture, with_status=True)
    else:
        method, path, base = "POST", object_path(rt, FIXTURE, "binding"), _binding()
    body = encode(data, mutate(data, base))
    query = data.draw(write_query(), label="query")
    await api.send(f"manifest {verb} {kind}", method, path, body=body.data, content_type=body.content_type, query=query)


@fuzz_settings(150)
@given(data=st.data())
async def test_random_json_bodies_get_a_status_never_a_5xx(api: FuzzApi, data: st.DataObject) -> None:
    rt = data.draw(st.sampled_from(RESOURCES), label="resource")
    doc = data.draw(JSON, label="body")
    method, path = data.draw(
        st.sampled_from(
            [
                ("POST", collection_path(rt)),
                ("PUT", object_path(rt, f"{FIXTURE}-ns" if rt.kind == "Namespace" else FIXTURE)),
                ("PUT", object_path(rt, "absent")),
                ("DELETE", object_path(rt, "absent")),
            ]
        ),
        label="request",
    )
    body = encode(data, doc)
    await api.send("random JSON body", method, path, body=body.data, content_type=body.content_type)


RAW_BODIES = [
    b"",
    b" ",
    b"\x00",
    b"\xef\xbb\xbf{}",  # a UTF-8 byte order mark
    b"\xff\xfe{\x00}\x00",
    b"{",
    b"}",
    b"[",
    b"{]",
    b'{"metadata": {"name": "x"}',
    b'{"metadata": {"name": "x"}} trailing',
    b'{"a": 1,}',
    b"{'a': 1}",
    b"NaN",
    b"Infinity",
    b"-",
    b"1e99999",
    b'"\\ud800"',
    b'{"metadata": {"name": "\\ud800"}}',
    b'{"metadata": {"name": "\\u0000"}}',
    b'{"metadata": {"name": "\xc3"}}',
    b'{"metadata": {"name": "a", "name": "b", "name": "c"}}',
    b"[" * 300 + b"]" * 300,
    b'{"a":' * 300 + b"1" + b"}" * 300,
    b"[" * 5000,
    b"- a\n- b\n",
    b"a: b\n---\nc: d\n",
    b"metadata: {name: !!binary aGVsbG8=}\n",
    b"metadata: !!set {a, b}\n",
    b"metadata: {labels: {1: 2, true: x, null: y}}\n",
    b"metadata: {name: !!python/object:os.system x}\n",
    b"metadata: &a {name: *a}\n",
    b"a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b]\n"
    b"d: &d [*c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d]\n"
    b"f: &f [*e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f]\n",
    b"metadata:\n  name: 2024-01-01\n  labels: {a: 2024-01-01T00:00:00Z}\n",
    b"\t\x0b\x0c",
    b"%YAML 9.9\n---\na: b\n",
    b"spec: " + b"9" * 400 + b"\n",
]


@fuzz_settings(200)
@given(data=st.data())
async def test_raw_bodies_get_a_status_never_a_5xx(api: FuzzApi, data: st.DataObject) -> None:
    rt = data.draw(st.sampled_from(RESOURCES), label="resource")
    body = data.draw(
        st.sampled_from(RAW_BODIES)
        | st.binary(max_size=64)
        | st.builds(lambda doc: dumps(doc)[: len(dumps(doc)) // 2], JSON),  # truncated JSON
        label="body",
    )
    content_type = data.draw(
        st.sampled_from(["application/json", "application/yaml", "", "application/strategic-merge-patch+json"])
        | st.sampled_from([None, "text/plain", "application/json; charset=latin-1", "*/*", "application/"]),
        label="content type",
    )
    fixture = f"{FIXTURE}-ns" if rt.kind == "Namespace" else FIXTURE
    method, path = data.draw(
        st.sampled_from(
            [
                ("POST", collection_path(rt)),
                ("PUT", object_path(rt, fixture)),
                ("PATCH", object_path(rt, fixture)),
                ("DELETE", object_path(rt, "absent")),
                ("DELETE", collection_path(rt) + "-no-such"),
            ]
        ),
        label="request",
    )
    await api.send("raw body", method, path, body=body, content_type=content_type)
