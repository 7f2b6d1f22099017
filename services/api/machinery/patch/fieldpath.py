"""Field paths and field sets in ``metadata.managedFields`` format (``FieldsV1``).

Server-side apply tracks, per manager, the set of fields it owns. This module
is that set and its wire encoding, after ``sigs.k8s.io/structured-merge-diff``
(``fieldpath``):

- a `PathElement` selects a child: a field name (``f:name``), a map-list
  element by its keys (``k:{"containerPort":80,"protocol":"TCP"}``), a set
  element by its value (``v:"finalizer.example.com"``) or an atomic-list
  element by index (``i:0``);
- a `FieldSet` is a set of paths. In ``fieldsV1`` a path that is itself a
  member and also has members below it carries a ``"."`` key;
- path elements sort as in Go (names, then keys, then values, then indices),
  which fixes the byte order of the encoding and of conflict listings;
- a path prints as in apply conflict messages:
  ``.spec.containers[name="nginx"].image``.

A set is held as a frozenset of paths (tuples of elements); the tree shape
the encoding and the prefix operations need is derived on demand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from typing import Any

import orjson

from services.api.machinery.patch.gojson import go_float_v, go_quote, json_dumps

FIELD = 0
KEY = 1
VALUE = 2
INDEX = 3


def _token(v: Any) -> Any:
    """A hashable stand-in for a JSON value; numbers compare numerically, booleans stay booleans."""
    if v is None:
        return ("z",)
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int | float):
        return ("n", v)
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, list | tuple):
        return ("l", tuple(_token(x) for x in v))
    if isinstance(v, dict):
        return ("m", tuple(sorted((k, _token(x)) for k, x in v.items())))
    raise TypeError(f"not a JSON value: {type(v).__name__}")


def value_sort_key(v: Any) -> tuple[Any, ...]:
    """structured-merge-diff's total order of values: numbers, strings, bools, lists, maps, null."""
    if v is None:
        return (5,)
    if isinstance(v, bool):
        return (2, v)
    if isinstance(v, int | float):
        return (0, v)
    if isinstance(v, str):
        return (1, v)
    if isinstance(v, list | tuple):
        return (3, tuple(value_sort_key(x) for x in v))
    if isinstance(v, dict):
        return (4, tuple((k, value_sort_key(v[k])) for k in sorted(v)))
    raise TypeError(f"not a JSON value: {type(v).__name__}")


def value_to_string(v: Any) -> str:
    """``value.ToString``: how a key or set value prints inside a path."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float_v(v)
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, list | tuple):
        return "[" + ",".join(value_to_string(x) for x in v) + "]"
    if isinstance(v, dict):
        return "".join(f"{k}={value_to_string(v[k])}" for k in sorted(v))
    return str(v)


class PathElement:
    """One step of a field path."""

    __slots__ = ("_hash", "_token", "index", "key", "kind", "name", "value")

    kind: int
    name: str
    key: tuple[tuple[str, Any], ...]
    value: Any
    index: int

    def __init__(
        self, kind: int, *, name: str = "", key: tuple[tuple[str, Any], ...] = (), value: Any = None, index: int = 0
    ) -> None:
        self.kind = kind
        self.name = name
        self.key = key
        self.value = value
        self.index = index
        if kind == FIELD:
            token: Any = (FIELD, name)
        elif kind == KEY:
            token = (KEY, tuple((k, _token(v)) for k, v in key))
        elif kind == VALUE:
            token = (VALUE, _token(value))
        else:
            token = (INDEX, index)
        self._token = token
        self._hash = hash(token)

    @classmethod
    def field(cls, name: str) -> PathElement:
        return cls(FIELD, name=name)

    @classmethod
    def keyed(cls, fields: Iterable[tuple[str, Any]]) -> PathElement:
        return cls(KEY, key=tuple(sorted(fields, key=lambda kv: kv[0])))

    @classmethod
    def of_value(cls, value: Any) -> PathElement:
        return cls(VALUE, value=value)

    @classmethod
    def of_index(cls, index: int) -> PathElement:
        return cls(INDEX, index=index)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PathElement) and self._token == other._token

    def __hash__(self) -> int:
        return self._hash

    def sort_key(self) -> tuple[Any, ...]:
        if self.kind == FIELD:
            return (FIELD, self.name)
        if self.kind == KEY:
            return (KEY, tuple((k, value_sort_key(v)) for k, v in self.key))
        if self.kind == VALUE:
            return (VALUE, value_sort_key(self.value))
        return (INDEX, self.index)

    def __lt__(self, other: PathElement) -> bool:
        return self.sort_key() < other.sort_key()

    def serialize(self) -> str:
        """The ``fieldsV1`` key: ``f:name``, ``k:{...}``, ``v:...``, ``i:N``."""
        if self.kind == FIELD:
            return "f:" + self.name
        if self.kind == KEY:
            return "k:{" + ",".join(f"{json_dumps(k)}:{json_dumps(v)}" for k, v in self.key) + "}"
        if self.kind == VALUE:
            return "v:" + json_dumps(self.value)
        return f"i:{self.index}"

    def __str__(self) -> str:
        if self.kind == FIELD:
            return "." + self.name
        if self.kind == KEY:
            return "[" + ",".join(f"{k}={value_to_string(v)}" for k, v in self.key) + "]"
        if self.kind == VALUE:
            return f"[={value_to_string(self.value)}]"
        return f"[{self.index}]"

    def __repr__(self) -> str:
        return f"PathElement({self.serialize()!r})"


Path = tuple[PathElement, ...]


def path_string(path: Path) -> str:
    """A path as apply conflicts print it: ``.spec.containers[name="c"].image``."""
    return "".join(str(pe) for pe in path)


def make_path(*parts: str | int | PathElement) -> Path:
    """Build a path: strings are field names, ints are indices."""
    out: list[PathElement] = []
    for part in parts:
        if isinstance(part, PathElement):
            out.append(part)
        elif isinstance(part, int):
            out.append(PathElement.of_index(part))
        else:
            out.append(PathElement.field(part))
    return tuple(out)


def dotted_path(path: str) -> Path:
    """``metadata.deletionTimestamp`` as a path of field names."""
    return tuple(PathElement.field(p) for p in path.split(".") if p)


class DeserializeError(ValueError):
    """A ``fieldsV1`` document that is not a valid field set."""


def deserialize_path_element(text: str) -> PathElement | None:
    """Parse a ``fieldsV1`` key; None for an unknown element type (ignored, as Kubernetes does)."""
    if len(text) < 2:
        raise DeserializeError("key must be 2 characters long:")
    if text[1] != ":":
        raise DeserializeError(f"missing colon: {text}")
    kind, rest = text[0], text[2:]
    if kind == "f":
        return PathElement.field(rest)
    if kind in "vk":
        try:
            decoded = orjson.loads(rest)
        except orjson.JSONDecodeError as exc:
            raise DeserializeError(f"parsing {text!r}: {exc}") from None
        if kind == "v":
            return PathElement.of_value(decoded)
        if not isinstance(decoded, dict):
            raise DeserializeError(f"parsing {text!r}: key is not an object")
        return PathElement.keyed(decoded.items())
    if kind == "i":
        try:
            return PathElement.of_index(int(rest))
        except ValueError:
            raise DeserializeError(f'strconv.Atoi: parsing "{rest}": invalid syntax') from None
    return None


class _Node:
    __slots__ = ("children", "member")

    def __init__(self) -> None:
        self.member = False
        self.children: dict[PathElement, _Node] = {}


class FieldSet:
    """An immutable set of field paths with structured-merge-diff's operations."""

    __slots__ = ("__dict__", "paths")

    def __init__(self, paths: Iterable[Path] = ()) -> None:
        self.paths: frozenset[Path] = frozenset(p for p in paths if p)

    # ------------------------------------------------------------ set algebra

    def __bool__(self) -> bool:
        return bool(self.paths)

    def __len__(self) -> int:
        return len(self.paths)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldSet) and self.paths == other.paths

    def __hash__(self) -> int:
        return hash(self.paths)

    def __repr__(self) -> str:
        return "FieldSet(" + ", ".join(path_string(p) for p in self) + ")"

    def empty(self) -> bool:
        return not self.paths

    def has(self, path: Path) -> bool:
        return path in self.paths

    def union(self, other: FieldSet) -> FieldSet:
        return FieldSet(self.paths | other.paths)

    def intersection(self, other: FieldSet) -> FieldSet:
        return FieldSet(self.paths & other.paths)

    def difference(self, other: FieldSet) -> FieldSet:
        """Members of self not members of other (a parent minus its child stays)."""
        return FieldSet(self.paths - other.paths)

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """Like `difference`, and also drops everything below a member of other."""
        return FieldSet(p for p in self.paths if not any(p[:i] in other.paths for i in range(1, len(p) + 1)))

    @cached_property
    def _by_head(self) -> dict[PathElement, frozenset[Path]]:
        index: dict[PathElement, set[Path]] = {}
        for p in self.paths:
            if len(p) > 1:
                index.setdefault(p[0], set()).add(p[1:])
        return {k: frozenset(v) for k, v in index.items()}

    def with_prefix(self, pe: PathElement) -> FieldSet:
        """The paths below ``pe``, with ``pe`` removed."""
        return FieldSet(self._by_head.get(pe, ()))

    def ensure_named_fields_are_members(self, is_named: Callable[[Path], bool] | None = None) -> FieldSet:
        """Add every field that has members below it (``EnsureNamedFieldsAreMembers``).

        ``is_named(prefix)`` says whether a prefix ending in a field name is a
        declared struct field; by default every field reached through names
        and map-list keys is.
        """
        out = set(self.paths)
        for p in self.paths:
            for i in range(1, len(p)):
                prefix = p[:i]
                if prefix[-1].kind != FIELD:
                    continue
                if any(pe.kind in (VALUE, INDEX) for pe in prefix[:-1]):
                    break
                if is_named is None or is_named(prefix):
                    out.add(prefix)
        return FieldSet(out)

    # ------------------------------------------------------------ tree views

    def _tree(self) -> _Node:
        root = _Node()
        for p in self.paths:
            node = root
            for pe in p:
                node = node.children.setdefault(pe, _Node())
            node.member = True
        return root

    def __iter__(self) -> Iterator[Path]:
        """Members in structured-merge-diff's order: at each level the members, then each subtree."""

        def walk(node: _Node, prefix: Path) -> Iterator[Path]:
            ordered = sorted(node.children, key=PathElement.sort_key)
            for pe in ordered:
                if node.children[pe].member:
                    yield (*prefix, pe)
            for pe in ordered:
                child = node.children[pe]
                if child.children:
                    yield from walk(child, (*prefix, pe))

        return walk(self._tree(), ())

    def to_fields_v1(self) -> dict[str, Any]:
        """The ``fieldsV1`` document, keys in Kubernetes' order."""

        def emit(node: _Node) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for pe in sorted(node.children, key=PathElement.sort_key):
                child = node.children[pe]
                if child.children:
                    body: dict[str, Any] = {".": {}} if child.member else {}
                    body.update(emit(child))
                    out[pe.serialize()] = body
                else:
                    out[pe.serialize()] = {}
            return out

        return emit(self._tree())

    @classmethod
    def from_fields_v1(cls, doc: Any) -> FieldSet:
        """Parse a ``fieldsV1`` document; raises `DeserializeError`."""
        if doc is None:
            return cls()
        if not isinstance(doc, dict):
            raise DeserializeError("fieldsV1 must be an object")
        paths: list[Path] = []

        def read(node: dict[str, Any], prefix: Path) -> bool:
            """Collect paths below ``prefix``; True when ``prefix`` itself is a member."""
            is_member = False
            has_children = False
            for key, value in node.items():
                if key == ".":
                    is_member = True
                    continue
                pe = deserialize_path_element(key)
                if pe is None:
                    continue
                if not isinstance(value, dict):
                    raise DeserializeError(f"value of {key!r} must be an object")
                has_children = True
                path = (*prefix, pe)
                if read(value, path):
                    paths.append(path)
            return is_member or not has_children

        read(doc, ())
        return cls(paths)
