"""Kubernetes' types whose JSON is not their message: times, durations, quantities, int-or-string, raw JSON.

Why a module of their own: each has a custom JSON form in Go (a
``MarshalJSON``) and a custom protobuf form, and the generic walk of
`services.api.protobuf.convert` hands them here by message name. Each pair
below writes what Go's marshaller writes, zero values included, so that our
bytes equal Go's (tests/unit/protobuf/test_proto_golden.py).
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from services.api.protobuf.errors import ProtobufEncodeError
from services.kube.times import unix_time

META = "k8s.io.apimachinery.pkg.apis.meta.v1."
TIME = META + "Time"
MICRO_TIME = META + "MicroTime"
DURATION = META + "Duration"
FIELDS_V1 = META + "FieldsV1"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"


# Cached: an object repeats its times (creation, managedFields, conditions) and so do the versions of it
# (bounded; a bad time raises, and exceptions are not cached).
@functools.lru_cache(maxsize=4096)
def parse_time(text: str) -> tuple[int, int]:
    """An RFC 3339 time (Go's time.RFC3339 parse, fractions kept) as Unix seconds and nanoseconds."""
    try:
        return unix_time(text)
    except ValueError as e:
        raise ProtobufEncodeError(f"invalid time {text!r}: not RFC 3339 ({e})") from None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_SECOND = datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC) - _EPOCH


@functools.lru_cache(maxsize=4096)
def format_time(seconds: int, nanos: int, *, micro: bool) -> str:
    """Go's metav1.Time (RFC 3339, seconds) or MicroTime (six fraction digits) JSON, in UTC."""
    m = _EPOCH + seconds * _ONE_SECOND
    text = f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
    if micro:
        return f"{text}.{nanos // 1000:06d}Z"
    return text + "Z"


# Go's time.ParseDuration units and time.Duration.String().
_DURATION_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9}
_DURATION_UNITS["h"] = 3600 * 10**9
_DURATION_PART = re.compile(r"(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Go's time.ParseDuration, in nanoseconds."""
    sign, rest = (-1, text[1:]) if text.startswith("-") else (1, text.removeprefix("+"))
    if rest == "0":
        return 0
    total, pos = 0.0, 0
    while pos < len(rest):
        m = _DURATION_PART.match(rest, pos)
        if m is None or m.group(1) in ("", "."):
            raise ProtobufEncodeError(f'time: invalid duration "{text}"')
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if not rest:
        raise ProtobufEncodeError(f'time: invalid duration "{text}"')
    return sign * round(total)


def format_duration(nanos: int) -> str:
    """Go's time.Duration.String()."""
    if nanos == 0:
        return "0s"
    sign, n = ("-", -nanos) if nanos < 0 else ("", nanos)
    if n < 10**9:
        for unit, size in (("ms", 10**6), ("µs", 10**3), ("ns", 1)):
            if n >= size:
                return sign + _fraction(n, size) + unit
    hours, n = divmod(n, 3600 * 10**9)
    minutes, n = divmod(n, 60 * 10**9)
    text = _fraction(n, 10**9) + "s"
    if hours or minutes:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def _fraction(n: int, size: int) -> str:
    whole, frac = divmod(n, size)
    if not frac:
        return str(whole)
    digits = len(str(size)) - 1
    return f"{whole}." + f"{frac:0{digits}d}".rstrip("0")


# Writers: JSON value (None = Go's zero value) → the message, as Go's marshaller fills it.
def _write_time(msg: Any, value: Any) -> None:
    msg.SetInParent()
    if value is None:
        return  # a zero Time marshals to nothing (metav1.Time.Marshal)
    if not isinstance(value, str):
        raise ProtobufEncodeError(f"invalid time {value!r}: not a string")
    msg.seconds, msg.nanos = parse_time(value)


def _write_duration(msg: Any, value: Any) -> None:
    if value is None:
        msg.duration = 0
    elif isinstance(value, str):
        msg.duration = parse_duration(value)
    else:
        raise ProtobufEncodeError(f"invalid duration {value!r}: not a string")


def _write_quantity(msg: Any, value: Any) -> None:
    if value is None:
        msg.string = "0"  # a zero Quantity's String()
    elif isinstance(value, str):
        msg.string = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        msg.string = str(value)  # Go accepts a JSON number for a quantity
    else:
        raise ProtobufEncodeError(f"invalid quantity {value!r}")


def _write_int_or_string(msg: Any, value: Any) -> None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        msg.type, msg.intVal, msg.strVal = 0, value or 0, ""
    elif isinstance(value, str):
        msg.type, msg.intVal, msg.strVal = 1, 0, value
    else:
        raise ProtobufEncodeError(f"invalid int-or-string {value!r}")


def _write_raw_extension(msg: Any, value: Any) -> None:
    msg.SetInParent()
    if value is not None:
        msg.raw = orjson.dumps(value)


def _write_fields_v1(msg: Any, value: Any) -> None:
    msg.SetInParent()
    if value is not None:
        msg.Raw = orjson.dumps(value)


# Readers: the message (None when absent) → Go's JSON value.
def _read_time(msg: Any) -> Any:
    if msg is None or (msg.seconds == 0 and msg.nanos == 0):
        return None
    return format_time(msg.seconds, msg.nanos, micro=False)


def _read_micro_time(msg: Any) -> Any:
    if msg is None or (msg.seconds == 0 and msg.nanos == 0):
        return None
    return format_time(msg.seconds, msg.nanos, micro=True)


def _read_duration(msg: Any) -> Any:
    return format_duration(msg.duration if msg is not None else 0)


def _read_quantity(msg: Any) -> Any:
    return msg.string if msg is not None and msg.string else "0"


def _read_int_or_string(msg: Any) -> Any:
    if msg is None:
        return 0
    return msg.strVal if msg.type == 1 else msg.intVal


def _read_raw(raw: bytes | None) -> Any:
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        # Not JSON (Go's RawExtension may hold any bytes): Go's JSON shows them as they are; we can only carry text.
        return base64.b64encode(raw).decode()


def _read_raw_extension(msg: Any) -> Any:
    return _read_raw(msg.raw if msg is not None else None)


def _read_fields_v1(msg: Any) -> Any:
    return _read_raw(msg.Raw if msg is not None else None)


Writer = Callable[[Any, Any], None]
Reader = Callable[[Any], Any]

SPECIAL: dict[str, tuple[Writer, Reader]] = {
    TIME: (_write_time, _read_time),
    MICRO_TIME: (_write_time, _read_micro_time),
    DURATION: (_write_duration, _read_duration),
    QUANTITY: (_write_quantity, _read_quantity),
    INT_OR_STRING: (_write_int_or_string, _read_int_or_string),
    RAW_EXTENSION: (_write_raw_extension, _read_raw_extension),
    FIELDS_V1: (_write_fields_v1, _read_fields_v1),
}
