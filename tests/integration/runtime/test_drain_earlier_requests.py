"""A successor waits for what its predecessor left on `requests` (the scheduler does, before scheduling).

Found by ``ops/chaos`` on Kafka: a scheduler killed while the broker was away
left an allocation request on the log; its successor synced its informer,
which did not have the allocation yet, and gave the same GPU to another claim.
"""

from __future__ import annotations

import uuid

from services.bus import open_bus
from services.bus.port import OutRecord
from services.runtime.client import Client
from services.runtime.informer import Informer
from services.testing.harness import ADMIN, LogHarness
from topics.declarations import REQUESTS, declarations
from topics.envelope import Request, encode_request


async def test_the_reply_comes_after_every_earlier_request_is_decided_and_seen(url: str) -> None:
    bus = open_bus(url)
    await bus.start()
    try:
        await bus.ensure_topics(declarations())
        # The predecessor's last request: on the log, not yet committed, its sender gone.
        left_behind = Request(
            id=uuid.uuid4().hex,
            op="create",
            group="",
            version="v1",
            resource="namespaces",
            namespace="",
            name="team-a",
            user=ADMIN,
            reply_to="system:admin/gone",
            object={"metadata": {"name": "team-a"}},
        )
        producer = await bus.producer()
        await producer.send([OutRecord(REQUESTS, left_behind.key.encode(), encode_request(left_behind))])
        await producer.close()

        # The successor syncs before any committer has run: its view lacks the namespace.
        informer = Informer(bus)
        await informer.start()
        await informer.wait_synced(timeout=30)
        assert informer.store("", "namespaces").get("", "team-a") is None

        async with LogHarness.running(url):
            client = Client(bus, user=ADMIN, informer=informer, timeout=30)
            await client.start()
            try:
                reply = await client.drain_earlier_requests()
                assert reply.code in (403, 404)  # the barrier itself writes nothing
                assert informer.store("", "namespaces").get("", "team-a") is not None
                assert informer.store("", "pods").list() == []
            finally:
                await client.close()
        await informer.stop()
    finally:
        await bus.close()
