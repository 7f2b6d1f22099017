"""The bus: draplane's log behind one port (`services.bus.port`), two drivers.

``open_bus(url)`` is the one way in. It picks the driver from the URL scheme
and imports it only then, so that an embedded deployment never loads aiokafka
and the rest of the code base depends on the port alone::

    bus = open_bus("sqlite:///var/lib/draplane/bus.db")
    bus = open_bus("kafka://kafka-0:9092,kafka-1:9092?prefix=staging-")
    await bus.start()
    ...
    await bus.close()

See `services.bus.urls` for the URL grammar and the options.
"""

from __future__ import annotations

import importlib
from typing import Any

from services.bus.port import (
    BEGINNING,
    END,
    Bus,
    BusError,
    BusUnavailable,
    Consumer,
    GroupMember,
    OffsetsMoved,
    OutRecord,
    Producer,
    ProducerFenced,
    Record,
    RecordTooLarge,
    StartAt,
    TopicMismatch,
    TopicSpec,
    Transaction,
)
from services.bus.urls import KafkaTarget, parse_bus_url

__all__ = [
    "BEGINNING",
    "END",
    "Bus",
    "BusError",
    "BusUnavailable",
    "Consumer",
    "GroupMember",
    "OffsetsMoved",
    "OutRecord",
    "Producer",
    "ProducerFenced",
    "Record",
    "RecordTooLarge",
    "StartAt",
    "TopicMismatch",
    "TopicSpec",
    "Transaction",
    "open_bus",
]

# Drivers by scheme, imported by name on first use (kine's "drivers/" idea):
# only the chosen driver's dependencies are loaded.
_DRIVERS = {
    "kafka": ("services.bus.kafka", "KafkaBus"),
    "sqlite": ("services.bus.embedded", "EmbeddedBus"),
}


def open_bus(url: str, **options: Any) -> Bus:
    """A bus (not yet started) for ``url``; ``options`` override URL query options.

    Raises ValueError for a malformed URL or an unknown option.
    """
    target = parse_bus_url(url, options)
    module, name = _DRIVERS["kafka" if isinstance(target, KafkaTarget) else "sqlite"]
    driver = getattr(importlib.import_module(module), name)
    bus: Bus = driver(target, url=url)
    return bus
