"""JSON merge patch (RFC 7386) as evanphx/json-patch v4 applies it in the kube-apiserver."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.api.machinery.patch.merge_patch import apply_merge_patch, merge_patch_object, parse_merge_patch
from services.api.machinery.status import StatusError

# RFC 7386 appendix A, where the library agrees with the RFC
RFC_EXAMPLES: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("doc", "patch", "expected"), RFC_EXAMPLES)
def test_rfc7386_examples(doc: Any, patch: Any, expected: Any) -> None:
    before = copy.deepcopy(doc)
    assert apply_merge_patch(doc, patch) == expected
    assert doc == before


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        # kubectl label app=api / kubectl label app-
        ({"metadata": {"labels": {"app": "api"}}}, {"app": "api", "tier": "fe"}),
        ({"metadata": {"labels": {"app": None}}}, {"tier": "fe"}),
        # a null member of a map that was null in the document is pruned on insert
        ({"metadata": {"labels": {"new": "x", "gone": None}}}, {"app": "web", "tier": "fe", "new": "x"}),
    ],
)
def test_kubectl_label_patches(patch: dict[str, Any], expected: dict[str, str]) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web", "tier": "fe"}}}
    assert merge_patch_object(pod, patch)["metadata"]["labels"] == expected


def test_a_member_that_is_null_in_the_document_takes_the_pruned_patch_value() -> None:
    assert apply_merge_patch({"a": None}, {"a": {"b": None, "c": 1}}) == {"a": {"c": 1}}


def test_lists_are_replaced_with_nulls_pruned_unless_they_replace_an_object() -> None:
    doc = {"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b"}], "x": {"k": 1}}}
    patch = {"spec": {"containers": [{"name": "a", "image": None}], "x": [{"a": None}]}}
    # the library prunes a replacement for a non-object value, but returns one for an object as is
    assert apply_merge_patch(doc, patch) == {"spec": {"containers": [{"name": "a"}], "x": [{"a": None}]}}


@pytest.mark.parametrize("body", [b"null", b'"bar"', b"5", b"true", b"{", b"nope"])
def test_bad_patches_are_400_invalid_json_patch(body: bytes) -> None:
    with pytest.raises(StatusError) as info:
        parse_merge_patch(body)
    assert info.value.code == 400
    assert info.value.status["message"] == "Invalid JSON Patch"
    assert info.value.reason == "BadRequest"


def test_array_patch_replaces_the_object_which_then_does_not_decode() -> None:
    with pytest.raises(StatusError) as info:
        merge_patch_object({"kind": "Pod"}, [{"a": None}])
    assert info.value.code == 422
    assert info.value.status["details"]["causes"][0]["field"] == "patch"
    assert 'patch: Invalid value: "[{}]"' in info.value.status["message"]
