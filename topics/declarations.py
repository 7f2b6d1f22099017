"""The five topics of draplane and their configuration.

`objects` is the source of truth: one partition (a total order, so the offset is
the resourceVersion), compacted, with a long ``min.compaction.lag.ms`` so that a
replay of recent history is exact. The other topics are plumbing around it.
"""

from __future__ import annotations

from services.bus.port import TopicSpec

OBJECTS = "objects"
REQUESTS = "requests"
REPLIES = "replies"
EVENTS = "events"
DECISIONS = "decisions"

DAY_MS = 24 * 60 * 60 * 1000
DEFAULT_OBJECTS_COMPACTION_LAG_MS = 7 * DAY_MS


def declarations(*, objects_compaction_lag_ms: int = DEFAULT_OBJECTS_COMPACTION_LAG_MS) -> list[TopicSpec]:
    """Every topic draplane needs, with the settings create-or-verify enforces."""
    return [
        TopicSpec(
            OBJECTS,
            1,
            {
                "cleanup.policy": "compact",
                "min.compaction.lag.ms": str(objects_compaction_lag_ms),
                "delete.retention.ms": str(DAY_MS),
            },
        ),
        TopicSpec(REQUESTS, 1, {"cleanup.policy": "delete", "retention.ms": str(DAY_MS)}),
        TopicSpec(REPLIES, 1, {"cleanup.policy": "delete", "retention.ms": str(60 * 60 * 1000)}),
        TopicSpec(EVENTS, 1, {"cleanup.policy": "delete", "retention.ms": str(DAY_MS)}),
        TopicSpec(DECISIONS, 1, {"cleanup.policy": "delete", "retention.ms": str(3 * DAY_MS)}),
    ]
