"""Opening a bus: URL grammar, options, security pass-through, and unreachable logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.bus import BusUnavailable, open_bus
from services.bus.urls import KafkaTarget, SqliteTarget, parse_bus_url, with_query


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgres://db/x", "unknown scheme"),
        ("kafka://", "no bootstrap server"),
        ("kafka://broker", "is not host:port"),
        ("kafka://broker:99999", "is not host:port"),
        ("kafka://user:secret@broker:9092", "credentials do not belong in the URL"),
        ("kafka://broker:9092/path", "has no path"),
        ("kafka://broker:9092?sasl_plain_password=x", "DRAPLANE_KAFKA_SASL_PASSWORD"),
        ("kafka://broker:9092?colour=blue", "unknown option 'colour'"),
        ("kafka://broker:9092?poll_interval_ms=5", "unknown option 'poll_interval_ms'"),
        ("kafka://broker:9092?session_timeout_ms=soon", "is not an integer"),
        ("kafka://broker:9092?prefix=a/b", "prefix"),
        ("kafka://broker:9092?ssl_cafile=/ca.pem", "need security_protocol=SSL"),
        ("sqlite://host/bus.db", "has no host"),
        ("sqlite:///", "no database file"),
        ("sqlite:///:memory:", "cannot be shared"),
        ("sqlite:///x.db?prefix=p&prefix=q", "given twice"),
    ],
)
def test_bad_urls_are_rejected_with_the_reason(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        open_bus(url)


def test_kafka_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAPLANE_KAFKA_SASL_USERNAME", "draplane")
    monkeypatch.setenv("DRAPLANE_KAFKA_SASL_PASSWORD", "s3cret")
    target = parse_bus_url(
        "kafka://k0:9092,[::1]:9093?prefix=ci-&security_protocol=SASL_PLAINTEXT"
        "&sasl_mechanism=SCRAM-SHA-512&session_timeout_ms=6000",
        {"fetch_max_wait_ms": 10},
    )
    assert isinstance(target, KafkaTarget)
    assert target.bootstrap_servers == ("k0:9092", "[::1]:9093")
    assert target.prefix == "ci-"
    assert target.security == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "draplane",
        "sasl_plain_password": "s3cret",
    }
    assert target.options == {"session_timeout_ms": 6000, "fetch_max_wait_ms": 10}


def test_sqlite_urls() -> None:
    target = parse_bus_url("sqlite:///var/lib/draplane/bus.db?prefix=t-&poll_interval_ms=5")
    assert target == SqliteTarget(Path("/var/lib/draplane/bus.db"), "t-", {"poll_interval_ms": 5})
    assert parse_bus_url("sqlite:data/bus.db") == SqliteTarget(Path("data/bus.db"))
    bus = open_bus("sqlite:///tmp/x.db", session_timeout_ms=2000)
    assert bus.url == "sqlite:///tmp/x.db"


def test_with_query_sets_parameters_and_replaces_one_the_url_has() -> None:
    url = with_query("kafka://k1:9092?prefix=team-&fetch_max_wait_ms=10", prefix="team-run1-", linger_ms=5)
    target = parse_bus_url(url)  # a parameter given twice would be rejected here
    assert isinstance(target, KafkaTarget) and target.prefix == "team-run1-"
    assert "fetch_max_wait_ms=10" in url and "linger_ms=5" in url
    assert with_query("sqlite:///tmp/bus.db", prefix="p-") == "sqlite:///tmp/bus.db?prefix=p-"
    assert with_query("sqlite:///tmp/bus.db") == "sqlite:///tmp/bus.db"


async def test_an_unreachable_kafka_is_bus_unavailable() -> None:
    bus = open_bus("kafka://127.0.0.1:1", request_timeout_ms=2000)
    with pytest.raises(BusUnavailable):
        await bus.start()
    await bus.close()


async def test_an_unopenable_sqlite_file_is_bus_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    bus = open_bus(f"sqlite://{blocker / 'bus.db'}")
    with pytest.raises(BusUnavailable):
        await bus.start()
    await bus.close()
