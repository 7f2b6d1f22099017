"""Informers: client-go's model over the `objects` log (or the `events` log).

One `Informer` consumes `objects` once per process and keeps an indexed
in-memory `Store` per resource. Handlers see every change of a key in log
order (`on_add`, `on_update`, `on_delete`); `synced` is set once the log end
seen at start has been reached. The resourceVersion of each object is stamped
here from the record's offset and never trusted from the payload. With a
snapshot store the informer starts from the stored offset and reads only the
tail. A malformed record is logged with topic and offset, counted, and skipped.
A handler or listener that raises is logged with its traceback and counted in
``draplane_informer_handler_failures_total``; the informer goes on.
While it catches up (until `synced`) the cyclic garbage collector is paused
(`services.runtime.gc_pause`).

Objects handed out are shared: treat them as read-only (copy before changing).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import heapq
import itertools
import logging
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol

from services.bus.port import BEGINNING, Bus, BusUnavailable, Record
from services.runtime import backoff, gc_pause
from services.runtime.log_fold import MalformedRecord, read_change
from services.runtime.metrics import INFORMER_HANDLER_FAILURES, INFORMER_READ_FAILURES, MALFORMED_RECORDS
from services.runtime.snapshot import SnapshotStore
from topics.declarations import OBJECTS
from topics.envelope import split_key

log = logging.getLogger(__name__)

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], Iterable[str]]


class Handler(Protocol):
    def on_add(self, obj: Obj) -> None: ...

    def on_update(self, old: Obj, new: Obj) -> None: ...

    def on_delete(self, obj: Obj) -> None: ...


class Change(NamedTuple):
    """One applied record: what every listener (e.g. the apiserver's watch cache) sees."""

    offset: int
    timestamp_ms: int
    type: str  # ADDED, MODIFIED or DELETED
    group: str
    resource: str
    namespace: str
    name: str
    object: Obj
    old: Obj | None
    request_id: str | None


def by_namespace(obj: Obj) -> Iterable[str]:
    return (obj["metadata"].get("namespace", ""),)


def by_owner_uid(obj: Obj) -> Iterable[str]:
    return (ref.get("uid", "") for ref in obj["metadata"].get("ownerReferences") or ())


def by_node_name(obj: Obj) -> Iterable[str]:
    node = (obj.get("spec") or {}).get("nodeName")
    return (node,) if node else ()


class Store:
    """Objects of one resource, keyed by (namespace, name), with secondary indexes."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], Obj] = {}
        self._indexers: dict[str, IndexFunc] = {"namespace": by_namespace}
        self._indices: dict[str, dict[str, set[tuple[str, str]]]] = {"namespace": {}}

    def __len__(self) -> int:
        return len(self._items)

    def add_index(self, name: str, func: IndexFunc) -> None:
        if name in self._indexers:
            return
        self._indexers[name] = func
        index: dict[str, set[tuple[str, str]]] = {}
        for key, obj in self._items.items():
            for value in func(obj):
                index.setdefault(value, set()).add(key)
        self._indices[name] = index

    def get(self, namespace: str, name: str) -> Obj | None:
        return self._items.get((namespace, name))

    def list(self, namespace: str | None = None) -> builtins.list[Obj]:
        if namespace is None:
            return list(self._items.values())
        return self.index("namespace", namespace)

    def index(self, name: str, value: str) -> builtins.list[Obj]:
        keys = self._indices[name].get(value, ())
        return [self._items[k] for k in keys]

    def keys(self) -> builtins.list[tuple[str, str]]:
        return list(self._items)

    def _put(self, key: tuple[str, str], obj: Obj) -> Obj | None:
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        for name, func in self._indexers.items():
            index = self._indices[name]
            for value in func(obj):
                bucket = index.get(value)
                if bucket is None:
                    index[value] = {key}
                else:
                    bucket.add(key)
        return old

    def _pop(self, key: tuple[str, str]) -> Obj | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def _unindex(self, key: tuple[str, str], obj: Obj) -> None:
        for name, func in self._indexers.items():
            index = self._indices[name]
            for value in func(obj):
                bucket = index.get(value)
                if bucket is not None:
                    bucket.discard(key)
                    if not bucket:
                        del index[value]


class Informer:
    """The shared informer of one process over `objects`."""

    def __init__(
        self,
        bus: Bus,
        *,
        snapshot: SnapshotStore | None = None,
        snapshot_interval: float = 5.0,
        name: str = "informer",
        topic: str = OBJECTS,
    ) -> None:
        self.bus = bus
        self.name = name
        self.topic = topic
        self._snapshot = snapshot
        self._snapshot_interval = snapshot_interval
        self._stores: dict[tuple[str, str], Store] = {}
        self._handlers: dict[tuple[str, str], list[Handler]] = {}
        self._listeners: list[Callable[[Change], None]] = []
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._task: asyncio.Task[None] | None = None
        self._dirty: dict[str, tuple[int, Obj] | None] = {}
        self.synced = asyncio.Event()
        self.position = 0  # next offset to read
        self.start_offset = 0  # where this informer began (snapshot or log start)
        self.records_read = 0  # every record consumed, tombstones and malformed ones included
        self.records_applied = 0

    # -- registration -------------------------------------------------------

    def store(self, group: str, resource: str) -> Store:
        store = self._stores.get((group, resource))
        if store is None:
            store = self._stores[(group, resource)] = Store()
        return store

    def add_handler(self, group: str, resource: str, handler: Handler) -> None:
        """Register handlers; objects already in the store are replayed as adds."""
        self._handlers.setdefault((group, resource), []).append(handler)
        for obj in self.store(group, resource).list():
            handler.on_add(obj)

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        """Called for every applied record of any resource, in log order."""
        self._listeners.append(listener)

    # -- lifecycle ----------------------------------------------------------

    async def start(self) -> None:
        start: int | str = BEGINNING
        if self._snapshot is not None:
            await self._snapshot.open()
            snap = await self._snapshot.load()
            if snap is not None:
                for key, (offset, obj) in snap.objects.items():
                    group, resource, namespace, name = split_key(key)
                    obj["metadata"]["resourceVersion"] = str(offset)
                    self.store(group, resource)._put((namespace, name), obj)
                start = snap.offset
        consumer = await self.bus.consumer(self.topic, start=start)
        self.position = self.start_offset = consumer.position()
        end = await self.bus.end_offset(self.topic)
        if self.position >= end:
            self.synced.set()
        self._task = asyncio.create_task(self._run(consumer, end), name=f"{self.name}-{self.topic}")

    async def stop(self) -> None:
        """Stop reading, save the snapshot and close it: also after a `start` that failed or was cancelled.

        Only an informer that read (its loop ran) saves; the snapshot is closed
        even when the save fails or is cancelled (an open one is a thread that
        keeps the process from exiting: `SqliteFile`).
        """
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._snapshot is not None:
            try:
                if task is not None:
                    with contextlib.suppress(Exception):
                        await self._save_snapshot()
            finally:
                await self._snapshot.close()

    async def wait_synced(self, timeout: float | None = None) -> None:
        async with asyncio.timeout(timeout):  # not wait_for: on 3.11 it can swallow a cancellation
            await self.synced.wait()

    async def wait_for(self, offset: int, timeout: float | None = None) -> None:
        """Wait until the record at ``offset`` (a resourceVersion) has been applied."""
        if self.position > offset:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (offset, next(self._seq), fut))
        async with asyncio.timeout(timeout):
            await fut

    # -- the loop -----------------------------------------------------------

    async def _run(self, consumer: Any, end_at_start: int) -> None:
        loop = asyncio.get_running_loop()
        next_save = loop.time() + self._snapshot_interval
        catching_up = None if self.synced.is_set() else gc_pause.pause()
        unavailable = backoff.log_unavailable()
        try:
            while True:
                try:
                    records = await consumer.getmany(timeout_ms=200)
                except Exception as exc:  # the log comes back; readers wait meanwhile
                    # As client-go's reflector: a read that fails is retried with backoff, never the end
                    # of the view. BusUnavailable is expected (a broker restart); anything else is a bug
                    # or a broken file, so it is counted and logged with its traceback.
                    if isinstance(exc, BusUnavailable):
                        log.warning("informer cannot read the log; trying again", extra={"error": str(exc)})
                    else:
                        INFORMER_READ_FAILURES.labels(informer=self.name).inc()
                        log.error("informer read failed; trying again", exc_info=exc, extra={"informer": self.name})
                    if catching_up is not None:  # no pause for as long as the log may be away
                        catching_up.resume()
                        catching_up = None
                    await unavailable.pause()
                    continue
                unavailable.reset()
                self.records_read += len(records)
                apply = self._apply
                for record in records:
                    apply(record)
                self.position = consumer.position()
                if not self.synced.is_set() and self.position >= end_at_start:
                    self.synced.set()
                if catching_up is not None and self.synced.is_set():
                    catching_up.resume()
                    catching_up = None
                self._release_waiters()
                if self._snapshot is not None and self._dirty and loop.time() >= next_save:
                    next_save = loop.time() + self._snapshot_interval
                    try:
                        await self._save_snapshot()
                    except Exception as exc:  # kept dirty for the next save; the view itself is intact
                        INFORMER_READ_FAILURES.labels(informer=self.name).inc()
                        log.error("informer snapshot save failed", exc_info=exc, extra={"informer": self.name})
        finally:
            if catching_up is not None:
                catching_up.resume()
            await consumer.close()

    def _release_waiters(self) -> None:
        while self._waiters and self._waiters[0][0] < self.position:
            _, _, fut = heapq.heappop(self._waiters)
            if not fut.done():
                fut.set_result(None)

    def _apply(self, record: Record) -> None:
        try:
            read = read_change(record)
        except MalformedRecord as exc:
            MALFORMED_RECORDS.labels(topic=record.topic).inc()
            log.warning(
                "skipping malformed record",
                extra={"topic": record.topic, "offset": record.offset, "error": str(exc)},
            )
            return
        if read is None:
            return  # a tombstone: the DELETED record before it did the work
        type_, key, group, resource, namespace, name, obj, request_id = read
        offset = record.offset
        kind = (group, resource)
        store = self._stores.get(kind)
        if store is None:
            store = self.store(group, resource)
        skey = (namespace, name)
        deleted = type_ == "DELETED"
        if deleted:
            old = store._pop(skey)
        else:
            old = store._put(skey, obj)
        if self._snapshot is not None:
            self._dirty[key] = None if deleted else (offset, obj)
        self.records_applied += 1
        handlers = self._handlers.get(kind)
        if handlers:
            for handler in handlers:
                try:
                    if deleted:
                        handler.on_delete(obj)
                    elif old is None:
                        handler.on_add(obj)
                    else:
                        handler.on_update(old, obj)
                except Exception as exc:
                    how = "delete" if deleted else "add" if old is None else "update"
                    self._handler_failed(exc, group=group, resource=resource, handler=how, key=key, offset=offset)
        if self._listeners:
            change = Change(offset, record.timestamp_ms, type_, group, resource, namespace, name, obj, old, request_id)
            for listener in self._listeners:
                try:
                    listener(change)
                except Exception as exc:
                    self._handler_failed(
                        exc, group=group, resource=resource, handler="listener", key=key, offset=offset
                    )

    def _handler_failed(
        self, exc: Exception, *, group: str, resource: str, handler: str, key: str, offset: int
    ) -> None:
        """Count and log (with the traceback) a handler or listener that raised; the record stays applied."""
        qualified = f"{resource}.{group}" if group else resource  # kube's GroupResource spelling
        INFORMER_HANDLER_FAILURES.labels(resource=qualified, handler=handler).inc()
        log.error(
            "informer handler failed",
            exc_info=exc,
            extra={"informer": self.name, "handler": handler, "key": key, "offset": offset},
        )

    async def _save_snapshot(self) -> None:
        assert self._snapshot is not None
        dirty, self._dirty = self._dirty, {}
        upserts = {k: v for k, v in dirty.items() if v is not None}
        deletes = [k for k, v in dirty.items() if v is None]
        try:
            await self._snapshot.save(offset=self.position, upserts=upserts, deletes=deletes)
        except BaseException:
            # Not saved (cancelled by stop(), say): keep the keys for the next save, or
            # that save would store a later offset without them and a restart would
            # never read their changes again. Newer changes of a key win.
            self._dirty = {**dirty, **self._dirty}
            raise
