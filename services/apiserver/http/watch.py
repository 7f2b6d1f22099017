"""WATCH: a chunked stream of ``{"type", "object"}`` JSON lines, or of protobuf frames.

Served for ``?watch=1`` and for the deprecated ``/watch/`` paths. Each event is
one chunk, flushed as it happens. A client that negotiated protobuf
(``application/vnd.kubernetes.protobuf`` or with ``;stream=watch``) gets
length-prefixed ``WatchEvent`` frames (`services.api.protobuf.encode_watch_frame`)
under ``Content-Type: application/vnd.kubernetes.protobuf;stream=watch``; JSON
streams are ``application/json``, as kube-apiserver labels them. The stream:

- resumes after ``resourceVersion`` (an offset of the objects log); a version
  the view no longer holds ends the stream with an ``ERROR`` event carrying
  the 410 Expired Status, which is what client-go's reflectors expect;
- passes on ``BOOKMARK`` events (only ``metadata.resourceVersion``) when
  ``allowWatchBookmarks`` is set;
- supports ``sendInitialEvents`` (with ``resourceVersionMatch=NotOlderThan``
  and bookmarks, as Kubernetes requires);
- ends after ``timeoutSeconds``, or after a randomized
  ``min-request-timeout`` like kube-apiserver, so clients rebalance;
- with a Table ``Accept`` (``kubectl get -w``), sends each object as a one-row
  Table, column definitions in the first event only.

An object is encoded once per version and form for all watchers (and lists
and gets): `Scope.encoded`, as kube-apiserver's watch cache hands every
watcher the same ``CacheableObject`` encoding.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from services.api.machinery.status import StatusError
from services.apiserver import tables
from services.apiserver.backend import WatchEvent
from services.apiserver.encoded_objects import Encoded
from services.apiserver.http.errors import invalid_options
from services.apiserver.http.list import check_resource_version_match, selector_filter
from services.apiserver.http.negotiation import protobuf_codec
from services.apiserver.http.scope import Scope


def _bookmark(event: WatchEvent, api_version: str, kind: str) -> dict[str, Any]:
    meta = event.object.get("metadata") or {}
    out_meta: dict[str, Any] = {"resourceVersion": str(meta.get("resourceVersion", ""))}
    if meta.get("annotations"):
        out_meta["annotations"] = meta["annotations"]
    return {"kind": kind, "apiVersion": api_version, "metadata": out_meta}


async def watch(scope: Scope) -> web.StreamResponse:
    route = scope.route
    rt = route.rt
    match = selector_filter(scope, name=route.name)
    rv_match = check_resource_version_match(scope)
    bookmarks = scope.bool_param("allowWatchBookmarks")
    send_initial = scope.bool_param("sendInitialEvents")
    if "sendInitialEvents" in scope.query:
        errors = []
        if rv_match != "NotOlderThan":
            errors.append(
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
                "resourceVersionMatch to NotOlderThan"
            )
        if not bookmarks and send_initial:
            errors.append(
                "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true"
            )
        if errors:
            raise invalid_options("ListOptions", errors)
    timeout_s = scope.int_param("timeoutSeconds")
    if timeout_s is None or timeout_s <= 0:
        timeout: float = scope.settings.min_watch_timeout * (1.0 + random.random())
    else:
        timeout = float(timeout_s)
    api_version = f"{rt.group}/{route.version}" if rt.group else route.version
    as_table = scope.output.shape == "table"
    partial = scope.output.shape == "partial"

    if scope.request.method == "HEAD":
        # A response to HEAD carries no body, so no stream (Go's server drops a HEAD handler's writes).
        resp = web.StreamResponse(status=200)
        resp.content_type = scope.output.watch_content_type
        await resp.prepare(scope.request)
        await resp.write_eof()
        return resp
    frame = _frame_encoder(scope)
    kept_frame = _kept_frame_encoder(scope)
    with scope.settings.watch_limiter.hold(scope.user.name):
        resp = web.StreamResponse(status=200)
        resp.content_type = scope.output.watch_content_type
        resp.enable_chunked_encoding()
        await resp.prepare(scope.request)
        events = scope.backend.watch(
            scope.stored_rt,
            route.namespace,
            resource_version=scope.query.get("resourceVersion") or None,
            match=match,
            bookmarks=bookmarks,
            send_initial_events=send_initial,
        )
        headers_sent = False
        try:
            async with asyncio.timeout(timeout):
                async for event in events:
                    obj: dict[str, Any] = event.object
                    if event.type == "BOOKMARK":
                        if not bookmarks:
                            continue
                        obj = _bookmark(event, api_version, rt.kind)
                    elif event.type != "ERROR" and not as_table:
                        kept = scope.encoded(obj)
                        if kept is not None:
                            await resp.write(kept_frame(event.type, kept))
                            continue
                    if event.type not in ("BOOKMARK", "ERROR"):
                        if not partial:
                            obj = scope.present(obj)
                        if as_table:
                            obj = tables.table(
                                rt,
                                [obj],
                                resource_version=str((obj.get("metadata") or {}).get("resourceVersion", "")),
                                include_object=scope.output.include_object,
                                headers=not headers_sent,
                            )
                            headers_sent = True
                        elif partial:
                            obj = tables.partial_metadata(obj)
                    await resp.write(frame(event.type, obj))
        except TimeoutError:
            pass
        except StatusError as err:
            await resp.write(frame("ERROR", err.status))
        except (ConnectionResetError, asyncio.CancelledError):
            await _close(events)
            raise
        await _close(events)
        await resp.write_eof()
        return resp


def _json_line(event_type: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


def _frame_encoder(scope: Scope) -> Callable[[str, dict[str, Any]], bytes]:
    """How one event is written: a JSON line, or a length-prefixed protobuf frame."""
    if scope.output.format == "protobuf":
        encode_watch_frame: Callable[[str, dict[str, Any]], bytes] = protobuf_codec().encode_watch_frame
        return encode_watch_frame
    return _json_line


def _kept_frame_encoder(scope: Scope) -> Callable[[str, Encoded], bytes]:
    """How one event around an object's kept encoding is written: the same bytes as `_frame_encoder`'s."""
    if scope.output.format == "protobuf":
        codec = protobuf_codec()

        def protobuf_frame(event_type: str, kept: Encoded) -> bytes:
            out: bytes = codec.watch_frame(
                event_type, codec.enveloped(kept.data, api_version=kept.api_version, kind=kept.kind)
            )
            return out

        return protobuf_frame

    def json_line(event_type: str, kept: Encoded) -> bytes:
        return b"".join((b'{"type":"', event_type.encode(), b'","object":', kept.data, b"}\n"))

    return json_line


async def _close(events: Any) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:  # closing a broken generator must not mask the real outcome
            pass
