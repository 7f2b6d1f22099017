"""JSON patch (RFC 6902) with evanphx/json-patch v4 semantics and the kube-apiserver's Statuses."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from services.api.machinery.patch.json_patch import (
    apply_json_patch,
    escape_token,
    json_patch_object,
    parse_json_patch,
    unescape_token,
)
from services.api.machinery.status import StatusError

DOC: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {"a/b": "1", "c~d": "2"}},
    "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}], "nullable": None},
}


@pytest.mark.parametrize(
    ("ops", "path", "expected"),
    [
        ([{"op": "add", "path": "/metadata/labels/tier", "value": "fe"}], ("metadata", "labels"),
         {"app": "web", "tier": "fe"}),
        ([{"op": "add", "path": "/metadata/labels/app", "value": "api"}], ("metadata", "labels"), {"app": "api"}),
        ([{"op": "add", "path": "/spec/containers/0", "value": {"name": "z"}}], ("spec", "containers"),
         [{"name": "z"}, {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]),
        ([{"op": "add", "path": "/spec/containers/-", "value": {"name": "z"}}], ("spec", "containers"),
         [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}, {"name": "z"}]),
        # v4 accepts negative indices: -1 inserts before the last slot of the grown array
        ([{"op": "add", "path": "/spec/containers/-1", "value": {"name": "z"}}], ("spec", "containers"),
         [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}, {"name": "z"}]),
        ([{"op": "add", "path": "/metadata/labels/x"}], ("metadata", "labels"), {"app": "web", "x": None}),
        ([{"op": "remove", "path": "/metadata/labels/app"}], ("metadata", "labels"), {}),
        ([{"op": "remove", "path": "/spec/containers/-1"}], ("spec", "containers"), [{"name": "a", "image": "a:1"}]),
        ([{"op": "replace", "path": "/spec/containers/1/image", "value": "b:2"}], ("spec", "containers"),
         [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}]),
        # v4 quirk: replace of a missing object member adds it
        ([{"op": "replace", "path": "/metadata/labels/new", "value": "x"}], ("metadata", "labels"),
         {"app": "web", "new": "x"}),
        ([{"op": "move", "from": "/metadata/labels/app", "path": "/metadata/labels/name"}], ("metadata", "labels"),
         {"name": "web"}),
        ([{"op": "copy", "from": "/spec/containers/0", "path": "/spec/containers/-"}], ("spec", "containers"),
         [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}, {"name": "a", "image": "a:1"}]),
        # v4 quirk: copy from a missing member writes null
        ([{"op": "copy", "from": "/metadata/labels/missing", "path": "/metadata/labels/x"}], ("metadata", "labels"),
         {"app": "web", "x": None}),
        # RFC 6901 escapes: ~1 is '/', ~0 is '~'
        ([{"op": "replace", "path": "/metadata/annotations/a~1b", "value": "9"},
          {"op": "remove", "path": "/metadata/annotations/c~0d"}], ("metadata", "annotations"), {"a/b": "9"}),
        ([{"op": "test", "path": "/metadata/name", "value": "web"},
          {"op": "test", "path": "/spec/nullable", "value": None},
          {"op": "test", "path": "/metadata/missing", "value": None},
          {"op": "test", "path": "/spec/containers/0", "value": {"image": "a:1", "name": "a"}}],
         ("metadata", "name"), "web"),
    ],
    ids=lambda v: orjson.dumps(v).decode()[:60] if isinstance(v, list) else None,
)
def test_operations(ops: list[dict[str, Any]], path: tuple[str, ...], expected: Any) -> None:
    before = copy.deepcopy(DOC)
    result = apply_json_patch(DOC, ops)
    node = result
    for part in path:
        node = node[part]
    assert node == expected
    assert before == DOC  # pure: the input is untouched


def test_replace_root_and_whole_document_test() -> None:
    result = apply_json_patch(DOC, [{"op": "test", "path": "", "value": DOC},
                                    {"op": "replace", "path": "", "value": {"kind": "X"}}])
    assert result == {"kind": "X"}


@pytest.mark.parametrize(
    ("op", "reason"),
    [
        ({"op": "test", "path": "/metadata/name", "value": "other"},
         "testing value /metadata/name failed: test failed"),
        ({"op": "test", "path": "/metadata/name", "value": None},
         "testing value /metadata/name failed: test failed"),
        ({"op": "test", "path": "/metadata/missing", "value": "x"},
         "testing value /metadata/missing failed: test failed"),
        ({"op": "add", "path": "/metadata/nothere/x", "value": 1},
         'add operation does not apply: doc is missing path: "/metadata/nothere/x": missing value'),
        ({"op": "remove", "path": "/metadata/labels/nothere"},
         "error in remove for path: '/metadata/labels/nothere': "
         "Unable to remove nonexistent key: nothere: missing value"),
        ({"op": "replace", "path": "/spec/containers/5", "value": {}},
         "replace operation does not apply: doc is missing key: /spec/containers/5: missing value"),
        ({"op": "add", "path": "/spec/containers/3", "value": {}},
         "error in add for path: '/spec/containers/3': Unable to access invalid index: 3: invalid index referenced"),
        ({"op": "move", "from": "/metadata/nope", "path": "/x"},
         "error in move for path: 'nope': Unable to remove nonexistent key: nope: missing value"),
        ({"op": "bogus", "path": "/x"}, "Unexpected kind: bogus"),
        ({"path": "/x"}, "Unexpected kind: unknown"),
        ({"op": "add", "path": "no-slash", "value": 1},
         'add operation does not apply: doc is missing path: "no-slash": missing value'),
    ],
)
def test_operations_that_do_not_apply_are_generic_422(op: dict[str, Any], reason: str) -> None:
    with pytest.raises(StatusError) as info:
        apply_json_patch(DOC, [op])
    assert info.value.status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "the server rejected our request due to an error in our request",
        "reason": "Invalid",
        "details": {},
        "code": 422,
    }
    assert str(info.value.__cause__) == reason


def test_failed_operation_leaves_nothing_half_applied() -> None:
    with pytest.raises(StatusError):
        apply_json_patch(DOC, [{"op": "add", "path": "/metadata/labels/x", "value": "1"},
                               {"op": "test", "path": "/metadata/name", "value": "nope"}])
    assert "x" not in DOC["metadata"]["labels"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"op":"add"}', "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        (b'"x"', "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
        (b"[1]", "json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
        (b'[["op"]]', "json: cannot unmarshal array into Go value of type jsonpatch.Operation"),
        (b"[", "unexpected end of JSON input"),
        (b"", "unexpected end of JSON input"),
        (b"x", "invalid character 'x' looking for beginning of value"),
    ],
)
def test_malformed_bodies_are_400(body: bytes, message: str) -> None:
    with pytest.raises(StatusError) as info:
        parse_json_patch(body)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    assert info.value.status["message"] == message


def test_null_body_is_an_empty_patch() -> None:
    assert parse_json_patch(b"null") == []
    assert parse_json_patch(b"[null]") == [None]
    with pytest.raises(StatusError) as info:
        apply_json_patch(DOC, [None])
    assert str(info.value.__cause__) == "Unexpected kind: unknown"


def test_too_many_operations_is_413() -> None:
    body = orjson.dumps([{"op": "test", "path": "/kind", "value": "Pod"}] * 10001)
    with pytest.raises(StatusError) as info:
        parse_json_patch(body)
    assert info.value.code == 413
    assert info.value.status["reason"] == "RequestEntityTooLarge"
    assert info.value.status["message"] == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    )
    assert len(parse_json_patch(orjson.dumps([{"op": "test", "path": "/kind", "value": "Pod"}] * 10000))) == 10000


def test_result_that_is_not_an_object_is_422_on_patch_field() -> None:
    with pytest.raises(StatusError) as info:
        json_patch_object(DOC, [{"op": "replace", "path": "", "value": [1, 2]}])
    status = info.value.status
    assert status["code"] == 422
    assert status["reason"] == "Invalid"
    assert status["message"].startswith(' "" is invalid: patch: Invalid value: "[1,2]": couldn\'t get version/kind')
    assert status["details"]["causes"][0]["field"] == "patch"


@pytest.mark.parametrize(("raw", "escaped"), [("a/b", "a~1b"), ("c~d", "c~0d"), ("~1", "~01"), ("/~", "~1~0")])
def test_pointer_token_escaping_round_trips(raw: str, escaped: str) -> None:
    assert escape_token(raw) == escaped
    assert unescape_token(escaped) == raw


def test_numbers_compare_by_json_text_in_test() -> None:
    doc = {"spec": {"count": 1}}
    assert apply_json_patch(doc, [{"op": "test", "path": "/spec/count", "value": 1}]) == doc
    with pytest.raises(StatusError):
        apply_json_patch(doc, [{"op": "test", "path": "/spec/count", "value": 1.5}])
    with pytest.raises(StatusError):
        apply_json_patch(doc, [{"op": "test", "path": "/spec/count", "value": True}])
