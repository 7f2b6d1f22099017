"""Topic declarations: created once, verified after, never used silently when they differ."""

from __future__ import annotations

import pytest

from services.bus import Bus, TopicMismatch, TopicSpec
from topics.declarations import declarations


async def test_ensure_topics_creates_and_is_idempotent(bus: Bus) -> None:
    specs = declarations(objects_compaction_lag_ms=60_000)
    await bus.ensure_topics(specs)
    await bus.ensure_topics(specs)
    for spec in specs:
        assert await bus.end_offset(spec.name) == 0


async def test_a_differing_topic_is_reported_with_every_difference(bus: Bus) -> None:
    await bus.ensure_topics(
        [
            TopicSpec("objects", 1, {"cleanup.policy": "compact", "min.compaction.lag.ms": "1000"}),
            TopicSpec("events", 1, {"retention.ms": "60000"}),
        ]
    )
    with pytest.raises(TopicMismatch) as raised:
        await bus.ensure_topics(
            [
                TopicSpec(
                    "objects",
                    2,
                    {"cleanup.policy": "delete,compact", "min.compaction.lag.ms": "5000"},
                ),
                TopicSpec("events", 1, {"retention.ms": "60000", "cleanup.policy": "compact"}),
                TopicSpec("fresh", 1),
            ]
        )
    message = str(raised.value)
    assert "'objects'" in message and "'events'" in message
    assert "partitions: declared 2, found 1" in message
    assert "min.compaction.lag.ms: declared '5000', found '1000'" in message
    assert "cleanup.policy: declared 'delete,compact', found 'compact'" in message
    assert "cleanup.policy: declared 'compact', found 'delete'" in message
    assert "retention.ms" not in message  # equal settings are not reported
    # The missing topic was still created.
    assert await bus.end_offset("fresh") == 0


async def test_equal_settings_written_differently_match(bus: Bus) -> None:
    await bus.ensure_topics([TopicSpec("objects", 1, {"cleanup.policy": "compact,delete"})])
    await bus.ensure_topics([TopicSpec("objects", 1, {"cleanup.policy": "delete, compact"})])
