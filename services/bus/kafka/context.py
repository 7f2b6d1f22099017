"""What the parts of one Kafka bus share: names, settings, client options, topic metadata.

Topic existence is checked through a metadata request for *all* topics:
aiokafka asks for named topics with ``allow_auto_topic_creation`` set, which
on a broker with ``auto.create.topics.enable`` would create an undeclared
topic with default settings. draplane's topics are declared, never guessed.

aiokafka's admin client sends its describe requests to a random broker of its
cached metadata. On a cluster that metadata still lists a broker that just
died, so such a request fails at once with NodeNotReady while two brokers
answer; `KafkaContext.admin_call` refreshes the metadata and asks again (a
component that starts while one broker of three is down must not exit).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiokafka.admin import AIOKafkaAdminClient

from services.bus.kafka.config import KafkaSettings
from services.bus.kafka.errors import UnknownTopic, translated
from services.bus.port import BusUnavailable

T = TypeVar("T")
# An admin request is tried this often (each time on a random broker) before BusUnavailable goes up.
ADMIN_ATTEMPTS = 5
ADMIN_RETRY_S = 0.2  # the first pause; it doubles
METADATA_REFRESH_S = 2.0  # at most this long for a metadata refresh between attempts


@dataclass(slots=True)
class KafkaContext:
    prefix: str
    settings: KafkaSettings
    client: dict[str, Any]  # aiokafka keyword arguments shared by every client
    admin: AIOKafkaAdminClient
    _partitions: dict[str, int] = field(default_factory=dict)

    def stored(self, name: str) -> str:
        """The name on the broker of a topic, group or transactional id: prefixed."""
        return self.prefix + name

    def unstored(self, name: str) -> str:
        return name[len(self.prefix):] if name.startswith(self.prefix) else name

    async def cluster_topics(self) -> dict[str, int]:
        """Every topic on the cluster with its partition count (refreshes the cache)."""
        topics = await self.admin_call("reading cluster metadata", lambda: self.admin.describe_topics(None))
        found = {
            str(t["topic"]): len(t["partitions"])
            for t in topics
            if t["error_code"] == 0 and t["partitions"]
        }
        self._partitions.update(found)
        return found

    async def partitions(self, topic: str) -> int:
        """The partition count of a declared topic; `UnknownTopic` if it does not exist."""
        stored = self.stored(topic)
        count = self._partitions.get(stored)
        if count is None:
            count = (await self.cluster_topics()).get(stored)
            if count is None:
                raise UnknownTopic(topic)
        return count

    async def check_partition(self, topic: str, partition: int) -> None:
        if not 0 <= partition < await self.partitions(topic):
            raise UnknownTopic(topic, partition)

    async def admin_call(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """``call()`` (an admin request), asked again after a refresh when the broker it went to is down."""
        pause = ADMIN_RETRY_S
        for attempt in range(1, ADMIN_ATTEMPTS + 1):
            try:
                with translated(what):
                    return await call()
            except BusUnavailable:
                if attempt == ADMIN_ATTEMPTS:
                    raise
            with contextlib.suppress(Exception):
                async with asyncio.timeout(METADATA_REFRESH_S):
                    await self.admin._client.force_metadata_update()
            await asyncio.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")
