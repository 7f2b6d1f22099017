"""What the parts of one Kafka bus share: names, settings, client options, topic metadata.

Topic existence is checked through a metadata request for *all* topics:
aiokafka asks for named topics with ``allow_auto_topic_creation`` set, which
on a broker with ``auto.create.topics.enable`` would create an undeclared
topic with default settings. draplane's topics are declared, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient

from services.bus.kafka.config import KafkaSettings
from services.bus.kafka.errors import UnknownTopic, translated


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
        with translated("reading cluster metadata"):
            topics = await self.admin.describe_topics(None)
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
