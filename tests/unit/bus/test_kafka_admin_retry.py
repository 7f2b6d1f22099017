"""An admin request that went to a dead broker is asked again after a metadata refresh (on fake time).

aiokafka's admin client picks a random broker of its cached metadata for
describe requests; right after a broker of a cluster dies that pick can be the
dead one (NodeNotReadyError). `KafkaContext.admin_call` refreshes and retries
a few times; a log that stays unreachable still ends in `BusUnavailable`.
"""

from __future__ import annotations

from typing import Any

import pytest
from aiokafka import errors as kafka_errors

from services.bus.kafka.config import KafkaSettings
from services.bus.kafka.context import ADMIN_ATTEMPTS, KafkaContext
from services.bus.port import BusError, BusUnavailable


class FakeClient:
    def __init__(self) -> None:
        self.refreshes = 0

    async def force_metadata_update(self) -> bool:
        self.refreshes += 1
        return True


class FakeAdmin:
    def __init__(self, failures: list[BaseException]) -> None:
        self._client = FakeClient()
        self.failures = failures
        self.calls = 0

    async def describe(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "described"


def context(admin: FakeAdmin) -> KafkaContext:
    fake: Any = admin
    return KafkaContext("", KafkaSettings(), {}, fake)


@pytest.mark.looptime
@pytest.mark.parametrize("dead", [0, 1, ADMIN_ATTEMPTS - 1])
async def test_a_dead_broker_is_skipped_after_a_refresh(dead: int) -> None:
    admin = FakeAdmin([kafka_errors.NodeNotReadyError("node 1") for _ in range(dead)])
    assert await context(admin).admin_call("describing", admin.describe) == "described"
    assert admin.calls == dead + 1
    assert admin._client.refreshes == dead


@pytest.mark.looptime
async def test_an_unreachable_log_still_fails() -> None:
    admin = FakeAdmin([kafka_errors.KafkaConnectionError("down") for _ in range(ADMIN_ATTEMPTS + 3)])
    with pytest.raises(BusUnavailable, match="describing: Kafka is not reachable"):
        await context(admin).admin_call("describing", admin.describe)
    assert admin.calls == ADMIN_ATTEMPTS


@pytest.mark.looptime
async def test_other_errors_are_not_retried() -> None:
    admin = FakeAdmin([kafka_errors.TopicAuthorizationFailedError()])
    with pytest.raises(BusError) as raised:
        await context(admin).admin_call("describing", admin.describe)
    assert not isinstance(raised.value, BusUnavailable)
    assert admin.calls == 1
