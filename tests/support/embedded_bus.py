"""An embedded bus opened and started from its URL, for tests of the log file itself."""

from __future__ import annotations

from services.bus import TopicSpec, open_bus
from services.bus.embedded.bus import EmbeddedBus


async def started(url: str, *, declare: bool = True) -> EmbeddedBus:
    """The started bus of ``url`` (a ``sqlite://`` URL), with an ``objects`` topic unless ``declare`` is False."""
    bus = open_bus(url)
    assert isinstance(bus, EmbeddedBus)
    await bus.start()
    if declare:
        await bus.ensure_topics([TopicSpec("objects", 1)])
    return bus
