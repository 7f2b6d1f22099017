"""The write client of a replayed scheduler: it answers every write as if it had succeeded, and writes nothing.

A replay must never change the log it reads. The replayed core's writes
(PostFilter deallocating a claim, Unreserve removing a reservation,
publishing a PodSchedulingContext) are answered with the object as sent and
kept in ``writes`` for inspection; what the recorded scheduler really wrote
reaches the replayed state through the recorded ``objects`` records instead.
Reads come from the replayed state (``lookup``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.api.machinery import status as st
from services.scheduler import client as api
from services.scheduler.client import MERGE_PATCH, ResourceRef
from services.scheduler.sequential_chain import write_one_by_one

Lookup = Callable[[ResourceRef, str, str], Mapping[str, Any] | None]  # (resource, namespace, name)


@dataclass(frozen=True, slots=True)
class Write:
    verb: str
    resource: ResourceRef
    namespace: str
    name: str
    subresource: str = ""


class NoWriteClient:
    """`services.scheduler.client.APIClient` over a replayed state; writes are recorded, never sent."""

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup
        self.writes: list[Write] = []

    def _note(self, verb: str, resource: ResourceRef, obj: Mapping[str, Any], subresource: str = "") -> None:
        meta = obj.get("metadata") or {}
        self.writes.append(
            Write(verb, resource, str(meta.get("namespace") or ""), str(meta.get("name") or ""), subresource)
        )

    async def create(
        self, resource: ResourceRef, obj: Mapping[str, Any], *, namespace: str = "", subresource: str = ""
    ) -> dict[str, Any]:
        self._note("create", resource, obj, subresource)
        return copy.deepcopy(dict(obj))

    async def get(self, resource: ResourceRef, name: str, *, namespace: str = "") -> dict[str, Any]:
        found = self._lookup(resource, namespace, name)
        if found is None:
            raise st.not_found(resource[0], resource[1], name)
        return copy.deepcopy(dict(found))

    async def update(self, resource: ResourceRef, obj: Mapping[str, Any]) -> dict[str, Any]:
        self._note("update", resource, obj)
        return copy.deepcopy(dict(obj))

    async def update_status(self, resource: ResourceRef, obj: Mapping[str, Any]) -> dict[str, Any]:
        self._note("update", resource, obj, "status")
        return copy.deepcopy(dict(obj))

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
        current = await self.get(resource, name, namespace=namespace)
        self.writes.append(Write("patch", resource, namespace, name, subresource))
        return current

    async def delete(self, resource: ResourceRef, name: str, *, namespace: str = "") -> None:
        self.writes.append(Write("delete", resource, namespace, name))

    async def write_chain(self, writes: Sequence[api.Write]) -> list[api.WriteResult]:
        return await write_one_by_one(self, writes)
