"""The client every component writes and reads with.

Writes are requests on `requests`; the committer answers on `replies`, keyed
by this client's requester id. The clients of a process share one producer
and one reply consumer per bus (`services.runtime.request_channel`). A write
waits for its reply, and — when the client has an informer — until that
informer has applied the reply's resourceVersion, so a component always reads
its own writes. A request that times out is sent again with the same request
id, which the committer recognises, so retries never apply a write twice.
Reads come from the informer's stores.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from services.api.machinery import status as st
from services.api.types import registry
from services.api.types.registry import ResourceType
from services.bus.port import Bus, OutRecord
from services.runtime import backoff
from services.runtime.informer import Informer
from services.runtime.metrics import CLIENT_REQUEST_SECONDS
from services.runtime.request_channel import RequestChannel
from topics.declarations import OBJECTS, REQUESTS
from topics.envelope import Op, Reply, Request, UserInfo, encode_request

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def _status_error(reply: Reply) -> st.StatusError:
    return st.StatusError(reply.status or st.make_status(reply.code, "Unknown", "request failed").copy())


def resource_type(group: str, resource: str) -> ResourceType:
    rt = registry.by_resource(group, resource)
    if rt is None:
        raise ValueError(f"unknown resource {resource!r} in group {group!r}")
    return rt


class Client:
    """Request/reply writes through the committer; reads from an informer."""

    def __init__(
        self,
        bus: Bus,
        *,
        user: UserInfo,
        informer: Informer | None = None,
        timeout: float = 10.0,
        attempts: int = 3,
        requester_id: str | None = None,
    ) -> None:
        self.bus = bus
        self.user = user
        self.informer = informer
        self.timeout = timeout
        self.attempts = attempts
        self.requester_id = requester_id or f"{user.name}/{uuid.uuid4().hex[:12]}"
        self._pending: dict[str, asyncio.Future[Reply]] = {}
        self._channel: RequestChannel | None = None

    async def start(self) -> None:
        self._channel = await RequestChannel.acquire(self.bus)
        self._channel.register(self.requester_id, self._deliver)

    async def close(self) -> None:
        if self._channel is not None:
            channel, self._channel = self._channel, None
            channel.unregister(self.requester_id)
            await channel.release()
        for fut in self._pending.values():
            if not fut.done():
                fut.cancel()

    async def __aenter__(self) -> Client:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- writes -----------------------------------------------------------------

    async def create(self, group: str, resource: str, obj: Obj, *, namespace: str = "", **options: Any) -> Obj:
        namespace = namespace or obj.get("metadata", {}).get("namespace", "")
        return await self._write(
            "create", group, resource, namespace, obj.get("metadata", {}).get("name", ""), obj=obj, options=options
        )

    async def update(self, group: str, resource: str, obj: Obj, **options: Any) -> Obj:
        meta = obj["metadata"]
        return await self._write(
            "update", group, resource, meta.get("namespace", ""), meta["name"], obj=obj, options=options
        )

    async def update_status(self, group: str, resource: str, obj: Obj, **options: Any) -> Obj:
        meta = obj["metadata"]
        return await self._write(
            "update_status", group, resource, meta.get("namespace", ""), meta["name"], obj=obj, options=options
        )

    async def patch(
        self,
        group: str,
        resource: str,
        namespace: str,
        name: str,
        patch: Any,
        *,
        patch_type: str = "merge",
        subresource: str = "",
        **options: Any,
    ) -> Obj:
        if subresource:
            options["subresource"] = subresource
        return await self._write(
            "patch", group, resource, namespace, name, patch=patch, patch_type=patch_type, options=options
        )

    async def delete(self, group: str, resource: str, namespace: str, name: str, **options: Any) -> Obj:
        return await self._write("delete", group, resource, namespace, name, options=options)

    async def bind(self, namespace: str, name: str, node: str, *, uid: str | None = None) -> Obj:
        binding: Obj = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, **({"uid": uid} if uid else {})},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        return await self._write("create", "", "pods", namespace, name, obj=binding, options={"subresource": "binding"})

    async def submit(self, request: Request) -> Reply:
        """Send a request (with retries under the same id) and return the committer's reply."""
        (reply,) = await self._submit_all([request])
        return reply

    async def write_chain(self, requests: Sequence[Request]) -> list[Obj | st.StatusError]:
        """Send writes that depend on each other at once, each chained to the one before it.

        The committer applies each only if the one before it succeeded
        (`services.runtime.request_chains`), so they are decided in one batch
        instead of one trip through the log each. The answer holds, in order,
        each write's result (as `create`, `update` … return it, already read
        by this client's informer) or the `StatusError` that refused it; once
        one fails, the ones after it are refused 409 Conflict unapplied. When
        the committer does not answer in time, that timeout is every write's
        answer: as for a lone write that timed out, any of them may have been
        applied. Never raises StatusError.
        Build the requests with `request`; set ``after_version`` on one that
        must find the object as the write before it left it.
        """
        chained: list[Request] = []
        for request in requests:
            if chained:
                request = replace(request, after=chained[-1].id)
            chained.append(request)
        try:
            replies = await self._submit_all(chained)
        except st.StatusError as err:
            return [err] * len(chained)
        return [_status_error(reply) if reply.code >= 400 else await self._seen(reply) for reply in replies]

    async def _submit_all(self, requests: Sequence[Request]) -> list[Reply]:
        """Send requests in one append (with retries under the same ids) and return the replies, in order."""
        if self._channel is None:
            raise RuntimeError("client is not started")
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        records = [OutRecord(REQUESTS, r.key.encode(), encode_request(r)) for r in requests]
        for attempt in range(self.attempts):
            futures: list[asyncio.Future[Reply]] = []
            for request in requests:
                futures.append(loop.create_future())
                self._pending[request.id] = futures[-1]
            try:
                await self._channel.send_all(records)
                # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancellation
                async with asyncio.timeout(self.timeout):
                    replies = [await asyncio.shield(fut) for fut in futures]
                elapsed = time.monotonic() - started
                for request in requests:
                    CLIENT_REQUEST_SECONDS.labels(op=request.op).observe(elapsed)
                return replies
            except TimeoutError:
                log.warning(
                    "request timed out; retrying", extra={"request_id": requests[-1].id, "attempt": attempt + 1}
                )
            finally:
                for request in requests:
                    self._pending.pop(request.id, None)
        raise st.timeout(f"the committer did not answer request {requests[-1].id} in time")

    def request(
        self,
        op: Op,
        group: str,
        resource: str,
        namespace: str,
        name: str,
        *,
        obj: Obj | None = None,
        patch: Any = None,
        patch_type: str | None = None,
        options: dict[str, Any] | None = None,
        after_version: bool = False,
    ) -> Request:
        """A write request from this client (``after_version``: for `write_chain`)."""
        rt = resource_type(group, resource)
        return Request(
            id=uuid.uuid4().hex,
            op=op,
            group=group,
            version=rt.version,
            resource=resource,
            namespace=namespace if rt.namespaced else "",
            name=name,
            user=self.user,
            reply_to=self.requester_id,
            object=obj,
            patch=patch,
            patch_type=patch_type,
            options={k: v for k, v in (options or {}).items() if v is not None},
            after_version=after_version,
        )

    async def _write(self, op: Op, *args: Any, **kwargs: Any) -> Obj:
        """Send one write (`request`'s arguments) and return its result, read by this client's informer."""
        reply = await self.submit(self.request(op, *args, **kwargs))
        if reply.code >= 400:
            raise _status_error(reply)
        return await self._seen(reply)

    async def _seen(self, reply: Reply) -> Obj:
        """A successful reply's result (its object, or its Status), once this client's informer has it."""
        result = reply.object if reply.object is not None else (reply.status or {})
        await self.wait_visible(result)
        return result

    async def drain_earlier_requests(self) -> Reply:
        """Wait until the committer has answered every request appended before this call, and (with an
        informer) until the informer has read what they wrote.

        Why: requests outlive their sender. A component SIGKILLed while the log
        was away leaves requests that are committed when it comes back — after
        its successor has synced its informer. A scheduler that started
        scheduling then allocated a device its predecessor's last request was
        about to allocate (found by ``ops/chaos`` on Kafka: two claims on one
        GPU). Requests are answered in log order, so the reply to a request
        sent now — a patch of a pod that does not exist: no write, whatever the
        answer — means every earlier one is decided.
        """
        name = f"draplane-barrier-{uuid.uuid4().hex[:12]}"
        request = Request(
            id=uuid.uuid4().hex,
            op="patch",
            group="",
            version="v1",
            resource="pods",
            namespace="kube-system",
            name=name,
            user=self.user,
            reply_to=self.requester_id,
            patch={},
            patch_type="merge",
            options={"subresource": "status"},
        )
        reply = await self.submit(request)
        if self.informer is not None:
            end = await self.bus.end_offset(OBJECTS)
            if end > 0:
                await self.informer.wait_for(end - 1, timeout=self.timeout)
        return reply

    async def wait_for_predecessors(self) -> None:
        """`drain_earlier_requests`, tried again for as long as the committer does not answer (the log is away).

        A component that writes from its view — a scheduler allocating
        devices, a controller creating claims — calls it after its informer
        synced and before it starts working.
        """
        retry = backoff.log_unavailable()
        while True:
            try:
                await self.drain_earlier_requests()
                return
            except st.StatusError as err:
                log.warning("waiting for earlier requests to be decided", extra={"error": str(err)})
            await retry.pause()

    async def wait_visible(self, obj: Obj) -> None:
        """Wait until this client's informer has applied the object's resourceVersion."""
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if self.informer is not None and rv:
            await self.informer.wait_for(int(rv), timeout=self.timeout)

    # -- reads (from the informer) ---------------------------------------------

    def get(self, group: str, resource: str, namespace: str, name: str) -> Obj | None:
        if self.informer is None:
            raise RuntimeError("this client has no informer to read from")
        return self.informer.store(group, resource).get(namespace, name)

    def list(self, group: str, resource: str, namespace: str | None = None) -> list[Obj]:
        if self.informer is None:
            raise RuntimeError("this client has no informer to read from")
        return self.informer.store(group, resource).list(namespace)

    # -- replies ----------------------------------------------------------------

    def _deliver(self, reply: Reply) -> None:
        fut = self._pending.get(reply.id)
        if fut is not None and not fut.done():
            fut.set_result(reply)
