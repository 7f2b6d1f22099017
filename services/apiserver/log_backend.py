"""The apiserver's `Backend` over the log: reads from its view, writes through the committer.

Gets and lists are served from the apiserver's informer (its materialized view
of `objects`); a list reports the offset it is consistent at. Watches come
from the watch cache. Writes become requests for the committer; the answer is
returned only once this apiserver's view has applied the reply's
resourceVersion, so a client always reads its own writes.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import orjson

from services.api.machinery import status as st
from services.api.types.registry import ResourceType
from services.apiserver.backend import ListResult, ObjectFilter, WatchEvent, WriteResult
from services.apiserver.events_writer import EventsWriter
from services.apiserver.watch_cache import WatchCache
from services.runtime.client import Client
from services.runtime.informer import Informer
from topics.envelope import Request

Obj = dict[str, Any]
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class LogBackend:
    def __init__(
        self,
        informer: Informer,
        client: Client,
        *,
        watch_cache: WatchCache | None = None,
        events: tuple[Informer, EventsWriter] | None = None,
        bookmark_interval: float = 5.0,
    ) -> None:
        self.informer = informer
        self.client = client
        self.cache = watch_cache or WatchCache(informer)
        self.events_informer: Informer | None = events[0] if events is not None else None
        self.events_writer: EventsWriter | None = events[1] if events is not None else None
        self.events_cache = WatchCache(self.events_informer) if self.events_informer is not None else None
        self.bookmark_interval = bookmark_interval

    def _view(self, rt: ResourceType) -> tuple[Informer, WatchCache]:
        """Events are served from the `events` topic; everything else from `objects`."""
        if (rt.group, rt.plural) == ("", "events") and self.events_informer is not None:
            assert self.events_cache is not None
            return self.events_informer, self.events_cache
        return self.informer, self.cache

    # -- reads ------------------------------------------------------------------

    def current_rv(self, rt: ResourceType | None = None) -> str:
        informer = self._view(rt)[0] if rt is not None else self.informer
        return str(max(informer.position - 1, 0))

    async def get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        obj = self._view(rt)[0].store(rt.group, rt.plural).get(namespace if rt.namespaced else "", name)
        if obj is None:
            raise st.not_found(rt.group, rt.plural, name)
        return obj

    async def list(
        self,
        rt: ResourceType,
        namespace: str | None,
        *,
        match: ObjectFilter | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
    ) -> ListResult:
        rv = self.current_rv(rt)
        start_after = ""
        if continue_token:
            rv, start_after = _decode_continue(continue_token)
        items = self._view(rt)[0].store(rt.group, rt.plural).list(namespace if rt.namespaced else None)
        keyed = sorted(((_sort_key(o), o) for o in items), key=lambda kv: kv[0])
        selected = [(k, o) for k, o in keyed if k > start_after and (match is None or match(o))]
        if limit and len(selected) > limit:
            page = selected[:limit]
            token = _encode_continue(rv, page[-1][0])
            return ListResult([o for _, o in page], rv, token, len(selected) - limit)
        return ListResult([o for _, o in selected], rv)

    async def watch(
        self,
        rt: ResourceType,
        namespace: str | None,
        *,
        resource_version: str | None,
        match: ObjectFilter | None = None,
        bookmarks: bool = False,
        send_initial_events: bool = False,
    ) -> AsyncIterator[WatchEvent]:
        ns = namespace if rt.namespaced else None
        informer, cache = self._view(rt)
        watcher = cache.register(rt.group, rt.plural, ns, match)
        try:
            last = -1
            if resource_version in (None, "", "0") or send_initial_events:
                position = informer.position
                store = informer.store(rt.group, rt.plural)
                for obj in sorted(store.list(ns), key=_sort_key):
                    if match is None or match(obj):
                        yield WatchEvent("ADDED", obj)
                last = position - 1
                if bookmarks and send_initial_events:
                    yield self._bookmark(rt, str(max(last, 0)), initial_end=True)
            else:
                try:
                    since = int(resource_version)
                except ValueError:
                    raise st.bad_request(f"invalid resource version: {resource_version!r}") from None
                for change in cache.since(watcher, since):
                    event = watcher.translate(change)
                    last = change.offset
                    if event is not None:
                        yield WatchEvent(event[0], event[1])  # type: ignore[arg-type]
                last = max(last, since)
            while not watcher.overflowed:
                try:
                    async with asyncio.timeout(self.bookmark_interval):
                        change = await watcher.queue.get()
                except TimeoutError:
                    if bookmarks:
                        yield self._bookmark(rt, self.current_rv(rt))
                    continue
                if change.offset <= last:
                    continue
                last = change.offset
                event = watcher.translate(change)
                if event is not None:
                    yield WatchEvent(event[0], event[1])  # type: ignore[arg-type]
        finally:
            cache.unregister(watcher)

    @staticmethod
    def _bookmark(rt: ResourceType, rv: str, *, initial_end: bool = False) -> WatchEvent:
        meta: Obj = {"resourceVersion": rv}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        return WatchEvent("BOOKMARK", {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta})

    # -- writes -----------------------------------------------------------------

    async def write(self, request: Request) -> WriteResult:
        if (request.group, request.resource) == ("", "events") and self.events_writer is not None:
            return await self.events_writer.write(request)
        request = dataclasses.replace(request, reply_to=self.client.requester_id)
        reply = await self.client.submit(request)
        if reply.code >= 400:
            raise st.StatusError(reply.status or st.make_status(reply.code, "Unknown", "request failed"))
        # A delete that removed the object, or a binding, answers kube's Success Status, not the object.
        body = reply.status if reply.status is not None else reply.object
        if body is None:
            body = st.success_status()
        if reply.object is not None:
            await self.client.wait_visible(reply.object)
        return WriteResult(reply.code, body, reply.warnings)


def _sort_key(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def _encode_continue(rv: str, after: str) -> str:
    return base64.urlsafe_b64encode(orjson.dumps({"rv": rv, "start": after})).decode()


def _decode_continue(token: str) -> tuple[str, str]:
    try:
        doc = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        return str(doc["rv"]), str(doc["start"])
    except Exception:
        raise st.bad_request("continue key is not valid: illegal base64 data") from None
