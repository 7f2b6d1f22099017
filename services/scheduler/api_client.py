"""The scheduler's ``APIClient`` over the runtime ``Client``: plugin writes become log requests.

The scheduler's plugins were written against a narrow protocol
(``services.scheduler.client.APIClient``: resources as ``(group, plural)``,
patch types as HTTP content types, ``get`` as a fresh read after a conflict).
The runtime ``Client`` speaks requests on ``requests`` and replies on
``replies``. This adapter is the only place the two meet, so the plugins stay
testable with an in-memory fake and the service needs no knowledge of them.

``get`` is the one read the plugins make outside the informer: they call it
after a 409 Conflict to fetch the version that beat them. The newer version
was committed before the conflict was decided, so waiting until the informer
has read up to the current end of ``objects`` and then reading its store
returns at least that version, as a quorum read from the apiserver would.

``write_chain`` turns each ``Write`` into the request its single-write method
sends and hands them to ``Client.write_chain``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from services.api.machinery import status as st
from services.runtime.client import Client
from services.scheduler.client import MERGE_PATCH, ResourceRef, Write, WriteResult
from topics.declarations import OBJECTS
from topics.envelope import Request

# HTTP content types (what the plugins pass) to the runtime's patch type names.
PATCH_TYPES: Mapping[str, str] = {
    MERGE_PATCH: "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/json-patch+json": "json",
    "application/apply-patch+yaml": "apply",
    "merge": "merge",
    "strategic": "strategic",
    "json": "json",
    "apply": "apply",
}


def runtime_patch_type(patch_type: str) -> str:
    try:
        return PATCH_TYPES[patch_type]
    except KeyError:
        raise st.unsupported_media_type(patch_type) from None


class LogAPIClient:
    """Implements ``services.scheduler.client.APIClient`` with a started runtime ``Client``.

    The client must have an informer: writes then return only once the
    scheduler's own informer has applied them (read-your-writes), and ``get``
    reads from it.
    """

    def __init__(self, client: Client) -> None:
        if client.informer is None:
            raise ValueError("the scheduler's client needs an informer to read its own writes")
        self._client = client

    @property
    def client(self) -> Client:
        return self._client

    async def create(
        self, resource: ResourceRef, obj: Mapping[str, Any], *, namespace: str = "", subresource: str = ""
    ) -> dict[str, Any]:
        group, plural = resource
        options: dict[str, Any] = {"subresource": subresource} if subresource else {}
        return await self._client.create(group, plural, dict(obj), namespace=namespace, **options)

    async def get(self, resource: ResourceRef, name: str, *, namespace: str = "") -> dict[str, Any]:
        group, plural = resource
        await self.catch_up()
        obj = self._client.get(group, plural, namespace, name)
        if obj is None:
            raise st.not_found(group, plural, name)
        # A copy, as a GET from kube-apiserver is: callers edit what they get and write it back
        # (the DRA plugin's conflict retries do), and the informer's object must stay as the log has it.
        return copy.deepcopy(obj)

    async def update(self, resource: ResourceRef, obj: Mapping[str, Any]) -> dict[str, Any]:
        group, plural = resource
        return await self._client.update(group, plural, dict(obj))

    async def update_status(self, resource: ResourceRef, obj: Mapping[str, Any]) -> dict[str, Any]:
        group, plural = resource
        return await self._client.update_status(group, plural, dict(obj))

    async def patch(
        self,
        resource: ResourceRef,
        name: str,
        patch: Mapping[str, Any],
        *,
        namespace: str = "",
        patch_type: str = MERGE_PATCH,
        subresource: str = "",
    ) -> dict[str, Any]:
        group, plural = resource
        return await self._client.patch(
            group,
            plural,
            namespace,
            name,
            dict(patch),
            patch_type=runtime_patch_type(patch_type),
            subresource=subresource,
        )

    async def delete(self, resource: ResourceRef, name: str, *, namespace: str = "") -> None:
        group, plural = resource
        await self._client.delete(group, plural, namespace, name)

    async def write_chain(self, writes: Sequence[Write]) -> list[WriteResult]:
        return await self._client.write_chain([self._request(write) for write in writes])

    def _request(self, write: Write) -> Request:
        group, plural = write.resource
        options: dict[str, Any] = {"subresource": write.subresource} if write.subresource else {}
        body = dict(write.obj) if write.obj is not None else None
        patch = dict(write.patch) if write.patch is not None else None
        return self._client.request(
            write.verb,
            group,
            plural,
            write.object_namespace,
            write.object_name,
            obj=body,
            patch=patch,
            patch_type=runtime_patch_type(write.patch_type) if write.verb == "patch" else None,
            options=options,
            after_version=write.after_version,
        )

    async def catch_up(self) -> None:
        """Wait until the informer has applied every record committed so far."""
        informer = self._client.informer
        assert informer is not None
        end = await self._client.bus.end_offset(OBJECTS)
        if end > 0:
            await informer.wait_for(end - 1, timeout=self._client.timeout)
