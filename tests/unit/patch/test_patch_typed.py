"""Properties of the schema-aware walks that every apply and tracked write relies on."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from services.api.machinery.patch.fieldpath import FieldSet, PathElement
from services.api.machinery.patch.patch_meta import schema_for
from services.api.machinery.patch.typed import compare, merge, to_field_set

POD = schema_for("v1", "Pod")
assert POD is not None

names = st.sampled_from(["a", "b", "c", "nginx", "x/y", 'q"t'])
scalars = st.one_of(st.integers(-5, 5), st.booleans(), names, st.none())
elements = st.one_of(
    names.map(PathElement.field),
    st.lists(st.tuples(names, st.one_of(st.integers(0, 3), names)), min_size=1, max_size=2, unique_by=lambda t: t[0])
    .map(PathElement.keyed),
    scalars.map(PathElement.of_value),
    st.integers(0, 3).map(PathElement.of_index),
)
field_sets = st.lists(st.lists(elements, min_size=1, max_size=4).map(tuple), max_size=12).map(FieldSet)

containers = st.lists(
    st.fixed_dictionaries({"name": names}, optional={"image": names, "args": st.lists(names, max_size=2)}),
    max_size=3,
    unique_by=lambda c: c["name"],
)
pods = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Pod")},
    optional={
        "metadata": st.fixed_dictionaries({"name": names}, optional={
            "labels": st.dictionaries(names, names, max_size=3),
            "finalizers": st.lists(names, max_size=3, unique=True),
        }),
        "spec": st.fixed_dictionaries({}, optional={"containers": containers, "nodeName": names}),
    },
)


@settings(max_examples=200, deadline=None)
@given(field_sets)
def test_fields_v1_round_trip(fields: FieldSet) -> None:
    encoded = orjson.loads(orjson.dumps(fields.to_fields_v1()))
    assert FieldSet.from_fields_v1(encoded) == fields


@settings(max_examples=200, deadline=None)
@given(pods)
def test_an_object_compares_equal_to_itself_and_merges_into_itself(pod: dict[str, Any]) -> None:
    assert POD is not None
    removed, modified, added = compare(pod, pod, POD.root).sets()
    assert removed.empty() and modified.empty() and added.empty()
    assert merge(pod, pod, POD.root) == pod


@settings(max_examples=200, deadline=None)
@given(pods, pods)
def test_applying_a_configuration_sets_every_field_it_names(live: dict[str, Any], config: dict[str, Any]) -> None:
    assert POD is not None
    merged = merge(live, config, POD.root)
    # every value the configuration sets is in the result
    for key, value in (config.get("metadata") or {}).get("labels", {}).items():
        assert merged["metadata"]["labels"][key] == value
    for container in (config.get("spec") or {}).get("containers", []):
        (found,) = [c for c in merged["spec"]["containers"] if c["name"] == container["name"]]
        assert {k: found[k] for k in container} == container
    for finalizer in (config.get("metadata") or {}).get("finalizers", []):
        assert finalizer in merged["metadata"]["finalizers"]
    # and nothing the live object had is lost: merging never removes
    assert to_field_set(live, POD.root).difference(
        to_field_set(merged, POD.root).ensure_named_fields_are_members()
    ).paths <= {p for p in to_field_set(live, POD.root).paths if _empty_at(live, p)}
    _, modified, _ = compare(merged, merge(merged, config, POD.root), POD.root).sets()
    assert modified.empty()  # applying twice is applying once


def _empty_at(obj: Any, path: tuple[PathElement, ...]) -> bool:
    """Whether the path leads to an empty (or null) map or list, whose membership is representational."""
    node = obj
    for pe in path:
        if pe.kind == 0 and isinstance(node, dict):
            node = node.get(pe.name)
        else:
            return False
    return node in ({}, [], None)
