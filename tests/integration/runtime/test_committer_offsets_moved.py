"""A record another writer puts in `objects` between two batches: every reply still carries its record's offset.

On Kafka the committer's producer sends a batch's replies in the same Produce
request as its records when it knows, from its last commit, the offsets the
records will get (`services.bus.kafka.producer`). A record written beside the
committer moves them: that transaction aborts (`OffsetsMoved`), and the batch is
committed again, its replies sent once the records' offsets are back. On the
embedded log the replies are computed inside the commit's own write, so there is
nothing to expect and nothing to move. On both, the resourceVersion a client gets
back is the offset at which its object was written, and no reply computed from
offsets that did not hold is ever read.
"""

from __future__ import annotations

import logging

import pytest
from runtime_support import claim

from services.bus import OutRecord
from services.testing.harness import ADMIN, LogHarness
from tests.support.log_reading import read_topic
from topics.declarations import OBJECTS, REPLIES
from topics.envelope import decode_reply

GROUP, CLAIMS = "resource.k8s.io", "resourceclaims"


async def test_replies_carry_their_records_offsets_after_another_writer_moved_the_log(
    log: LogHarness, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = await log.client(ADMIN)
    await client.create(GROUP, CLAIMS, claim("before"))  # a commit: the producer knows where `objects` goes on
    stray = await log.bus.producer()
    await stray.send([OutRecord(OBJECTS, b"stray", b"not an event")])
    with caplog.at_level(logging.WARNING, logger="services.runtime.committer"):
        moved = await client.create(GROUP, CLAIMS, claim("moved"))
    after = await client.create(GROUP, CLAIMS, claim("after"))  # expected again from the retry's commit

    offsets = {
        record.key.decode().rsplit("/", 1)[-1]: record.offset
        for record in await read_topic(log.bus)
        if record.key is not None and record.value is not None and record.key != b"stray"
    }
    assert moved["metadata"]["resourceVersion"] == str(offsets["moved"])
    assert after["metadata"]["resourceVersion"] == str(offsets["after"])
    # Every reply read carries an offset that holds: none from the aborted transaction.
    versions = [
        reply.object["metadata"]["resourceVersion"]
        for record in await read_topic(log.bus, REPLIES)
        if record.value is not None
        for reply in [decode_reply(record.value)]
        if reply.object is not None and reply.object.get("metadata", {}).get("name") in {"moved", "after"}
    ]
    assert versions == [str(offsets["moved"]), str(offsets["after"])]
    retried = "the log's offsets moved under a batch" in caplog.text
    assert retried == url.startswith("kafka://")
