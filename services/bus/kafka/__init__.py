"""The Kafka adapter: the bus port on Apache Kafka through aiokafka.

This package is the only importer of aiokafka in draplane (import-linter keeps
it so); everything else reaches Kafka through `services.bus.open_bus`.
"""

from services.bus.kafka.bus import KafkaBus

__all__ = ["KafkaBus"]
