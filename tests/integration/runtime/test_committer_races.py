"""Compare-and-set under contention: 200 writers, 10 keys, read-modify-write with resourceVersion preconditions.

Every writer reads a claim from the shared informer, increments a counter in
an annotation and updates it with the resourceVersion it read. A writer that
lost the race gets 409 Conflict and tries again. The final counters must equal
the number of successful updates, and the log itself must show each key's
counter going 1, 2, 3, … with no value written twice (a lost update) or
skipped.
"""

from __future__ import annotations

import asyncio
import copy
from collections import Counter

from runtime_support import entries, request_id_counts

from services.api.machinery.status import StatusError
from services.runtime.client import Client
from services.testing.harness import ADMIN, LogHarness
from tests.support.log_reading import read_topic

WRITERS = 200
KEYS = 10
INCREMENTS = 2  # successful updates per writer
CLIENTS = 8  # writers share clients (each client is a producer and a reply consumer)
GROUP, RESOURCE = "resource.k8s.io", "resourceclaims"


def counter_claim(name: str) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "annotations": {"count": "0"}},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }


async def test_concurrent_read_modify_write_loses_no_update(log: LogHarness) -> None:
    informer = await log.informer()
    clients: list[Client] = [await log.client(ADMIN, informer=informer) for _ in range(CLIENTS)]
    names = [f"counter-{k}" for k in range(KEYS)]
    for name in names:
        await clients[0].create(GROUP, RESOURCE, counter_claim(name))

    successes: Counter[str] = Counter()
    conflicts: Counter[str] = Counter()
    go = asyncio.Event()

    async def writer(client: Client, name: str) -> None:
        await go.wait()
        done = 0
        while done < INCREMENTS:
            current = client.get(GROUP, RESOURCE, "default", name)
            assert current is not None
            new = copy.deepcopy(current)
            annotations = new["metadata"]["annotations"]
            annotations["count"] = str(int(annotations["count"]) + 1)
            try:
                await client.update(GROUP, RESOURCE, new)
            except StatusError as err:
                # The only acceptable failure: someone else's update got in first.
                assert (err.code, err.status.get("reason")) == (409, "Conflict"), err.status
                conflicts[name] += 1
                continue
            successes[name] += 1
            done += 1

    tasks = [asyncio.create_task(writer(clients[i % CLIENTS], names[i % KEYS])) for i in range(WRITERS)]
    go.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 180)

    per_key = WRITERS // KEYS * INCREMENTS
    assert successes == dict.fromkeys(names, per_key)
    assert sum(conflicts.values()) > 0, "the writers never raced"
    for name in names:
        final = clients[0].get(GROUP, RESOURCE, "default", name)
        assert final is not None and final["metadata"]["annotations"]["count"] == str(per_key)

    # The log: per key, the counter goes 0 (create), 1, 2, ... per_key, one record each.
    log_entries = entries(await read_topic(log.bus))
    for name in names:
        key = f"{GROUP}/{RESOURCE}/default/{name}"
        counts = [int(e.object["metadata"]["annotations"]["count"]) for e in log_entries if e.key == key]
        assert counts == list(range(per_key + 1))
    assert max(request_id_counts(log_entries).values()) == 1
