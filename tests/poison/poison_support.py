"""Shared pieces of the poison-record tests: the bad records, and how to observe their skipping.

A poison record is one no consumer can decode. Consumers must log it (with
its topic and offset), count it in ``draplane_malformed_records_total`` and
move on; these helpers read those three signals back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import orjson
import pytest
from prometheus_client import REGISTRY

from services.bus.port import Bus, Consumer, OutRecord, Record

MALFORMED_METRIC = "draplane_malformed_records_total"


def malformed_count(topic: str) -> float:
    """The process-wide count of malformed records skipped on ``topic``."""
    return REGISTRY.get_sample_value(MALFORMED_METRIC, {"topic": topic}) or 0.0


@dataclass(frozen=True)
class Poison:
    """One bad record and why it is bad."""

    why: str
    key: bytes | None
    value: bytes

    def record(self, topic: str) -> OutRecord:
        return OutRecord(topic, self.key, self.value)


def envelope(**fields: object) -> bytes:
    return orjson.dumps(fields)


def skipped_offsets(caplog: pytest.LogCaptureFixture, *, logger: str, topic: str) -> list[int]:
    """Offsets that ``logger`` (or a logger below it) reported skipping on ``topic``, from its warnings' ``extra``."""
    return [
        int(getattr(rec, "offset", -1))
        for rec in caplog.records
        if (rec.name == logger or rec.name.startswith(logger + "."))
        and rec.levelno == logging.WARNING
        and getattr(rec, "topic", None) == topic
    ]


async def inject(bus: Bus, topic: str, poisons: Iterable[Poison]) -> list[int]:
    """Append the poison records to ``topic`` with a plain producer; their offsets."""
    producer = await bus.producer()
    try:
        return await producer.send([p.record(topic) for p in poisons])
    finally:
        await producer.close()


async def read_until(consumer: Consumer, end: int) -> list[Record]:
    """Every committed record from the consumer's position up to (not including) ``end``."""
    out: list[Record] = []
    while consumer.position() < end:
        out.extend(r for r in await consumer.getmany(timeout_ms=200) if r.offset < end)
    return out
