"""What the log can hold: limits on the values whose size the schema does not bound.

Why this module exists: kube-apiserver keeps a RawExtension (opaque device
parameters) or FieldsV1 as raw bytes and a Quantity as an arbitrary-precision
decimal, so it accepts any nesting depth (up to Go's 10 000) and any integer.
draplane stores objects as JSON through orjson, which stops at 255 levels of
nesting and at 64-bit integers. Typed fields are bounded by the schema
(int32/int64 ranges, finite depth; numeric quantities are limited to 64 bits
in the model itself); only raw JSON is not, so raw JSON values — found
through the model schema — are checked here after decoding, and a body that
exceeds the limits is a 400 rather than a failed commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from services.api.types import K8sStruct
from services.api.types.base import INT64_MIN, UINT64_MAX
from services.api.types.schema import ScalarNode, walk_fields

__all__ = ["MAX_RAW_JSON_DEPTH", "Excess", "find_excess"]

# Raw JSON may nest this deep; with the schema's own depth and the log
# envelope it stays well under orjson's 255 levels.
MAX_RAW_JSON_DEPTH = 100
MIN_INTEGER, MAX_INTEGER = INT64_MIN, UINT64_MAX  # what orjson encodes


@dataclass(frozen=True, slots=True)
class Excess:
    """A value beyond the limits: ``kind`` is "depth" or "integer"."""

    kind: str
    value: Any = None


def find_excess(cls: type[K8sStruct], obj: dict[str, Any]) -> Excess | None:
    """The first raw-JSON value nested deeper than `MAX_RAW_JSON_DEPTH`, or integer orjson cannot encode."""
    for path in _unbounded_paths(cls):
        for value in _at(obj, path):
            excess = _check(value)
            if excess is not None:
                return excess
    return None


@cache
def _unbounded_paths(cls: type[K8sStruct]) -> tuple[tuple[str, ...], ...]:
    """Where raw JSON sits, as steps: keys, ``[]`` (each list item), ``*`` (each map value)."""
    return tuple(
        tuple(path.replace("[]", ".[]").split("."))
        for path, node in walk_fields(cls)
        if isinstance(node, ScalarNode) and node.kind == "any"
    )


def _at(value: Any, path: tuple[str, ...]) -> list[Any]:
    current = [value]
    for step in path:
        following: list[Any] = []
        for item in current:
            if step == "[]":
                following.extend(item if isinstance(item, list) else ())
            elif step == "*":
                following.extend(item.values() if isinstance(item, dict) else ())
            elif isinstance(item, dict) and step in item:
                following.append(item[step])
        current = following
    return current


def _check(value: Any) -> Excess | None:
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth + 1 > MAX_RAW_JSON_DEPTH:
                return Excess("depth")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, int) and not isinstance(item, bool) and not MIN_INTEGER <= item <= MAX_INTEGER:
            return Excess("integer", item)
    return None
