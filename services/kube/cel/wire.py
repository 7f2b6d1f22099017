"""A minimal protobuf wire codec for CEL's parsed-expression messages.

``cel-expr-python`` serializes a compiled expression as a
``google.protobuf.Any`` holding a ``cel.expr.ParsedExpr`` and reads such bytes
back. draplane inspects and rewrites that tree (`rewrite`, `cost`) without a
protobuf dependency: a message decodes to a list of ``[field number, wire
type, value]``, where the value of a field that holds an expression-bearing
message is itself decoded, and everything else stays raw bytes or ints so it
round-trips unchanged.
"""

from __future__ import annotations

from typing import Any

Msg = list[list[Any]]

VARINT, I64, LEN, I32 = 0, 1, 2, 5

# message type -> {field number: message type of that (repeated) field}
_SCHEMA: dict[str, dict[int, str]] = {
    "Any": {2: "ParsedExpr"},
    "ParsedExpr": {2: "Expr"},
    "Expr": {4: "Ident", 5: "Select", 6: "Call", 7: "CreateList", 8: "CreateStruct", 9: "Comprehension"},
    "Select": {1: "Expr"},
    "Call": {1: "Expr", 3: "Expr"},
    "CreateList": {1: "Expr"},
    "CreateStruct": {2: "Entry"},
    "Entry": {3: "Expr", 4: "Expr"},
    "Comprehension": {2: "Expr", 4: "Expr", 5: "Expr", 6: "Expr", 7: "Expr"},
}
_EMPTY: dict[int, str] = {}

# Expr fields: 2 id, 3 const, 4 ident, 5 select, 6 call, 7 list, 8 struct, 9 comprehension.
CONST, IDENT, SELECT, CALL, LIST, STRUCT, COMPREHENSION = 3, 4, 5, 6, 7, 8, 9
_KIND_FIELDS = frozenset({CONST, IDENT, SELECT, CALL, LIST, STRUCT, COMPREHENSION})


def schema_of(msg_type: str) -> dict[int, str]:
    return _SCHEMA.get(msg_type, _EMPTY)


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _write_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def decode(buf: bytes, msg_type: str) -> Msg:
    schema = schema_of(msg_type)
    msg: Msg = []
    pos = 0
    end = len(buf)
    while pos < end:
        key, pos = _read_varint(buf, pos)
        num, wt = key >> 3, key & 7
        value: Any
        if wt == VARINT:
            value, pos = _read_varint(buf, pos)
        elif wt == I64:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wt == I32:
            value, pos = buf[pos : pos + 4], pos + 4
        elif wt == LEN:
            length, pos = _read_varint(buf, pos)
            value, pos = buf[pos : pos + length], pos + length
            if num in schema:
                value = decode(value, schema[num])
        else:
            raise ValueError(f"unsupported wire type {wt}")
        msg.append([num, wt, value])
    return msg


def encode(msg: Msg) -> bytes:
    out = bytearray()
    for num, wt, value in msg:
        out += _write_varint((num << 3) | wt)
        if wt == VARINT:
            out += _write_varint(value)
        elif wt == LEN:
            data = encode(value) if isinstance(value, list) else value
            out += _write_varint(len(data))
            out += data
        else:
            out += value
    return bytes(out)


def field_value(msg: Msg, num: int) -> Any:
    for field in msg:
        if field[0] == num:
            return field[2]
    return None


def expr_kind(expr: Msg) -> tuple[int, Any]:
    """(CONST | IDENT | ... , the kind's message) of an Expr."""
    for num, _, value in expr:
        if num in _KIND_FIELDS:
            return num, value
    return 0, None


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else ""


def string_constant(expr: Msg) -> str | None:
    num, value = expr_kind(expr)
    if num != CONST or not isinstance(value, bytes):
        return None
    for field_num, wire_type, constant in decode(value, "Constant"):
        if field_num == 6 and wire_type == LEN:
            return text(constant)
    return None


def max_expr_id(msg: Msg, msg_type: str = "Expr") -> int:
    schema = schema_of(msg_type)
    best = 0
    for num, _, value in msg:
        if isinstance(value, list):
            best = max(best, max_expr_id(value, schema[num]))
        elif (msg_type == "Expr" and num == 2) or (msg_type == "Entry" and num == 1):
            best = max(best, value)
    return best


def parsed_root(serialized: bytes) -> tuple[Msg, Msg, Msg] | None:
    """(envelope, ParsedExpr, root Expr) of a serialized expression, None if not one."""
    envelope = decode(serialized, "Any")
    parsed = field_value(envelope, 2)
    if not isinstance(parsed, list):
        return None
    root = field_value(parsed, 2)
    if not isinstance(root, list):
        return None
    return envelope, parsed, root


_SCHEMA.update(
    {
        "CheckedAny": {2: "CheckedExpr"},
        "CheckedExpr": {2: "RefEntry", 3: "TypeEntry", 4: "Expr"},
        "RefEntry": {2: "Reference"},
        "TypeEntry": {2: "Type"},
    }
)


def checked_parts(serialized: bytes) -> tuple[Msg, dict[int, Msg], dict[int, Msg]] | None:
    """(root Expr, reference by expr id, type by expr id) of a serialized ``cel.expr.CheckedExpr``."""
    envelope = decode(serialized, "CheckedAny")
    checked = field_value(envelope, 2)
    if not isinstance(checked, list):
        return None
    root = field_value(checked, 4)
    if not isinstance(root, list):
        return None
    references: dict[int, Msg] = {}
    types: dict[int, Msg] = {}
    for num, _, entry in checked:
        if num in (2, 3) and isinstance(entry, list):
            key, value = field_value(entry, 1), field_value(entry, 2)
            if isinstance(key, int) and isinstance(value, list):
                (references if num == 2 else types)[key] = value
    return root, references, types
