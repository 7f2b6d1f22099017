"""Strategic merge patch, as the kube-apiserver applies it.

``application/strategic-merge-patch+json`` is what ``kubectl apply``
(client-side), ``kubectl patch`` (its default type) and ``kubectl edit`` send.
It is a JSON merge patch that knows, per field (`patch_meta`), which lists
merge by a key instead of being replaced, plus directives:

- ``"$patch": "replace"`` in a map replaces it; ``"$patch": "delete"`` deletes
  it; in a list of maps, ``{"<key>": v, "$patch": "delete"}`` deletes the
  element and ``{"$patch": "replace"}`` replaces the whole list with the
  other elements;
- ``"$setElementOrder/<list>": [...]`` fixes the order of a merged list;
- ``"$deleteFromPrimitiveList/<list>": [...]`` removes values from a list of
  primitives that merges (e.g. ``metadata.finalizers``);
- ``"$retainKeys": [...]`` clears every member of a map not listed;
- ``null`` deletes a field.

The algorithm follows ``k8s.io/apimachinery/pkg/util/strategicpatch``
(``mergeMap`` with ``MergeParallelList`` and ``IgnoreUnmatchedNulls``),
including its element ordering rules and its errors, mapped to Statuses as
the apiserver's ``interpretStrategicMergePatchError`` does: malformed
directives are 400s, lists of lists are 422s. Anything else is a 500 with the
library's message in Kubernetes; draplane answers those 400 (same message),
because the patch is the client's error and no input may cause a 5xx. Where
the library would copy raw patch content (with nested directives and ``null``
members) into the result, this module cleans it as the typed decode that
follows in Kubernetes would.

Kinds without patch metadata (none are served; CRDs are not supported) fall
back to JSON merge patch.
"""

from __future__ import annotations

import copy
from typing import Any

from services.api.machinery.patch import errors
from services.api.machinery.patch.gojson import go_type_name, go_v, json_kind
from services.api.machinery.patch.json_body import JSONSyntaxError, loads
from services.api.machinery.patch.merge_patch import merge_patch_object
from services.api.machinery.patch.patch_meta import SchemaNode, schema_for

DIRECTIVE = "$patch"
DELETE = "delete"
REPLACE = "replace"
MERGE = "merge"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"

ERR_NO_LIST_OF_LISTS = "lists of lists are not supported"
ERR_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
ERR_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
ERR_BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"


class _BadRequest(Exception):
    pass


class _Unprocessable(Exception):
    pass


class _Internal(Exception):
    pass


def parse_strategic_merge_patch(body: bytes | str) -> dict[str, Any] | None:
    """Decode a strategic merge patch body (a JSON object; ``null`` is an empty patch)."""
    try:
        doc = loads(body)
    except JSONSyntaxError as exc:
        raise errors.bad_request(str(exc)) from None
    return validate_strategic_merge_patch(doc)


def validate_strategic_merge_patch(doc: Any) -> dict[str, Any] | None:
    """A strategic merge patch is a JSON object (or ``null``, an empty patch)."""
    if doc is not None and not isinstance(doc, dict):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(doc)} into Go value of type map[string]interface {{}}"
        )
    return doc


def strategic_merge_patch(
    obj: dict[str, Any], patch: dict[str, Any] | None, *, api_version: str, kind: str
) -> dict[str, Any]:
    """Apply a strategic merge patch to a copy of ``obj`` (a kind served by draplane)."""
    schema = schema_for(api_version, kind)
    if schema is None:
        return merge_patch_object(obj, {} if patch is None else patch)
    return apply_strategic_merge_patch(obj, patch, schema.root)


def apply_strategic_merge_patch(obj: dict[str, Any], patch: dict[str, Any] | None, root: SchemaNode) -> dict[str, Any]:
    """Apply a strategic merge patch with the given field metadata; raises `StatusError`."""
    patch = validate_strategic_merge_patch(patch)
    original = copy.deepcopy(obj)
    if patch is None:
        return original
    try:
        return _merge_map(original, copy.deepcopy(patch), root)
    except _BadRequest as exc:
        raise errors.bad_request(str(exc)) from None
    except _Unprocessable as exc:
        errors.raise_unprocessable(str(exc))
    except _Internal as exc:
        # Kubernetes answers 500 here (kubernetes/kubernetes#79210); the patch is the
        # client's mistake, so draplane answers 400 with the library's message.
        raise errors.bad_request(str(exc)) from None


# ---------------------------------------------------------------- maps


def _merge_map(original: dict[str, Any] | None, patch: dict[str, Any], node: SchemaNode) -> dict[str, Any]:
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == REPLACE:
            del patch[DIRECTIVE]
            return _discard_nulls(patch)
        if directive == DELETE:
            return {}
        raise _Internal(f"unknown patch type: {go_v(directive)} in map: {go_v(patch)}")
    if original is None:
        original = {}
    _apply_retain_keys(original, patch)
    _merge_set_element_order(original, patch, node)
    for key, patch_value in list(patch.items()):
        is_delete_list = False
        if key.startswith(DELETE_FROM_PRIMITIVE_LIST):
            key = _extract_key(key, DELETE_FROM_PRIMITIVE_LIST)
            is_delete_list = True
        if patch_value is None:
            original.pop(key, None)
            continue
        child = node.field(key)
        if key not in original:
            if not is_delete_list:
                _set_fresh(original, key, patch_value, child)
            continue
        current = original[key]
        if isinstance(current, dict) and isinstance(patch_value, dict):
            if child.meta.patch_strategy == REPLACE:
                original[key] = _discard_nulls(patch_value)
            else:
                original[key] = _merge_map(current, patch_value, child)
        elif isinstance(current, list) and isinstance(patch_value, list):
            meta = child.meta
            original[key] = _merge_slice_handler(
                current, patch_value, child.item(), meta.patch_strategy, meta.patch_merge_key, is_delete_list
            )
        elif not is_delete_list or _same_go_type(current, patch_value):
            _set_fresh(original, key, patch_value, child)
    return original


def _set_fresh(target: dict[str, Any], key: str, value: Any, node: SchemaNode) -> None:
    kept, keep = _fresh(value, node)
    if keep:
        target[key] = kept
    else:
        target.pop(key, None)


def _fresh(value: Any, node: SchemaNode) -> tuple[Any, bool]:
    """Patch content with no counterpart in the object: directives resolved, ``null`` members dropped.

    A map carrying ``$patch`` is dropped altogether (the library's
    ``removeDirectives``).
    """
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        return _merge_map({}, value, node), True
    if isinstance(value, list):
        item = node.item()
        out = []
        for element in value:
            kept, keep = _fresh(element, item)
            if keep:
                out.append(kept)
        return out, True
    return value, True


def _discard_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _discard_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_discard_nulls(v) for v in value]
    return value


def _extract_key(key: str, prefix: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        if prefix == DELETE_FROM_PRIMITIVE_LIST:
            raise _BadRequest(ERR_BAD_PRIMITIVE_LIST)
        if prefix == SET_ELEMENT_ORDER:
            raise _BadRequest(ERR_BAD_SET_ELEMENT_ORDER)
        raise _Internal(f"fail to find unknown prefix {prefix!r} in {key}\n")
    return rest


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise _BadRequest(ERR_BAD_RETAIN_KEYS)
    allowed = {k for k in retain if isinstance(k, str)}
    for key, value in patch.items():
        if value is None or key.startswith(DELETE_FROM_PRIMITIVE_LIST) or key.startswith(SET_ELEMENT_ORDER):
            continue
        if key not in allowed:
            raise _BadRequest(ERR_BAD_RETAIN_KEYS)
    for key in [k for k in original if k not in allowed]:
        del original[key]


def _merge_set_element_order(original: dict[str, Any], patch: dict[str, Any], node: SchemaNode) -> None:
    for key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _Internal(_bad_arg_type([], order))
        list_key = _extract_key(key, SET_ELEMENT_ORDER)
        found_original = list_key in original
        found_patch = list_key in patch
        original_list: list[Any] = []
        patch_list: list[Any] = []
        if found_original:
            if not isinstance(original[list_key], list):
                raise _Internal(_bad_arg_type([], original[list_key]))
            original_list = original[list_key]
        if found_patch:
            if not isinstance(patch[list_key], list):
                raise _Internal(_bad_arg_type([], patch[list_key]))
            patch_list = patch[list_key]
        child = node.field(list_key)
        meta = child.meta
        merge_key = meta.patch_merge_key
        _validate_set_element_order(patch_list, order, merge_key)
        if found_original and not found_patch:
            merged = original_list
        elif found_patch and not found_original:
            merged, _ = _fresh(patch_list, child)
        elif found_original and found_patch:
            merged = _merge_slice_handler(
                original_list, patch_list, child.item(), meta.patch_strategy, merge_key, False
            )
        else:
            continue
        if merge_key:
            patch_items, server_only = _partition_maps(merged, order, merge_key)
        else:
            patch_items, server_only = _partition_primitives(merged, order)
        kind = _slice_element_kind(original_list, patch_list)
        original[list_key] = _normalize_element_order(
            patch_items, server_only, order, original_list, merge_key, kind
        )
        patch.pop(list_key, None)


def _validate_set_element_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    if not order or not patch_list:
        return
    non_delete = _extract_to_delete_items(patch_list)[0] if merge_key else patch_list
    pi = si = 0
    while pi < len(non_delete) and si < len(order):
        if isinstance(non_delete[pi], dict) and DIRECTIVE in non_delete[pi]:
            pi += 1
            continue
        if _merge_key_value_equal(non_delete[pi], order[si], merge_key):
            pi += 1
        si += 1
    if pi < len(non_delete) and si >= len(order):
        raise _Internal(
            f"The order in patch list:\n{go_v(patch_list)}\n doesn't match {SET_ELEMENT_ORDER} list:\n{go_v(order)}\n"
        )


def _merge_key_value_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return go_equal(left, right)
    if not isinstance(left, dict):
        raise _Internal(_bad_arg_type({}, left))
    if not isinstance(right, dict):
        raise _Internal(_bad_arg_type({}, right))
    if merge_key not in left:
        raise _Internal(_no_merge_key(left, merge_key))
    if merge_key not in right:
        raise _Internal(_no_merge_key(right, merge_key))
    return go_equal(left[merge_key], right[merge_key])


# ---------------------------------------------------------------- lists


def _merge_slice_handler(
    original: list[Any],
    patch: list[Any],
    item: SchemaNode,
    strategy: str,
    merge_key: str,
    is_delete_list: bool,
) -> list[Any]:
    if strategy == MERGE or is_delete_list:
        return _merge_slice(original, patch, item, merge_key, is_delete_list)
    return [_discard_nulls(v) for v in patch]


def _merge_slice(
    original: list[Any], patch: list[Any], item: SchemaNode, merge_key: str, is_delete_list: bool
) -> list[Any]:
    if not original and not patch:
        return original
    kind = _slice_element_kind(original, patch)
    if kind != "map":
        if is_delete_list:
            return [v for v in original if not any(go_equal(v, d) for d in patch)]
        merged = _deduplicate(original + patch)
    else:
        if not merge_key:
            raise _Internal("cannot merge lists without merge key for struct")
        original, patch = _merge_slice_special_elements(original, patch, merge_key)
        merged = _merge_slice_elements(original, patch, merge_key, item)
    if merge_key:
        patch_items, server_only = _partition_maps(merged, patch, merge_key)
    else:
        patch_items, server_only = _partition_primitives(merged, patch)
    return _normalize_element_order(patch_items, server_only, patch, original, merge_key, kind)


def _merge_slice_special_elements(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    without: list[Any] = []
    replace = False
    for element in patch:
        if DIRECTIVE not in element:
            without.append(element)
            continue
        directive = element[DIRECTIVE]
        if directive == DELETE:
            if merge_key not in element:
                raise _Internal(_no_merge_key(element, merge_key))
            value = element[merge_key]
            original = [v for v in original if not _map_has_key_value(v, merge_key, value)]
        elif directive == REPLACE:
            replace = True
        elif directive == MERGE:
            raise _Internal("merging lists cannot yet be specified in the patch")
        else:
            raise _Internal(f"unknown patch type: {go_v(directive)} in map: {go_v(element)}")
    if replace:
        return [_discard_nulls(v) for v in without], []
    return original, without


def _map_has_key_value(element: Any, key: str, value: Any) -> bool:
    if not isinstance(element, dict):
        raise _Internal("value for key is not a map")
    return key in element and go_equal(element[key], value)


def _find_by_key(elements: list[Any], key: str, value: Any) -> int:
    for i, element in enumerate(elements):
        if not isinstance(element, dict):
            raise _Internal(f"value for key {i} is not a map")
        if key in element and go_equal(element[key], value):
            return i
    return -1


def _merge_slice_elements(original: list[Any], patch: list[Any], merge_key: str, item: SchemaNode) -> list[Any]:
    # a new list: appended elements must not show up in the caller's ``original``, which
    # orders the result (Go's append leaves the caller's slice header as it was)
    original = list(original)
    for element in patch:
        if merge_key not in element:
            raise _Internal(_no_merge_key(element, merge_key))
        idx = _find_by_key(original, merge_key, element[merge_key])
        if idx >= 0:
            original[idx] = _merge_map(original[idx], element, item)
        else:
            original.append(_merge_map({}, element, item))
    return original


def _slice_element_kind(*slices: list[Any]) -> str:
    kind: str | None = None
    for values in slices:
        for value in values:
            current = "map" if isinstance(value, dict) else "list" if isinstance(value, list) else go_type_name(value)
            if kind is None:
                if current == "list":
                    raise _Unprocessable(ERR_NO_LIST_OF_LISTS)
                kind = current
            elif current != kind:
                raise _Internal(f"list element types are not identical: {go_v(list(slices))}")
    if kind is None:
        raise _Internal("no elements in any of the given slices")
    return kind


def _deduplicate(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if not any(go_equal(value, seen) for seen in out):
            out.append(value)
    return out


def _partition_primitives(values: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    in_patch: list[Any] = []
    server_only: list[Any] = []
    for value in values:
        (in_patch if any(go_equal(value, b) for b in by) else server_only).append(value)
    return in_patch, server_only


def _partition_maps(values: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    in_patch: list[Any] = []
    server_only: list[Any] = []
    for value in values:
        if not isinstance(value, dict):
            raise _Internal(_bad_arg_type({}, value))
        if merge_key not in value:
            raise _Internal(_no_merge_key(value, merge_key))
        found = _find_by_key(by, merge_key, value[merge_key]) >= 0
        (in_patch if found else server_only).append(value)
    return in_patch, server_only


def _extract_to_delete_items(values: list[Any]) -> tuple[list[Any], list[Any]]:
    keep: list[Any] = []
    delete: list[Any] = []
    for value in values:
        if not isinstance(value, dict):
            raise _Internal(_bad_arg_type({}, value))
        (delete if value.get(DIRECTIVE) == DELETE else keep).append(value)
    return keep, delete


def _index(values: list[Any], wanted: Any, merge_key: str, kind: str) -> int:
    def key_of(v: Any) -> Any:
        if kind == "map":
            return v.get(merge_key) if isinstance(v, dict) else None
        return v

    target = key_of(wanted)
    for i, value in enumerate(values):
        if go_equal(key_of(value), target):
            return i
    return -1


def _normalize_slice_order(values: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    to_delete: list[Any] = []
    if kind == "map":
        for lst in (values, order):
            for element in lst:
                if not isinstance(element, dict):
                    raise _Internal(_bad_arg_type({}, element))
                if merge_key not in element:
                    raise _Internal(_no_merge_key(element, merge_key))
        values, to_delete = _extract_to_delete_items(values)
    positions = [_index(order, v, merge_key, kind) for v in values]
    ranked = sorted(range(len(values)), key=lambda i: (positions[i] < 0, positions[i], i))
    return [values[i] for i in ranked] + to_delete


def _normalize_element_order(
    patch: list[Any], server_only: list[Any], patch_order: list[Any], server_order: list[Any], merge_key: str, kind: str
) -> list[Any]:
    patch = _normalize_slice_order(patch, patch_order, merge_key, kind)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, kind)
    return _merge_sorted(server_only, patch, server_order, merge_key, kind)


def _merge_sorted(left: list[Any], right: list[Any], server_order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """Interleave server-only items (left) into patch items (right), keeping both relative orders."""
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _index(server_order, left[i], merge_key, kind)
            ri = _index(server_order, right[j], merge_key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


# ---------------------------------------------------------------- Go semantics


def go_equal(a: Any, b: Any) -> bool:
    """Go's ``==`` on values decoded into ``interface{}`` (types must match; maps and lists deep)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(go_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(go_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _same_go_type(a: Any, b: Any) -> bool:
    return go_type_name(a) == go_type_name(b)


def _no_merge_key(element: Any, key: str) -> str:
    return f"map: {go_v(element)} does not contain declared merge key: {key}"


def _bad_arg_type(expected: Any, actual: Any) -> str:
    return f"expected a {go_type_name(expected)}, but received a {go_type_name(actual)}"


__all__ = [
    "apply_strategic_merge_patch",
    "go_equal",
    "parse_strategic_merge_patch",
    "strategic_merge_patch",
    "validate_strategic_merge_patch",
]
