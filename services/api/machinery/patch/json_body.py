"""Parsing patch bodies with the messages Go's ``encoding/json`` gives.

The kube-apiserver reports a patch body that is not JSON with the text of
Go's decoder error (``invalid character 'x' looking for beginning of value``,
``unexpected end of JSON input``) inside a 400. This module parses with
orjson and renders the failure in Go's words; the context-specific variants
Go has for errors inside objects and arrays are approximated by the generic
one.
"""

from __future__ import annotations

from typing import Any

import orjson


class JSONSyntaxError(ValueError):
    """A body that is not JSON; ``str()`` is Go's message."""


def go_quote_char(c: str) -> str:
    """Go's ``quoteChar`` used in decoder errors: ``'x'``, ``'\\''``, ``'"'``."""
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    if c.isprintable() and c not in "\\":
        return f"'{c}'"
    escapes = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "'" + escapes.get(c, f"\\x{ord(c):02x}" if ord(c) < 0x80 else c) + "'"


def loads(body: bytes | str) -> Any:
    """Parse JSON; raise `JSONSyntaxError` worded like Go's ``json.Unmarshal``."""
    raw = body.encode() if isinstance(body, str) else body
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise JSONSyntaxError(_go_message(raw, exc)) from None


def _go_message(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    text = raw.decode("utf-8", errors="replace")
    pos = exc.pos
    # skip whitespace at the reported position, Go reports the first offending byte
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    if not text.strip() or pos >= len(text):
        return "unexpected end of JSON input"
    return f"invalid character {go_quote_char(text[pos])} looking for beginning of value"
