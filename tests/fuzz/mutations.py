"""Hostile request bodies: valid manifests of every kind, mutated, and JSON no encoder would write.

A case starts from a realistic valid manifest (`tests.support.samples`) and
applies one to three mutations at random places of its tree: drop a field,
replace it with any JSON or with a value of the wrong type, a huge string,
deep nesting, odd unicode (lone surrogates, bidi controls, NUL), extreme
numbers (beyond int64, 1e400), tricky names, or an unknown or duplicated key.
The result is written as JSON (ASCII-escaped or raw UTF-8) or YAML.

`Dup` (an object with a repeated key) and `RawNumber` (number text as sent)
stand for what a Python dict cannot hold; `dumps` writes them.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from hypothesis import strategies as st

from tests.fuzz.fuzz_support import NS, one_in
from tests.support import samples

Path = tuple[Any, ...]

_names = itertools.count()


def unique_name(prefix: str = "fz") -> str:
    """A fresh object name (not drawn by hypothesis, so shrinking keeps cases distinct)."""
    return f"{prefix}-{next(_names)}"


@dataclass(frozen=True)
class Dup:
    """A JSON object written with its pairs as given, duplicate keys included."""

    pairs: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class RawNumber:
    """A number written exactly as this text (``1e400``, ``-0``, ``0x10``)."""

    text: str


def dumps(value: Any, *, ascii_only: bool = True) -> bytes:
    """JSON text of ``value``; lone surrogates become ``\\ud800`` escapes, or invalid UTF-8 when not ASCII."""
    return _text(value, ascii_only).encode("utf-8", "surrogatepass")


def _text(value: Any, ascii_only: bool) -> str:
    """Iterative, so that documents nested thousands of levels deep can be written."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Raw):
            out.append(item.text)
        elif isinstance(item, RawNumber):
            out.append(item.text)
        elif isinstance(item, Dup | dict):
            pairs = item.pairs if isinstance(item, Dup) else tuple(item.items())
            stack.append(_Raw("}"))
            for i, (key, child) in reversed(list(enumerate(pairs))):
                stack.append(child)
                stack.append(_Raw(("," if i else "") + json.dumps(key, ensure_ascii=ascii_only) + ":"))
            stack.append(_Raw("{"))
        elif isinstance(item, list):
            stack.append(_Raw("]"))
            for i, child in reversed(list(enumerate(item))):
                stack.append(child)
                if i:
                    stack.append(_Raw(","))
            stack.append(_Raw("["))
        else:
            out.append(json.dumps(item, ensure_ascii=ascii_only, allow_nan=True))
    return "".join(out)


@dataclass(frozen=True)
class _Raw:
    text: str


def plain(value: Any) -> bool:
    """Whether ``value`` is plain JSON data (no `Dup`, no `RawNumber`)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Dup | RawNumber):
            return False
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def yaml_dumps(value: Any) -> bytes | None:
    """YAML of plain data, or None when YAML cannot write it (surrogates)."""
    try:
        return yaml.safe_dump(value, allow_unicode=True, sort_keys=False).encode("utf-8")
    except (yaml.YAMLError, UnicodeEncodeError, RecursionError):
        return None


# ---------------------------------------------------------------------- values

TRICKY_STRINGS = [
    "", " ", ".", "..", "a/b", "A", "-a", "a-", "a_b", "a.b.", "a" * 64, "a" * 254, "x" * 1000,
    "%2F", "\x00", "\u202e", "ñ", "😀", "a\nb", "default", "kube-system", "*", "?", "#", "true",
    "null", "0", "-1", "1Gi", "1e3", "NaN", "2024-01-01T00:00:00Z", "${x}", "{{x}}", "' OR 1=1", "<script>",
    "device.driver ==", "has(device.attributes)", "\\", '"', "\ud800", "a\udfff",
]  # fmt: skip

EXTREME_NUMBERS: list[Any] = [
    2**63, -(2**63) - 1, 2**64, 2**64 + 1, 2**70, -1, 0, 1.5, -0.0, 1e308, 2**31, 2**31 - 1, -(2**31) - 1,
    RawNumber("1e400"), RawNumber("-0"), RawNumber("1E-400"), RawNumber("0.000000000000000000001"),
]  # fmt: skip

TEXT = st.text(max_size=40) | st.sampled_from(TRICKY_STRINGS)
KEYS = st.text(max_size=12) | st.sampled_from(
    ["metadata", "spec", "status", "name", "namespace", "apiVersion", "kind", "$patch", "", "a.b/c"]
)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON: st.SearchStrategy[Any] = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=12
)


def _other_type(value: Any) -> list[Any]:
    """Values of every JSON type but ``value``'s own."""
    options: list[Any] = [None, True, 7, 2.5, "text", [], [1, "a"], {}, {"x": 1}]
    return [o for o in options if type(o) is not type(value)]


# ---------------------------------------------------------------------- paths


def paths(doc: Any) -> list[Path]:
    """Every position in ``doc``: the root, each key of each object and each item of each array."""
    out: list[Path] = []
    stack: list[tuple[Path, Any]] = [((), doc)]
    while stack:
        prefix, value = stack.pop()
        out.append(prefix)
        if isinstance(value, dict):
            stack.extend(((*prefix, k), v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend(((*prefix, i), v) for i, v in reversed(list(enumerate(value))))
    return out


def _get(doc: Any, path: Path) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _set(doc: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    parent = _get(doc, path[:-1])
    parent[path[-1]] = value
    return doc


def _drop(doc: Any, path: Path) -> Any:
    if not path:
        return {}
    parent = _get(doc, path[:-1])
    del parent[path[-1]]
    return doc


def _nest(value: Any, depth: int, as_list: bool) -> Any:
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    return value


Mutation = Callable[[st.DataObject, Any, Path], Any]


def _m_drop(data: st.DataObject, doc: Any, path: Path) -> Any:
    return _drop(doc, path)


def _m_any(data: st.DataObject, doc: Any, path: Path) -> Any:
    return _set(doc, path, data.draw(JSON, label="value"))


def _m_wrong_type(data: st.DataObject, doc: Any, path: Path) -> Any:
    return _set(doc, path, data.draw(st.sampled_from(_other_type(_get(doc, path))), label="wrong type"))


def _m_huge_string(data: st.DataObject, doc: Any, path: Path) -> Any:
    size = data.draw(st.sampled_from([300, 70_000, 300_000, 1_100_000]), label="huge string")
    return _set(doc, path, "x" * size)


def _m_deep(data: st.DataObject, doc: Any, path: Path) -> Any:
    depth = data.draw(st.sampled_from([20, 99, 101, 150, 199, 201, 254, 256, 400, 1100]), label="depth")
    return _set(doc, path, _nest(_get(doc, path), depth, data.draw(st.booleans(), label="as list")))


def _m_unicode(data: st.DataObject, doc: Any, path: Path) -> Any:
    return _set(doc, path, data.draw(st.text(min_size=1, max_size=30) | st.sampled_from(TRICKY_STRINGS)))


def _m_number(data: st.DataObject, doc: Any, path: Path) -> Any:
    return _set(doc, path, data.draw(st.sampled_from(EXTREME_NUMBERS), label="number"))


def _m_empty(data: st.DataObject, doc: Any, path: Path) -> Any:
    return _set(doc, path, data.draw(st.sampled_from([{}, [], "", 0, False, None]), label="empty"))


def _m_unknown(data: st.DataObject, doc: Any, path: Path) -> Any:
    target = _get(doc, path)
    if isinstance(target, dict):
        target[data.draw(KEYS, label="unknown key")] = data.draw(JSON, label="unknown value")
        return doc
    return _m_any(data, doc, path)


def _m_duplicate(data: st.DataObject, doc: Any, path: Path) -> Any:
    target = _get(doc, path)
    if isinstance(target, dict) and target:
        key = data.draw(st.sampled_from(sorted(target)), label="duplicated key")
        again = data.draw(st.sampled_from([target[key], None]) | JSON, label="duplicate value")
        return _set(doc, path, Dup((*target.items(), (key, again))))
    return _m_unknown(data, doc, path)


MUTATIONS: dict[str, Mutation] = {
    "drop": _m_drop,
    "any": _m_any,
    "wrong type": _m_wrong_type,
    "huge string": _m_huge_string,
    "deep": _m_deep,
    "unicode": _m_unicode,
    "number": _m_number,
    "empty": _m_empty,
    "unknown field": _m_unknown,
    "duplicate key": _m_duplicate,
}
# Cheap mutations are drawn more often than the ones that make megabyte bodies.
_WEIGHTED = [*MUTATIONS] * 3 + ["drop", "any", "wrong type", "unknown field"] * 3
_WEIGHTED.remove("huge string")
_WEIGHTED.remove("huge string")


def mutate(data: st.DataObject, doc: Any, *, at_most: int = 3) -> Any:
    """``doc`` (a deep copy) with one to ``at_most`` mutations drawn by ``data``."""
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, at_most), label="mutations")):
        if not plain(doc):
            break  # Dup and RawNumber are leaves of the finished document
        where = data.draw(st.sampled_from(paths(doc)), label="path")
        how = data.draw(st.sampled_from(_WEIGHTED), label="mutation")
        doc = MUTATIONS[how](data, doc, where)
    return doc


@dataclass(frozen=True)
class Body:
    data: bytes
    content_type: str | None


CONTENT_TYPES = [
    None,
    "",
    "text/plain",
    "application/json; charset=utf-8",
    "application/vnd.kubernetes.protobuf",
    "application/x-www-form-urlencoded",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
    "application/cbor",
    "application/json;;;",
]


def encode(
    data: st.DataObject,
    doc: Any,
    *,
    json_type: str = "application/json",
    formats: tuple[str, ...] = ("json", "json", "json-utf8", "yaml"),
) -> Body:
    """``doc`` as JSON or YAML with the matching content type; one case in ten gets another type."""
    fmt = data.draw(st.sampled_from(formats), label="format")
    odd = data.draw(one_in(10), label="odd content type?")
    if fmt == "yaml" and plain(doc):
        text = yaml_dumps(doc)
        if text is not None:
            yaml_type = data.draw(st.sampled_from(CONTENT_TYPES), label="content type") if odd else "application/yaml"
            return Body(text, yaml_type)
    body = dumps(doc, ascii_only=fmt != "json-utf8")
    return Body(body, data.draw(st.sampled_from(CONTENT_TYPES), label="content type") if odd else json_type)


# ---------------------------------------------------------------------- the valid starting points


def _clean(obj: dict[str, Any], *, name: str, namespaced: bool) -> dict[str, Any]:
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "generateName"):
        meta.pop(key, None)
    meta["name"] = name
    if namespaced:
        meta["namespace"] = NS
    else:
        meta.pop("namespace", None)
    return obj


def base_manifest(kind: str, name: str | None = None, *, with_status: bool = False) -> dict[str, Any]:
    """A valid manifest of ``kind`` that creates in namespace `NS` (fresh name unless given).

    ``with_status`` keeps the sample's realistic status, for status updates.
    """
    name = name or unique_name()
    makers: dict[str, Callable[[], dict[str, Any]]] = {
        "Pod": samples.pod,
        "Node": samples.node,
        "Namespace": samples.namespace,
        "Event": samples.event,
        "DeviceClass": samples.device_class,
        "ResourceClaim": samples.resource_claim,
        "ResourceClaimTemplate": samples.resource_claim_template,
        "ResourceSlice": lambda: samples.resource_slice(devices=4),
        "PodSchedulingContext": samples.pod_scheduling_context,
        "Lease": samples.lease,
    }
    obj = makers[kind]()
    if not with_status:
        obj.pop("status", None)
    obj = _clean(obj, name=name, namespaced=kind not in ("Node", "Namespace", "DeviceClass", "ResourceSlice"))
    if kind == "Event":
        obj["involvedObject"]["namespace"] = NS
        obj["related"]["namespace"] = NS
    if kind == "Namespace":
        obj["spec"] = {"finalizers": ["kubernetes"]}
    return obj
