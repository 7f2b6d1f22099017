"""Hypothesis strategies for wire-form objects of any typed model, built from the model itself.

Why this module exists: the conversion round trip must hold for every field
of every kind in every version, including fields added by the generator
later, so the objects are drawn by walking msgspec's type information of the
generated models rather than from hand-written strategies (tests/fuzz builds
*valid* 1.31 objects; conversion only needs well-typed ones).

Values are non-empty in Go's sense (strings non-empty, numbers non-zero,
lists and maps with an element, structs with a field), because Kubernetes'
conversions treat empty values as absent (`test_conversion_rules` holds those
cases one by one). Lists of named structs have unique names. ``metadata`` is a
small ObjectMeta; the slice-level ``allNodes`` is ``true``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
from hypothesis import strategies as st
from msgspec import inspect as mi

from services.api.types import meta

__all__ = ["objects"]

_WORDS = st.sampled_from(["a", "b", "gpu", "nic", "x.example.com"])
_QUANTITIES = st.sampled_from(["1", "2Gi", "500m", "80Gi"]) | st.integers(1, 64)
_META = st.fixed_dictionaries(
    {"name": st.sampled_from(["one", "two"])},
    optional={"namespace": st.just("default"), "labels": st.just({"app": "demo"}), "resourceVersion": st.just("7")},
)
_TIME = st.just("2026-01-02T03:04:05Z")


def objects(model: type[msgspec.Struct], *, api_version: str, kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """Wire dicts of ``model`` with ``apiVersion``/``kind`` set."""
    return _struct(model).map(lambda d: {**d, "apiVersion": api_version, "kind": kind})


@cache
def _struct(cls: type[msgspec.Struct]) -> st.SearchStrategy[dict[str, Any]]:
    if cls is meta.ObjectMeta:
        return _META
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    fields = {f.encode_name: f.type for f in info.fields if f.encode_name not in ("apiVersion", "kind")}
    required = {"name"} & fields.keys()
    if cls.__name__ == "Device" and "basic" in fields:
        required |= {"basic"}  # v1beta1 always has basic (Convert_resource_Device_To_v1beta1_Device)

    @st.composite
    def draw(d: st.DrawFn) -> dict[str, Any]:
        optional = sorted(fields.keys() - required)
        chosen = set(d(st.sets(st.sampled_from(optional), min_size=0 if required else 1))) if optional else set()
        out: dict[str, Any] = {}
        for key in sorted(required | chosen):
            out[key] = d(_value(key, fields[key]))
        return out

    return draw()


def _value(name: str, info: mi.Type) -> st.SearchStrategy[Any]:
    if name == "allNodes":
        return st.just(True)
    if name in ("timeAdded", "allocationTimestamp", "lastTransitionTime"):
        return _TIME
    return _of(info)


def _of(info: mi.Type) -> st.SearchStrategy[Any]:
    if isinstance(info, mi.Metadata):
        if info.extra and info.extra.get("k8s") == "quantity":
            return _QUANTITIES
        if info.extra and info.extra.get("k8s") in ("time", "microtime"):
            return _TIME if info.extra["k8s"] == "time" else st.just("2026-01-02T03:04:05.000000Z")
        return _of(info.type)
    if isinstance(info, mi.UnionType):
        members = [t for t in info.types if not isinstance(t, mi.NoneType)]
        if any(isinstance(t, mi.Metadata) and t.extra and t.extra.get("k8s") == "quantity" for t in members):
            return _QUANTITIES
        return st.one_of(*(_of(t) for t in members))
    if isinstance(info, mi.StructType):
        return st.deferred(lambda: _struct(info.cls))
    if isinstance(info, mi.ListType):
        items = _of(info.item_type)
        named = isinstance(info.item_type, mi.StructType) and any(
            f.encode_name == "name" for f in info.item_type.fields
        )
        return st.lists(items, min_size=1, max_size=2, unique_by=(lambda x: x["name"]) if named else None)
    if isinstance(info, mi.DictType):
        return st.dictionaries(_WORDS, _of(info.value_type), min_size=1, max_size=2)
    if isinstance(info, mi.StrType):
        return _WORDS
    if isinstance(info, mi.BoolType):
        return st.booleans()
    if isinstance(info, mi.IntType):
        return st.integers(1, 64)
    if isinstance(info, mi.FloatType):
        return st.just(1.5)
    if isinstance(info, mi.AnyType):
        return st.just({"kind": "Config", "n": 1})
    raise TypeError(f"no strategy for {info!r}")
