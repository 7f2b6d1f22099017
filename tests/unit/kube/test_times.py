"""metav1.Time on the wire: what `time_text` writes and what `parse_time` reads.

The reader accepts what Go's ``time.Parse(time.RFC3339, s)`` accepts (the
parse metav1.Time.UnmarshalJSON uses) and nothing else of what Python's
``fromisoformat`` reads; the property test holds it to the apiserver's own
account of Go's parse, `time_error`, the one rule both readers share.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.kube.times import micro_time, now_text, parse_micro_time, parse_time, time_error, time_text, unix_time

MOMENT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# ------------------------------------------------------------------ writing


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (MOMENT, "2026-01-02T03:04:05Z"),
        (MOMENT.replace(microsecond=999_999), "2026-01-02T03:04:05Z"),  # truncated, not rounded
        (datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2))), "2026-01-02T03:04:05Z"),
        (datetime(2026, 1, 1, 22, 4, 5, tzinfo=timezone(timedelta(hours=-5))), "2026-01-02T03:04:05Z"),
        (datetime(2026, 1, 2, 3, 4, 5, 123), "2026-01-02T03:04:05Z"),  # naive is UTC
        (datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC), "0999-01-02T03:04:05Z"),  # four-digit year, as Go writes
    ],
    ids=["utc", "microseconds", "east", "west", "naive", "year-999"],
)
def test_time_text_is_utc_whole_seconds_with_z(moment: datetime, text: str) -> None:
    assert time_text(moment) == text


def test_now_text_is_now() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    written = parse_time(now_text())
    after = datetime.now(UTC)
    assert written is not None and before <= written <= after


def test_what_is_written_reads_back_to_the_second() -> None:
    moment = MOMENT.replace(microsecond=500)
    assert parse_time(time_text(moment)) == MOMENT
    assert parse_time(micro_time(moment)) == moment  # a MicroTime is an RFC 3339 time too


# ------------------------------------------------------------------ reading


# Where the expectations come from: every string of this table, the next one and test_unix_time_is_go_s_reading was
# run through Go 1.26.8's time.Parse(time.RFC3339, s) (what metav1.Time.UnmarshalJSON calls) on this machine,
# 2026-12-03: Go read each accepted one as the moment given (1767323045 s for MOMENT) and refused each refused one,
# but the last three, which it reads and a datetime cannot hold.
@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2026-01-02T03:04:05Z", MOMENT),
        ("2026-01-02T03:04:05.5Z", MOMENT.replace(microsecond=500_000)),
        ("2026-01-02T03:04:05.000006Z", MOMENT.replace(microsecond=6)),  # MicroTime
        ("2026-01-02T03:04:05.123456789Z", MOMENT.replace(microsecond=123_456)),  # nanoseconds: truncated
        ("2026-01-02T03:04:05.1234567891234Z", MOMENT.replace(microsecond=123_456)),  # Go ignores beyond ns
        ("2026-01-02T03:04:05,5Z", MOMENT.replace(microsecond=500_000)),  # Go takes a comma too
        ("2026-01-02T05:04:05+02:00", MOMENT),
        ("2026-01-01T22:04:05-05:00", MOMENT),
        ("2026-01-02T03:04:05-00:00", MOMENT),
        ("2026-01-03T03:04:05+24:00", MOMENT),  # Go allows an offset hour up to 24 ...
        ("2026-01-02T05:04:05+01:60", MOMENT),  # ... and minute up to 60
        ("2026-01-02T3:04:05Z", MOMENT),  # Go's hour may have one digit
        ("2024-02-29T00:00:00Z", datetime(2024, 2, 29, tzinfo=UTC)),
    ],
    ids=[
        "utc",
        "fraction",
        "micro-time",
        "nanoseconds",
        "beyond-nanoseconds",
        "comma-fraction",
        "east",
        "west",
        "minus-zero",
        "offset-24h",
        "offset-60m",
        "one-digit-hour",
        "leap-day",
    ],
)
def test_parse_time_reads_rfc3339_as_go_does(text: str, moment: datetime) -> None:
    parsed = parse_time(text)
    assert parsed == moment
    assert parsed is not None and parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        0,
        1767323045,
        b"2026-01-02T03:04:05Z",
        ["2026-01-02T03:04:05Z"],
        MOMENT,
        "not a time",
        # What Python's fromisoformat reads and Go's RFC 3339 parse does not:
        "2026-01-02",  # a date alone
        "2026-01-02T03:04:05",  # no zone
        "2026-01-02T03:04",  # no seconds
        "2026-01-02 03:04:05Z",  # a space for T
        "20260102T030405Z",  # basic format, no separators
        "2026-01-02T03:04:05+0200",  # ±hhmm
        "2026-01-02T03:04:05+02",  # ±hh
        "2026-01-02t03:04:05Z",  # lower-case t
        "2026-01-02T03:04:05z",  # lower-case z
        "2026-01-02T03:04:05.Z",  # a point without digits
        "2026-1-02T03:04:05Z",  # one-digit month
        " 2026-01-02T03:04:05Z",  # surrounding space
        "2026-01-02T03:04:05Z\n",
        "٢٠٢٦-01-02T03:04:05Z",  # digits of another script
        # Out of range:
        "2026-02-29T00:00:00Z",  # not a leap year
        "2026-13-02T03:04:05Z",
        "2026-01-02T24:00:00Z",
        "2026-01-02T03:04:60Z",  # no leap seconds
        "2026-01-02T03:04:05+25:00",
        "2026-01-02T03:04:05+01:61",
        # Go reads these, a datetime cannot hold them:
        "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59-01:00",
        "0001-01-01T00:00:00+00:01",
    ],
)
def test_parse_time_refuses_what_is_absent_or_not_rfc3339(value: object) -> None:
    assert parse_time(value) is None


_PIECES = st.tuples(
    st.sampled_from(["2024", "2023", "1900", "2000", "24", "20245"]),
    st.sampled_from(["01", "02", "12", "13", "00", "2"]),
    st.sampled_from(["01", "28", "29", "30", "31", "32", "00", "9"]),
    st.sampled_from(["T", "t", " "]),
    st.sampled_from(["00", "9", "23", "24", "19", "123"]),
    st.sampled_from(["00", "59", "60", "5"]),
    st.sampled_from(["00", "59", "60", "5"]),
    st.sampled_from(["", ".1", ".123456", ",123456", ".", ".1234567", ".123456789", ".1234567891", ":1"]),
    st.sampled_from(["Z", "z", "+01:00", "-24:00", "+25:00", "+01:61", "+01:60", "+0100", "+01", "", "Zx"]),
)


@settings(max_examples=500, deadline=None)
@given(pieces=_PIECES)
def test_parse_time_accepts_exactly_what_go_time_parse_accepts(pieces: tuple[str, ...]) -> None:
    y, mo, d, sep, h, mi, s, frac, zone = pieces
    text = f"{y}-{mo}-{d}{sep}{h}:{mi}:{s}{frac}{zone}"
    parsed = parse_time(text)
    assert (parsed is not None) == (time_error(text, micro=False) is None), text
    if parsed is None:
        return


_VALID = st.builds(
    lambda y, mo, d, h, mi, s, frac, zone: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{frac}{zone}",
    st.integers(1900, 2100),
    st.integers(1, 12),
    st.integers(1, 28),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    st.just("") | st.text("0123456789", min_size=1, max_size=9).map(lambda digits: "." + digits),
    st.just("Z")
    | st.builds(
        lambda sign, h, m: f"{sign}{h:02d}:{m:02d}", st.sampled_from("+-"), st.integers(0, 23), st.integers(0, 59)
    ),
)


@settings(max_examples=300, deadline=None)
@given(text=_VALID)
def test_parse_time_reads_the_moment_fromisoformat_reads(text: str) -> None:
    # An independent reading of the same moment: Python's own ISO parser, on the forms both accept.
    assert parse_time(text) == datetime.fromisoformat(text).astimezone(UTC), text
    seconds, nanos = unix_time(text)
    assert EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000) == parse_time(text), text


@pytest.mark.parametrize(
    ("text", "seconds", "nanos"),
    [
        ("1970-01-01T00:00:00Z", 0, 0),
        ("1969-12-31T23:59:59.999999999Z", -1, 999_999_999),
        ("2026-01-02T03:04:05.1234567891+01:00", 1767319445, 123_456_789),  # nine digits kept, as Go keeps
        ("0000-01-01T00:00:00Z", -62167219200, 0),  # year 0, which Go reads and a datetime cannot hold
        ("2000-02-29T24:00:00Z", None, None),
    ],
)
def test_unix_time_is_go_s_reading(text: str, seconds: int | None, nanos: int | None) -> None:
    if seconds is None:
        with pytest.raises(ValueError, match="hour out of range"):
            unix_time(text)
        return
    assert unix_time(text) == (seconds, nanos)


# ------------------------------------------------------------------ MicroTime


def test_micro_time_keeps_microseconds() -> None:
    moment = MOMENT.replace(microsecond=6)
    assert micro_time(moment) == "2026-01-02T03:04:05.000006Z"
    assert parse_micro_time("2026-01-02T03:04:05.000006Z") == moment
    with pytest.raises(ValueError):
        parse_micro_time("not a time")
    # One rule with parse_time: what fromisoformat alone would read is refused, with Go's error.
    with pytest.raises(ValueError, match='parsing time "2026-01-02"'):
        parse_micro_time("2026-01-02")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("2026-01-02T03:04:05Z\n", 'parsing time "2026-01-02T03:04:05Z\\x0a": extra text: "\\x0a"'),
        ("2026-01-02T03:04:05Zé", 'parsing time "2026-01-02T03:04:05Z\\xc3\\xa9": extra text: "\\xc3\\xa9"'),
        ('2026-01-02T03:04:05Z"\\', 'parsing time "2026-01-02T03:04:05Z\\"\\\\": extra text: "\\"\\\\"'),
        (
            "é2026",
            'parsing time "\\xc3\\xa92026" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xa92026" as "2006"',
        ),
        (
            "2026-01-02T03:04:05Z\t€",
            'parsing time "2026-01-02T03:04:05Z\\x09\\xe2\\x82\\xac": extra text: "\\x09\\xe2\\x82\\xac"',
        ),
    ],
)
def test_time_error_quotes_as_go_s_time_package_does(text: str, error: str) -> None:
    # Each error text is what Go 1.26.8's time.Parse(time.RFC3339, text) returned on this machine (2026-12-03):
    # the time package quotes control and non-ASCII characters byte by byte, not as JSON or strconv would.
    assert time_error(text, micro=False) == error
