"""`ops/bench/fresh_logs.drop` on a real broker: a run's topics go, another run's stay."""

from __future__ import annotations

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from ops.bench.fresh_logs import drop, dropped_after, fresh_url
from services.bus import open_bus
from topics.declarations import declarations

pytestmark = pytest.mark.kafka


async def _topics(bootstrap: str) -> set[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()


async def _log(url: str) -> str:
    bus = open_bus(url)
    await bus.start()
    try:
        await bus.ensure_topics(declarations())
        prefix: str = bus.prefix  # type: ignore[attr-defined]
        return prefix
    finally:
        await bus.close()


async def test_a_runs_topics_are_deleted_and_another_runs_are_not(kafka_bootstrap: str) -> None:
    mine, other = fresh_url("kafka", kafka=kafka_bootstrap), fresh_url("kafka", kafka=kafka_bootstrap)
    try:
        async with dropped_after(mine):
            prefix = await _log(mine)
            other_prefix = await _log(other)
            assert {n for n in await _topics(kafka_bootstrap) if n.startswith(prefix)} == {
                prefix + spec.name for spec in declarations()
            }
        left = await _topics(kafka_bootstrap)
        assert not any(n.startswith(prefix) for n in left)
        assert {n for n in left if n.startswith(other_prefix)} == {other_prefix + s.name for s in declarations()}
    finally:
        deleted = await drop(other)
    assert sorted(deleted) == sorted(other_prefix + s.name for s in declarations())
