"""PATCH bodies of every patch type against the seeded objects: a Status or a patched object, never a 5xx.

- ``json`` (RFC 6902): lists of operations with real and made-up paths
  (``/spec/devices/requests/0``, ``/metadata/labels/a~1b``, ``/-``, ``~2``),
  every op name and odd ``from``/``value`` members;
- ``merge`` (RFC 7386) and ``strategic``: mutated fragments of the object,
  with ``null`` deletions and, for strategic, the ``$patch``,
  ``$setElementOrder``, ``$retainKeys`` and ``$deleteFromPrimitiveList``
  directives;
- ``apply`` (server-side apply, YAML): a mutated full manifest under a fuzzed
  field manager, with and without ``force``.

A patch that succeeds changes the fixture, so later cases meet the result of
earlier ones, as a long-lived object would.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.fuzz_support import FIXTURE, RESOURCES, FuzzApi, fuzz_settings, object_path, one_in, pct
from tests.fuzz.mutations import JSON, KEYS, TRICKY_STRINGS, base_manifest, dumps, encode, mutate, paths, yaml_dumps

pytestmark = pytest.mark.asyncio(loop_scope="module")

PATCH_TYPES = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


def _pointer(path: tuple[Any, ...]) -> str:
    return "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in path)


@st.composite
def json_patch(draw: st.DrawFn, target: dict[str, Any]) -> Any:
    real = [_pointer(p) for p in paths(target)]
    pointer = (
        st.sampled_from(real)
        | st.sampled_from(
            ["", "/", "/-", "/metadata/labels/a~1b", "/spec/x/0/-", "~2", "/metadata/~", "no-slash", "/0", "/" * 50]
        )
        | st.text(max_size=12).map(lambda s: "/" + s)
    )
    op = st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "", "ADD", "delete"]) | JSON},
        optional={"path": pointer | JSON, "from": pointer, "value": JSON | st.sampled_from(TRICKY_STRINGS)},
    )
    ops = draw(st.lists(op, max_size=5))
    if draw(one_in(10)):
        return draw(JSON)  # not a list at all
    return ops


@st.composite
def merge_patch(draw: st.DrawFn, target: dict[str, Any], *, strategic: bool) -> Any:
    data = draw(st.data())
    fragment: Any = mutate(data, target, at_most=2)
    if isinstance(fragment, dict) and draw(st.booleans()):
        # Keep only some top-level keys, and delete some fields with null.
        keys = sorted(k for k in fragment if isinstance(k, str))
        fragment = {k: fragment[k] for k in draw(st.lists(st.sampled_from(keys), unique=True))} if keys else {}
        for key in draw(st.lists(KEYS, max_size=2)):
            fragment[key] = None
    if strategic and isinstance(fragment, dict) and draw(st.booleans()):
        directive = draw(
            st.sampled_from(
                [
                    ("$patch", st.sampled_from(["replace", "delete", "merge", "explode", ""])),
                    ("$retainKeys", st.lists(KEYS, max_size=3) | JSON),
                    ("$setElementOrder/containers", st.lists(st.fixed_dictionaries({"name": KEYS}), max_size=3) | JSON),
                    ("$setElementOrder/finalizers", st.lists(KEYS, max_size=3) | JSON),
                    ("$deleteFromPrimitiveList/finalizers", st.lists(KEYS, max_size=3) | JSON),
                    ("$patch/unknown", JSON),
                ]
            )
        )
        where = fragment
        for step in draw(st.sampled_from([[], ["metadata"], ["spec"], ["spec", "devices"]])):
            nxt = where.get(step)
            if not isinstance(nxt, dict):
                break
            where = nxt
        where[directive[0]] = draw(directive[1])
    return fragment


@pytest.mark.parametrize("patch_type", list(PATCH_TYPES))
@fuzz_settings(110)
@given(data=st.data())
async def test_patches_get_a_status_never_a_5xx(api: FuzzApi, patch_type: str, data: st.DataObject) -> None:
    rt = data.draw(st.sampled_from(RESOURCES), label="resource")
    fixture = f"{FIXTURE}-ns" if rt.kind == "Namespace" else FIXTURE
    subresource = data.draw(st.sampled_from(["", "", "status"] if rt.has_status else [""]), label="subresource")
    target = base_manifest(rt.kind, fixture, with_status=bool(subresource))
    content_type = PATCH_TYPES[patch_type]
    query_parts = []
    if patch_type == "json":
        body = dumps(data.draw(json_patch(target), label="patch"))
    elif patch_type in ("merge", "strategic"):
        doc = data.draw(merge_patch(target, strategic=patch_type == "strategic"), label="patch")
        encoded = encode(data, doc, json_type=content_type, formats=("json", "json-utf8"))
        body, content_type = encoded.data, encoded.content_type or content_type
    else:
        doc = mutate(data, target, at_most=2)
        body = yaml_dumps(doc) or dumps(doc)
        manager = data.draw(st.sampled_from(["fuzz", "fuzz", "", "x" * 129]) | st.text(max_size=10), label="manager")
        query_parts.append(f"fieldManager={pct(manager)}")
    if data.draw(one_in(5), label="force?"):
        query_parts.append("force=" + data.draw(st.sampled_from(["true", "false", "x"]), label="force"))
    if data.draw(one_in(5), label="strict?"):
        query_parts.append("fieldValidation=Strict")
    await api.send(
        f"patch {patch_type}",
        "PATCH",
        object_path(rt, fixture, subresource),
        body=body,
        content_type=content_type,
        query="&".join(query_parts),
    )
