"""A stand-in for `services.api.protobuf` while the real codec is not on this branch.

It keeps the codec's public API and envelope framing (``k8s\\x00`` magic,
4-byte big-endian length before each watch frame) but carries JSON inside, so
the HTTP wiring can be tested on its own. `install` puts it in place only when
the real package cannot be imported: with the codec present the tests run
against it.
"""

from __future__ import annotations

import importlib
import struct
import sys
import types
from typing import Any

import orjson
import pytest

MAGIC = b"k8s\x00"


def encode(obj: dict[str, Any]) -> bytes:
    if not obj.get("kind"):
        raise ValueError("no kind")
    return MAGIC + orjson.dumps(obj)


def decode(data: bytes) -> dict[str, Any]:
    if not data.startswith(MAGIC):
        raise ValueError("provided data does not appear to be a protobuf message")
    try:
        doc: dict[str, Any] = orjson.loads(data[len(MAGIC) :])
    except orjson.JSONDecodeError:
        raise ValueError("unexpected EOF") from None
    return doc


def supports(api_version: str, kind: str) -> bool:
    return True


def encode_watch_frame(event_type: str, obj: dict[str, Any]) -> bytes:
    body = encode({"kind": "WatchEvent", "apiVersion": "v1", "type": event_type, "object": obj})
    return struct.pack(">I", len(body)) + body


def decode_watch_frames(buf: bytes) -> tuple[list[dict[str, Any]], bytes]:
    events: list[dict[str, Any]] = []
    while len(buf) >= 4:
        (size,) = struct.unpack(">I", buf[:4])
        if len(buf) < 4 + size:
            break
        doc = decode(buf[4 : 4 + size])
        events.append({"type": doc["type"], "object": doc["object"]})
        buf = buf[4 + size :]
    return events, buf


def install(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The codec the tests use: the real one when importable, else this stand-in (for this test only)."""
    try:
        return importlib.import_module("services.api.protobuf")
    except ImportError:
        module = types.ModuleType("services.api.protobuf")
        for name in ("encode", "decode", "supports", "encode_watch_frame", "decode_watch_frames"):
            setattr(module, name, globals()[name])
        monkeypatch.setitem(sys.modules, "services.api.protobuf", module)
        return module
