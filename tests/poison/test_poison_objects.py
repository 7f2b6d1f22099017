"""Malformed records in `objects` are skipped — logged, counted — and lose nothing, on both backends.

Only the committer writes `objects`, so a bad record there means a bug, a
foreign writer or damage. Every reader of the topic meets it: the informers
(live, and a fresh one reading from the start), a committer recovering its
index, and `draplane replay`. Each must log the record's topic and offset,
count it in ``draplane_malformed_records_total{topic="objects"}``, skip it,
and go on serving what was committed before and after.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import pytest

from services.apiserver.admission_chain import build_admission
from services.apiserver.committer_hooks import wired_core
from services.replay.output import ReplayedRecord
from services.replay.replayer import replay
from services.runtime.committer import Committer
from services.testing.harness import LogHarness
from tests.conftest import BusUrl
from tests.poison.poison_support import Poison, envelope, inject, malformed_count, skipped_offsets
from topics.declarations import OBJECTS

RES = "resource.k8s.io"
NS = "poison"


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}}


def object_poisons() -> list[Poison]:
    """One record of each kind of damage (both backends refuse keyless records on a compacted topic)."""
    return [
        Poison("bad JSON", b"core/pods/poison/bad-json", b'{"v": 1, "type": "ADDED", "object": {'),
        Poison("empty value", b"core/pods/poison/empty", b""),
        Poison("not an object", b"core/pods/poison/array", b"[1, 2, 3]"),
        Poison("wrong schema version", b"core/pods/poison/v2", envelope(v=2, type="ADDED", object=_pod("v2"))),
        Poison("no schema version", b"core/pods/poison/v0", envelope(type="ADDED", object=_pod("v0"))),
        Poison("missing metadata", b"core/pods/poison/no-meta", envelope(v=1, type="ADDED", object={"kind": "Pod"})),
        Poison("metadata not an object", b"core/pods/poison/meta", envelope(v=1, type="ADDED", object={"metadata": 7})),
        Poison("unknown event type", b"core/pods/poison/boom", envelope(v=1, type="EXPLODED", object=_pod("boom"))),
        Poison("unhashable event type", b"core/pods/poison/list", envelope(v=1, type=[], object=_pod("list"))),
        Poison("bad key", b"garbage", envelope(v=1, type="ADDED", object=_pod("ghost-1"))),
        Poison("key not UTF-8", b"core/pods/poison/\xff\xfe", envelope(v=1, type="ADDED", object=_pod("ghost-2"))),
        Poison("empty key", b"", envelope(v=1, type="ADDED", object=_pod("ghost-3"))),
        # A damaged DELETED of a committed object must not delete it.
        Poison(
            "damaged delete",
            f"{RES}/resourceclaims/{NS}/before".encode(),
            envelope(v=2, type="DELETED", object={"metadata": {"name": "before", "namespace": NS}}),
        ),
    ]


def _claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{RES}/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }


async def _restart_committer(log: LogHarness) -> None:
    """Replace the harness's committer by a new one, which rebuilds its index from `objects`."""
    log.committer.stop()
    log.committer_task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await log.committer_task
    committer = Committer(log.bus, wired_core(admission=build_admission()))
    log.committer, log.committer_task = committer, asyncio.create_task(committer.run(), name="committer-2")
    await asyncio.wait_for(committer.is_leader.wait(), 60)


GHOSTS = {"ghost-1", "ghost-2", "ghost-3", "v2", "v0", "boom", "list", "bad-json", "empty", "array", "no-meta", "meta"}


async def test_poison_in_objects_is_skipped_logged_counted_and_nothing_is_lost(
    bus_url: BusUrl, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    poisons = object_poisons()
    async with LogHarness.running(bus_url()) as log:
        client = await log.client()
        informer = client.informer
        assert informer is not None
        await client.create("", "namespaces", {"metadata": {"name": NS}})
        before = await client.create(RES, "resourceclaims", _claim("before"))

        # The live informer meets the poison.
        counted = malformed_count(OBJECTS)
        offsets = await inject(log.bus, OBJECTS, poisons)
        assert len(offsets) == len(poisons)
        await informer.wait_for(offsets[-1], timeout=30)
        assert skipped_offsets(caplog, logger="services.runtime.informer", topic=OBJECTS) == offsets
        assert malformed_count(OBJECTS) - counted == len(poisons)
        assert {name for _, name in informer.store("", "pods").keys()} & GHOSTS == set()
        assert client.get(RES, "resourceclaims", NS, "before") == before

        # Writes still commit, and the committer still knows what was committed before.
        after = await client.create(RES, "resourceclaims", _claim("after"))
        relabelled = await client.update(
            RES, "resourceclaims", {**before, "metadata": {**before["metadata"], "labels": {"seen": "poison"}}}
        )
        assert int(relabelled["metadata"]["resourceVersion"]) > offsets[-1]
        assert client.get(RES, "resourceclaims", NS, "after") == after

        # A new committer rebuilds its index from the log: it skips the same records.
        caplog.clear()
        counted = malformed_count(OBJECTS)
        await _restart_committer(log)
        assert skipped_offsets(caplog, logger="services.runtime.committer", topic=OBJECTS) == offsets
        assert malformed_count(OBJECTS) - counted == len(poisons)
        index_keys = set(log.committer.core.index.entries)
        assert f"{RES}/resourceclaims/{NS}/before" in index_keys
        assert f"{RES}/resourceclaims/{NS}/after" in index_keys
        assert not {key for key in index_keys if key.rsplit("/", 1)[-1] in GHOSTS or key == "garbage"}
        # ... and it commits: an update at the current resourceVersion proves its index is exact.
        relabelled = await client.update(
            RES, "resourceclaims", {**relabelled, "metadata": {**relabelled["metadata"], "labels": {"again": "yes"}}}
        )
        await client.delete(RES, "resourceclaims", NS, "after")
        last = await client.create(RES, "resourceclaims", _claim("last"))

        # A fresh informer reading the whole log skips them too, and sees every committed object.
        caplog.clear()
        counted = malformed_count(OBJECTS)
        fresh = await log.informer()
        await fresh.wait_for(int(last["metadata"]["resourceVersion"]), timeout=30)
        assert skipped_offsets(caplog, logger="services.runtime.informer", topic=OBJECTS) == offsets
        assert malformed_count(OBJECTS) - counted == len(poisons)
        claims = {obj["metadata"]["name"]: obj for obj in fresh.store(RES, "resourceclaims").list()}
        assert set(claims) == {"before", "last"}
        assert claims["before"]["metadata"]["labels"] == {"again": "yes"}
        assert {name for _, name in fresh.store("", "namespaces").keys()} >= {"default", NS}
        assert {name for _, name in fresh.store("", "pods").keys()} & GHOSTS == set()

        # `draplane replay` prints every good record and skips the bad ones.
        caplog.clear()
        counted = malformed_count(OBJECTS)
        emitted: list[ReplayedRecord] = []
        await replay(log.bus, emit=emitted.append)
        assert skipped_offsets(caplog, logger="services.replay.replayer", topic=OBJECTS) == offsets
        assert malformed_count(OBJECTS) - counted == len(poisons)
        replayed_offsets = {r.offset for r in emitted}
        assert replayed_offsets.isdisjoint(offsets)
        assert int(before["metadata"]["resourceVersion"]) in replayed_offsets
        assert int(last["metadata"]["resourceVersion"]) in replayed_offsets
