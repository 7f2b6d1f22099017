"""A sticky partition assignor that keeps the group's leader where it is.

The group's leader is the owner of partition 0, so every needless move of
partition 0 is a leadership change (the new leader re-reads `objects` before it
serves). Kafka's default assignors hand partitions out by sorted member id,
so a standby joining could take partition 0 from a healthy leader.

Here each member tells the group, in its subscription user data, what it owns
and since when. The assignment keeps every claim of a live member (up to a
fair share, partition 0 first), settles a double claim — a member that was
expelled and rejoined still claims its old partitions — for the newest claim,
and gives the rest to the least-loaded members. aiokafka calls these methods
on the instance it is given, so each group member has its own assignor state.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from aiokafka.coordinator.protocol import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)
from aiokafka.structs import TopicPartition


class LeaderStickyAssignor:
    name = "draplane-sticky"
    version = 0

    def __init__(self) -> None:
        self.owned: list[TopicPartition] = []
        self.since_ms = 0

    def metadata(self, topics: Iterable[str]) -> ConsumerProtocolMemberMetadata:
        claim = {"owned": [[tp.topic, tp.partition] for tp in self.owned], "since": self.since_ms}
        return ConsumerProtocolMemberMetadata(self.version, sorted(topics), orjson.dumps(claim))

    def on_assignment(self, assignment: ConsumerProtocolMemberAssignment) -> None:
        owned = sorted(assignment.partitions())
        if owned != self.owned:
            self.owned = owned
            self.since_ms = time.time_ns() // 1_000_000

    def assign(
        self, cluster: Any, members: Mapping[str, ConsumerProtocolMemberMetadata]
    ) -> dict[str, ConsumerProtocolMemberAssignment]:
        subscribers: dict[str, list[str]] = {}
        claims: dict[tuple[str, int], tuple[int, str]] = {}  # partition -> (since, member)
        for member_id, meta in members.items():
            for topic in meta.subscription:
                subscribers.setdefault(topic, []).append(member_id)
            for topic, partition, since in _claims(meta):
                current = claims.get((topic, partition))
                if current is None or (since, member_id) > current:
                    claims[(topic, partition)] = (since, member_id)
        result: dict[str, dict[str, list[int]]] = {m: {} for m in members}
        for topic, subscribed in sorted(subscribers.items()):
            partitions = sorted(cluster.partitions_for_topic(topic) or ())
            if not partitions:
                continue
            subscribed = sorted(subscribed)
            quota = math.ceil(len(partitions) / len(subscribed))
            load = dict.fromkeys(subscribed, 0)
            owner: dict[int, str] = {}
            for p in partitions:  # partition 0 first: the leader keeps its claim
                claim = claims.get((topic, p))
                if claim is not None and claim[1] in load and load[claim[1]] < quota:
                    owner[p] = claim[1]
                    load[claim[1]] += 1
            for p in partitions:
                if p not in owner:
                    m = min(subscribed, key=lambda x: (load[x], x))
                    owner[p] = m
                    load[m] += 1
            for p, m in owner.items():
                result[m].setdefault(topic, []).append(p)
        return {
            m: ConsumerProtocolMemberAssignment(
                self.version, sorted((t, sorted(ps)) for t, ps in topics.items()), b""
            )
            for m, topics in result.items()
        }


def _claims(meta: ConsumerProtocolMemberMetadata) -> list[tuple[str, int, int]]:
    """(topic, partition, since) claimed by a member; nothing if unreadable."""
    try:
        doc = orjson.loads(meta.user_data or b"{}")
        since = int(doc.get("since", 0))
        return [(str(t), int(p), since) for t, p in doc.get("owned", [])]
    except (orjson.JSONDecodeError, TypeError, ValueError, AttributeError):
        return []
