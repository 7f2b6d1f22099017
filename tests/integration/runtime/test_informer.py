"""Informers over the log: every change of a key reaches the handlers in order; a restart reads only the tail."""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY
from runtime_support import claim, entries

from services.bus import Bus
from services.runtime.client import Client
from services.runtime.informer import Informer
from services.runtime.snapshot import SnapshotStore
from services.testing.harness import LogHarness
from tests.support.log_reading import read_topic

GROUP, RESOURCE = "resource.k8s.io", "resourceclaims"
PREFIX = f"{GROUP}/{RESOURCE}/default/"
Obj = dict[str, Any]


@dataclass
class Recorder:
    """A handler that writes down what it was told: (event, name, resourceVersion, old resourceVersion)."""

    seen: list[tuple[str, str, int, int | None]] = field(default_factory=list)

    def on_add(self, obj: Obj) -> None:
        self.seen.append(("ADD", obj["metadata"]["name"], _rv(obj), None))

    def on_update(self, old: Obj, new: Obj) -> None:
        self.seen.append(("UPDATE", new["metadata"]["name"], _rv(new), _rv(old)))

    def on_delete(self, obj: Obj) -> None:
        self.seen.append(("DELETE", obj["metadata"]["name"], _rv(obj), None))

    def of(self, name: str) -> list[tuple[str, int, int | None]]:
        return [(event, rv, old) for event, n, rv, old in self.seen if n == name]


def _rv(obj: Obj) -> int:
    return int(obj["metadata"]["resourceVersion"])


async def churn(client: Client, name: str, updates: int) -> list[int]:
    """Create a claim, update it ``updates`` times, delete it; returns the resourceVersions the writes got."""
    obj = await client.create(GROUP, RESOURCE, claim(name, step="0"))
    rvs = [_rv(obj)]
    for step in range(1, updates + 1):
        obj = copy.deepcopy(obj)
        obj["metadata"]["annotations"]["step"] = str(step)
        obj = await client.update(GROUP, RESOURCE, obj)
        rvs.append(_rv(obj))
    await client.delete(GROUP, RESOURCE, "default", name)
    return rvs


async def test_handlers_see_every_change_of_a_key_in_order(log: LogHarness) -> None:
    watched = Informer(log.bus, name="watched")
    recorder = Recorder()
    watched.add_handler(GROUP, RESOURCE, recorder)
    await watched.start()
    await watched.wait_synced(timeout=30)
    try:
        clients = [await log.client() for _ in range(4)]
        names = [f"churn-{i}" for i in range(12)]
        written = await asyncio.gather(*(churn(clients[i % 4], name, 4) for i, name in enumerate(names)))
        end = await log.bus.end_offset("objects")
        await watched.wait_for(end - 1, timeout=30)
    finally:
        await watched.stop()

    for name, rvs in zip(names, written, strict=True):
        seen = recorder.of(name)
        assert [event for event, _, _ in seen] == ["ADD", "UPDATE", "UPDATE", "UPDATE", "UPDATE", "DELETE"]
        # Each update's object is the write the client got back, and its "old" is the write before it.
        assert [rv for _, rv, _ in seen[:-1]] == rvs
        assert [old for _, _, old in seen[1:-1]] == rvs[:-1]
        assert seen[-1][1] > rvs[-1]  # the delete is a later record ...
    # ... and everything the handler saw is exactly what the log holds, in log order, per key.
    log_entries = [e for e in entries(await read_topic(log.bus)) if e.key.startswith(PREFIX)]
    kinds = {"ADDED": "ADD", "MODIFIED": "UPDATE", "DELETED": "DELETE"}
    for name in names:
        in_log = [(kinds[e.type], e.offset) for e in log_entries if e.key == PREFIX + name]
        assert [(event, rv) for event, rv, _ in recorder.of(name)] == in_log


async def test_a_restart_from_a_snapshot_reads_only_the_tail(log: LogHarness, tmp_path: Path) -> None:
    client = await log.client()
    path = tmp_path / "view.db"
    first = Informer(log.bus, snapshot=SnapshotStore(path), name="first")
    await first.start()
    await first.wait_synced(timeout=30)
    for i in range(40):
        await client.create(GROUP, RESOURCE, claim(f"early-{i}"))
    for i in range(5):
        await client.delete(GROUP, RESOURCE, "default", f"early-{i}")
    await first.wait_for(await log.bus.end_offset("objects") - 1, timeout=30)
    await first.stop()  # saves the snapshot at its position
    snapshot_offset = first.position

    # While it is down: new objects, a change of an old one, deletes of old ones.
    for i in range(6):
        await client.create(GROUP, RESOURCE, claim(f"late-{i}"))
    changed = copy.deepcopy(client.get(GROUP, RESOURCE, "default", "early-10"))
    assert changed is not None
    changed["metadata"]["annotations"]["changed"] = "yes"
    await client.update(GROUP, RESOURCE, changed)
    for i in range(5, 8):
        await client.delete(GROUP, RESOURCE, "default", f"early-{i}")
    tail = [r for r in await read_topic(log.bus) if r.offset >= snapshot_offset]

    second = Informer(log.bus, snapshot=SnapshotStore(path), name="second")
    await second.start()
    await second.wait_synced(timeout=30)
    try:
        assert second.start_offset == snapshot_offset
        assert second.records_read == len(tail)  # tombstones included: every record since the snapshot, once
        total = len(await read_topic(log.bus))
        assert len(tail) * 3 < total  # the tail is a small part of the log
        assert await same_view(second, log.bus)
        view = second.store(GROUP, RESOURCE)
        assert view.get("default", "early-10")["metadata"]["annotations"]["changed"] == "yes"  # type: ignore[index]
        assert all(view.get("default", f"early-{i}") is None for i in range(8))
        assert all(view.get("default", f"late-{i}") is not None for i in range(6))
    finally:
        await second.stop()


async def same_view(informer: Informer, bus: Bus) -> bool:
    """Whether an informer's claims equal those of a fresh one that replays the whole log."""
    fresh = Informer(bus, name="fresh")
    await fresh.start()
    await fresh.wait_synced(timeout=30)
    await fresh.stop()

    def view(i: Informer) -> dict[tuple[str, str], Obj]:
        store = i.store(GROUP, RESOURCE)
        return {key: store.get(*key) for key in store.keys()}  # type: ignore[misc]

    return view(informer) == view(fresh) and fresh.records_read > informer.records_read


@dataclass
class Failing:
    """A handler that raises on every add (after writing the name down)."""

    tried: list[str] = field(default_factory=list)

    def on_add(self, obj: Obj) -> None:
        self.tried.append(obj["metadata"]["name"])
        raise RuntimeError(f"handler broke on {obj['metadata']['name']}")

    def on_update(self, old: Obj, new: Obj) -> None: ...

    def on_delete(self, obj: Obj) -> None: ...


def handler_failures(handler: str) -> float:
    value = REGISTRY.get_sample_value(
        "draplane_informer_handler_failures_total", {"resource": f"{RESOURCE}.{GROUP}", "handler": handler}
    )
    return value or 0.0


async def test_a_handler_that_raises_is_counted_and_logged_and_the_informer_goes_on(
    log: LogHarness, caplog: pytest.LogCaptureFixture
) -> None:
    watched = Informer(log.bus, name="watched")
    failing, recorder = Failing(), Recorder()
    watched.add_handler(GROUP, RESOURCE, failing)
    watched.add_handler(GROUP, RESOURCE, recorder)
    await watched.start()
    await watched.wait_synced(timeout=30)
    before = handler_failures("add")
    try:
        client = await log.client()
        with caplog.at_level(logging.ERROR, logger="services.runtime.informer"):
            first = await client.create(GROUP, RESOURCE, claim("first"))
            second = await client.create(GROUP, RESOURCE, claim("second"))
            await watched.wait_for(_rv(second), timeout=30)
    finally:
        await watched.stop()

    # Both records were applied: the store has them, the handler after the failing one saw them,
    # and the failing handler was called again for the second after raising on the first.
    assert [o["metadata"]["name"] for o in watched.store(GROUP, RESOURCE).list()] == ["first", "second"]
    assert [(e, n, rv) for e, n, rv, _ in recorder.seen] == [
        ("ADD", "first", _rv(first)),
        ("ADD", "second", _rv(second)),
    ]
    assert failing.tried == ["first", "second"]
    assert handler_failures("add") - before == 2
    failed = [r for r in caplog.records if r.getMessage() == "informer handler failed"]
    assert len(failed) == 2
    assert all(r.exc_info and isinstance(r.exc_info[1], RuntimeError) for r in failed)
    assert "handler broke on first" in caplog.text and "Traceback" in caplog.text


class BrokenOnce:
    """A bus whose consumers raise a non-log error on their first read (a bug, a broken file), then read on."""

    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bus, name)

    async def consumer(self, *args: Any, **kwargs: Any) -> Any:
        inner = await self._bus.consumer(*args, **kwargs)
        broken = True

        class Consumer:
            def __getattr__(self, name: str) -> Any:
                return getattr(inner, name)

            async def getmany(self, **kw: Any) -> Any:
                nonlocal broken
                if broken:
                    broken = False
                    raise RuntimeError("disk I/O error")
                return await inner.getmany(**kw)

        return Consumer()


async def test_a_read_that_fails_is_counted_logged_and_retried_not_the_end_of_the_view(
    log: LogHarness, caplog: pytest.LogCaptureFixture
) -> None:
    watched = Informer(BrokenOnce(log.bus), name="broken-once")  # type: ignore[arg-type]
    before = REGISTRY.get_sample_value("draplane_informer_read_failures_total", {"informer": "broken-once"}) or 0.0
    client = await log.client()
    with caplog.at_level(logging.ERROR, logger="services.runtime.informer"):
        await watched.start()
        try:
            created = await client.create(GROUP, RESOURCE, claim("after-the-failure"))
            await watched.wait_for(_rv(created), timeout=30)
            names = [o["metadata"]["name"] for o in watched.store(GROUP, RESOURCE).list()]
        finally:
            await watched.stop()
    assert names == ["after-the-failure"]
    after = REGISTRY.get_sample_value("draplane_informer_read_failures_total", {"informer": "broken-once"})
    assert after == before + 1
    failed = [r for r in caplog.records if r.getMessage() == "informer read failed; trying again"]
    assert len(failed) == 1 and failed[0].exc_info and "disk I/O error" in str(failed[0].exc_info[1])
