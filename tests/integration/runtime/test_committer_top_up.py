"""The committer's next batch takes every request read by the time the current batch has committed.

The fetch for the next batch runs while the current one commits, and returns as
soon as one request is there. Requests that come later in that commit are
already read when it ends: they join the next batch (`Committer._top_up`)
instead of waiting for it to commit first. Here a batch is held mid-commit
(`StallingBus`) while one request is fetched and another comes after it.
"""

from __future__ import annotations

import asyncio
import contextlib

from runtime_support import ADMIN, StallingBus, claim

from services.apiserver.admission_chain import build_admission
from services.apiserver.committer_hooks import wired_core
from services.bus import Bus
from services.runtime.client import Client
from services.runtime.committer import Committer
from services.runtime.committer_core import Outcome
from tests.support.eventually import eventually
from topics.declarations import REQUESTS

GROUP, RESOURCE = "resource.k8s.io", "resourceclaims"
# A Kafka consumer buffers what its parked fetch was answered with a moment after a second
# reader sees it; the committer's read of what is already there must find it buffered.
KAFKA_BUFFERED_S = 0.3


async def _requests_end_after(bus: Bus, before: int) -> int:
    return await eventually(
        lambda: bus.end_offset(REQUESTS), until=lambda end: end > before, what="the request appended", interval=0.01
    )


async def test_a_request_that_comes_after_the_next_fetch_returned_joins_that_batch(bus: Bus, url: str) -> None:
    stalling = StallingBus(bus)
    batches: list[list[str]] = []

    def on_batch(outcomes: list[Outcome]) -> None:
        batches.append([o.request.name for o in outcomes])

    committer = Committer(stalling.as_bus(), wired_core(admission=build_admission()), on_batch=on_batch)
    task = asyncio.create_task(committer.run())
    client = Client(bus, user=ADMIN, timeout=30.0)
    await client.start()
    try:
        await asyncio.wait_for(committer.is_leader.wait(), 30)
        stalling.armed = True
        end = await bus.end_offset(REQUESTS)
        first = asyncio.create_task(client.create(GROUP, RESOURCE, claim("first")))
        await asyncio.wait_for(stalling.held.wait(), 30)  # its batch: records sent, not committed

        fetched = asyncio.create_task(client.create(GROUP, RESOURCE, claim("fetched")))
        end = await _requests_end_after(bus, end + 1)
        consumer = stalling.members[-1].consumer
        await eventually(consumer.position, until=lambda at: at >= end, what="the next fetch returned", interval=0.01)

        later = asyncio.create_task(client.create(GROUP, RESOURCE, claim("later")))
        end = await _requests_end_after(bus, end)
        if url.startswith("kafka://"):
            await asyncio.sleep(KAFKA_BUFFERED_S)
        stalling.release.set()
        await asyncio.wait_for(asyncio.gather(first, fetched, later), 30)
    finally:
        await client.close()
        committer.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert batches == [["first"], ["fetched", "later"]]
