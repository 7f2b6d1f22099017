"""Malformed records in `requests` and `replies`: answered with 400 when possible, skipped otherwise.

The committer reads `requests` from every writer. A record that is not a
request envelope is logged with its topic and offset and counted; when its
``id`` and ``replyTo`` can still be read, the requester gets a 400 BadRequest
Status on `replies` instead of waiting for a timeout; when they cannot, no
one is waiting for an answer and the record is skipped. Requests after the
poison — in the same batch or later ones — commit normally. A client meeting
a malformed reply skips it the same way and keeps receiving its replies.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
import pytest

from services.api.machinery.status import StatusError
from services.testing.harness import LogHarness
from tests.conftest import BusUrl
from tests.poison.poison_support import Poison, envelope, inject, malformed_count, read_until, skipped_offsets
from topics.declarations import REPLIES, REQUESTS
from topics.envelope import decode_reply

RES = "resource.k8s.io"
NS = "poison"
SINK = "poison-sink"  # the reply-to of every poison request; no client listens on it
USER = {"name": "system:admin", "groups": ["system:masters"]}


def _request(**fields: Any) -> bytes:
    doc: dict[str, Any] = {
        "v": 1,
        "op": "create",
        "group": "",
        "version": "v1",
        "resource": "namespaces",
        "namespace": "",
        "name": "from-poison",
        "user": USER,
        "replyTo": SINK,
        "object": {"metadata": {"name": "from-poison"}},
    }
    doc.update(fields)
    return orjson.dumps({k: v for k, v in doc.items() if v is not ...})


# (poison, the 400 message it gets, or None when it cannot be answered)
REQUEST_POISONS: list[tuple[Poison, str | None]] = [
    (Poison("bad JSON", b"k", b'{"v": 1, "id": "lost", "replyTo": "poison-sink", '), None),
    (Poison("empty value", b"k", b""), None),
    (Poison("not an object", b"k", b'[{"id": "lost", "replyTo": "poison-sink"}]'), None),
    (Poison("no id", b"k", _request(op="explode")), None),
    (Poison("id not a string", b"k", _request(id=7, op="explode")), None),
    (Poison("no replyTo", b"k", _request(id="lost", replyTo=..., op="explode")), None),
    (Poison("unknown op", b"k", _request(id="p-op", op="explode")), "unknown request op 'explode'"),
    (Poison("unhashable op", b"k", _request(id="p-op-list", op=["create"])), "unknown request op ['create']"),
    (
        Poison("unknown patch type", b"k", _request(id="p-patch", op="patch", patchType="xml", patch={})),
        "unknown request patchType 'xml'",
    ),
    (
        Poison("wrong schema version", b"k", _request(id="p-v", v=2)),
        "unsupported envelope schema version 2",
    ),
    (Poison("name not a string", b"k", _request(id="p-name", name=5)), "request field 'name' must be a string"),
    (Poison("object not an object", b"k", _request(id="p-obj", object=[1])), "request object must be an object"),
    (
        Poison("options not an object", b"k", _request(id="p-opt", options="dryRun")),
        "request options must be an object",
    ),
    (
        Poison(
            "option of the wrong type", b"k", _request(id="p-grace", op="delete", options={"gracePeriodSeconds": "1"})
        ),
        "request option 'gracePeriodSeconds' has the wrong type",
    ),
    (Poison("user missing", b"k", _request(id="p-user", user=...)), "request user is missing"),
    (
        Poison("groups not strings", b"k", _request(id="p-groups", user={"name": "u", "groups": [1]})),
        "request user groups must be strings",
    ),
]


async def test_poison_in_requests_gets_400_or_is_skipped_and_later_writes_commit(
    bus_url: BusUrl, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with LogHarness.running(bus_url()) as log:
        client = await log.client()
        await client.create("", "namespaces", {"metadata": {"name": NS}})
        replies_from = await log.bus.end_offset(REPLIES)
        counted = malformed_count(REQUESTS)

        offsets = await inject(log.bus, REQUESTS, [p for p, _ in REQUEST_POISONS])
        # A request sent after the poison commits: it is read in the same batch or a later one.
        claim = await client.create(
            RES,
            "resourceclaims",
            {
                "metadata": {"name": "after", "namespace": NS},
                "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
            },
        )
        assert claim["metadata"]["uid"]

        # Skipped, logged with topic and offset, counted.
        assert skipped_offsets(caplog, logger="services.runtime.committer", topic=REQUESTS) == offsets
        assert malformed_count(REQUESTS) - counted == len(REQUEST_POISONS)

        # Replies of the poison's batch committed with the claim's: every 400 is there, and nothing else.
        consumer = await log.bus.consumer(REPLIES, start=replies_from)
        try:
            records = await read_until(consumer, await log.bus.end_offset(REPLIES))
        finally:
            await consumer.close()
        answered = {}
        for record in records:
            if record.key == SINK.encode():
                reply = decode_reply(record.value or b"")
                answered[reply.id] = reply
        expected = {orjson.loads(p.value)["id"]: message for p, message in REQUEST_POISONS if message is not None}
        assert set(answered) == set(expected)
        for request_id, message in expected.items():
            reply = answered[request_id]
            assert reply.code == 400 and reply.object is None
            assert reply.status is not None
            assert reply.status["kind"] == "Status" and reply.status["reason"] == "BadRequest"
            assert reply.status["code"] == 400
            assert reply.status["message"] == f"malformed request: {message}"

        # No poison wrote anything.
        assert client.get("", "namespaces", "", "from-poison") is None
        assert client.get(RES, "resourceclaims", NS, "after") == claim


async def test_a_malformed_reply_is_skipped_by_the_client(bus_url: BusUrl, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    async with LogHarness.running(bus_url()) as log:
        client = await log.client()
        await client.create("", "namespaces", {"metadata": {"name": NS}})
        counted = malformed_count(REPLIES)
        mine = client.requester_id.encode()
        offsets = await inject(
            log.bus,
            REPLIES,
            [
                Poison("bad JSON", mine, b"{nope"),
                Poison("no code", mine, envelope(v=1, id="x")),
                Poison("status not an object", mine, envelope(v=1, id="x", code=200, status="ok")),
            ],
        )
        # The client reads replies in order: once this write's reply arrived, the poison was met.
        created = await client.create("", "namespaces", {"metadata": {"name": "after-bad-reply"}})
        assert created["metadata"]["name"] == "after-bad-reply"
        # Whichever part of the runtime reads this process's replies logs them.
        assert skipped_offsets(caplog, logger="services.runtime", topic=REPLIES) == offsets
        assert malformed_count(REPLIES) - counted == len(offsets)


def _labelled_class(name: str, labels: int) -> dict[str, Any]:
    """A DeviceClass whose labels make its stored record (with managedFields) about twice its request."""
    return {
        "metadata": {"name": name, "labels": {f"example.com/label-{i:06d}-{'x' * 30}": "v" for i in range(labels)}},
        "spec": {},
    }


async def test_a_write_too_large_for_a_record_is_refused_413_and_the_committer_goes_on(bus_url: BusUrl) -> None:
    """On Kafka a record is limited (1 MiB); a request that fits but whose object does not once stopped the
    committer for good — every committer that read it failed its transaction again. The embedded log has no
    such limit, so there the same write succeeds."""
    async with LogHarness.running(bus_url()) as log:
        client = await log.client()
        # Sent together, so that the big one shares a batch with small ones.
        results = await asyncio.gather(
            client.create(RES, "deviceclasses", _labelled_class("small-1", 1)),
            # With a field manager, managedFields list every label again: the request fits, the object not.
            client.create(RES, "deviceclasses", _labelled_class("huge", 12_000), fieldManager="poison-test"),
            client.create(RES, "deviceclasses", _labelled_class("small-2", 1)),
            return_exceptions=True,
        )
        small_1, huge, small_2 = results
        assert isinstance(small_1, dict) and isinstance(small_2, dict), results
        if bus_url.backend == "kafka":
            assert isinstance(huge, StatusError), huge
            assert huge.status["code"] == 413 and huge.status["reason"] == "RequestEntityTooLarge"
            assert (
                huge.status["message"] == "Request entity too large: the object does not fit in one record of the log"
            )
            assert client.get(RES, "deviceclasses", "", "huge") is None
        else:
            assert isinstance(huge, dict) and huge["metadata"]["name"] == "huge"
        assert not log.committer_task.done()
        later = await client.create(RES, "deviceclasses", _labelled_class("later", 1))
        assert later["metadata"]["uid"]
