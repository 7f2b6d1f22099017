"""A walkable description of the models: which wire fields each struct has and of what type.

Why this module exists: msgspec decodes fast but stops at the first problem
and words it its own way. Kubernetes reports *all* unknown and duplicate
fields with their full paths, and words type errors as Go's decoder does. The
decoder's slow path (`services.api.machinery.decode_errors`) walks a body against this
schema to do the same; tests and property-based strategies use it to reach
every field of every kind.

A node is built once per type and cached; struct fields are resolved lazily,
so recursive types would also work.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, Union

import msgspec

from services.api.types import GO_PACKAGES
from services.api.types.base import K8sStruct

ScalarKind = Literal["string", "bool", "int32", "int64", "float", "quantity", "time", "microtime", "intorstring", "any"]

_GO_SCALAR_TYPES: dict[ScalarKind, str] = {
    "string": "string",
    "bool": "bool",
    "int32": "int32",
    "int64": "int64",
    "float": "float64",
    "quantity": "resource.Quantity",
    "time": "v1.Time",
    "microtime": "v1.MicroTime",
    "intorstring": "intstr.IntOrString",
    "any": "interface {}",
}


@dataclass(frozen=True, slots=True)
class ScalarNode:
    kind: ScalarKind

    @property
    def go_type(self) -> str:
        return _GO_SCALAR_TYPES[self.kind]


@dataclass(frozen=True, slots=True)
class ListNode:
    item: Node

    @property
    def go_type(self) -> str:
        return "[]" + self.item.go_type


@dataclass(frozen=True, slots=True)
class MapNode:
    value: Node

    @property
    def go_type(self) -> str:
        return "map[string]" + self.value.go_type


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One struct field: its Python attribute name, wire name and type."""

    attr: str
    wire: str
    node: Node


@dataclass(eq=False, slots=True)
class StructNode:
    cls: type[K8sStruct]
    _fields: dict[str, FieldSpec] | None = field(default=None, repr=False)

    @property
    def go_name(self) -> str:
        return self.cls.__name__

    @property
    def go_type(self) -> str:
        return f"{GO_PACKAGES.get(self.cls.__module__, 'v1')}.{self.cls.__name__}"

    @property
    def fields(self) -> dict[str, FieldSpec]:
        """Wire name → field, in declaration order."""
        if self._fields is None:
            self._fields = {
                f.encode_name: FieldSpec(f.name, f.encode_name, node_for(f.type))
                for f in msgspec.structs.fields(self.cls)
            }
        return self._fields


Node = ScalarNode | ListNode | MapNode | StructNode


def struct_node(cls: type[K8sStruct]) -> StructNode:
    """The (cached) schema node of a model class."""
    node = node_for(cls)
    assert isinstance(node, StructNode)
    return node


def node_for(tp: Any) -> Node:
    """The schema node of a type annotation used in the models."""
    return _node_for(tp)


@cache
def _node_for(tp: Any) -> Node:
    tp = _strip_none(tp)
    tag = _k8s_tag(tp)
    if tag is not None:
        return ScalarNode(tag)
    if typing.get_origin(tp) is typing.Annotated:
        return _node_for(typing.get_args(tp)[0])
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return _union_node(typing.get_args(tp))
    if origin is list:
        return ListNode(_node_for(typing.get_args(tp)[0]))
    if origin is dict:
        key, value = typing.get_args(tp)
        if key is not str:
            raise TypeError(f"map keys must be strings, got {key!r}")
        return MapNode(_node_for(value))
    if tp is Any:
        return ScalarNode("any")
    if isinstance(tp, type) and issubclass(tp, K8sStruct):
        return StructNode(tp)
    simple: dict[Any, ScalarKind] = {str: "string", bool: "bool", float: "float", int: "int64"}
    if tp in simple:
        return ScalarNode(simple[tp])
    raise TypeError(f"unsupported model type {tp!r}")


def _strip_none(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = tuple(a for a in typing.get_args(tp) if a is not type(None))
        if len(args) == 1:
            return args[0]
        if len(args) != len(typing.get_args(tp)):
            return Union[args]  # noqa: UP007 - built from a runtime tuple
    return tp


def _k8s_tag(tp: Any) -> ScalarKind | None:
    if typing.get_origin(tp) is not typing.Annotated:
        return None
    for meta in typing.get_args(tp)[1:]:
        if isinstance(meta, msgspec.Meta) and meta.extra and "k8s" in meta.extra:
            tag = meta.extra["k8s"]
            if tag in _GO_SCALAR_TYPES:
                return typing.cast(ScalarKind, tag)
    return None


def _union_node(args: tuple[Any, ...]) -> Node:
    tags = {_k8s_tag(a) for a in args}
    if "quantity" in tags:
        return ScalarNode("quantity")
    if "int32" in tags and str in args:
        return ScalarNode("intorstring")
    raise TypeError(f"unsupported union {args!r}")


def walk_fields(cls: type[K8sStruct]) -> list[tuple[str, Node]]:
    """Every path reachable from a model, with its node: fields (``spec.devices.requests``), list items
    (``spec.devices.requests[]``) and map values (``metadata.labels.*``), leaves and structs alike."""
    out: list[tuple[str, Node]] = []

    def visit(node: Node, path: str, seen: tuple[type, ...]) -> None:
        if isinstance(node, StructNode):
            if node.cls in seen:
                return
            for spec in node.fields.values():
                child = f"{path}.{spec.wire}" if path else spec.wire
                out.append((child, spec.node))
                visit(spec.node, child, (*seen, node.cls))
        elif isinstance(node, ListNode):
            out.append((path + "[]", node.item))
            visit(node.item, path + "[]", seen)
        elif isinstance(node, MapNode):
            out.append((path + ".*", node.value))
            visit(node.value, path + ".*", seen)

    visit(struct_node(cls), "", ())
    return out
