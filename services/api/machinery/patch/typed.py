"""Schema-aware walks over objects: field sets, comparison, apply merge, removal.

These are the four operations of ``sigs.k8s.io/structured-merge-diff``'s
``typed`` package that server-side apply and field tracking are built from,
driven by the per-path metadata of `patch_meta`:

- `to_field_set`: the fields an object (or an applied configuration) sets;
- `compare`: which fields were added, modified and removed between two
  versions of an object;
- `merge`: an applied configuration merged into the live object (map lists
  merge by key, sets by value, atomic lists and structs are replaced);
- `remove_items`: an object with a set of fields removed.

Shapes come from the values themselves (an object is a struct, an array is a
list) and from the metadata (a list is atomic unless declared ``set`` or
``map``; a struct or map is granular unless declared atomic). Empty or null
containers on both sides count as leaves, as in structured-merge-diff, which
is what keeps ``{}`` versus absent distinctions in the owned sets.

`validate` reports the structural errors structured-merge-diff reports when
it converts an object to a typed value (bad or duplicate map-list keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.api.machinery.patch.fieldpath import FieldSet, Path, PathElement, path_string
from services.api.machinery.patch.patch_meta import LIST_ATOMIC, LIST_MAP, LIST_SET, FieldMeta, SchemaNode


class _Absent:
    """Go's nil: no value at all (as opposed to JSON null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


class TypedError(Exception):
    """Structural errors, rendered like structured-merge-diff's ``ValidationErrors``."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__(self.render())

    def render(self) -> str:
        rendered = [f"{path}: {msg}" if path else msg for path, msg in self.errors]
        if len(rendered) == 1:
            return rendered[0]
        return "\n".join(["errors:", *("  " + r for r in rendered)])


# ---------------------------------------------------------------- values


def values_equal(a: Any, b: Any) -> bool:
    """structured-merge-diff's value equality: numbers numerically, booleans apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _shape(node: SchemaNode, *values: Any) -> str:
    """"leaf", "list" or "map" for the values at one position."""
    if node.meta.atomic:
        return "leaf"
    shapes = set()
    for v in values:
        if v is ABSENT or v is None:
            continue
        shapes.add("map" if isinstance(v, dict) else "list" if isinstance(v, list) else "leaf")
    if len(shapes) != 1:
        return "leaf"
    shape = shapes.pop()
    if shape == "list" and node.meta.list_type == LIST_ATOMIC:
        return "leaf"
    return shape


def item_path_element(meta: FieldMeta, item: Any) -> PathElement:
    """The path element of an associative-list element; raises ValueError with the library's words."""
    if meta.list_type == LIST_MAP:
        if item is None:
            raise ValueError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise ValueError("associative list with keys may not have non-map elements")
        defaults = dict(meta.key_defaults)
        fields: list[tuple[str, Any]] = []
        for name in meta.list_map_keys:
            if name in item:
                fields.append((name, item[name]))
            elif name in defaults:
                fields.append((name, defaults[name]))
            else:
                raise ValueError(
                    f'associative list with keys has an element that omits key field "{name}" '
                    "(and doesn't have default value)"
                )
        return PathElement.keyed(fields)
    if isinstance(item, dict):
        raise ValueError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise ValueError("not supported: associative list with lists as elements")
    if item is None:
        raise ValueError("associative list without keys has an element that's an explicit null")
    return PathElement.of_value(item)


# ---------------------------------------------------------------- validation


def validate(value: Any, root: SchemaNode, *, allow_duplicates: bool) -> None:
    """Raise `TypedError` for map-list elements without keys and (unless allowed) duplicate keys."""
    errors: list[tuple[str, str]] = []
    _validate(value, root, "", errors, allow_duplicates)
    if errors:
        raise TypedError(errors)


def _validate(value: Any, node: SchemaNode, path: str, errors: list[tuple[str, str]], allow_dups: bool) -> None:
    shape = _shape(node, value)
    if shape == "map":
        for key, child in value.items():
            _validate(child, node.field(key), f"{path}.{key}", errors, allow_dups)
    elif shape == "list":
        item = node.item()
        seen: set[PathElement] = set()
        for i, element in enumerate(value):
            try:
                pe = item_path_element(node.meta, element)
            except ValueError as exc:
                errors.append((path, f"element {i}: {exc}"))
                return  # like structured-merge-diff, give up on the rest of this list
            if pe in seen and not allow_dups:
                errors.append((path, f"duplicate entries for key {pe}"))
            seen.add(pe)
            _validate(element, item, f"{path}{pe}", errors, allow_dups)


# ---------------------------------------------------------------- field sets


def to_field_set(value: Any, root: SchemaNode) -> FieldSet:
    """The fields ``value`` sets (``TypedValue.ToFieldSet``)."""
    out: set[Path] = set()
    _to_field_set(value, root, (), out)
    return FieldSet(out)


def _to_field_set(value: Any, node: SchemaNode, path: Path, out: set[Path]) -> None:
    shape = _shape(node, value)
    if shape == "leaf":
        out.add(path)
    elif shape == "map":
        for key, child in value.items():
            child_path = (*path, PathElement.field(key))
            _to_field_set(child, node.field(key), child_path, out)
            if child is None or child == {}:
                out.add(child_path)
    else:
        seen: set[PathElement] = set()
        duplicates: set[PathElement] = set()
        pes: list[PathElement | None] = []
        for element in value:
            try:
                pe = item_path_element(node.meta, element)
            except ValueError:
                pes.append(None)
                continue
            pes.append(pe)
            if pe in seen:
                if pe not in duplicates:
                    out.add((*path, pe))
                    duplicates.add(pe)
            else:
                seen.add(pe)
        item = node.item()
        for element, maybe_pe in zip(value, pes, strict=True):
            if maybe_pe is None or maybe_pe in duplicates:
                continue
            child_path = (*path, maybe_pe)
            _to_field_set(element, item, child_path, out)
            out.add(child_path)


# ---------------------------------------------------------------- comparison


@dataclass(slots=True)
class Comparison:
    """Fields removed, modified and added going from one object to another."""

    removed: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    added: set[Path] = field(default_factory=set)

    def sets(self) -> tuple[FieldSet, FieldSet, FieldSet]:
        return FieldSet(self.removed), FieldSet(self.modified), FieldSet(self.added)


def compare(lhs: Any, rhs: Any, root: SchemaNode) -> Comparison:
    """``TypedValue.Compare``: what changed from ``lhs`` to ``rhs``."""
    cmp = Comparison()
    _compare(lhs, rhs, root, (), cmp)
    cmp.removed.discard(())
    cmp.modified.discard(())
    cmp.added.discard(())
    return cmp


def _leaf(lhs: Any, rhs: Any, path: Path, cmp: Comparison) -> None:
    if lhs is ABSENT:
        cmp.added.add(path)
    elif rhs is ABSENT:
        cmp.removed.add(path)
    elif not values_equal(lhs, rhs):
        cmp.modified.add(path)


def _compare(lhs: Any, rhs: Any, node: SchemaNode, path: Path, cmp: Comparison) -> None:
    shape = _shape(node, lhs, rhs)
    in_leaf = False
    if shape == "map":
        lm = lhs if isinstance(lhs, dict) else {}
        rm = rhs if isinstance(rhs, dict) else {}
        if not lm and not rm:
            _leaf(lhs, rhs, path, cmp)
            in_leaf = True
        else:
            for key in _keys(lm, rm):
                child_path = (*path, PathElement.field(key))
                _compare(lm.get(key, ABSENT), rm.get(key, ABSENT), node.field(key), child_path, cmp)
    elif shape == "list":
        ll = lhs if isinstance(lhs, list) else []
        rl = rhs if isinstance(rhs, list) else []
        if not ll and not rl:
            _leaf(lhs, rhs, path, cmp)
            in_leaf = True
        else:
            _compare_items(ll, rl, node, path, cmp)
    else:
        _leaf(lhs, rhs, path, cmp)
        in_leaf = True
    if not in_leaf:
        if lhs is ABSENT:
            cmp.added.add(path)
        elif rhs is ABSENT:
            cmp.removed.add(path)


def _keys(lm: dict[str, Any], rm: dict[str, Any]) -> list[str]:
    return [*lm, *(k for k in rm if k not in lm)]


def _group(items: list[Any], meta: FieldMeta) -> dict[PathElement, list[Any]]:
    groups: dict[PathElement, list[Any]] = {}
    for element in items:
        try:
            pe = item_path_element(meta, element)
        except ValueError:
            continue
        groups.setdefault(pe, []).append(element)
    return groups


def _compare_items(ll: list[Any], rl: list[Any], node: SchemaNode, path: Path, cmp: Comparison) -> None:
    lvals = _group(ll, node.meta)
    rvals = _group(rl, node.meta)
    item = node.item()
    for pe in [*lvals, *(p for p in rvals if p not in lvals)]:
        left = lvals.get(pe, [])
        right = rvals.get(pe, [])
        child = (*path, pe)
        if len(left) <= 1 and len(right) <= 1:
            _compare(left[0] if left else ABSENT, right[0] if right else ABSENT, item, child, cmp)
        elif len(left) >= 2 and len(right) >= 2:
            if not values_equal(left, right):
                cmp.modified.add(child)
        elif len(left) >= 2:
            if right:
                _compare(ABSENT, right[0], item, child, cmp)
            cmp.removed.add(child)
        else:
            if left:
                _compare(left[0], ABSENT, item, child, cmp)
            cmp.added.add(child)


# ---------------------------------------------------------------- merge


def merge(lhs: Any, rhs: Any, root: SchemaNode) -> Any:
    """``TypedValue.Merge``: ``rhs`` (an applied configuration) merged over ``lhs``."""
    out = _merge(lhs, rhs, root)
    return {} if out is ABSENT else out


def _merge(lhs: Any, rhs: Any, node: SchemaNode) -> Any:
    shape = _shape(node, lhs, rhs)
    if shape == "map":
        lm = lhs if isinstance(lhs, dict) else {}
        rm = rhs if isinstance(rhs, dict) else {}
        if not lm and not rm:
            return rhs if rhs is not ABSENT else lhs
        out: dict[str, Any] = {}
        for key in _keys(lm, rm):
            merged = _merge(lm.get(key, ABSENT), rm.get(key, ABSENT), node.field(key))
            if merged is not ABSENT:
                out[key] = merged
        return out if out else ABSENT
    if shape == "list":
        ll = lhs if isinstance(lhs, list) else []
        rl = rhs if isinstance(rhs, list) else []
        if not ll and not rl:
            return rhs if rhs is not ABSENT else lhs
        merged_list = _merge_items(ll, rl, node)
        return merged_list if merged_list else ABSENT
    return rhs if rhs is not ABSENT else lhs


def _pes(items: list[Any], meta: FieldMeta) -> list[PathElement]:
    out = []
    for i, element in enumerate(items):
        try:
            out.append(item_path_element(meta, element))
        except ValueError as exc:
            raise TypedError([("", f"element {i}: {exc}")]) from None
    return out


def _merge_items(ll: list[Any], rl: list[Any], node: SchemaNode) -> list[Any]:
    """Merge two associative lists, ordering like structured-merge-diff.

    Elements keep the order of the applied list where it has them; elements
    only in the live list stay where they were relative to their neighbours.
    """
    item = node.item()
    rhs_pes = _pes(rl, node.meta)
    lhs_pes = _pes(ll, node.meta)
    observed_rhs = dict(zip(rhs_pes, rl, strict=True))
    observed_lhs: dict[PathElement, Any] = {}
    for pe, element in zip(lhs_pes, ll, strict=True):
        observed_lhs[pe] = None if pe in observed_lhs else element  # duplicates merge as null
    shared = iter([pe for pe in rhs_pes if pe in observed_lhs])
    next_shared = next(shared, None)
    merged_rhs: set[PathElement] = set()
    out: list[Any] = []

    def emit(value: Any) -> None:
        if value is not ABSENT:
            out.append(value)

    li = ri = 0
    while li < len(lhs_pes) or ri < len(rhs_pes):
        if li < len(lhs_pes) and ri < len(rhs_pes):
            pe = lhs_pes[li]
            if pe == rhs_pes[ri]:
                merged_rhs.add(pe)
                emit(_merge(observed_lhs.get(pe, ABSENT), observed_rhs[pe], item))
                li += 1
                ri += 1
                next_shared = next(shared, None)
                continue
            if pe in observed_rhs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lhs_pes):
            pe = lhs_pes[li]
            if pe not in observed_rhs:
                emit(_merge(ll[li], ABSENT, item))
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
        if ri < len(rhs_pes):
            pe = rhs_pes[ri]
            merged_rhs.add(pe)
            emit(_merge(observed_lhs.get(pe, ABSENT), observed_rhs[pe], item))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = next(shared, None)
    return out


# ---------------------------------------------------------------- removal


def remove_items(value: dict[str, Any], items: FieldSet, root: SchemaNode) -> dict[str, Any]:
    """``TypedValue.RemoveItems``: ``value`` without the listed fields (emptied parents become null)."""
    out = _remove(value, items, root)
    return out if isinstance(out, dict) else {}


def _remove(value: Any, items: FieldSet, node: SchemaNode) -> Any:
    if isinstance(value, list):
        if not value or node.meta.atomic or node.meta.list_type not in (LIST_MAP, LIST_SET):
            return None
        item = node.item()
        kept: list[Any] = []
        for element in value:
            try:
                pe = item_path_element(node.meta, element)
            except ValueError:
                kept.append(element)
                continue
            if items.has((pe,)):
                continue
            below = items.with_prefix(pe)
            kept.append(_remove(element, below, item) if below else element)
        return kept or None
    if isinstance(value, dict):
        if not value or node.meta.atomic:
            return None
        kept_map: dict[str, Any] = {}
        for key, child in value.items():
            pe = PathElement.field(key)
            if items.has((pe,)):
                continue
            below = items.with_prefix(pe)
            kept_map[key] = _remove(child, below, node.field(key)) if below else child
        return kept_map or None
    return value


def drop_nulls(value: Any) -> Any:
    """Members that are ``null`` removed, as decoding into a typed object does."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


__all__ = [
    "ABSENT",
    "Comparison",
    "TypedError",
    "compare",
    "drop_nulls",
    "item_path_element",
    "merge",
    "path_string",
    "remove_items",
    "to_field_set",
    "validate",
    "values_equal",
]
