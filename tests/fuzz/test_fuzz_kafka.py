"""A smaller fuzz run against a stack on Kafka: what differs there is the log, so the cases are writes.

The bulk of the fuzzing runs on the embedded log (see the other modules).
Kafka adds its own ways to fail — records have a size limit, sends can be
refused by the broker — so mutated creates and updates of every kind, huge
bodies among them, go through a Kafka-backed stack too, with the same
properties (a Status, never a 5xx, the server still serving afterwards).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.fuzz_support import FIXTURE, KINDS, FuzzApi, collection_path, fuzz_settings, object_path, one_in, rt_of
from tests.fuzz.mutations import base_manifest, encode, mutate
from tests.fuzz.target import TOKEN, seed
from tests.security.apiservers import running_apiserver

pytestmark = [pytest.mark.kafka, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fuzz_server(tmp_path_factory: pytest.TempPathFactory, kafka_bootstrap: str) -> AsyncIterator[FuzzApi]:
    """The module's target, on Kafka (overrides the embedded one of conftest)."""
    root: Path = tmp_path_factory.mktemp("fuzz-kafka")
    bus = f"kafka://{kafka_bootstrap}?prefix=fuzz{uuid.uuid4().hex[:10]}-"
    async with running_apiserver(root, bus_url=bus, tokens=f'{TOKEN},fuzz-admin,uid-fuzz,"system:masters"\n') as srv:
        async with aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {TOKEN}"}, timeout=aiohttp.ClientTimeout(total=90)
        ) as session:
            api = FuzzApi(srv.url, session)
            await seed(api)
            yield api


HUGE = 1_500_000  # over Kafka's 1 MiB record limit, under the 3 MiB body limit


@fuzz_settings(80)
@given(data=st.data())
async def test_mutated_writes_on_kafka_get_a_status_never_a_5xx(api: FuzzApi, data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(KINDS), label="kind")
    rt = rt_of(kind)
    fixture = f"{FIXTURE}-ns" if kind == "Namespace" else FIXTURE
    if data.draw(st.booleans(), label="create?"):
        method, path, base = "POST", collection_path(rt), base_manifest(kind)
    else:
        method, path, base = "PUT", object_path(rt, fixture), base_manifest(kind, fixture)
    doc = mutate(data, base)
    if data.draw(one_in(8), label="huge?") and isinstance(doc, dict):
        doc.setdefault("metadata", {})
        if isinstance(doc["metadata"], dict):
            doc["metadata"]["annotations"] = {"example.com/huge": "x" * HUGE}
    body = encode(data, doc)
    await api.send("kafka: manifest write", method, path, body=body.data, content_type=body.content_type)
