"""Kubernetes' strict JSON decoding, reproduced for bodies the fast path refused.

Why this module exists: the codec's fast path is one msgspec decode, which
stops at the first problem. When it fails (or when a body may hold duplicate
keys), this module walks the body against the model schema the way
sigs.k8s.io/json does inside kube-apiserver, and reports:

- *strict* errors — every unknown field and every duplicate field, with its
  full path (``unknown field "spec.containers[0].foo"``, ``duplicate field
  "metadata.name"``), deduplicated, in document order, at most 100;
- the first *type* error, worded as Go's ``json.UnmarshalTypeError``
  (``json: cannot unmarshal number into Go struct field DeviceRequest.spec.devices.requests.name
  of type string``); Go reports it instead of the strict errors;
- a *fatal* error from a custom unmarshaler, which stops decoding at once:
  resource.Quantity (``quantities must match the regular expression ...``),
  metav1.Time (Go's ``time.Parse`` error) and intstr.IntOrString.

It also returns the body cleaned as Kubernetes would keep it: unknown fields
dropped, the last of duplicate keys kept, ``null`` list items and map values
replaced by the zero value of their type.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from services.api.machinery.patch import gojson
from services.api.types.base import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from services.api.types.schema import ListNode, MapNode, Node, ScalarNode, StructNode
from services.kube.quantity import FORMAT_WRONG, quantity_error
from services.kube.times import time_error

MAX_STRICT_ERRORS = 100




class Pairs(list[tuple[str, Any]]):
    """A JSON object as its (key, value) pairs in document order, duplicates included."""


class GoFloat(float):
    """A JSON number with a fraction or exponent, remembering its literal text (Go quotes it)."""

    text: str

    def __new__(cls, text: str) -> GoFloat:
        self = super().__new__(cls, text)
        if not math.isfinite(self):
            # Go keeps such a number only as raw bytes; a float64 cannot hold it, and neither can the log.
            raise JSONSyntaxError(f"json: cannot unmarshal number {text} into Go value of type float64")
        self.text = text
        return self


class JSONSyntaxError(ValueError):
    """The body is not JSON draplane can decode; the message is worded like Go's encoding/json."""


def _reject_constant(name: str) -> Any:
    raise JSONSyntaxError(f"invalid character '{name[0]}' looking for beginning of value")


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def parse_pairs(body: bytes | str) -> Any:
    """Parse JSON keeping every key of every object (see `Pairs`).

    As Go's decoder does, invalid UTF-8 and escaped lone UTF-16 surrogates
    become U+FFFD. Raises `JSONSyntaxError`.
    """
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        doc = json.loads(text, object_pairs_hook=Pairs, parse_float=GoFloat, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise JSONSyntaxError(go_syntax_error(exc)) from None
    if "\\ud" in text.lower():
        doc = _replace_surrogates(doc)
    return doc


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, Pairs):
        return Pairs((_replace_surrogates(k), _replace_surrogates(v)) for k, v in value)
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def go_syntax_error(exc: json.JSONDecodeError) -> str:
    """An approximation of Go's ``json.SyntaxError`` text for a Python decode error."""
    doc, pos = exc.doc, exc.pos
    if pos >= len(doc.strip()) or exc.msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    char = doc[pos]
    if exc.msg == "Extra data":
        return f"invalid character '{char}' after top-level value"
    if exc.msg.startswith("Expecting ',' delimiter"):
        return f"invalid character '{char}' after object key:value pair"
    if exc.msg.startswith("Expecting ':' delimiter"):
        return f"invalid character '{char}' after object key"
    if exc.msg.startswith("Expecting property name"):
        return f"invalid character '{char}' looking for beginning of object key string"
    return f"invalid character '{char}' looking for beginning of value"


@dataclass(slots=True)
class DecodeReport:
    """What Kubernetes' strict decoder would say about a body, and the body as it would keep it."""

    strict: list[str] = field(default_factory=list)
    type_error: str | None = None
    fatal: str | None = None
    value: Any = None

    @property
    def error(self) -> str | None:
        """The decode error Kubernetes returns (a fatal error wins over a saved type error)."""
        return self.fatal or self.type_error


class _Abort(Exception):
    pass


def inspect(doc: Any, node: StructNode) -> DecodeReport:
    """Walk ``doc`` (from `parse_pairs`, or plain dicts) against a model's schema."""
    walker = _Walker()
    report = DecodeReport()
    try:
        report.value = walker.value(doc, node, "", (), "")
    except _Abort as abort:
        report.fatal = str(abort)
    report.strict = walker.strict
    report.type_error = walker.type_error
    return report


def to_plain(value: Any) -> Any:
    """`Pairs` → dict (last duplicate wins) and `GoFloat` → float, recursively."""
    if isinstance(value, Pairs):
        return {k: to_plain(v) for k, v in value}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, GoFloat):
        return float(value)
    return value


def json_kind(value: Any) -> str:
    """How Go's decoder names a JSON value in an UnmarshalTypeError (a `Pairs` is an object)."""
    return "object" if isinstance(value, Pairs) else gojson.json_kind(value)


def number_literal(value: int | float) -> str:
    return value.text if isinstance(value, GoFloat) else json.dumps(value)


class _Walker:
    __slots__ = ("seen", "strict", "type_error")

    def __init__(self) -> None:
        self.strict: list[str] = []
        self.seen: set[str] = set()
        self.type_error: str | None = None

    # -- recording

    def _strict(self, kind: str, path: str) -> None:
        text = f"{kind} {json.dumps(path)}"
        if text in self.seen or len(self.strict) >= MAX_STRICT_ERRORS:
            return
        self.seen.add(text)
        self.strict.append(text)

    def _type(self, got: str, go_type: str, stack: tuple[str, ...], struct: str) -> None:
        if self.type_error is None:
            self.type_error = type_error_text(got, go_type, stack, struct)

    # -- walking

    def value(self, v: Any, node: Node, path: str, stack: tuple[str, ...], struct: str) -> Any:
        if v is None:
            return None
        if isinstance(node, StructNode):
            return self._struct(v, node, path, stack, struct)
        if isinstance(node, ListNode):
            if not isinstance(v, list) or isinstance(v, Pairs):
                self._type(json_kind(v), node.go_type, stack, struct)
                return None
            return [self._item(x, node.item, f"{path}[{i}]", stack, struct) for i, x in enumerate(v)]
        if isinstance(node, MapNode):
            if not isinstance(v, Pairs | dict):
                self._type(json_kind(v), node.go_type, stack, struct)
                return None
            out: dict[str, Any] = {}
            items = v if isinstance(v, Pairs) else v.items()
            for key, item in items:
                child = f"{path}.{key}" if path else key
                if key in out:
                    self._strict("duplicate field", child)
                out[key] = self._item(item, node.value, child, stack, struct)
            return out
        return self._scalar(v, node, stack, struct)

    def _item(self, v: Any, node: Node, path: str, stack: tuple[str, ...], struct: str) -> Any:
        # Go decodes a null list item or map value to the zero value of its type.
        if v is None:
            return zero_value(node)
        return self.value(v, node, path, stack, struct)

    def _struct(self, v: Any, node: StructNode, path: str, stack: tuple[str, ...], struct: str) -> Any:
        if not isinstance(v, Pairs | dict):
            self._type(json_kind(v), node.go_type, stack, struct)
            return None
        fields = node.fields
        out: dict[str, Any] = {}
        items = v if isinstance(v, Pairs) else v.items()
        for key, item in items:
            child = f"{path}.{key}" if path else key
            spec = fields.get(key)
            if spec is None:
                self._strict("unknown field", child)
                continue
            if key in out:
                self._strict("duplicate field", child)
            out[key] = self.value(item, spec.node, child, (*stack, key), node.go_name)
        return out

    def _scalar(self, v: Any, node: ScalarNode, stack: tuple[str, ...], struct: str) -> Any:
        kind = node.kind
        if kind == "any":
            return to_plain(v)
        if kind == "string":
            if not isinstance(v, str):
                self._type(json_kind(v), "string", stack, struct)
            return v
        if kind == "bool":
            if not isinstance(v, bool):
                self._type(json_kind(v), "bool", stack, struct)
            return v
        if kind in ("int32", "int64"):
            self._integer(v, kind, stack, struct, fatal=False)
            return v
        if kind == "float":
            if isinstance(v, bool) or not isinstance(v, int | float):
                self._type(json_kind(v), "float64", stack, struct)
            return float(v) if isinstance(v, GoFloat) else v
        if kind == "quantity":
            text = number_literal(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
            if not isinstance(text, str):
                raise _Abort(FORMAT_WRONG)
            problem = quantity_error(text)
            if problem:
                raise _Abort(problem)
            if isinstance(v, int) and not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX:
                # Kubernetes would keep it as a decimal; the log's JSON encoder cannot.
                raise _Abort(out_of_range_number(v))
            return float(v) if isinstance(v, GoFloat) else v
        if kind in ("time", "microtime"):
            if not isinstance(v, str):
                # metav1.Time unmarshals a string first; Go adds the field context.
                raise _Abort(type_error_text(json_kind(v), "string", stack, struct))
            problem = time_error(v, micro=kind == "microtime")
            if problem:
                raise _Abort(problem)
            return v
        if kind == "intorstring":
            if isinstance(v, str):
                return v
            self._integer(v, "int32", stack, struct, fatal=True)
            return v
        raise AssertionError(f"unknown scalar kind {kind}")

    def _integer(self, v: Any, kind: str, stack: tuple[str, ...], struct: str, *, fatal: bool) -> None:
        lo, hi = (INT32_MIN, INT32_MAX) if kind == "int32" else (INT64_MIN, INT64_MAX)
        if isinstance(v, bool) or not isinstance(v, int | float):
            got = json_kind(v)
        elif isinstance(v, float) or not lo <= v <= hi:
            got = "number " + number_literal(v)
        else:
            return
        if fatal:
            raise _Abort(type_error_text(got, kind, stack, struct))
        self._type(got, kind, stack, struct)


def type_error_text(got: str, go_type: str, stack: tuple[str, ...], struct: str) -> str:
    """Go's ``json.UnmarshalTypeError`` text."""
    if struct or stack:
        return f"json: cannot unmarshal {got} into Go struct field {struct}.{'.'.join(stack)} of type {go_type}"
    return f"json: cannot unmarshal {got} into Go value of type {go_type}"


def out_of_range_number(value: int) -> str:
    """The error for an integer draplane cannot store (beyond int64/uint64)."""
    return f"json: cannot unmarshal number {value} into Go value of type int64"


def zero_value(node: Node) -> Any:
    """What Go stores for ``null`` where a value of this type is required."""
    if isinstance(node, StructNode):
        return {}
    if isinstance(node, ScalarNode):
        return {"string": "", "bool": False, "int32": 0, "int64": 0, "float": 0.0, "intorstring": 0}.get(
            node.kind, "0" if node.kind == "quantity" else None
        )
    return None
