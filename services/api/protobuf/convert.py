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
    """A message class and its fields in Go's struct order, with what the walks precompute from them."""

    __slots__ = ("_absent", "_zero", "_zero_bytes", "by_json", "by_number", "cls", "fields", "name")

    def __init__(self, name: str, cls: Any) -> None:
        self.name = name
        self.cls = cls
        self.fields: tuple[FieldTable, ...] = ()
        # JSON name → (attributes of the inline structs on the way, field): an inline struct's fields are flat in JSON.
        self.by_json: dict[str, tuple[tuple[str, ...], FieldTable]] = {}
        self.by_number: dict[int, FieldTable] = {}
        self._zero: dict[str, Any] | None = None
        self._zero_bytes: bytes | None = None
        self._absent: tuple[tuple[FieldTable, Any], ...] | None = None

    def zero(self) -> dict[str, Any]:
        """What Go's JSON shows for the zero struct (for ``omitzero``; do not change it)."""
        if self._zero is None:
            self._zero = read(self, self.cls())
        return self._zero

    def zero_bytes(self) -> bytes:
        """The zero struct as Go marshals it: every field Go holds by value, with its zero value."""
        if self._zero_bytes is None:
            msg = self.cls()
            for f in self.fields:
                if f.hold == "value":
                    _write_zero(f, msg)
            self._zero_bytes = msg.SerializeToString()
        return self._zero_bytes

    def absent(self) -> tuple[tuple[FieldTable, Any], ...]:
        """The fields Go's JSON shows though the message lacks them, with the value shown (see `read`)."""
        if self._absent is None:
            self._absent = tuple((f, shown) for f in self.fields if (shown := _shown_when_absent(f)) is not _HIDDEN)
        return self._absent


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
        result.by_number[go.number] = f
    result.fields = tuple(fields)
    for f in fields:
        if f.inline and f.sub is not None:
            for key, (path, child) in f.sub.by_json.items():
                result.by_json[key] = ((f.attr, *path), child)
        elif not f.inline:
            result.by_json[f.json] = ((), f)
    return result


# ---- dict → message -------------------------------------------------------------------------------------------


def write(t: MessageTable, msg: Any, d: dict[str, Any]) -> None:
    """Fill ``msg`` from the JSON-shaped ``d`` as Go's marshaller would have it (see the module docstring).

    The fields Go holds by value start as Go's zero struct (`MessageTable.zero_bytes`, merged in one call);
    then each key of ``d`` that names a field is set. Keys no field has are ignored, as Go's JSON decoder does.
    """
    zero = t._zero_bytes
    if zero is None:
        zero = t.zero_bytes()
    if zero:
        msg.MergeFromString(zero)
    by_json = t.by_json
    for key, v in d.items():
        entry = by_json.get(key)
        if entry is None or v is None:
            continue
        path, f = entry
        target = msg
        for attr in path:
            target = getattr(target, attr)
        hold = f.hold
        if hold == "value" or hold == "pointer":
            values = f.values
            if values == SCALAR:
                setattr(target, f.attr, v)
            elif values == MESSAGE:
                sub = getattr(target, f.attr)
                sub.SetInParent()
                write(f.sub, sub, v)  # type: ignore[arg-type]
            elif values == SPECIAL_TYPE:
                f.write_special(getattr(target, f.attr), v)  # type: ignore[misc]
            elif values == BYTES:
                setattr(target, f.attr, base64.b64decode(v))
        elif hold == "list":
            _write_list(f, getattr(target, f.attr), v)
        elif hold == "map":
            _write_map(f, getattr(target, f.attr), v)
        elif hold == "bytes":
            setattr(target, f.attr, base64.b64decode(v))
        elif hold == "wrapped":
            sub = getattr(target, f.attr)
            sub.SetInParent()
            sub.items.extend(v)


def _write_zero(f: FieldTable, msg: Any) -> None:
    values = f.values
    if values == SCALAR:
        setattr(msg, f.attr, f.zero)
    elif values == MESSAGE:
        getattr(msg, f.attr).MergeFromString(f.sub.zero_bytes())  # type: ignore[union-attr]
        getattr(msg, f.attr).SetInParent()
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

_HIDDEN = object()


class _ZeroStruct:
    """A struct held by value that the message lacks: Go's JSON shows its zero struct (a fresh dict each time)."""

    __slots__ = ("sub",)

    def __init__(self, sub: MessageTable) -> None:
        self.sub = sub


def _shown_when_absent(f: FieldTable) -> Any:
    """What Go's JSON shows for a field the message lacks (Go's zero value), or `_HIDDEN`."""
    if f.inline or (f.hold == "value" and f.values == MESSAGE):
        return _HIDDEN if f.omitzero else _ZeroStruct(f.sub)  # type: ignore[arg-type]
    if f.hold == "value":
        if f.values == SPECIAL_TYPE:
            shown = f.read_special(None)  # type: ignore[misc]
            return _HIDDEN if shown is None and f.omitzero else shown
        if f.omitempty:
            return _HIDDEN
        return "" if f.values == BYTES else f.zero
    return _HIDDEN if f.omitempty else None  # a nil pointer, list or map without omitempty: null


def read(t: MessageTable, msg: Any) -> dict[str, Any]:
    """The JSON-shaped dict Go's ``encoding/json`` writes for ``msg`` decoded into its Go struct.

    Walks the fields the message has (``ListFields``), then adds what Go shows for those it lacks.
    """
    out: dict[str, Any] = {}
    by_number = t.by_number
    for fd, v in msg.ListFields():
        f = by_number.get(fd.number)
        if f is None:
            continue
        if f.inline:
            out.update(read(f.sub, v))  # type: ignore[arg-type]
            continue
        hold = f.hold
        values = f.values
        if hold == "value":
            if values == SCALAR:
                if v or not f.omitempty:
                    out[f.json] = v
            elif values == MESSAGE:
                shown = read(f.sub, v)  # type: ignore[arg-type]
                if not f.omitzero or shown != f.sub.zero():  # type: ignore[union-attr]
                    out[f.json] = shown
            elif values == SPECIAL_TYPE:
                shown = f.read_special(v)  # type: ignore[misc]
                if shown is not None or not f.omitzero:
                    out[f.json] = shown
            elif values == BYTES:
                if v or not f.omitempty:
                    out[f.json] = base64.b64encode(v).decode()
        elif hold == "list":
            out[f.json] = _read_list(f, v)
        elif hold == "map":
            out[f.json] = {key: _read_value(f, v[key]) for key in sorted(v)}
        elif hold == "wrapped":
            if v.items or not f.omitempty:
                out[f.json] = list(v.items)
        else:  # pointer, bytes
            out[f.json] = _read_value(f, v)
    absent = t._absent
    if absent is None:
        absent = t.absent()
    for f, shown in absent:
        if f.inline:
            if f.json not in out and not msg.HasField(f.attr):
                out.update(read(f.sub, f.sub.cls()))  # type: ignore[union-attr, arg-type]
        elif f.json not in out and (f.hold != "value" or not msg.HasField(f.attr)):
            out[f.json] = read(shown.sub, shown.sub.cls()) if isinstance(shown, _ZeroStruct) else shown
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
