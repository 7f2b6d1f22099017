"""Validation never raises on absent or null fields: every field of every realistic object is
dropped, then nulled, one at a time, and all three entry points must still return a list."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from services.api.admission.validation import validate_create, validate_status_update, validate_update
from services.api.machinery.field_errors import FieldError
from services.api.types.registry import STORED_RESOURCES as RESOURCES  # views are validated as their storage
from services.api.types.registry import ResourceType

from .objects import SUBDOMAIN_MSG
from .test_entry_points import REALISTIC

Path = tuple[Any, ...]


def _paths(value: Any, prefix: Path = ()) -> Iterator[Path]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key)
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield (*prefix, i)
            yield from _paths(child, (*prefix, i))


def _edit(obj: Any, path: Path, *, drop: bool) -> Any:
    out = copy.deepcopy(obj)
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = None
    return out


def _check(errs: Any) -> None:
    assert isinstance(errs, list)
    assert all(isinstance(e, FieldError) and str(e) for e in errs)


@pytest.mark.parametrize("rt", RESOURCES, ids=[rt.kind for rt in RESOURCES])
def test_absent_and_null_fields(rt: ResourceType) -> None:
    obj = REALISTIC[rt.kind]()
    variants = [_edit(obj, p, drop=drop) for p in _paths(obj) for drop in (True, False)]
    assert len(variants) > 20
    for variant in variants:
        _check(validate_create(rt, variant))
        _check(validate_update(rt, variant, obj))
        _check(validate_update(rt, obj, variant))
        _check(validate_status_update(rt, variant, obj))
        _check(validate_status_update(rt, obj, variant))


@pytest.mark.parametrize("rt", RESOURCES, ids=[rt.kind for rt in RESOURCES])
def test_empty_object(rt: ResourceType) -> None:
    errs = [str(e) for e in validate_create(rt, {})]
    if rt.kind == "Event":
        # Event rules run first; the generic metadata check only once they pass.
        assert errs == [f'namespace: Invalid value: "": {SUBDOMAIN_MSG}']
    else:
        assert "metadata.name: Required value: name or generateName is required" in errs
    _check(validate_update(rt, {}, {}))
    _check(validate_status_update(rt, {}, {}))
