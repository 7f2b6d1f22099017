"""The workload's writes: creates and deletes that retry through kills and broker restarts.

Why this module exists: while components die, a write can fail in every way a
client sees — a refused connection, a timeout, a 5xx, a lost reply — and the
workload must retry it like a controller would, without ever mistaking a
retry's answer for a new fact. Two paths, picked per write:

- **rest**: HTTP to one of the apiservers (the next one on failure). A retried
  create that answers 409 AlreadyExists was committed by an earlier attempt;
  the object is read back for its uid. A retried delete that answers 404 had
  taken effect.
- **log**: a request on `requests` with a request id kept across retries (the
  client is rebuilt when its producer broke), so the committer must answer a
  retry without writing again — which the ``requests-once`` invariant checks.

Every success is recorded as an `Acknowledged` write for the
``objects-kept`` and ``pods-settled`` checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import aiohttp

from ops.chaoskit.invariants import Acknowledged
from services.api.machinery import status as st
from services.api.types import registry
from services.bus.port import Bus
from services.runtime.client import Client
from topics.envelope import Op, Reply, Request, UserInfo, object_key

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Path = Literal["rest", "log"]
CHAOS_USER = UserInfo("chaos", ("system:masters", "system:authenticated"))
RETRIABLE_HTTP = frozenset({429, 500, 502, 503, 504})


class WriteFailed(Exception):
    """A write got a definitive error answer, or did not get through before its deadline."""


class ListFailed(Exception):
    """An apiserver gave no list in all the attempts; the message holds its last answer."""


@dataclass
class WriterStats:
    attempts: int = 0
    retries: int = 0
    by_path: dict[str, int] = field(default_factory=lambda: {"rest": 0, "log": 0})
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


def api_path(group: str, resource: str, namespace: str | None, name: str = "") -> str:
    """The REST path of a collection or an object; ``namespace`` None lists across namespaces."""
    rt = registry.by_resource(group, resource)
    if rt is None:
        raise ValueError(f"unknown resource {group}/{resource}")
    # The workload's objects are 1.31's v1alpha3 (`workload.py`); resource.k8s.io's storage form is never on the wire.
    version = registry.V1ALPHA3 if registry.V1ALPHA3 in rt.versions else rt.preferred_version
    root = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    scope = f"/namespaces/{namespace}" if rt.namespaced and namespace is not None else ""
    return f"{root}{scope}/{resource}" + (f"/{name}" if name else "")


class Writer:
    """Creates and deletes with retries; ``acknowledged`` lists every write that succeeded."""

    def __init__(
        self,
        bus: Bus,
        apiservers: Sequence[str],
        *,
        paths: Sequence[Path] = ("rest", "log"),
        seed: int = 0,
        attempt_timeout: float = 10.0,
        deadline: float = 180.0,
    ) -> None:
        self.bus = bus
        self.apiservers = list(apiservers)
        self.paths = list(paths)
        self.rng = random.Random(seed)
        self.attempt_timeout = attempt_timeout
        self.deadline = deadline
        self.acknowledged: list[Acknowledged] = []
        self.stats = WriterStats()
        self._client: Client | None = None
        self._client_lock = asyncio.Lock()
        self._http: aiohttp.ClientSession | None = None
        self._next_server = 0

    async def start(self) -> None:
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.attempt_timeout))

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.close()

    # -- the two operations -----------------------------------------------------

    async def create(self, group: str, resource: str, obj: Obj, *, exist_ok: bool = False) -> Acknowledged:
        meta = obj["metadata"]
        key = object_key(group, resource, str(meta.get("namespace", "")), str(meta["name"]))
        path = self._pick()
        if path == "rest":
            ack = await self._rest_create(group, resource, obj, key, exist_ok=exist_ok)
        else:
            ack = await self._log_write("create", group, resource, key, obj=obj, exist_ok=exist_ok)
        if ack.uid or ack.req:  # an object that was there before, and is gone again, cannot be told apart
            self.acknowledged.append(ack)
        return ack

    async def delete(self, group: str, resource: str, namespace: str, name: str, *, uid: str | None) -> Acknowledged:
        key = object_key(group, resource, namespace, name)
        options: Obj = {"preconditions": {"uid": uid}} if uid else {}
        path = self._pick()
        if path == "rest":
            ack = await self._rest_delete(group, resource, namespace, name, key, uid, options)
        else:
            ack = await self._log_write("delete", group, resource, key, uid=uid, options=options)
        self.acknowledged.append(ack)
        return ack

    def _pick(self) -> Path:
        path: Path = self.rng.choice(self.paths)
        self.stats.by_path[path] += 1
        return path

    # -- REST -------------------------------------------------------------------

    def _server(self, attempt: int) -> str:
        server = self.apiservers[(self._next_server + attempt) % len(self.apiservers)]
        return server

    async def _rest_create(self, group: str, resource: str, obj: Obj, key: str, *, exist_ok: bool) -> Acknowledged:
        meta = obj["metadata"]
        namespace, name = str(meta.get("namespace", "")), str(meta["name"])
        started = time.monotonic()
        attempt = 0
        while True:
            server = self._server(attempt)
            self.stats.attempts += 1
            code, body = await self._http_call("POST", server + api_path(group, resource, namespace), obj)
            if code == 201 or code == 200:
                return Acknowledged("create", key, uid=_uid(body))
            if code == 409 and (attempt > 0 or exist_ok) and _reason(body) == "AlreadyExists":
                # An earlier attempt was committed (or the object was there before): read it back.
                uid = await self._rest_uid(group, resource, namespace, name, started)
                return Acknowledged("create", key, uid=uid)
            self._retry_or_fail(f"POST {key}", code, body, started)
            attempt += 1
            await self._backoff(attempt)

    async def _rest_delete(
        self, group: str, resource: str, namespace: str, name: str, key: str, uid: str | None, options: Obj
    ) -> Acknowledged:
        body_out = {"apiVersion": "v1", "kind": "DeleteOptions", **options}
        started = time.monotonic()
        attempt = 0
        while True:
            server = self._server(attempt)
            self.stats.attempts += 1
            code, body = await self._http_call("DELETE", server + api_path(group, resource, namespace, name), body_out)
            if code in (200, 202) or code == 404:
                return Acknowledged("delete", key, uid=uid)
            self._retry_or_fail(f"DELETE {key}", code, body, started)
            attempt += 1
            await self._backoff(attempt)

    async def _rest_uid(self, group: str, resource: str, namespace: str, name: str, started: float) -> str | None:
        attempt = 0
        while True:
            code, body = await self._http_call(
                "GET", self._server(attempt) + api_path(group, resource, namespace, name)
            )
            if code == 200:
                return _uid(body)
            if code == 404:
                return None  # created and gone again: the log check finds it by key
            self._retry_or_fail(f"GET {namespace}/{name}", code, body, started)
            attempt += 1
            await self._backoff(attempt)

    async def _http_call(self, method: str, url: str, body: Obj | None = None) -> tuple[int, Obj]:
        """(HTTP status, JSON body); status 0 for a connection failure or a timeout."""
        assert self._http is not None
        try:
            async with self._http.request(method, url, json=body) as response:
                try:
                    doc = await response.json(content_type=None)
                except (ValueError, aiohttp.ContentTypeError):
                    doc = {}
                return response.status, doc if isinstance(doc, dict) else {}
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            self.stats.error(type(exc).__name__)
            self._next_server += 1  # try the other apiserver next time
            return 0, {"message": str(exc) or type(exc).__name__}

    async def list_from(self, server: str, group: str, resource: str) -> tuple[int, list[Obj]]:
        """One apiserver's list of a resource (all namespaces): (resourceVersion, items).

        Raises `ListFailed` with the last answer when ten attempts got no list.
        """
        url = server + api_path(group, resource, None)
        last = ""
        for attempt in range(10):
            code, body = await self._http_call("GET", url)
            if code == 200:
                items = body.get("items") or []
                return int((body.get("metadata") or {}).get("resourceVersion") or 0), list(items)
            last = f"{code or 'no answer'} {body.get('reason', '')}: {body.get('message', '')}"
            await self._backoff(attempt + 1)
        raise ListFailed(f"GET {url}: 10 attempts, the last answered {last}")

    # -- the log ----------------------------------------------------------------

    async def _log_write(
        self,
        op: Op,
        group: str,
        resource: str,
        key: str,
        *,
        obj: Obj | None = None,
        uid: str | None = None,
        options: Obj | None = None,
        exist_ok: bool = False,
    ) -> Acknowledged:
        rt = registry.by_resource(group, resource)
        assert rt is not None
        _, _, namespace, name = key.split("/", 3)
        request = Request(
            id=uuid.uuid4().hex,
            op=op,
            group=group,
            version=rt.version,
            resource=resource,
            namespace=namespace,
            name=name,
            user=CHAOS_USER,
            reply_to="",
            object=obj,
            options=options or {},
        )
        started = time.monotonic()
        attempt = 0
        while True:
            self.stats.attempts += 1
            reply = await self._submit(request)
            if reply is not None:
                if reply.code < 300:
                    found = reply.object or {}
                    return Acknowledged(
                        "create" if op == "create" else "delete", key, uid=_uid(found) or uid, req=request.id
                    )
                if op == "create" and reply.code == 409 and exist_ok:
                    return Acknowledged(op, key, uid=None)
                if op == "delete" and reply.code == 404:
                    return Acknowledged(op, key, uid=uid)
                status = reply.status or {}
                self._retry_or_fail(f"{op} {key} (request {request.id})", reply.code, status, started)
            elif time.monotonic() - started > self.deadline:
                raise WriteFailed(f"{op} {key} (request {request.id}): no answer in {self.deadline:.0f}s")
            attempt += 1
            await self._backoff(attempt)

    async def _submit(self, request: Request) -> Reply | None:
        """Send once; None when no answer came (a timeout, a broken client)."""
        try:
            client = await self._log_client()
            return await client.submit(dataclasses.replace(request, reply_to=client.requester_id))
        except st.StatusError:
            self.stats.error("log-timeout")
            return None
        except Exception as exc:  # the bus broke: a new client gets a new producer
            self.stats.error(f"log-{type(exc).__name__}")
            log.info("log write failed; rebuilding the client", extra={"error": repr(exc)})
            await self._drop_client()
            return None

    async def _log_client(self) -> Client:
        async with self._client_lock:
            if self._client is None:
                client = Client(self.bus, user=CHAOS_USER, timeout=self.attempt_timeout, attempts=1)
                await client.start()
                self._client = client
            return self._client

    async def _drop_client(self) -> None:
        async with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    # -- retries ----------------------------------------------------------------

    def _retry_or_fail(self, what: str, code: int, body: Obj, started: float) -> None:
        if code != 0 and code not in RETRIABLE_HTTP:
            raise WriteFailed(f"{what}: {code} {body.get('reason', '')}: {body.get('message', '')}")
        self.stats.retries += 1
        if code:
            self.stats.error(f"http-{code}")
            self._next_server += 1
        if time.monotonic() - started > self.deadline:
            raise WriteFailed(
                f"{what}: still failing after {self.deadline:.0f}s (last: {code} {body.get('message', '')})"
            )

    async def _backoff(self, attempt: int) -> None:
        await asyncio.sleep(min(0.2 * 2 ** min(attempt, 5), 3.0) * (0.5 + self.rng.random()))


def _uid(obj: Obj | None) -> str | None:
    uid = ((obj or {}).get("metadata") or {}).get("uid")
    return str(uid) if uid else None


def _reason(body: Obj) -> str:
    return str(body.get("reason") or "")
