"""Fixtures of the bus contract suite: started buses on the test's private log.

Group tests use short session timeouts (1 s), so leadership moves quickly when
a member dies; the test broker allows them (``group.min.session.timeout.ms``
is 500 ms in ``ops/kafka``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from contract_support import SESSION_TIMEOUT_MS, OpenBus

from services.bus import Bus, open_bus


@pytest.fixture
async def open_test_bus(bus_url: Callable[..., str]) -> AsyncIterator[OpenBus]:
    """Open more buses on the same log (as separate processes would)."""
    buses: list[Bus] = []

    async def opener(**options: object) -> Bus:
        bus = open_bus(bus_url(session_timeout_ms=SESSION_TIMEOUT_MS, **options))
        await bus.start()
        buses.append(bus)
        return bus

    yield opener
    for bus in reversed(buses):
        await bus.close()


@pytest.fixture
async def bus(open_test_bus: OpenBus) -> Bus:
    return await open_test_bus()

