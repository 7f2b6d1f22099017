"""`draplane topics`, compose's topic-init: create the declared topics, or name every difference.

On both backends: a new log gets the five topics (and a second run verifies
them); a log whose topic differs from its declaration makes the command exit 1
and print each difference, before any component would start.
"""

from __future__ import annotations

import asyncio

import pytest

from services.bus import open_bus
from services.bus.port import TopicSpec
from services.cli import main
from tests.conftest import BusUrl
from topics.declarations import declarations


async def declare(url: str, specs: list[TopicSpec]) -> None:
    bus = open_bus(url)
    await bus.start()
    try:
        await bus.ensure_topics(specs)
    finally:
        await bus.close()


def test_creates_the_declared_topics_then_verifies_them(bus_url: BusUrl, capsys: pytest.CaptureFixture[str]) -> None:
    url = bus_url()
    assert main(["topics", "--bus", url]) == 0
    first = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in first] == [f"topic {s.name}" for s in declarations()]
    assert all(line.endswith(": ok") for line in first)
    assert "topic objects: 1 partition(s), cleanup.policy=compact" in first[0]

    assert main(["topics", "--bus", url]) == 0, "an existing log as declared is verified"
    assert capsys.readouterr().out.splitlines() == first
    asyncio.run(declare(url, declarations()))  # and the components find it as they expect


def test_a_differing_topic_fails_with_every_difference(bus_url: BusUrl, capsys: pytest.CaptureFixture[str]) -> None:
    url = bus_url()
    wrong = [
        TopicSpec("objects", 1, {"cleanup.policy": "delete"}),
        TopicSpec("replies", 1, {"cleanup.policy": "delete", "retention.ms": "1000"}),
    ]
    asyncio.run(declare(url, wrong))
    assert main(["topics", "--bus", url]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0] == "draplane topics: existing topics differ from their declarations:"
    assert any(
        line.startswith("  topic 'objects' differs") and "cleanup.policy: declared 'compact', found 'delete'" in line
        for line in lines
    ), lines
    assert any(
        line.startswith("  topic 'replies' differs") and "retention.ms: declared '3600000', found '1000'" in line
        for line in lines
    ), lines


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("kafka://", "draplane topics: bus URL 'kafka:': no bootstrap server"),
        ("kafka://127.0.0.1:1", "draplane topics: connecting to 127.0.0.1:1: Kafka is not reachable"),
    ],
)
def test_a_bad_or_unreachable_log_is_one_line_and_exit_1(
    url: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["topics", "--bus", url]) == 1
    assert message in capsys.readouterr().err
