"""A task cancelled at the moment what it waits for arrives is still cancelled.

On Python 3.11 ``asyncio.wait_for`` returns the result instead when both
happen in the same loop iteration, so a worker loop that is being stopped
carries on and ``await task`` after ``task.cancel()`` never returns (a stuck
test teardown, a component that does not stop). The waits use
``asyncio.timeout`` instead.
"""

from __future__ import annotations

import asyncio

import pytest

from services.runtime.informer import Informer


class _NoBus:
    """The informer is never started here; only its waiters are used."""


async def test_informer_wait_for_does_not_swallow_a_cancellation() -> None:
    informer = Informer(_NoBus(), name="cancellation")  # type: ignore[arg-type]
    waiting = asyncio.create_task(informer.wait_for(5, timeout=10))
    await asyncio.sleep(0)  # parked on its waiter
    informer.position = 6
    informer._release_waiters()  # the record arrives ...
    waiting.cancel()  # ... as the caller is being stopped
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert waiting.cancelled()


async def test_informer_wait_synced_does_not_swallow_a_cancellation() -> None:
    informer = Informer(_NoBus(), name="cancellation")  # type: ignore[arg-type]
    waiting = asyncio.create_task(informer.wait_synced(timeout=10))
    await asyncio.sleep(0)
    informer.synced.set()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
