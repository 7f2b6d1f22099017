"""Topic declarations on Kafka: create what is missing, verify the rest.

Missing topics are created with their declared partitions and settings,
replicated min(3, brokers) ways (or as the bus URL's ``replication_factor``
says); a topic with three or more replicas also gets ``min.insync.replicas=2``
unless it declares its own, so that with producers' ``acks=all`` an
acknowledged write is on two brokers and survives losing either. An
existing topic is described (partition count from metadata, settings from
DescribeConfigs) and every difference from its declaration is reported in one
`TopicMismatch`: a differing topic is never used silently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from aiokafka.admin import NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from services.bus.kafka.context import KafkaContext
from services.bus.kafka.errors import translated
from services.bus.port import BusError, TopicMismatch, TopicSpec

TOPIC_ALREADY_EXISTS = 36
CREATE_WAIT_S = 15.0
MIN_INSYNC = "min.insync.replicas"


def replication(brokers: int, *, configured: int = 0) -> int:
    """The replication factor of a new topic: ``configured`` when set (> 0), else min(3, brokers), at least 1."""
    return configured if configured > 0 else max(1, min(3, brokers))


def creation_config(declared: Mapping[str, str], *, replicas: int) -> dict[str, str]:
    """A new topic's settings: its declaration, plus ``min.insync.replicas=2`` from three replicas on."""
    config = dict(declared)
    if replicas >= 3:
        config.setdefault(MIN_INSYNC, "2")
    return config


def normalize(key: str, value: str) -> str:
    """Compare settings by meaning: ``compact,delete`` equals ``delete,compact``."""
    if key == "cleanup.policy":
        return ",".join(sorted(p.strip() for p in value.split(",") if p.strip()))
    return value.strip()


async def ensure_topics(context: KafkaContext, specs: Sequence[TopicSpec]) -> None:
    for spec in specs:
        if spec.partitions < 1:
            raise ValueError(f"topic {spec.name!r}: partitions must be at least 1")
    existing = await context.cluster_topics()
    missing = [s for s in specs if context.stored(s.name) not in existing]
    if missing:
        await _create(context, missing)
        existing = await _wait_for(context, {context.stored(s.name) for s in missing})
    present = [s for s in specs if s not in missing]
    problems: dict[str, list[str]] = {}
    if present:
        found = await _describe(context, [context.stored(s.name) for s in present])
        for spec in present:
            stored = context.stored(spec.name)
            diffs = []
            if existing[stored] != spec.partitions:
                diffs.append(f"partitions: declared {spec.partitions}, found {existing[stored]}")
            config = found.get(stored, {})
            for key, declared in sorted(spec.config.items()):
                actual = config.get(key)
                if actual is None or normalize(key, declared) != normalize(key, actual):
                    diffs.append(f"{key}: declared {declared!r}, found {actual!r}")
            if diffs:
                problems[spec.name] = diffs
    if problems:
        raise TopicMismatch(
            "; ".join(
                f"topic {name!r} differs from its declaration ({', '.join(diffs)})"
                for name, diffs in problems.items()
            )
        )


async def _create(context: KafkaContext, specs: Sequence[TopicSpec]) -> None:
    replicas = context.settings.replication_factor
    if replicas <= 0:
        cluster = await context.admin_call("describing the cluster", context.admin.describe_cluster)
        replicas = replication(len(cluster.get("brokers", ())))
    new = [
        NewTopic(
            context.stored(s.name), s.partitions, replicas, topic_configs=creation_config(s.config, replicas=replicas)
        )
        for s in specs
    ]
    with translated("creating topics"):
        response = await context.admin.create_topics(new)
    for topic, code, message in _topic_errors(response):
        if code not in (0, TOPIC_ALREADY_EXISTS):  # someone else creating it is fine
            raise BusError(f"creating topic {context.unstored(topic)!r} failed: {message} (error {code})")


def _topic_errors(response: object) -> list[tuple[str, int, str]]:
    rows = []
    for entry in getattr(response, "topic_errors", []):
        topic, code = entry[0], entry[1]
        message = entry[2] if len(entry) > 2 else ""
        rows.append((str(topic), int(code), str(message or "")))
    return rows


async def _wait_for(context: KafkaContext, topics: set[str]) -> dict[str, int]:
    """Wait until new topics show in the cluster metadata (so producers can use them)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CREATE_WAIT_S
    while True:
        existing = await context.cluster_topics()
        if topics <= existing.keys():
            return existing
        if loop.time() > deadline:
            names = ", ".join(sorted(context.unstored(t) for t in topics - existing.keys()))
            raise BusError(f"created topics did not appear in the cluster metadata: {names}")
        await asyncio.sleep(0.05)


async def _describe(context: KafkaContext, topics: list[str]) -> dict[str, dict[str, str]]:
    resources = [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics]
    responses = await context.admin_call("describing topic configs", lambda: context.admin.describe_configs(resources))
    found: dict[str, dict[str, str]] = {}
    for response in responses:
        for resource in response.resources:
            code, message, name, entries = resource[0], resource[1], resource[3], resource[4]
            if code != 0:
                raise BusError(f"describing topic {context.unstored(name)!r} failed: {message}")
            found[str(name)] = {str(e[0]): str(e[1]) for e in entries if e[1] is not None}
    return found
