"""Topic declarations in the embedded log: create what is missing, verify the rest.

An existing topic whose partition count or declared settings differ is never
used silently: `ensure_topics` raises `TopicMismatch` naming every difference.
A setting the topic was created without counts as Kafka's default, so the
comparison means the same thing on both backends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson

from services.bus.embedded.db import Database, fetchall
from services.bus.port import TopicMismatch, TopicSpec

# Kafka's topic-level defaults for the settings the embedded log acts on.
KAFKA_DEFAULTS: Mapping[str, str] = {
    "cleanup.policy": "delete",
    "retention.ms": "604800000",
    "min.compaction.lag.ms": "0",
    "delete.retention.ms": "86400000",
    "min.cleanable.dirty.ratio": "0.5",
}


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str  # as stored (with the bus prefix)
    partitions: int
    config: Mapping[str, str]
    pids: tuple[int, ...] = ()  # partition ids, by partition number

    def setting(self, key: str) -> str | None:
        return self.config.get(key, KAFKA_DEFAULTS.get(key))

    def int_setting(self, key: str) -> int:
        value = self.setting(key)
        return int(value) if value is not None else 0

    def float_setting(self, key: str) -> float:
        value = self.setting(key)
        return float(value) if value is not None else 0.0

    @property
    def policies(self) -> frozenset[str]:
        return frozenset(p.strip() for p in (self.setting("cleanup.policy") or "").split(","))


def normalize(key: str, value: str) -> str:
    """Compare settings by meaning: ``compact,delete`` equals ``delete, compact``."""
    if key == "cleanup.policy":
        return ",".join(sorted(p.strip() for p in value.split(",") if p.strip()))
    return value.strip()


def differences(spec: TopicSpec, found: TopicInfo) -> list[str]:
    """What differs between a declaration and an existing topic, one phrase each."""
    diffs = []
    if spec.partitions != found.partitions:
        diffs.append(f"partitions: declared {spec.partitions}, found {found.partitions}")
    for key, declared in sorted(spec.config.items()):
        actual = found.setting(key)
        if actual is None or normalize(key, declared) != normalize(key, actual):
            diffs.append(f"{key}: declared {declared!r}, found {actual!r}")
    return diffs


def mismatch_message(problems: Mapping[str, list[str]]) -> str:
    return "; ".join(
        f"topic {name!r} differs from its declaration ({', '.join(diffs)})"
        for name, diffs in problems.items()
    )


async def ensure_topics(db: Database, specs: Sequence[TopicSpec], *, prefix: str) -> None:
    problems: dict[str, list[str]] = {}
    async with db.write() as conn:
        for spec in specs:
            if spec.partitions < 1:
                raise ValueError(f"topic {spec.name!r}: partitions must be at least 1")
            stored = prefix + spec.name
            rows = await fetchall(
                conn, "SELECT partitions, config FROM topics WHERE name = ?", (stored,)
            )
            if rows:
                found = TopicInfo(stored, int(rows[0][0]), orjson.loads(rows[0][1]))
                diffs = differences(spec, found)
                if diffs:
                    problems[spec.name] = diffs
                continue
            await conn.execute(
                "INSERT INTO topics (name, partitions, config) VALUES (?, ?, ?)",
                (stored, spec.partitions, orjson.dumps(dict(spec.config)).decode()),
            )
            await conn.executemany(
                "INSERT INTO partitions (topic, partition) VALUES (?, ?)",
                [(stored, p) for p in range(spec.partitions)],
            )
    if problems:
        raise TopicMismatch(mismatch_message(problems))


async def load_topic(db: Database, stored: str) -> TopicInfo | None:
    row = await db.fetchone("SELECT partitions, config FROM topics WHERE name = ?", (stored,))
    if row is None:
        return None
    pids = await db.fetchall(
        "SELECT id FROM partitions WHERE topic = ? ORDER BY partition", (stored,)
    )
    return TopicInfo(stored, int(row[0]), orjson.loads(row[1]), tuple(int(p) for (p,) in pids))


async def load_topics(db: Database) -> list[TopicInfo]:
    names = await db.fetchall("SELECT name FROM topics ORDER BY name")
    infos = [await load_topic(db, str(name)) for (name,) in names]
    return [info for info in infos if info is not None]
