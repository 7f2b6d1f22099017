"""Between draplane's JSON-shaped dicts and protobuf messages, walking the descriptors and Go's field tables.

Why this module exists: one generic walk converts every kind, so no message
is written by hand. Per message it precomputes a table (`MessageTable`) once
per pool: each field's attribute, JSON name, how Go holds it and what its
values are (scalar, bytes, nested message, or one of `special`'s types).

Both directions do what Go does, so that a Go client's bytes and ours are the
same and our dicts are what the same client would have sent as JSON:

- encode: a field Go holds by value is always written, its zero value when
  the dict lacks it (Go's marshaller writes non-pointer fields
  unconditionally); a pointer, list or map absent from the dict stays unset.
- decode: as Go's ``encoding/json`` shows the decoded struct — an
  ``omitempty`` field with its zero value is left out, a nil pointer, list or
  map without ``omitempty`` is ``None``, a struct held by value is always
  there (a zero ``metav1.Time`` shows as ``None``).
"""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from services.api.protobuf.pools import GoField, Pool
from services.api.protobuf.special import SPECIAL, Reader, Writer

__all__ = ["MessageTable", "read", "table", "write"]

_EMPTY: dict[str, Any] = {}
# What a field's values are.
SCALAR, BYTES, MESSAGE, SPECIAL_TYPE, WRAPPED = "scalar", "bytes", "message", "special", "wrapped"


class FieldTable:
    """One field of a message: where it lives in the message and in the dict, and how to convert it."""

    __slots__ = (
        "attr",
        "hold",
        "inline",
        "json",
        "omitempty",
        "omitzero",
        "read_special",
        "sub",
        "values",
        "write_special",
        "zero",
    )

    def __init__(self, *, attr: str, go: GoField, values: str, zero: Any) -> None:
        self.attr = attr
        self.json = go.json
        self.inline = go.json == ""
        self.hold = go.hold
        self.omitempty = go.omitempty or go.omitzero  # for scalars and containers the two agree
        self.omitzero = go.omitzero
        self.values = values  # for a map: its values'
        self.zero = zero
        self.sub: MessageTable | None = None
        self.write_special: Writer | None = None
        self.read_special: Reader | None = None


class MessageTable:
    """A message class and its fields in Go's struct order."""

    __slots__ = ("_zero", "cls", "fields", "name")

    def __init__(self, name: str, cls: Any) -> None:
        self.name = name
        self.cls = cls
        self.fields: tuple[FieldTable, ...] = ()
        self._zero: dict[str, Any] | None = None

    def zero(self) -> dict[str, Any]:
        """What Go's JSON shows for the zero struct (for ``omitzero``)."""
        if self._zero is None:
            self._zero = read(self, self.cls())
        return self._zero


_TABLES: dict[tuple[str, str], MessageTable] = {}


def table(pool: Pool, name: str) -> MessageTable:
    """The (cached) table of message ``name`` in ``pool``."""
    key = (pool.release, name)
    found = _TABLES.get(key)
    if found is None:
        found = _build(pool, name)
    return found


def _values(fd: FieldDescriptor) -> tuple[str, Descriptor | None]:
    if fd.type == FieldDescriptor.TYPE_BYTES:
        return BYTES, None
    if fd.type != FieldDescriptor.TYPE_MESSAGE:
        return SCALAR, None
    desc = fd.message_type
    return (SPECIAL_TYPE if desc.full_name in SPECIAL else MESSAGE), desc


def _build(pool: Pool, name: str) -> MessageTable:
    desc = pool.descriptor(name)
    if desc is None:
        raise KeyError(name)
    result = MessageTable(name, pool.message_class(name))
    _TABLES[(pool.release, name)] = result  # before the fields: a message may hold itself
    fields: list[FieldTable] = []
    for go in pool.fields.get(name, ()):
        fd = desc.fields_by_number.get(go.number)
        if fd is None or go.json == "-":
            continue
        target = fd
        if go.hold == "map":
            target = fd.message_type.fields_by_name["value"]
        values, sub = _values(target)
        if (go.hold == "map" and go.map_value == "wrapped") or go.hold == "wrapped":
            values = WRAPPED
        zero = None if fd.is_repeated or fd.type == FieldDescriptor.TYPE_MESSAGE else fd.default_value
        f = FieldTable(attr=fd.name, go=go, values=values, zero=zero)
        if values == SPECIAL_TYPE and sub is not None:
            f.write_special, f.read_special = SPECIAL[sub.full_name]
        elif values == MESSAGE and sub is not None:
            f.sub = table(pool, sub.full_name)
        fields.append(f)
    result.fields = tuple(fields)
    return result


# ---- dict → message -------------------------------------------------------------------------------------------


def write(t: MessageTable, msg: Any, d: dict[str, Any]) -> None:
    """Fill ``msg`` from the JSON-shaped ``d`` as Go's marshaller would have it (see the module docstring)."""
    for f in t.fields:
        if f.inline:
            sub = getattr(msg, f.attr)
            sub.SetInParent()
            write(f.sub, sub, d)  # type: ignore[arg-type]
            continue
        v = d.get(f.json)
        hold = f.hold
        if v is None:
            if hold == "value":
                _write_zero(f, msg)
            continue
        if hold == "value" or hold == "pointer":
            values = f.values
            if values == SCALAR:
                setattr(msg, f.attr, v)
            elif values == MESSAGE:
                sub = getattr(msg, f.attr)
                sub.SetInParent()
                write(f.sub, sub, v)  # type: ignore[arg-type]
            elif values == SPECIAL_TYPE:
                f.write_special(getattr(msg, f.attr), v)  # type: ignore[misc]
            elif values == BYTES:
                setattr(msg, f.attr, base64.b64decode(v))
        elif hold == "list":
            _write_list(f, getattr(msg, f.attr), v)
        elif hold == "map":
            _write_map(f, getattr(msg, f.attr), v)
        elif hold == "bytes":
            setattr(msg, f.attr, base64.b64decode(v))
        elif hold == "wrapped":
            sub = getattr(msg, f.attr)
            sub.SetInParent()
            sub.items.extend(v)


def _write_zero(f: FieldTable, msg: Any) -> None:
    values = f.values
    if values == SCALAR:
        setattr(msg, f.attr, f.zero)
    elif values == MESSAGE:
        sub = getattr(msg, f.attr)
        sub.SetInParent()
        write(f.sub, sub, _EMPTY)  # type: ignore[arg-type]
    elif values == SPECIAL_TYPE:
        f.write_special(getattr(msg, f.attr), None)  # type: ignore[misc]


def _write_list(f: FieldTable, rep: Any, v: list[Any]) -> None:
    values = f.values
    if values == SCALAR:
        rep.extend(v)
    elif values == MESSAGE:
        sub_table = f.sub
        for item in v:
            write(sub_table, rep.add(), item)  # type: ignore[arg-type]
    elif values == SPECIAL_TYPE:
        for item in v:
            f.write_special(rep.add(), item)  # type: ignore[misc]
    elif values == BYTES:
        rep.extend(base64.b64decode(item) for item in v)


def _write_map(f: FieldTable, mp: Any, v: dict[str, Any]) -> None:
    values = f.values
    if values == SCALAR:
        for key, item in v.items():
            if item is not None:
                mp[key] = item
    elif values == MESSAGE:
        for key, item in v.items():
            write(f.sub, mp[key], item or _EMPTY)  # type: ignore[arg-type]
    elif values == SPECIAL_TYPE:
        for key, item in v.items():
            f.write_special(mp[key], item)  # type: ignore[misc]
    elif values == WRAPPED:
        for key, item in v.items():
            mp[key].items.extend(item or ())
    elif values == BYTES:
        for key, item in v.items():
            mp[key] = base64.b64decode(item or "")


# ---- message → dict -------------------------------------------------------------------------------------------


def read(t: MessageTable, msg: Any) -> dict[str, Any]:
    """The JSON-shaped dict Go's ``encoding/json`` writes for ``msg`` decoded into its Go struct."""
    out: dict[str, Any] = {}
    for f in t.fields:
        hold = f.hold
        if f.inline:
            out.update(read(f.sub, getattr(msg, f.attr)))  # type: ignore[arg-type]
            continue
        if hold == "value":
            values = f.values
            if values == SCALAR:
                v = getattr(msg, f.attr)
                if v or not f.omitempty:
                    out[f.json] = v
            elif values == MESSAGE:
                v = read(f.sub, getattr(msg, f.attr))  # type: ignore[arg-type]
                if not f.omitzero or v != f.sub.zero():  # type: ignore[union-attr]
                    out[f.json] = v
            elif values == SPECIAL_TYPE:
                present = msg.HasField(f.attr)
                v = f.read_special(getattr(msg, f.attr) if present else None)  # type: ignore[misc]
                if v is not None or not f.omitzero:
                    out[f.json] = v
            elif values == BYTES:
                v = getattr(msg, f.attr)
                if v or not f.omitempty:
                    out[f.json] = base64.b64encode(v).decode()
            continue
        if hold == "pointer" or hold == "bytes" or hold == "wrapped":
            if not msg.HasField(f.attr):
                if not f.omitempty:
                    out[f.json] = None
                continue
            v = getattr(msg, f.attr)
            if hold == "wrapped":
                if v.items or not f.omitempty:
                    out[f.json] = list(v.items)
            else:
                out[f.json] = _read_value(f, v)
            continue
        container = getattr(msg, f.attr)
        if not container:
            if not f.omitempty:
                out[f.json] = None
            continue
        if hold == "list":
            out[f.json] = _read_list(f, container)
        else:
            out[f.json] = {key: _read_value(f, container[key]) for key in sorted(container)}
    return out


def _read_value(f: FieldTable, v: Any) -> Any:
    values = f.values
    if values == SCALAR:
        return v
    if values == MESSAGE:
        return read(f.sub, v)  # type: ignore[arg-type]
    if values == SPECIAL_TYPE:
        return f.read_special(v)  # type: ignore[misc]
    if values == WRAPPED:
        return list(v.items)
    return base64.b64encode(v).decode()


def _read_list(f: FieldTable, rep: Any) -> list[Any]:
    values = f.values
    if values == SCALAR:
        return list(rep)
    if values == MESSAGE:
        sub = f.sub
        return [read(sub, item) for item in rep]  # type: ignore[arg-type]
    return [_read_value(f, item) for item in rep]
