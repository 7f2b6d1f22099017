"""Kubernetes' protobuf envelope and watch stream framing: the codec's public operations.

Why this module exists: kube-apiserver's protobuf serializer
(k8s.io/apimachinery/pkg/runtime/serializer/protobuf) writes every object as
the 4 bytes ``k8s\\x00`` followed by a ``runtime.Unknown`` whose ``typeMeta``
names the apiVersion and kind and whose ``raw`` holds the object's own
message; reading checks the same. A watch over protobuf
(``application/vnd.kubernetes.protobuf;stream=watch``) is a stream of frames,
each a 4-byte big-endian length and a ``metav1.WatchEvent`` written by the
*raw* serializer (no envelope), whose ``object`` is a RawExtension holding
the enveloped object (handlers/watch.go: the stream serializer is the raw one,
the embedded encoder the enveloping one).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError

from services.api.protobuf.convert import read, table, write
from services.api.protobuf.errors import (
    MAGIC,
    MAGIC_TEXT,
    ProtobufDecodeError,
    ProtobufEncodeError,
    UnsupportedKindError,
)
from services.api.protobuf.pools import META_V1, Pool, pool_for, pools

__all__ = [
    "decode",
    "decode_watch_frames",
    "encode",
    "encode_list_message",
    "encode_watch_frame",
    "enveloped",
    "supports",
    "watch_frame",
]

_UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
_WATCH_EVENT = f"{META_V1}.WatchEvent"
_LENGTH = 4


def supports(api_version: str, kind: str) -> bool:
    """Whether ``apiVersion``/``kind`` has a protobuf message (False for Tables and kinds Kubernetes lacks)."""
    return pool_for(api_version, kind) is not None


def _newest() -> Pool:
    return pools()[0]


def encode_message(obj: dict[str, Any]) -> bytes:
    """The object's own message bytes, without the envelope."""
    api_version = obj.get("apiVersion") or ""
    kind = obj.get("kind") or ""
    found = pool_for(api_version, kind) if isinstance(api_version, str) and isinstance(kind, str) else None
    if found is None:
        raise UnsupportedKindError(str(api_version), str(kind))
    pool, name = found
    t = table(pool, name)
    msg = t.cls()
    try:
        write(t, msg, obj)
    except (TypeError, ValueError, AttributeError) as e:
        raise ProtobufEncodeError(f"{kind} in version {api_version!r} cannot be encoded to protobuf: {e}") from None
    out: bytes = msg.SerializeToString(deterministic=True)
    return out


def encode(obj: dict[str, Any]) -> bytes:
    """``obj`` (JSON-shaped, with apiVersion and kind) as kube-apiserver writes it: ``k8s\\x00`` + runtime.Unknown."""
    return enveloped(encode_message(obj), api_version=obj["apiVersion"], kind=obj["kind"])


def enveloped(raw: bytes, *, api_version: str, kind: str) -> bytes:
    """An object's message bytes (`encode_message`) in the envelope: what `encode` returns for that object.

    Lets a server that keeps message bytes (one encoding per resourceVersion) answer without encoding again.
    """
    # runtime.Unknown written directly: typeMeta{apiVersion, kind} (1), raw (2), and the empty contentEncoding (3)
    # and contentType (4) Go writes for its string fields held by value.
    av, k = api_version.encode(), kind.encode()
    type_meta = b"\x0a" + _varint(len(av)) + av + b"\x12" + _varint(len(k)) + k
    return b"".join(
        (MAGIC, b"\x0a", _varint(len(type_meta)), type_meta, b"\x12", _varint(len(raw)), raw, b"\x1a\x00\x22\x00")
    )


def encode_list_message(doc: dict[str, Any], items: list[bytes]) -> bytes:
    """A list's message bytes from the list (its ``items`` ignored) and each item's message bytes, in order.

    Equal to `encode_message` of the list holding those items: Go writes fields in field-number order, and
    ``items`` is a list's last field (its first in meta.k8s.io/v1beta1's PartialObjectMetadataList), so the
    items' bytes, each one length-delimited field, follow (or precede) the rest. A list kind whose ``items``
    is neither raises `ProtobufEncodeError` (none of Kubernetes' lists; encode such a list whole).
    """
    found = pool_for(doc.get("apiVersion") or "", doc.get("kind") or "")
    if found is None:
        raise UnsupportedKindError(str(doc.get("apiVersion")), str(doc.get("kind")))
    place = _items_place(*found)
    if place is None:
        raise ProtobufEncodeError(f"{doc.get('kind')} has no items field first or last")
    tag, last = place
    parts = []
    for item in items:
        parts.append(tag)
        parts.append(_varint(len(item)))
        parts.append(item)
    head = encode_message({**doc, "items": []})
    return head + b"".join(parts) if last else b"".join(parts) + head


_ITEMS_PLACES: dict[tuple[str, str], tuple[bytes, bool] | None] = {}


def _items_place(pool: Pool, name: str) -> tuple[bytes, bool] | None:
    """The key byte(s) of a list message's ``items`` field and whether it is the last field (else the first);
    None unless it holds messages and is the last or the first."""
    key = (pool.release, name)
    if key not in _ITEMS_PLACES:
        t = table(pool, name)
        items = t.by_json.get("items")
        place: tuple[bytes, bool] | None = None
        if items is not None and not items[0] and items[1].hold == "list" and items[1].sub is not None:
            number = items[1].number_
            numbers = [f.number_ for f in t.fields]
            if number in (max(numbers), min(numbers)):
                place = (_varint(number << 3 | 2), number == max(numbers))
        _ITEMS_PLACES[key] = place
    return _ITEMS_PLACES[key]


def _varint(n: int) -> bytes:
    """Protobuf's base-128 varint of a non-negative int."""
    if n < 0x80:
        return _SMALL[n]
    if n < 0x4000:
        return bytes((n & 0x7F | 0x80, n >> 7))
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = tuple(bytes((i,)) for i in range(0x80))


def _text(value: str | bytes) -> str:
    """A string field as Go's JSON shows it (upb hands over bytes that are not UTF-8 as bytes)."""
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def _missing(what: str, api_version: str, kind: str) -> str:
    # runtime.NewMissingKindErr / NewMissingVersionErr over fmt's %#v of runtime.TypeMeta.
    return f"Object '{what}' is missing in 'runtime.TypeMeta{{APIVersion:\"{api_version}\", Kind:\"{kind}\"}}'"


def decode(data: bytes, *, default_api_version: str = "", default_kind: str = "") -> dict[str, Any]:
    """Enveloped bytes as the JSON-shaped dict Go's JSON would show (apiVersion and kind from the envelope).

    An envelope without kind or apiVersion takes the defaults, as kube-apiserver's
    decoder takes the URL's (``copyKindDefaults``). Raises `ProtobufDecodeError`
    worded as kube-apiserver's serializer for bytes it cannot read, and for a
    kind no release has.
    """
    if not data:
        raise ProtobufDecodeError("empty data")
    if len(data) < len(MAGIC) or data[: len(MAGIC)] != MAGIC:
        raise ProtobufDecodeError(
            f"provided data does not appear to be a protobuf message, expected prefix {MAGIC_TEXT}"
        )
    if len(data) == len(MAGIC):
        raise ProtobufDecodeError("empty body")
    unknown = table(_newest(), _UNKNOWN).cls()
    try:
        unknown.ParseFromString(data[len(MAGIC) :])
    except DecodeError:
        raise ProtobufDecodeError("unexpected EOF") from None
    api_version, kind = _text(unknown.typeMeta.apiVersion), _text(unknown.typeMeta.kind)
    shown = (api_version, kind)  # Go's error names the envelope's TypeMeta, before defaulting
    kind = kind or default_kind
    api_version = api_version or default_api_version
    if not kind:
        raise ProtobufDecodeError(_missing("Kind", *shown), api_version=api_version)
    if not api_version:
        raise ProtobufDecodeError(_missing("apiVersion", *shown), kind=kind)
    return decode_message(unknown.raw, api_version=api_version, kind=kind)


def decode_message(raw: bytes, *, api_version: str, kind: str) -> dict[str, Any]:
    """The object's own message bytes (no envelope) as a JSON-shaped dict with ``apiVersion`` and ``kind``."""
    found = pool_for(api_version, kind)
    if found is None:
        version = api_version.rpartition("/")[2]
        raise ProtobufDecodeError(
            f'no kind "{kind}" is registered for version "{api_version or version}"',
            api_version=api_version,
            kind=kind,
        )
    pool, name = found
    t = table(pool, name)
    msg = t.cls()
    try:
        msg.ParseFromString(raw)
        fields = read(t, msg)
    except DecodeError:
        raise ProtobufDecodeError("unexpected EOF", api_version=api_version, kind=kind) from None
    except (TypeError, ValueError) as e:  # map keys that are not UTF-8, and the like
        raise ProtobufDecodeError(f"invalid {kind}: {e}", api_version=api_version, kind=kind) from None
    return {"kind": kind, "apiVersion": api_version, **fields}


def encode_watch_frame(event_type: str, obj: dict[str, Any]) -> bytes:
    """One watch event as kube-apiserver streams it over protobuf: length, then WatchEvent{type, object: enveloped}."""
    return watch_frame(event_type, encode(obj))


def watch_frame(event_type: str, enveloped_object: bytes) -> bytes:
    """One watch frame around an object already enveloped (`encode`, `enveloped`): the same bytes
    `encode_watch_frame` writes, without encoding the object again."""
    # metav1.WatchEvent written directly: type (1), object (2) = RawExtension{raw (1)}.
    t = event_type.encode()
    obj = b"\x0a" + _varint(len(enveloped_object)) + enveloped_object
    body = b"".join((b"\x0a", _varint(len(t)), t, b"\x12", _varint(len(obj)), obj))
    return len(body).to_bytes(_LENGTH, "big") + body


def decode_watch_frames(buf: bytes) -> tuple[list[tuple[str, dict[str, Any]]], bytes]:
    """The complete watch frames at the start of ``buf`` as (type, object) pairs, and the bytes left over."""
    events: list[tuple[str, dict[str, Any]]] = []
    pos = 0
    cls = table(_newest(), _WATCH_EVENT).cls
    while len(buf) - pos >= _LENGTH:
        size = int.from_bytes(buf[pos : pos + _LENGTH], "big")
        end = pos + _LENGTH + size
        if end > len(buf):
            break
        event = cls()
        try:
            event.ParseFromString(buf[pos + _LENGTH : end])
        except DecodeError:
            raise ProtobufDecodeError("unexpected EOF") from None
        events.append((_text(event.type), decode(event.object.raw)))
        pos = end
    return events, buf[pos:]
