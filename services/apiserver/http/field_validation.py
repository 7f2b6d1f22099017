"""Server-side field validation (``fieldValidation=Strict|Warn|Ignore``).

kubectl skips its own schema check when the OpenAPI says the server validates
fields, so the server must find what Kubernetes' strict decoder finds:
duplicate keys in a JSON body and fields the type does not have. ``Strict``
refuses the request with Kubernetes' wording
(``Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"``),
``Warn`` (the default) answers with ``Warning: 299`` headers, ``Ignore`` says nothing.

Unknown fields are found by walking the body against the typed models in
`services.api.types` (msgspec structs); a kind without a model is not checked.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import msgspec

from services.api.machinery.status import bad_request


class _Pairs(list[tuple[str, Any]]):
    """A JSON object kept as its (key, value) pairs, so duplicates stay visible."""


def _pairs_hook(pairs: list[tuple[str, Any]]) -> _Pairs:
    return _Pairs(pairs)


def duplicate_fields(raw: bytes) -> list[str]:
    """Paths of keys given twice in a JSON document (``metadata.name``)."""
    if b'"' not in raw:
        return []
    try:
        doc = json.loads(raw, object_pairs_hook=_pairs_hook)
    except ValueError:
        return []
    out: list[str] = []
    _walk_dups(doc, "", out)
    return out


def _walk_dups(node: Any, path: str, out: list[str]) -> None:
    if isinstance(node, _Pairs):
        seen: set[str] = set()
        for key, value in node:
            child = f"{path}.{key}" if path else key
            if key in seen:
                out.append(child)
            seen.add(key)
            _walk_dups(value, child, out)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _walk_dups(item, f"{path}[{i}]", out)


# ------------------------------------------------------------------ unknown fields


@lru_cache(maxsize=256)
def _info(model: Any) -> Any:
    return msgspec.inspect.type_info(model)


def unknown_fields(doc: Any, model: Any) -> list[str]:
    """Paths in ``doc`` that the msgspec model ``model`` does not declare."""
    out: list[str] = []
    _walk_unknown(doc, _info(model), "", out)
    return out


def _struct_of(t: Any) -> Any:
    """The struct, list or dict type behind optionals/unions, or None."""
    if isinstance(t, msgspec.inspect.UnionType):
        for member in t.types:
            found = _struct_of(member)
            if found is not None:
                return found
        return None
    if isinstance(t, msgspec.inspect.StructType | msgspec.inspect.ListType | msgspec.inspect.DictType):
        return t
    if isinstance(t, msgspec.inspect.Metadata):
        return _struct_of(t.type)
    return None


def _walk_unknown(node: Any, t: Any, path: str, out: list[str]) -> None:
    t = _struct_of(t)
    if t is None:
        return
    if isinstance(t, msgspec.inspect.StructType):
        if not isinstance(node, dict):
            return
        fields = {f.encode_name: f.type for f in t.fields}
        for key, value in node.items():
            child = f"{path}.{key}" if path else key
            if key not in fields:
                if not path and key in ("apiVersion", "kind"):
                    continue
                out.append(child)
            else:
                _walk_unknown(value, fields[key], child, out)
    elif isinstance(t, msgspec.inspect.ListType):
        if isinstance(node, list):
            for i, item in enumerate(node):
                _walk_unknown(item, t.item_type, f"{path}[{i}]", out)
    elif isinstance(t, msgspec.inspect.DictType) and isinstance(node, dict):
        for key, value in node.items():
            _walk_unknown(value, t.value_type, f"{path}[{key}]", out)


def _decodes(raw: bytes, obj: Any, model: Any, json_body: bool) -> bool:
    """Fast path: the models forbid unknown fields, so a clean C-level decode means none."""
    try:
        if json_body:
            msgspec.json.decode(raw, type=model)
        else:
            msgspec.convert(obj, model)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    return True


def check(
    *,
    raw: bytes,
    obj: Any,
    directive: str,
    kind: str,
    version: str,
    model: Any,
    json_body: bool,
) -> list[str]:
    """Apply ``directive``; return warnings, or raise the 400 ``Strict`` demands."""
    if directive == "Ignore":
        return []
    problems: list[str] = []
    if model is not None and not _decodes(raw, obj, model, json_body):
        problems.extend(f'unknown field "{p}"' for p in unknown_fields(obj, model))
    if json_body:
        problems.extend(f'duplicate field "{p}"' for p in duplicate_fields(raw))
    if not problems:
        return []
    if directive == "Strict":
        raise bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: {", ".join(problems)}'
        )
    return problems
