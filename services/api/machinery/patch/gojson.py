"""Go's renderings of JSON values, for byte-exact output and messages.

Several things the patch machinery emits are produced in Kubernetes by Go's
standard library, and clients can see them byte for byte:

- ``encoding/json`` output (sorted map keys, HTML-safe string escapes, Go's
  float formatting): the ``last-applied-configuration`` annotation that
  server-side apply keeps in sync, and the manager identifiers.
- ``fmt``'s ``%v`` and ``%q``: error messages of strategic merge patch
  (``map: map[image:x] does not contain declared merge key: name``) and field
  paths in apply conflicts (``.spec.containers[name="c"].image``).

These helpers only render; they never parse.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def json_string(s: str) -> str:
    """A JSON string literal as Go's ``encoding/json`` writes it (HTML-safe)."""
    out = ['"']
    for ch in s:
        esc = _SHORT_ESCAPES.get(ch) or _HTML_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def json_float(f: float) -> str:
    """A float64 as ``encoding/json`` writes it (``'f'`` in [1e-6, 1e21), else ``'e'``)."""
    if math.isnan(f) or math.isinf(f):
        raise ValueError(f"unsupported value: {f!r}")
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    shortest = repr(f)  # Python's repr is the shortest round-tripping form, like Go's -1 precision
    if 1e-6 <= abs(f) < 1e21:
        mantissa, _, exp_text = shortest.partition("e")
        if not exp_text:
            return mantissa[:-2] if mantissa.endswith(".0") else mantissa
        return _expand_exponent(mantissa, int(exp_text))
    digits = _shortest_digits(shortest)
    exp = Decimal(repr(abs(f))).adjusted()
    sign = "-" if f < 0 else ""
    body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp)}"


def _shortest_digits(shortest: str) -> str:
    mant = shortest.lstrip("-").partition("e")[0]
    digits = mant.replace(".", "").lstrip("0").rstrip("0")
    return digits or "0"


def _expand_exponent(mantissa: str, exp: int) -> str:
    sign = "-" if mantissa.startswith("-") else ""
    mantissa = mantissa.lstrip("-")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    point = len(int_part) + exp
    if point <= 0:
        text = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        text = digits + "0" * (point - len(digits))
    else:
        text = digits[:point] + "." + digits[point:]
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    text = text.lstrip("0") or "0"
    if text.startswith("."):
        text = "0" + text
    return sign + text


def json_dumps(value: Any) -> str:
    """Compact JSON exactly as ``json.Marshal`` of a Go ``interface{}`` value (map keys sorted)."""
    parts: list[str] = []
    _dump(value, parts)
    return "".join(parts)


def _dump(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(json_float(value))
    elif isinstance(value, str):
        out.append(json_string(value))
    elif isinstance(value, dict):
        out.append("{")
        for i, key in enumerate(sorted(value)):
            if i:
                out.append(",")
            out.append(json_string(key))
            out.append(":")
            _dump(value[key], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _dump(item, out)
        out.append("]")
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def go_float_v(f: float) -> str:
    """``fmt.Sprintf("%v", f)`` for a float64: ``%g`` with the shortest digits.

    Go switches to exponent form when the decimal exponent is below -4 or at
    least 6 (so ``1e+06``, ``123456``, ``1e-05``).
    """
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    sign = "-" if f < 0 else ""
    shortest = Decimal(repr(abs(f)))
    digits = _shortest_digits(repr(abs(f)))
    exp = shortest.adjusted()
    body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    if exp < -4 or exp >= 6:
        return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return sign + _expand_exponent(body, exp)


def go_quote(s: str) -> str:
    """``strconv.Quote``: Go's ``%q`` for a string."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_v(value: Any) -> str:
    """``fmt.Sprintf("%v", v)`` for a value decoded from JSON into ``interface{}``."""
    if value is None:
        return "<nil>"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float_v(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    return str(value)


def go_type_name(value: Any) -> str:
    """``reflect.TypeOf(v).String()`` for a value decoded from JSON (``%s`` of a nil type for None)."""
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return type(value).__name__


def json_kind(value: Any) -> str:
    """The JSON kind Go names in ``json: cannot unmarshal <kind> into Go value of type ...``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    return "array"
