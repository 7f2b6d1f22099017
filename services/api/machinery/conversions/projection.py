"""Project a wire-form object onto a typed model: keep only the fields the model has.

Why this module exists: most of converting the storage form to an older
version is dropping what that version cannot express — the classic DRA fields
for 1.37's versions, everything newer than 1.31 for v1alpha3. Walking the
generated model (msgspec's type information) does that for every nested type
at once, so no conversion function lists fields by hand and a field added to a
model by the generator is carried or dropped without a code change.

Values are wire dicts (camelCase keys, as decoded JSON); the result shares
unchanged leaves with its input.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
from msgspec import inspect as mi

__all__ = ["project"]


def project(value: Any, model: type[msgspec.Struct]) -> Any:
    """``value`` with every key dropped that ``model`` (recursively) has no field for."""
    return _walk(value, mi.type_info(model))


def _walk(value: Any, info: mi.Type) -> Any:
    target = _container(info)
    if target is None:
        return value
    if isinstance(target, mi.StructType) and isinstance(value, dict):
        fields = _fields(target.cls)
        return {k: _walk(v, fields[k]) for k, v in value.items() if k in fields}
    if isinstance(target, mi.ListType) and isinstance(value, list):
        return [_walk(v, target.item_type) for v in value]
    if isinstance(target, mi.DictType) and isinstance(value, dict):
        return {k: _walk(v, target.value_type) for k, v in value.items()}
    return value


@cache
def _fields(cls: type[msgspec.Struct]) -> dict[str, mi.Type]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return {f.encode_name: f.type for f in info.fields}


def _container(info: mi.Type) -> mi.Type | None:
    """The struct, list or dict type ``info`` stands for (through Optional), or None for a leaf."""
    if isinstance(info, mi.Metadata):
        return _container(info.type)
    if isinstance(info, mi.UnionType):
        inner = [t for t in info.types if not isinstance(t, mi.NoneType)]
        return _container(inner[0]) if len(inner) == 1 else None
    if isinstance(info, mi.StructType | mi.ListType | mi.DictType):
        return info
    return None
