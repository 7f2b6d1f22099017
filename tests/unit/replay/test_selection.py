"""Parsing replay start/end points and filters."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services.replay.output import ReplayedRecord, render
from services.replay.selection import Filter, parse_point, parse_time, resolve_kind

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
NOW_MS = int(NOW.timestamp() * 1000)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10m", NOW_MS - 600_000),
        ("2h", NOW_MS - 7_200_000),
        ("30s", NOW_MS - 30_000),
        ("1.5d", NOW_MS - 129_600_000),
        ("2026-11-29T11:00:00Z", NOW_MS - 3_600_000),
        ("2026-11-29T11:00:00", NOW_MS - 3_600_000),
        ("2026-11-29T12:00:00+01:00", NOW_MS - 3_600_000),
    ],
)
def test_parse_time(text: str, expected: int) -> None:
    assert parse_time(text, now=NOW) == expected


def test_parse_time_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="invalid time 'yesterday'"):
        parse_time("yesterday", now=NOW)


def test_parse_point_tells_offsets_from_times() -> None:
    assert parse_point("42") == ("offset", 42)
    assert parse_point("10m", now=NOW) == ("time", NOW_MS - 600_000)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("Pod", ("", "pods")),
        ("pods", ("", "pods")),
        ("po", ("", "pods")),
        ("ResourceClaim", ("resource.k8s.io", "resourceclaims")),
        ("resourceclaims.resource.k8s.io", ("resource.k8s.io", "resourceclaims")),
        ("deviceclass", ("resource.k8s.io", "deviceclasses")),
    ],
)
def test_resolve_kind(kind: str, expected: tuple[str, str]) -> None:
    assert resolve_kind(kind) == expected


def test_resolve_unknown_kind() -> None:
    with pytest.raises(ValueError, match='the server doesn\'t have a resource type "widgets"'):
        resolve_kind("widgets")


def test_filter() -> None:
    f = Filter(kind=("", "pods"), namespace="default", name="web")
    assert f.matches(("", "pods", "default", "web"))
    assert not f.matches(("", "pods", "other", "web"))
    assert not f.matches(("", "pods", "default", "db"))
    assert not f.matches(("resource.k8s.io", "resourceclaims", "default", "web"))
    assert Filter().matches(("x", "y", "z", "w"))


def test_render_formats() -> None:
    rec = ReplayedRecord("objects", 0, 7, NOW_MS, "core/pods/default/web", "ADDED", {"metadata": {"name": "web"}}, "r1")
    assert render(rec, "json").startswith('{"topic":"objects","partition":0,"offset":7,')
    assert '"type":"ADDED"' in render(rec, "json")
    assert render(rec, "table") == "       7  2026-11-29T12:00:00.000Z  ADDED      core/pods/default/web"
    yaml_text = render(rec, "yaml")
    assert yaml_text.startswith("---\ntopic: objects\n") and "offset: 7" in yaml_text
