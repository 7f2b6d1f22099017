"""Fixtures of the runtime integration tests: a running log core on each backend.

Every test here runs on the embedded log and on Kafka (``bus_url``); group
sessions are short (1 s) so that leadership moves quickly when a committer
dies. The committer runs the admission chain `draplane apiserver` runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from services.bus import Bus, open_bus
from services.testing.harness import LogHarness
from topics.declarations import declarations

SESSION_TIMEOUT_MS = 1000


@pytest.fixture
def url(bus_url: Callable[..., str]) -> str:
    """The test's private log, with short group sessions."""
    return bus_url(session_timeout_ms=SESSION_TIMEOUT_MS)


@pytest.fixture
async def bus(url: str) -> AsyncIterator[Bus]:
    """The test's private log, opened, with every declared topic."""
    bus = open_bus(url)
    await bus.start()
    await bus.ensure_topics(declarations())
    yield bus
    await bus.close()


@pytest.fixture
async def log(url: str) -> AsyncIterator[LogHarness]:
    async with LogHarness.running(url) as harness:
        yield harness
