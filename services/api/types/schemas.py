"""Kubernetes' own schemas of its API types, read from the ``kubernetes-validate`` package.

Why this module exists: the models (`services.api.types`), the patch metadata
(`services.api.machinery.patch.patch_meta`) and the OpenAPI documents
(`services.apiserver.openapi`) all need the same facts about Kubernetes' Go
types — which fields a type has, of what JSON type, with which description,
which list type, map keys, merge key and patch strategy, which
group/version/kind a definition is. Kubernetes publishes them in its OpenAPI
documents; ``kubernetes-validate`` ships them, as JSON Schema, for every
release from 1.25 (``kubernetes_validate/kubernetes-json-schema/
v1.31.0-local/_definitions.json``). This module reads the releases draplane
speaks (`K8S_VERSIONS`) and answers questions about them; nothing here is
copied by hand.

Reading is lazy and cached: a release's file is read once, its top level is
split into raw ``$defs`` entries without parsing them, and a definition is
parsed only when it is asked for (start-up cost in docs/decisions/models.md).
Pure: no I/O but reading the package's data files.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import msgspec

__all__ = [
    "K8S_VERSIONS",
    "Definition",
    "GroupVersionKind",
    "Property",
    "Schemas",
    "TypeRef",
    "go_name",
    "go_package",
    "schemas",
]

# Kubernetes releases whose schemas draplane reads: 1.31 (the seeds' API) and
# 1.37 (today's resource.k8s.io/v1, v1beta2, v1beta1).
K8S_VERSIONS = ("1.31", "1.37")

_REF_PREFIX = "#/$defs/"

# Definitions whose JSON shape is a scalar with its own decode rules, whatever
# their schema says (Quantity and IntOrString are oneOf; Time is a string;
# RawExtension and FieldsV1 are free-form objects).
SCALAR_DEFINITIONS: dict[str, str] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intorstring",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "microtime",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "any",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "any",
}


def go_name(definition: str) -> str:
    """The Go type name of a definition: ``io.k8s.api.core.v1.PodSpec`` → ``PodSpec``."""
    return definition.rsplit(".", 1)[1]


def go_package(definition: str) -> str:
    """The Go package name of a definition: ``io.k8s.api.resource.v1alpha3.DeviceRequest`` → ``v1alpha3``."""
    return definition.rsplit(".", 2)[1]


@dataclass(frozen=True, slots=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str


@dataclass(frozen=True, slots=True)
class TypeRef:
    """The JSON type of a field.

    ``kind`` is ``ref`` (a definition, ``ref`` names it), ``array`` (``item``),
    ``map`` (``item`` is the value type) or a JSON scalar type (``string``,
    ``integer``, ``number``, ``boolean``, ``object`` for a free-form object),
    with its OpenAPI ``format`` (``int32``, ``int64``, ``double``, ``byte``,
    ``date-time``...).
    """

    kind: Literal["ref", "array", "map", "string", "integer", "number", "boolean", "object"]
    ref: str = ""
    item: TypeRef | None = None
    format: str = ""

    def refs(self) -> Iterator[str]:
        """Every definition this type mentions."""
        if self.kind == "ref":
            yield self.ref
        elif self.item is not None:
            yield from self.item.refs()


@dataclass(frozen=True, slots=True)
class Property:
    """One field of a definition, with its Kubernetes markers."""

    name: str
    type: TypeRef
    description: str = ""
    list_type: str = ""  # x-kubernetes-list-type: atomic | set | map
    list_map_keys: tuple[str, ...] = ()  # x-kubernetes-list-map-keys
    patch_strategy: str = ""  # x-kubernetes-patch-strategy: merge | retainKeys | merge,retainKeys | replace
    patch_merge_key: str = ""  # x-kubernetes-patch-merge-key
    map_type: str = ""  # x-kubernetes-map-type on the field (atomic | granular)
    enum: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Definition:
    """One named type (``io.k8s.api.core.v1.PodSpec``): its fields in the schema's (alphabetical) order."""

    name: str
    description: str
    properties: dict[str, Property]
    required: tuple[str, ...]
    gvks: tuple[GroupVersionKind, ...]
    map_type: str  # x-kubernetes-map-type on the type (+structType=atomic / +mapType=atomic)
    scalar: str  # non-empty for `SCALAR_DEFINITIONS`: quantity, intorstring, time, microtime, any

    @property
    def go_name(self) -> str:
        return go_name(self.name)

    @property
    def go_package(self) -> str:
        return go_package(self.name)

    def refs(self) -> Iterator[str]:
        """Every definition this one's fields mention, in field order."""
        for prop in self.properties.values():
            yield from prop.type.refs()


class _File(msgspec.Struct):
    defs: dict[str, msgspec.Raw] = msgspec.field(name="$defs")


def _str_tuple(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _json_type(schema: dict[str, Any]) -> str:
    tp = schema.get("type")
    if isinstance(tp, list):
        tp = next((t for t in tp if t != "null"), "")
    return str(tp or "")


def _type_ref(schema: dict[str, Any]) -> TypeRef:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return TypeRef("ref", ref=ref.removeprefix(_REF_PREFIX))
    tp = _json_type(schema)
    if tp == "array":
        return TypeRef("array", item=_type_ref(schema.get("items") or {}))
    if tp == "object" and isinstance(schema.get("additionalProperties"), dict):
        return TypeRef("map", item=_type_ref(schema["additionalProperties"]))
    if tp in ("string", "integer", "number", "boolean", "object"):
        return TypeRef(tp, format=str(schema.get("format", "")))  # type: ignore[arg-type]
    raise ValueError(f"unsupported schema {schema!r}")


def _property(name: str, schema: dict[str, Any]) -> Property:
    return Property(
        name=name,
        type=_type_ref(schema),
        description=str(schema.get("description", "")),
        list_type=str(schema.get("x-kubernetes-list-type", "")),
        list_map_keys=_str_tuple(schema.get("x-kubernetes-list-map-keys")),
        patch_strategy=str(schema.get("x-kubernetes-patch-strategy", "")),
        patch_merge_key=str(schema.get("x-kubernetes-patch-merge-key", "")),
        map_type=str(schema.get("x-kubernetes-map-type", "")),
        enum=_str_tuple(schema.get("enum")),
    )


def _definition(name: str, schema: dict[str, Any]) -> Definition:
    props = schema.get("properties") or {}
    return Definition(
        name=name,
        description=str(schema.get("description", "")),
        properties={key: _property(key, value) for key, value in props.items()},
        required=_str_tuple(schema.get("required")),
        gvks=tuple(
            GroupVersionKind(str(g.get("group", "")), str(g["version"]), str(g["kind"]))
            for g in schema.get("x-kubernetes-group-version-kind") or ()
        ),
        map_type=str(schema.get("x-kubernetes-map-type", "")),
        scalar=SCALAR_DEFINITIONS.get(name, ""),
    )


class Schemas:
    """The definitions of one Kubernetes release, parsed on demand."""

    def __init__(self, release: str, raw: dict[str, msgspec.Raw]) -> None:
        self.release = release
        self._raw = raw
        self._parsed: dict[str, Definition] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._raw

    def names(self) -> Iterable[str]:
        """Every definition name of the release (unparsed)."""
        return self._raw.keys()

    def get(self, name: str) -> Definition:
        """The definition ``name`` (``io.k8s.api.core.v1.PodSpec``); KeyError when the release has none."""
        parsed = self._parsed.get(name)
        if parsed is None:
            parsed = _definition(name, msgspec.json.decode(self._raw[name]))
            self._parsed[name] = parsed
        return parsed

    def closure(self, roots: Iterable[str]) -> list[str]:
        """``roots`` and every definition they reach, depth first in field order, each once."""
        seen: dict[str, None] = {}
        stack = list(roots)[::-1]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen[name] = None
            stack.extend(reversed([r for r in self.get(name).refs() if r not in seen]))
        return list(seen)

    def kind(self, group: str, version: str, kind: str) -> Definition:
        """The definition of a kind, found by its group-version-kind marker."""
        want = GroupVersionKind(group, version, kind)
        for name in self._candidates(group, version, kind):
            if name in self._raw and want in self.get(name).gvks:
                return self.get(name)
        raise KeyError(f"{group}/{version}, Kind={kind} is not in Kubernetes {self.release}")

    @staticmethod
    def _candidates(group: str, version: str, kind: str) -> Iterator[str]:
        if group in ("", "meta.k8s.io"):
            yield f"io.k8s.api.core.v1.{kind}"
            yield f"io.k8s.apimachinery.pkg.apis.meta.{version}.{kind}"
        else:
            yield f"io.k8s.api.{group.split('.', 1)[0]}.{version}.{kind}"


def _path(release: str) -> Path:
    # Located without importing kubernetes_validate: its __init__ imports jsonschema and friends (~0.3 s).
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("kubernetes-validate is not installed (a dependency of draplane)")
    package = Path(next(iter(spec.submodule_search_locations)))
    return package / "kubernetes-json-schema" / f"v{release}.0-local" / "_definitions.json"


@cache
def schemas(release: str) -> Schemas:
    """The schemas of Kubernetes ``release`` (``"1.31"``), read once."""
    if release not in K8S_VERSIONS:
        raise ValueError(f"draplane reads Kubernetes {', '.join(K8S_VERSIONS)}, not {release}")
    data = _path(release).read_bytes()
    return Schemas(release, msgspec.json.decode(data, type=_File).defs)
