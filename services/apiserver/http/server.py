"""The aiohttp application: one dispatcher in front of the verb handlers.

Why aiohttp, one process, chunked watch streams: see docs/decisions/http.md.

Every request goes through the same steps, in kube-apiserver's order:
authentication (401 before anything else is revealed), then the path
(discovery, OpenAPI, health, or a resource URL parsed by `routing`), then
content negotiation, then the verb handler. Discovery and OpenAPI answers are
encoded once at start-up and served as bytes with an ETag.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from email.utils import formatdate
from typing import Any

import orjson
from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_LATEST as METRICS_CONTENT_TYPE

from services.api.admission.authorization import Authorizer
from services.api.types.served import DEFAULT_SERVED, ServedVersions
from services.apiserver import discovery, reviews
from services.apiserver.backend import Backend
from services.apiserver.discovery import DiscoveryDocuments, Document
from services.apiserver.http import connect, create, delete, get, patch, review, update, watch
from services.apiserver.http import list as list_handler
from services.apiserver.http.auth import Authenticator, TokenAuthenticator, WatchLimiter, authenticate, bearer_token
from services.apiserver.http.errors import error_middleware, method_not_allowed, not_found_path
from services.apiserver.http.negotiation import (
    DISCOVERY_V2,
    DISCOVERY_V2_PROTOBUF,
    Output,
    encode,
    negotiate,
    not_acceptable,
    protobuf_supports,
)
from services.apiserver.http.routing import GroupVersion, ResourceRoute, parse
from services.apiserver.http.scope import Scope, Settings
from services.apiserver.openapi import OpenAPIDocuments
from services.kube.feature_gates import DEFAULT_RELEASE
from services.runtime.healthz import HealthCheck, ready_check, root_health

log = logging.getLogger(__name__)

IMMUTABLE_SECONDS = 365 * 24 * 3600  # kube-openapi: "one year from the request"
BACKEND = web.AppKey("backend", Backend)
SETTINGS = web.AppKey("settings", Settings)
DISCOVERY = web.AppKey("discovery", DiscoveryDocuments)
OPENAPI = web.AppKey("openapi", OpenAPIDocuments)
SERVED = web.AppKey("served", ServedVersions)
AUTH = web.AppKey("auth", tuple)
AGGREGATED = web.AppKey("aggregated", bool)
METRICS: web.AppKey[Callable[[], bytes] | None] = web.AppKey("metrics")  # renders /metrics
READY: web.AppKey[Callable[[], bool] | None] = web.AppKey("ready")  # /readyz: the view has caught up
LIVE: web.AppKey[Callable[[], Sequence[HealthCheck]] | None] = web.AppKey("live")  # tasks that must not end
PROTOBUF_DOCUMENTS: web.AppKey[dict[Document, bytes]] = web.AppKey("protobuf_documents")  # encoded when first asked

_UNAUTHENTICATED_PATHS = frozenset({"/healthz", "/livez", "/readyz"})
_READ_METHODS = frozenset({"GET", "HEAD"})


def build_app(
    backend: Backend,
    *,
    authenticator: Authenticator | None = None,
    anonymous: bool = False,
    max_body_bytes: int = 3 * 1024 * 1024,
    max_watches_per_user: int = 64,
    write_timeout: float = 60.0,
    min_watch_timeout: float = 1800.0,
    openapi: OpenAPIDocuments | None = None,
    aggregated_discovery: bool = True,
    metrics: Callable[[], bytes] | None = None,
    ready: Callable[[], bool] | None = None,
    live: Callable[[], Sequence[HealthCheck]] | None = None,
    served: ServedVersions = DEFAULT_SERVED,
    release: str = DEFAULT_RELEASE,
) -> web.Application:
    """The apiserver's HTTP application over ``backend``.

    ``authenticator`` checks bearer tokens (`auth.TokenAuthenticator`); without
    credentials a request is 401 unless ``anonymous``. ``max_body_bytes`` caps
    request bodies (413 above). ``max_watches_per_user`` caps concurrent watch
    streams per user (429 above; 0 = no cap). ``aggregated_discovery=False``
    serves only legacy discovery (kept to measure what the aggregated form saves).
    ``metrics`` renders ``/metrics`` (Prometheus text; authenticated like reads).
    ``ready`` says whether ``/readyz`` passes (the view has caught up with the log).
    ``live`` gives the checks ``/healthz``, ``/livez`` and ``/readyz`` fail on: the
    process's tasks that must not end (`services.runtime.supervised`).
    ``served`` is the API versions served (``--runtime-config``): routing,
    discovery and OpenAPI all read it. ``release`` is ``--emulated-version``'s,
    which ``/version`` reports.
    """
    app = web.Application(middlewares=[error_middleware], handler_args={"max_field_size": 65536})
    app[BACKEND] = backend
    app[SETTINGS] = Settings(
        max_body_bytes=max_body_bytes,
        write_timeout=write_timeout,
        min_watch_timeout=min_watch_timeout,
        watch_limiter=WatchLimiter(max_watches_per_user),
    )
    app[SERVED] = served
    app[DISCOVERY] = DiscoveryDocuments(served, release=release)
    app[OPENAPI] = openapi or OpenAPIDocuments.build(served)
    app[AUTH] = (authenticator, anonymous)
    app[AGGREGATED] = aggregated_discovery
    app[METRICS] = metrics
    app[READY] = ready
    app[LIVE] = live
    app[PROTOBUF_DOCUMENTS] = {}
    # [\s\S], not ".": a path may hold an encoded newline, and it must reach `dispatch` too.
    app.router.add_route("*", r"/{tail:[\s\S]*}", dispatch)
    return app


def _document(
    request: web.Request,
    doc: Document,
    content_type: str = "application/json",
    *,
    protobuf: bool = False,
    immutable: bool = False,
) -> web.Response:
    """A prebuilt document, honouring ``If-None-Match``; in protobuf when negotiated (encoded once, same ETag).

    ``immutable``: the URL names the document's content (an OpenAPI v3 document asked for with the
    ``?hash=`` of the index), so, as kube-openapi's handler answers it, clients may keep it for a year
    without asking again (``Cache-Control: public, immutable`` and ``Expires``); everything else is
    ``no-cache, private``, kube-apiserver's default, and revalidated with its ETag.
    """
    headers = {"ETag": doc.etag, "Vary": "Accept", "Cache-Control": "no-cache, private"}
    if immutable:
        headers["Cache-Control"] = "public, immutable"
        headers["Expires"] = formatdate(time.time() + IMMUTABLE_SECONDS, usegmt=True)
    if request.headers.get("If-None-Match") == doc.etag:
        return web.Response(status=304, headers=headers)
    headers["Content-Type"] = content_type
    body = doc.body
    if protobuf:
        cache = request.app[PROTOBUF_DOCUMENTS]
        body = cache.get(doc) or cache.setdefault(doc, encode(_unversioned(orjson.loads(doc.body)), "protobuf"))
    return web.Response(body=body, headers=headers)


def _unversioned(doc: dict[str, Any]) -> dict[str, Any]:
    """A discovery document with the ``apiVersion`` its protobuf envelope carries.

    APIVersions, APIGroupList, APIGroup and APIResourceList are unversioned meta
    types: their JSON may omit ``apiVersion``; kube-apiserver's protobuf envelope
    names them ``v1``.
    """
    return doc if doc.get("apiVersion") else {**doc, "apiVersion": "v1"}


def _health(request: web.Request) -> web.Response:
    """``/healthz``, ``/livez``: no task of the process died. ``/readyz``: and its view of the log has caught up.

    Worded as k8s.io/apiserver's healthz (``[-]<check> failed: reason withheld``); a
    failed check is 500, as kube-apiserver reports a dead post-start hook or an unsynced informer.
    """
    app, path = request.app, request.path
    live, ready = app[LIVE], app[READY]
    checks = list(live()) if live is not None else []
    if path == "/readyz" and ready is not None:
        checks.append(ready_check("informer-sync", ready, reason="the view has not caught up with the log"))
    status, body = root_health(checks, verbose="verbose" in request.query, name=path.lstrip("/"))
    return web.Response(status=status, text=body, content_type="text/plain")


async def dispatch(request: web.Request) -> web.StreamResponse:
    app = request.app
    path = request.path
    if path in _UNAUTHENTICATED_PATHS:
        return _health(request)
    authenticator, anonymous = app[AUTH]
    user = authenticate(request.headers.get("Authorization"), authenticator=authenticator, anonymous=anonymous)
    target = parse(path, app[SERVED])
    if target is None:
        return await _non_resource(request, path)
    if isinstance(target, GroupVersion):
        if request.method not in _READ_METHODS:
            raise method_not_allowed()
        return _discovery(request, target)
    return await _resource(request, target, user)


async def _non_resource(request: web.Request, path: str) -> web.StreamResponse:
    app = request.app
    docs = app[DISCOVERY]
    stripped = path.rstrip("/") or "/"
    if request.method not in _READ_METHODS:
        if stripped in ("/version", "/api", "/apis") or stripped.startswith("/openapi/"):
            raise method_not_allowed()
        raise not_found_path()
    if stripped == "/version":
        return _document(request, docs.version)
    render = app[METRICS]
    if stripped == "/metrics" and render is not None:
        return web.Response(body=render(), headers={"Content-Type": METRICS_CONTENT_TYPE})
    if stripped in ("/api", "/apis"):
        core = stripped == "/api"
        output = negotiate(
            request.headers.get("Accept"),
            discovery=app[AGGREGATED],
            protobuf=functools.partial(_discovery_protobuf, "APIVersions" if core else "APIGroupList"),
        )
        proto = output.format == "protobuf"
        if output.shape == "discovery":
            content_type = DISCOVERY_V2_PROTOBUF if proto else DISCOVERY_V2
            return _document(
                request, docs.aggregated_api if core else docs.aggregated_apis, content_type, protobuf=proto
            )
        return _document(request, docs.api if core else docs.apis, output.content_type, protobuf=proto)
    if stripped.startswith("/openapi/"):
        return _openapi(request, stripped)
    raise not_found_path()


def _openapi(request: web.Request, path: str) -> web.Response:
    docs = request.app[OPENAPI]
    if path == "/openapi/v2":
        accept = request.headers.get("Accept", "")
        if accept and "json" not in accept and "*/*" not in accept:
            # Protobuf only: 406 (see docs/decisions/http.md for what kubectl does next).
            raise not_acceptable()
        return _document(request, docs.v2)
    if path == "/openapi/v3":
        return _document(request, docs.v3_index)
    key = path[len("/openapi/v3/") :]
    doc = docs.v3.get(key)
    if doc is None:
        raise not_found_path()
    wanted = request.query.get("hash", "")
    if not wanted:
        return _document(request, doc)
    current = docs.v3_hashes[key]
    if wanted != current:
        # kube-openapi: an outdated hash is sent on to the document's current URL.
        raise web.HTTPMovedPermanently(location=f"/openapi/v3/{key}?hash={current}")
    return _document(request, doc, immutable=True)


def _discovery_protobuf(kind: str) -> bool:
    """Whether legacy discovery documents of ``kind`` (meta/v1, unversioned) can be written in protobuf."""
    return protobuf_supports("v1", kind)


def _discovery(request: web.Request, target: GroupVersion) -> web.Response:
    docs = request.app[DISCOVERY]
    kind = "APIGroup" if target.version is None else "APIResourceList"
    output = negotiate(request.headers.get("Accept"), protobuf=functools.partial(_discovery_protobuf, kind))
    proto = output.format == "protobuf"
    if target.version is None:
        return _document(request, docs.groups[target.group], output.content_type, protobuf=proto)
    return _document(request, docs.resource_lists[(target.group, target.version)], output.content_type, protobuf=proto)


Handler = Callable[[Scope], Awaitable[web.StreamResponse]]


def _handler(request: web.Request, route: ResourceRoute) -> tuple[Handler, bool]:
    """The verb handler for this method and URL, and whether it reads."""
    method = request.method
    sub = route.subresource
    if reviews.is_review(route.rt):
        if method != "POST" or route.name is not None or route.watch_path:
            raise method_not_allowed()
        return _review_handler(request), False
    is_watch = route.watch_path or request.query.get("watch", "") in ("1", "true", "True", "t", "T", "TRUE")
    if sub == "binding":
        if method == "POST":
            return create.create, False
        raise method_not_allowed()
    if sub in connect.METHODS:
        return connect.connect, False
    if sub == "finalize" and method != "PUT":
        raise method_not_allowed()  # kube's FinalizeREST serves only update
    if route.name is None:
        if method in _READ_METHODS:
            return (watch.watch if is_watch else list_handler.list_), True
        if route.watch_path:
            raise method_not_allowed()
        if route.rt.namespaced and route.namespace is None:
            raise method_not_allowed()
        if method == "POST":
            return create.create, False
        if method == "DELETE" and discovery.deletes_collections(route.rt):
            return delete.delete_collection, False
        raise method_not_allowed()
    if method in _READ_METHODS:
        return (watch.watch if is_watch and sub is None else get.get), True
    if route.watch_path:
        raise method_not_allowed()
    if method == "PUT":
        return update.update, False
    if method == "PATCH":
        return patch.patch, False
    if method == "DELETE" and sub is None:
        return delete.delete, False
    raise method_not_allowed()


def _review_handler(request: web.Request) -> Handler:
    """The review handler, bound to the authorizer writes get (anonymous writes exactly when anonymous access)."""
    authenticator, anonymous = request.app[AUTH]
    token = bearer_token(request.headers.get("Authorization"))
    uid = authenticator.uid(token) if token is not None and isinstance(authenticator, TokenAuthenticator) else ""
    return functools.partial(review.review, authorizer=Authorizer(anonymous_writes=anonymous), uid=uid)


def _resource_protobuf(route: ResourceRoute) -> bool:
    """Whether the route's kind has a protobuf message in the URL's version (built-in kinds do)."""
    rt = route.rt
    return protobuf_supports(f"{rt.group}/{route.version}" if rt.group else route.version, rt.kind)


async def _resource(request: web.Request, route: ResourceRoute, user: Any) -> web.StreamResponse:
    handler, reads = _handler(request, route)
    accept = request.headers.get("Accept")
    output: Output = negotiate(
        accept,
        table=reads,
        partial=reads,
        protobuf=functools.partial(_resource_protobuf, route),
        stream=handler is watch.watch,
    )
    if output.shape == "table" and "includeObject" in request.query:
        # TableOptions travel as a query parameter in Kubernetes.
        output = replace(output, include_object=request.query["includeObject"])
    scope = Scope(
        backend=request.app[BACKEND],
        route=route,
        user=user,
        request=request,
        output=output,
        settings=request.app[SETTINGS],
    )
    return await handler(scope)


# ---------------------------------------------------------------------- serving


def ssl_context(certfile: str, keyfile: str) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(certfile, keyfile)
    return ctx


async def start(
    app: web.Application,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    certfile: str | None = None,
    keyfile: str | None = None,
    access_log: bool = False,
) -> tuple[web.AppRunner, int]:
    """Start serving ``app``; returns the runner (call ``cleanup()``) and the bound port."""
    runner = web.AppRunner(app, handler_cancellation=True, access_log=log if access_log else None)
    await runner.setup()
    ctx = ssl_context(certfile, keyfile) if certfile and keyfile else None
    site = web.TCPSite(runner, host, port, ssl_context=ctx, backlog=1024)
    await site.start()
    bound = port
    server = getattr(site, "_server", None)
    if server is not None and server.sockets:
        bound = server.sockets[0].getsockname()[1]
    return runner, bound


async def serve(
    app: web.Application,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    certfile: str | None = None,
    keyfile: str | None = None,
    ready: Callable[[int], None] | None = None,
) -> None:
    """Serve ``app`` until cancelled."""
    runner, bound = await start(app, host=host, port=port, certfile=certfile, keyfile=keyfile)
    log.info("apiserver listening on %s://%s:%d", "https" if certfile else "http", host, bound)
    if ready is not None:
        ready(bound)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
