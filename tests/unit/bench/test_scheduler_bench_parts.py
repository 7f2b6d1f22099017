"""Pure parts of the scheduler benchmark (ops/bench/scheduler.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from ops.bench.scheduler import attempt_started_ms


def test_an_attempts_start_is_read_from_its_decision_record() -> None:
    at = datetime(2026, 12, 3, 13, 0, 0, 123000, tzinfo=UTC)
    assert attempt_started_ms({"time": "2026-12-03T13:00:00.123Z"}) == round(at.timestamp() * 1000)


def test_a_decision_without_a_readable_time_has_no_start() -> None:
    assert attempt_started_ms({}) is None
    assert attempt_started_ms({"time": "yesterday"}) is None
