"""JSON merge patch (RFC 7386) as the kube-apiserver applies it.

Kubernetes applies ``application/merge-patch+json`` with
``evanphx/json-patch.v4``'s ``MergePatch``. Its behaviour, kept here:

- an object patch merges recursively; ``null`` deletes a member; a member
  that is absent or ``null`` in the document takes the patch value with its
  nested ``null`` members pruned;
- a non-object patch value replaces the document value as is;
- a patch that is an array replaces the whole document (with ``null``
  members of nested objects pruned), which then fails to decode as the kind;
- a patch that is ``null``, a scalar, or not JSON is a 400 ``Invalid JSON Patch``.
"""

from __future__ import annotations

import copy
from typing import Any

from services.api.machinery.patch import errors
from services.api.machinery.patch.gojson import json_dumps
from services.api.machinery.patch.json_body import JSONSyntaxError, loads

INVALID_PATCH = "Invalid JSON Patch"


def parse_merge_patch(body: bytes | str) -> Any:
    """Decode a merge patch body; a syntax error is a 400 ``Invalid JSON Patch``."""
    try:
        doc = loads(body)
    except JSONSyntaxError:
        raise errors.bad_request(INVALID_PATCH) from None
    validate_merge_patch(doc)
    return doc


def validate_merge_patch(patch: Any) -> None:
    """A merge patch must be an object or an array."""
    if not isinstance(patch, dict | list):
        raise errors.bad_request(INVALID_PATCH)


def apply_merge_patch(obj: Any, patch: Any) -> Any:
    """Merge ``patch`` into a copy of ``obj`` and return the result."""
    validate_merge_patch(patch)
    if isinstance(patch, list):
        return _prune_list(copy.deepcopy(patch))
    if not isinstance(obj, dict):
        return _prune_dict(copy.deepcopy(patch))
    doc = copy.deepcopy(obj)
    _merge_docs(doc, patch)
    return doc


def merge_patch_object(obj: dict[str, Any], patch: Any) -> dict[str, Any]:
    """`apply_merge_patch`, then the 422 Kubernetes gives when the result is not an object."""
    result = apply_merge_patch(obj, patch)
    if not isinstance(result, dict):
        raise errors.invalid_patch_result(json_dumps(result), errors.not_an_object_error(result))
    return result


def _merge_docs(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
            continue
        current = doc.get(key)
        if current is None:
            doc[key] = _prune(copy.deepcopy(value))
        else:
            doc[key] = _merge(current, value)


def _merge(current: Any, patch: Any) -> Any:
    if not isinstance(current, dict):
        return _prune(copy.deepcopy(patch))
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    _merge_docs(current, patch)
    return current


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        return _prune_dict(value)
    if isinstance(value, list):
        return _prune_list(value)
    return value


def _prune_dict(doc: dict[str, Any]) -> dict[str, Any]:
    for key in [k for k, v in doc.items() if v is None]:
        del doc[key]
    for key, value in doc.items():
        doc[key] = _prune(value)
    return doc


def _prune_list(items: list[Any]) -> list[Any]:
    return [_prune(item) if item is not None else None for item in items]
