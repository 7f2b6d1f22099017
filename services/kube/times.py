"""metav1.Time and metav1.MicroTime on the wire: written and read in one place.

Why this module exists: objects carry metav1.Time (``creationTimestamp``,
``deletionTimestamp``, conditions' ``lastTransitionTime``, managedFields'
``time``, a taint's ``timeAdded``...) as RFC 3339 in UTC with whole seconds
(``2026-01-02T03:04:05Z``), and every component writes and reads them; Go has
that rule once, in metav1.Time's MarshalJSON and UnmarshalJSON, and so does
draplane, here: `time_text` writes, `parse_time` reads. Leases carry
``acquireTime`` and ``renewTime`` as MicroTime (RFC 3339 with microseconds,
UTC, ``2026-01-02T03:04:05.000006Z``); kubelet's node lease and leader
election both write them, and leader election reads them back. Pure: strings
in, datetimes out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

RFC3339_LAYOUT = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO_LAYOUT = "2006-01-02T15:04:05.000000Z07:00"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# `time_text`'s form, read on every write's managed fields: where Go's rules and fromisoformat's agree.
_CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def time_text(moment: datetime) -> str:
    """metav1.Time on the wire (RFC 3339, UTC, whole seconds: ``2026-01-02T03:04:05Z``); a naive datetime is UTC.

    The fraction of a second is dropped, not rounded, as Go's MarshalJSON
    (``time.RFC3339``) and ``strftime`` drop it.
    """
    if moment.tzinfo is not None and moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    # isoformat is cheaper than strftime (the committer stamps every write); its first 19 characters are
    # the same, but for a year before 1000, which it writes in four digits, as Go does.
    return moment.isoformat(timespec="seconds")[:19] + "Z"


def now_text() -> str:
    """The current time as metav1.Time on the wire."""
    return time_text(datetime.now(UTC))


@dataclass(frozen=True, slots=True)
class _Parsed:
    """The fields of an accepted RFC 3339 time; ``offset`` east of UTC in minutes."""

    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    fraction: str
    offset: int


def _is_digit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _getnum(s: str, fixed: bool) -> tuple[int, str] | None:
    if not _is_digit(s, 0):
        return None
    if not _is_digit(s, 1):
        return None if fixed else (int(s[0]), s[1:])
    return int(s[:2]), s[2:]


def _go_quote(s: str) -> str:
    """A string in Go's time errors: ``"`` and ``\\`` escaped, a control or non-ASCII character as its
    UTF-8 bytes, ``\\xHH`` each (the time package's own quoting, not strconv's)."""
    out = ['"']
    for c in s:
        if c < " " or c >= "\x80":
            out.extend(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + c if c in '"\\' else c)
    out.append('"')
    return "".join(out)


def _go_parse(value: str, *, micro: bool) -> _Parsed | str:
    """Go's ``time.Parse`` with the RFC 3339 (micro) layout: the fields, or the error Go returns."""
    layout = RFC3339_MICRO_LAYOUT if micro else RFC3339_LAYOUT

    def cannot(rest: str, elem: str) -> str:
        head = f"parsing time {_go_quote(value)} as {_go_quote(layout)}"
        return f"{head}: cannot parse {_go_quote(rest)} as {_go_quote(elem)}"

    def out_of_range(what: str) -> str:
        return f"parsing time {_go_quote(value)}: {what} out of range"

    rest = value
    if len(rest) < 4 or not all("0" <= c <= "9" for c in rest[:4]):
        return cannot(rest, "2006")
    fields, rest = [int(rest[:4])], rest[4:]
    steps: list[tuple[str, str, bool, int, int]] = [
        # (literal prefix, layout element, fixed width, min, max)
        ("-", "01", True, 1, 12),
        ("-", "02", True, 0, 31),
        ("T", "15", False, 0, 23),
        (":", "04", True, 0, 59),
        (":", "05", True, 0, 59),
    ]
    names = {"01": "month", "02": "day", "15": "hour", "04": "minute", "05": "second"}
    for prefix, elem, fixed, lo, hi in steps:
        if not rest.startswith(prefix):
            return cannot(rest, prefix)
        rest = rest[len(prefix) :]
        got = _getnum(rest, fixed)
        if got is None:
            return cannot(rest, elem)
        number, rest = got
        if not lo <= number <= hi:
            return out_of_range(names[elem])
        fields.append(number)
    fraction = ""
    if micro:
        if len(rest) < 7 or rest[0] not in ".," or not all("0" <= c <= "9" for c in rest[1:7]):
            return cannot(rest, ".000000")
        fraction, rest = rest[1:7], rest[7:]
    elif len(rest) >= 2 and rest[0] in ".," and _is_digit(rest, 1):
        n = 2
        while _is_digit(rest, n):
            n += 1
        fraction, rest = rest[1:n], rest[n:]
    offset = 0
    if rest.startswith("Z"):
        rest = rest[1:]
    else:
        if len(rest) < 6 or rest[3] != ":":
            return cannot(rest, "Z07:00")
        sign, zone_hour, zone_minute, tail = rest[0], rest[1:3], rest[4:6], rest[6:]
        hh, mm = _getnum(zone_hour, True), _getnum(zone_minute, True)
        if hh is None or mm is None:
            return cannot(rest, "Z07:00")
        if mm[0] > 60:
            return out_of_range("time zone offset minute")
        if hh[0] > 24:
            return out_of_range("time zone offset hour")
        if sign not in "+-":
            return cannot(rest, "Z07:00")
        offset = (hh[0] * 60 + mm[0]) * (1 if sign == "+" else -1)
        rest = tail
    if rest:
        return f"parsing time {_go_quote(value)}: extra text: {_go_quote(rest)}"
    year, month, day = fields[:3]
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == 2 and leap else _DAYS_IN_MONTH[month - 1]
    if day < 1 or day > days:
        return out_of_range("day")
    year, month, day, hour, minute, second = fields
    return _Parsed(year, month, day, hour, minute, second, fraction, offset)


def time_error(value: str, *, micro: bool) -> str | None:
    """The error Go's ``time.Parse`` returns for ``value`` with the RFC 3339 (micro) layout, or None."""
    parsed = _go_parse(value, micro=micro)
    return parsed if isinstance(parsed, str) else None


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, 0 included, as Go's time reads)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month - 3 if month > 2 else month + 9) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def unix_time(text: str) -> tuple[int, int]:
    """An RFC 3339 time as Go reads it (``time.Parse(time.RFC3339, s)``): Unix seconds and nanoseconds.

    The fraction keeps nine digits, the rest truncated, as Go's does. ValueError
    with Go's error text when ``text`` is not RFC 3339.
    """
    p = _go_parse(text, micro=False)
    if isinstance(p, str):
        raise ValueError(p)
    days = _days_from_civil(p.year, p.month, p.day)
    seconds = days * 86400 + p.hour * 3600 + p.minute * 60 + p.second - p.offset * 60
    return seconds, int(p.fraction[:9].ljust(9, "0")) if p.fraction else 0


def parse_time(text: object) -> datetime | None:
    """A metav1.Time (or MicroTime) as an aware UTC datetime; None when absent, not a string or not RFC 3339.

    RFC 3339 is what Go's ``time.Parse(time.RFC3339, s)`` accepts (what
    metav1.Time.UnmarshalJSON uses; `time_error` says why not): the hour may
    have one digit, a fraction of any length may follow the seconds (kept to
    the microsecond, the rest truncated), then ``Z`` or ``±hh:mm`` (up to
    24:60). What else Python's ``fromisoformat`` reads (a date alone, a space
    for ``T``, no zone, ``±hhmm``) is None, and so is a time a datetime cannot
    hold (a year outside 1 to 9999 once in UTC, such as year 0, which Go reads).
    """
    if not isinstance(text, str):
        return None
    if _CANONICAL.fullmatch(text) is not None:  # what components write: C's parse, ~40x cheaper than Go's rules
        try:
            return datetime.fromisoformat(text)
        except ValueError:  # a field out of range, as Go finds it (year 0, which Go reads, included)
            return None
    try:
        seconds, nanos = unix_time(text)
        return _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    except (ValueError, OverflowError):
        return None


def micro_time(moment: datetime) -> str:
    """metav1.MicroTime on the wire (RFC 3339 with microseconds, UTC)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(text: str) -> datetime:
    """A MicroTime (or a metav1.Time, without fraction) as an aware UTC datetime: `parse_time`, raising
    ValueError (Go's error where Go refuses it) instead of returning None."""
    moment = parse_time(text)
    if moment is None:
        raise ValueError(time_error(text, micro=False) or f"time {text!r} is out of a datetime's range")
    return moment
