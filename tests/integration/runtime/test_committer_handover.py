"""Leadership of the committer: a standby takes over, and a fenced old leader cannot commit.

Both committers are candidates in the `requests` group; the owner of partition
0 commits. When the leader stops, the standby leads, recovers the index from
`objects` and goes on where the leader stopped. A leader that is stuck
mid-transaction while it loses partition 0 is a zombie: the new leader's
transactional producer fences it, and its late commit is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from runtime_support import ADMIN, StallingBus, claim, entries, request_id_counts

from services.api.machinery.status import StatusError
from services.apiserver.admission_chain import build_admission
from services.apiserver.committer_hooks import wired_core
from services.bus import Bus, ProducerFenced
from services.runtime.client import Client
from services.runtime.committer import Committer
from tests.support.log_reading import read_topic

GROUP, RESOURCE = "resource.k8s.io", "resourceclaims"


@pytest.fixture
async def client(bus: Bus) -> AsyncIterator[Client]:
    client = Client(bus, user=ADMIN, timeout=2.0, attempts=30)
    await client.start()
    yield client
    await client.close()


@contextlib.asynccontextmanager
async def candidate(bus: Bus, name: str) -> AsyncIterator[tuple[Committer, asyncio.Task[None]]]:
    committer = Committer(bus, wired_core(admission=build_admission()), member_id=name)
    task = asyncio.create_task(committer.run(), name=name)
    try:
        yield committer, task
    finally:
        committer.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_standby_takes_over_when_the_leader_stops(bus: Bus, client: Client) -> None:
    async with contextlib.AsyncExitStack() as stack:
        first, first_task = await stack.enter_async_context(candidate(bus, "first"))
        await asyncio.wait_for(first.is_leader.wait(), 30)
        second, _ = await stack.enter_async_context(candidate(bus, "second"))  # joins once the first leads
        created = await client.create(GROUP, RESOURCE, claim("handover", step="1"))
        assert first.batches >= 1 and not second.is_leader.is_set()

        first.stop()
        first_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first_task
        await asyncio.wait_for(second.is_leader.wait(), 30)

        # The new leader knows the object and its resourceVersion: it recovered the index.
        created["metadata"]["annotations"]["step"] = "2"
        updated = await client.update(GROUP, RESOURCE, created)
        assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
        assert updated["metadata"]["uid"] == created["metadata"]["uid"]
        with pytest.raises(StatusError) as stale:
            await client.update(GROUP, RESOURCE, created)  # still carries the old resourceVersion
        assert stale.value.code == 409
        with pytest.raises(StatusError) as exists:
            await client.create(GROUP, RESOURCE, claim("handover"))
        assert exists.value.code == 409 and exists.value.status["reason"] == "AlreadyExists"
        assert second.batches >= 3


async def test_a_fenced_old_leader_cannot_commit(bus: Bus, client: Client) -> None:
    stalling = StallingBus(bus)
    async with contextlib.AsyncExitStack() as stack:
        old, _ = await stack.enter_async_context(candidate(stalling.as_bus(), "old"))
        await asyncio.wait_for(old.is_leader.wait(), 30)
        new, _ = await stack.enter_async_context(candidate(bus, "new"))  # joins once the old one leads
        before = [await client.create(GROUP, RESOURCE, claim(f"before-{i}")) for i in range(3)]

        # The old leader holds its next batch mid-transaction (records sent, nothing committed) ...
        stalling.armed = True
        pending = [asyncio.create_task(client.create(GROUP, RESOURCE, claim(f"during-{i}"))) for i in range(5)]
        await asyncio.wait_for(stalling.held.wait(), 30)
        # ... and loses partition 0 without noticing, as if its session had run out while it hung.
        await stalling.members[-1].close()
        await asyncio.wait_for(new.is_leader.wait(), 30)
        during = await asyncio.wait_for(asyncio.gather(*pending), 60)

        # The zombie wakes up and tries to finish its transaction: fenced.
        stalling.release.set()
        await asyncio.wait_for(stalling.ended.wait(), 30)
        assert len(stalling.endings) == 1 and isinstance(stalling.endings[0], ProducerFenced)
        assert new.is_leader.is_set()
        after = await client.create(GROUP, RESOURCE, claim("after"))

    log = entries(await read_topic(bus))
    claims = {e.object["metadata"]["name"]: e for e in log if e.key.startswith(f"{GROUP}/{RESOURCE}/")}
    assert sorted(claims) == sorted(o["metadata"]["name"] for o in [*before, *during, after])
    for obj in [*before, *during, after]:
        assert claims[obj["metadata"]["name"]].offset == int(obj["metadata"]["resourceVersion"])
    assert max(request_id_counts(log).values()) == 1
