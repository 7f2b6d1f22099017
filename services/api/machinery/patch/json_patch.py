"""JSON patch (RFC 6902) as the kube-apiserver applies it.

Kubernetes applies ``application/json-patch+json`` with
``gopkg.in/evanphx/json-patch.v4``, and clients see that library's dialect,
which this module reproduces rather than the letter of the RFC:

- array indices may be negative (counted from the end) and ``-`` appends;
- ``replace`` of a missing object member adds it (only array indices are
  checked); ``replace`` of the root (path ``""``) swaps the whole document;
- ``test`` treats a missing member and a ``null`` member alike, and compares
  numbers by their JSON text (``1`` is not ``1.0``);
- ``copy`` from a missing object member writes ``null``;
- an ``add`` without ``value`` writes ``null``.

Errors are Kubernetes': a body that does not decode as a patch is a 400
carrying Go's decoder message; more than 10000 operations is a 413; any
operation that does not apply is a 422 with the fixed generic message (the
library's reason is attached as the exception's ``__cause__``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from services.api.machinery.patch import errors
from services.api.machinery.patch.gojson import json_dumps, json_kind
from services.api.machinery.patch.json_body import JSONSyntaxError, loads

MAX_OPERATIONS = 10000

_ABSENT: Any = object()


def parse_json_patch(body: bytes | str) -> list[dict[str, Any] | None]:
    """Decode a JSON patch body as ``jsonpatch.DecodePatch`` does (400 on failure, 413 when too long)."""
    try:
        doc = loads(body)
    except JSONSyntaxError as exc:
        raise errors.bad_request(str(exc)) from None
    return validate_json_patch(doc)


def validate_json_patch(doc: Any) -> list[dict[str, Any] | None]:
    """Check a decoded JSON patch document has the shape ``jsonpatch.Patch`` accepts."""
    if doc is None:
        return []
    if not isinstance(doc, list):
        raise errors.bad_request(f"json: cannot unmarshal {json_kind(doc)} into Go value of type jsonpatch.Patch")
    for op in doc:
        if op is not None and not isinstance(op, dict):
            raise errors.bad_request(
                f"json: cannot unmarshal {json_kind(op)} into Go value of type jsonpatch.Operation"
            )
    if len(doc) > MAX_OPERATIONS:
        raise errors.request_entity_too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {len(doc)}"
        )
    return doc


def unescape_token(token: str) -> str:
    """RFC 6901 reference token decoding: ``~1`` is ``/``, then ``~0`` is ``~``."""
    return token.replace("~1", "/").replace("~0", "~")


def escape_token(token: str) -> str:
    """RFC 6901 reference token encoding (inverse of `unescape_token`)."""
    return token.replace("~", "~0").replace("/", "~1")


class _OpError(Exception):
    """An operation that does not apply; the text is the library's error."""


def apply_json_patch(obj: Any, patch: Sequence[dict[str, Any] | None]) -> Any:
    """Apply decoded JSON patch operations to a copy of ``obj`` and return the result.

    Raises a 422 `StatusError` when an operation does not apply. The result is
    whatever the operations produced; `json_patch_object` additionally insists
    on an object.
    """
    root: list[Any] = [copy.deepcopy(obj)]
    for raw_op in validate_json_patch(list(patch)):
        op = raw_op or {}
        try:
            _apply_one(root, op)
        except _OpError as exc:
            errors.raise_unprocessable(str(exc))
    return root[0]


def json_patch_object(obj: dict[str, Any], patch: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
    """`apply_json_patch`, then the 422 Kubernetes gives when the result is not an object."""
    result = apply_json_patch(obj, patch)
    if not isinstance(result, dict):
        raise errors.invalid_patch_result(json_dumps(result), errors.not_an_object_error(result))
    return result


# ---------------------------------------------------------------- operations


def _kind(op: dict[str, Any]) -> str:
    value = op.get("op")
    return value if isinstance(value, str) else "unknown"


def _string_field(op: dict[str, Any], name: str) -> str | None:
    """The ``path``/``from`` member, or None when absent, null or not a string."""
    value = op.get(name)
    return value if isinstance(value, str) else None


def _value(op: dict[str, Any]) -> Any:
    return copy.deepcopy(op["value"]) if "value" in op else _ABSENT


def _apply_one(root: list[Any], op: dict[str, Any]) -> None:
    kind = _kind(op)
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise _OpError(f"Unexpected kind: {kind}")
    handler(root, op)


def _find(root: list[Any], path: str) -> tuple[Any, str] | None:
    """``findObject``: the container holding the last token, and that token (decoded)."""
    split = path.split("/")
    if len(split) < 2:
        return None
    doc = root[0]
    for part in split[1:-1]:
        try:
            nxt = _get(doc, unescape_token(part))
        except _OpError:
            return None
        if not isinstance(nxt, dict | list):
            return None
        doc = nxt
    if not isinstance(doc, dict | list):
        return None
    return doc, unescape_token(split[-1])


def _atoi(key: str) -> int:
    text = key[1:] if key[:1] in "+-" else key
    if not text or not text.isdigit() or not text.isascii():
        raise _OpError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    return int(key)


def _get(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key)
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(container):
            raise _OpError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += len(container)
    if idx >= len(container):
        raise _OpError(f"Unable to access invalid index: {idx}: invalid index referenced")
    return container[idx]


def _set(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(container):
            raise _OpError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += len(container)
    container[idx] = value


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    try:
        idx = _atoi(key)
    except _OpError as exc:
        raise _OpError(f"value was not a proper array index: '{key}': {exc}") from None
    size = len(container) + 1
    if idx >= size:
        raise _OpError(f"Unable to access invalid index: {idx}: invalid index referenced")
    if idx < 0:
        if idx < -size:
            raise _OpError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += size
    container.insert(idx, value)


def _remove(container: Any, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise _OpError(f"Unable to remove nonexistent key: {key}: missing value")
        del container[key]
        return
    idx = _atoi(key)
    if idx >= len(container):
        raise _OpError(f"Unable to access invalid index: {idx}: invalid index referenced")
    if idx < 0:
        if idx < -len(container):
            raise _OpError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += len(container)
    del container[idx]


def _op_add(root: list[Any], op: dict[str, Any]) -> None:
    path = _string_field(op, "path")
    if path is None:
        raise _OpError("add operation failed to decode path: missing value")
    found = _find(root, path)
    if found is None:
        raise _OpError(f'add operation does not apply: doc is missing path: "{path}": missing value')
    value = _value(op)
    try:
        _add(found[0], found[1], None if value is _ABSENT else value)
    except _OpError as exc:
        raise _OpError(f"error in add for path: '{path}': {exc}") from None


def _op_remove(root: list[Any], op: dict[str, Any]) -> None:
    path = _string_field(op, "path")
    if path is None:
        raise _OpError("remove operation failed to decode path: missing value")
    found = _find(root, path)
    if found is None:
        raise _OpError(f'remove operation does not apply: doc is missing path: "{path}": missing value')
    try:
        _remove(*found)
    except _OpError as exc:
        raise _OpError(f"error in remove for path: '{path}': {exc}") from None


def _op_replace(root: list[Any], op: dict[str, Any]) -> None:
    path = _string_field(op, "path")
    if path is None:
        raise _OpError("replace operation failed to decode path")
    value = _value(op)
    if path == "":
        if not isinstance(value, dict | list):
            raise _OpError("replace operation value must be object or array")
        root[0] = value
        return
    found = _find(root, path)
    if found is None:
        raise _OpError(f"replace operation does not apply: doc is missing path: {path}: missing value")
    container, key = found
    try:
        _get(container, key)
    except _OpError:
        raise _OpError(f"replace operation does not apply: doc is missing key: {path}: missing value") from None
    try:
        _set(container, key, None if value is _ABSENT else value)
    except _OpError as exc:
        raise _OpError(f"error in remove for path: '{path}': {exc}") from None


def _op_move(root: list[Any], op: dict[str, Any]) -> None:
    source = _string_field(op, "from")
    if source is None:
        raise _OpError("move operation failed to decode from: operation, missing from field: missing value")
    found = _find(root, source)
    if found is None:
        raise _OpError(f"move operation does not apply: doc is missing from path: {source}: missing value")
    container, key = found
    try:
        value = _get(container, key)
        _remove(container, key)
    except _OpError as exc:
        raise _OpError(f"error in move for path: '{key}': {exc}") from None
    path = _string_field(op, "path")
    if path is None:
        raise _OpError("move operation failed to decode path")
    found = _find(root, path)
    if found is None:
        raise _OpError(f"move operation does not apply: doc is missing destination path: {path}: missing value")
    try:
        _add(found[0], found[1], value)
    except _OpError as exc:
        raise _OpError(f"error in move for path: '{path}': {exc}") from None


def _op_test(root: list[Any], op: dict[str, Any]) -> None:
    path = _string_field(op, "path")
    if path is None:
        raise _OpError("test operation failed to decode path")
    expected = op.get("value", _ABSENT)
    if path == "":
        if expected is not _ABSENT and json_text_equal(root[0], expected):
            return
        raise _OpError(f"testing value {path} failed: test failed")
    found = _find(root, path)
    if found is None:
        raise _OpError(f"test operation does not apply: is missing path: {path}: missing value")
    try:
        actual = _get(*found)
    except _OpError as exc:
        raise _OpError(f"error in test for path: '{path}': {exc}") from None
    if actual is None:
        if expected is None:
            return
        raise _OpError(f"testing value {path} failed: test failed")
    if expected is _ABSENT or not json_text_equal(actual, expected):
        raise _OpError(f"testing value {path} failed: test failed")


def _op_copy(root: list[Any], op: dict[str, Any]) -> None:
    source = _string_field(op, "from")
    if source is None:
        raise _OpError("copy operation failed to decode from: operation, missing from field: missing value")
    found = _find(root, source)
    if found is None:
        raise _OpError(f"copy operation does not apply: doc is missing from path: {source}: missing value")
    try:
        value = _get(*found)
    except _OpError as exc:
        raise _OpError(f"error in copy for from: '{source}': {exc}") from None
    path = _string_field(op, "path")
    if path is None:
        raise _OpError("copy operation failed to decode path: missing value")
    found = _find(root, path)
    if found is None:
        raise _OpError(f"copy operation does not apply: doc is missing destination path: {path}: missing value")
    try:
        _add(found[0], found[1], copy.deepcopy(value))
    except _OpError as exc:
        raise _OpError(f"error while adding value during copy: {exc}") from None


_HANDLERS = {
    "add": _op_add,
    "remove": _op_remove,
    "replace": _op_replace,
    "move": _op_move,
    "test": _op_test,
    "copy": _op_copy,
}


def json_text_equal(a: Any, b: Any) -> bool:
    """Structural equality where scalars compare by their JSON text, as the library does."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or a.keys() != b.keys():
            return False
        return all(json_text_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(json_text_equal(x, y) for x, y in zip(a, b, strict=True))
    return json_dumps(a) == json_dumps(b)


__all__ = [
    "MAX_OPERATIONS",
    "apply_json_patch",
    "escape_token",
    "json_patch_object",
    "json_text_equal",
    "parse_json_patch",
    "unescape_token",
    "validate_json_patch",
]
