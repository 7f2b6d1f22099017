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
from collections.abc import Callable
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
        "number_",
        "omitempty",
        "omitzero",
        "read_special",
        "sub",
        "text",
        "values",
        "write_special",
        "zero",
    )

    def __init__(self, *, attr: str, go: GoField, values: str, zero: Any) -> None:
        self.attr = attr
        self.number_ = go.number
        self.json = go.json
        self.inline = go.json == ""
        self.hold = go.hold
        self.omitempty = go.omitempty or go.omitzero  # for scalars and containers the two agree
        self.omitzero = go.omitzero
        self.values = values  # for a map: its values'
        self.zero = zero
        self.sub: MessageTable | None = None
        self.text = False  # string values: Go may send any bytes in them
        self.write_special: Writer | None = None
        self.read_special: Reader | None = None


class MessageTable:
    """A message class and its fields in Go's struct order, with what the walks precompute from them."""

    __slots__ = (
        "_absent",
        "_readers",
        "_setters",
        "_zero",
        "_zero_bytes",
        "by_json",
        "by_number",
        "cls",
        "fields",
        "name",
    )

    def __init__(self, name: str, cls: Any) -> None:
        self.name = name
        self.cls = cls
        self.fields: tuple[FieldTable, ...] = ()
        # JSON name → (attributes of the inline structs on the way, field): an inline struct's fields are flat in JSON.
        self.by_json: dict[str, tuple[tuple[str, ...], FieldTable]] = {}
        self.by_number: dict[int, FieldTable] = {}
        self._zero: dict[str, Any] | None = None
        self._zero_bytes: bytes | None = None
        self._absent: tuple[tuple[str, str, bool, int, Any], ...] | None = None
        self._setters: dict[str, Setter] | None = None
        self._readers: dict[Any, Reader_] | None = None

    def setters(self) -> dict[str, Setter]:
        """JSON name → a function setting that field of a message from its (non-null) JSON value."""
        if self._setters is None:
            self._setters = {key: _setter(path, f) for key, (path, f) in self.by_json.items()}
        return self._setters

    def readers(self) -> dict[Any, Reader_]:
        """Field descriptor → a function putting Go's JSON of that present field into a dict."""
        if self._readers is None:
            desc = self.cls.DESCRIPTOR
            self._readers = {desc.fields_by_number[f.number_]: _reader(f) for f in self.fields}
        return self._readers

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

    def absent(self) -> tuple[tuple[str, str, bool, int, Any], ...]:
        """The fields Go's JSON shows though the message lacks them, with the value shown (see `read`)."""
        if self._absent is None:
            entries = []
            for f in self.fields:
                shown = _shown_when_absent(f)
                if shown is _HIDDEN:
                    continue
                # (JSON name, attribute, held by value, what to show: 0 the value, 1 a zero struct, 2 inline, value)
                code = 2 if f.inline else 1 if isinstance(shown, _ZeroStruct) else 0
                value = shown.sub if isinstance(shown, _ZeroStruct) else shown
                entries.append((f.json, f.attr, f.hold == "value", code, value))
            self._absent = tuple(entries)
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
        f.text = target.type == FieldDescriptor.TYPE_STRING
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
    setters = t._setters
    if setters is None:
        setters = t.setters()
    for key, v in d.items():
        if v is not None:
            setter = setters.get(key)
            if setter is not None:
                setter(msg, v)


Setter = Callable[[Any, Any], None]
Reader_ = Callable[[dict[str, Any], Any], None]


def _setter(path: tuple[str, ...], f: FieldTable) -> Setter:
    """One field's setter, specialised once: the walk then costs a lookup and a call per key."""
    attr, hold, values, sub = f.attr, f.hold, f.values, f.sub
    setter: Setter
    if hold in ("value", "pointer") and values == SCALAR:

        def setter(m: Any, v: Any) -> None:
            setattr(m, attr, v)

    elif hold in ("value", "pointer") and values == MESSAGE:

        def setter(m: Any, v: Any) -> None:
            target = getattr(m, attr)
            target.SetInParent()
            write(sub, target, v)  # type: ignore[arg-type]

    elif hold in ("value", "pointer") and values == SPECIAL_TYPE:
        write_special = f.write_special

        def setter(m: Any, v: Any) -> None:
            write_special(getattr(m, attr), v)  # type: ignore[misc]

    elif hold in ("value", "pointer", "bytes"):

        def setter(m: Any, v: Any) -> None:
            setattr(m, attr, base64.b64decode(v))

    elif hold == "list" and values == SCALAR:

        def setter(m: Any, v: Any) -> None:
            getattr(m, attr).extend(v)

    elif hold == "list" and values == MESSAGE:

        def setter(m: Any, v: Any) -> None:
            add = getattr(m, attr).add
            for item in v:
                write(sub, add(), item)  # type: ignore[arg-type]

    elif hold == "list":

        def setter(m: Any, v: Any) -> None:
            _write_list(f, getattr(m, attr), v)

    elif hold == "map" and values == SCALAR:

        def setter(m: Any, v: Any) -> None:
            getattr(m, attr).update({key: item for key, item in v.items() if item is not None})

    elif hold == "map":

        def setter(m: Any, v: Any) -> None:
            _write_map(f, getattr(m, attr), v)

    else:  # wrapped

        def setter(m: Any, v: Any) -> None:
            target = getattr(m, attr)
            target.SetInParent()
            target.items.extend(v)

    if not path:
        return setter
    inner = setter

    def through_inline(m: Any, v: Any) -> None:
        for step in path:
            m = getattr(m, step)
        inner(m, v)

    return through_inline


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
    readers = t._readers
    if readers is None:
        readers = t.readers()
    for fd, v in msg.ListFields():
        reader = readers.get(fd)
        if reader is not None:
            reader(out, v)
    absent = t._absent
    if absent is None:
        absent = t.absent()
    for key, attr, by_value, code, shown in absent:
        if code == 2:
            if not msg.HasField(attr):
                out.update(read(shown, shown.cls()))
        elif key not in out and (not by_value or not msg.HasField(attr)):
            out[key] = shown if code == 0 else read(shown, shown.cls())
    return out


def _reader(f: FieldTable) -> Reader_:
    """One present field's reader, specialised once (Go's omitempty/omitzero applied)."""
    key, hold, values, sub = f.json, f.hold, f.values, f.sub
    reader: Reader_
    if f.inline:

        def reader(out: dict[str, Any], v: Any) -> None:
            out.update(read(sub, v))  # type: ignore[arg-type]

    elif hold == "value" and values == SCALAR and f.omitempty:

        def reader(out: dict[str, Any], v: Any) -> None:
            if v:
                out[key] = v if type(v) is not bytes else _text(v)

    elif hold in ("value", "pointer") and values == SCALAR:

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = v if type(v) is not bytes else _text(v)

    elif hold == "value" and values == MESSAGE and f.omitzero:

        def reader(out: dict[str, Any], v: Any) -> None:
            shown = read(sub, v)  # type: ignore[arg-type]
            if shown != sub.zero():  # type: ignore[union-attr]
                out[key] = shown

    elif hold in ("value", "pointer") and values == MESSAGE:

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = read(sub, v)  # type: ignore[arg-type]

    elif hold in ("value", "pointer") and values == SPECIAL_TYPE:
        read_special, hide_null = f.read_special, hold == "value" and f.omitzero

        def reader(out: dict[str, Any], v: Any) -> None:
            shown = read_special(v)  # type: ignore[misc]
            if shown is not None or not hide_null:
                out[key] = shown

    elif hold == "value":  # bytes held by value
        omitempty = f.omitempty

        def reader(out: dict[str, Any], v: Any) -> None:
            if v or not omitempty:
                out[key] = base64.b64encode(v).decode()

    elif hold == "list" and values == SCALAR and f.text:

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = [x if type(x) is str else _text(x) for x in v]

    elif hold == "list" and values == SCALAR:

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = list(v)

    elif hold == "list" and values == MESSAGE:

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = [read(sub, item) for item in v]  # type: ignore[arg-type]

    elif hold == "list":

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = [_read_value(f, item) for item in v]

    elif hold == "map" and values == SCALAR and f.text:

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = {k: x if type(x := v[k]) is str else _text(x) for k in sorted(v)}

    elif hold == "map" and values == SCALAR:

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = {k: v[k] for k in sorted(v)}

    elif hold == "map":

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = {k: _read_value(f, v[k]) for k in sorted(v)}

    elif hold == "wrapped":
        omitempty = f.omitempty

        def reader(out: dict[str, Any], v: Any) -> None:
            if v.items or not omitempty:
                out[key] = list(v.items)

    else:  # a pointer to bytes, []byte

        def reader(out: dict[str, Any], v: Any) -> None:
            out[key] = _read_value(f, v)

    return reader


def _text(raw: bytes) -> str:
    """A string field holding bytes that are not UTF-8 (upb hands them over as bytes): Go's JSON shows them with
    each invalid byte replaced by U+FFFD."""
    return raw.decode("utf-8", "replace")


def _read_value(f: FieldTable, v: Any) -> Any:
    values = f.values
    if values == SCALAR:
        return v
    if values == MESSAGE:
        return read(f.sub, v)  # type: ignore[arg-type]
    if values == SPECIAL_TYPE:
        return f.read_special(v)  # type: ignore[misc]
    if values == WRAPPED:
        return [x if type(x) is str else _text(x) for x in v.items]
    return base64.b64encode(v).decode()
