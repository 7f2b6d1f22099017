"""An in-memory APIClient with Kubernetes' conflict semantics, for plugin and binding tests.

``write_chain`` decides a chain as the committer does
(`services.scheduler.sequential_chain`). ``trips`` lists what each trip
through the log sent (a chain is one trip, whatever the committer refused);
``calls`` what reached the objects, one write at a time.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from services.api.machinery import status as st
from services.scheduler.client import MERGE_PATCH, ResourceRef, Write, WriteResult
from services.scheduler.sequential_chain import write_one_by_one

Key = tuple[str, str, str, str]  # group, plural, namespace, name


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _spelled(write: Write) -> tuple[str, str]:
    """(verb, plural[/subresource]) as ``calls`` records the write when it is sent alone."""
    if write.verb == "update_status":
        return "update", write.resource[1] + "/status"
    return write.verb, write.resource[1] + (f"/{write.subresource}" if write.subresource else "")


class FakeClient:
    """Stores objects by key, stamps resourceVersions, raises StatusError like the apiserver."""

    def __init__(self) -> None:
        self.objects: dict[Key, dict[str, Any]] = {}
        self.calls: list[tuple[str, str, str]] = []  # (verb, plural[/subresource], name)
        self.trips: list[list[str]] = []  # each trip through the log: what it sent, as verbs() spells it
        self._chained = False  # recording the writes of one write_chain call
        self._rv = itertools.count(100)
        self.reactors: list[Callable[[str, str, Mapping[str, Any] | None], None]] = []

    # -- helpers for tests

    def put(self, resource: ResourceRef, obj: Mapping[str, Any]) -> dict[str, Any]:
        stored = copy.deepcopy(dict(obj))
        meta = stored.setdefault("metadata", {})
        meta["resourceVersion"] = str(next(self._rv))
        self.objects[self._key(resource, meta.get("namespace", ""), meta["name"])] = stored
        return copy.deepcopy(stored)

    def stored(self, resource: ResourceRef, name: str, namespace: str = "") -> dict[str, Any] | None:
        obj = self.objects.get(self._key(resource, namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def verbs(self) -> list[str]:
        return [f"{verb} {what}" for verb, what, _ in self.calls]

    def _record(self, verb: str, what: str, name: str) -> None:
        self.calls.append((verb, what, name))
        if not self._chained:
            self.trips.append([f"{verb} {what}"])

    @staticmethod
    def _key(resource: ResourceRef, namespace: str, name: str) -> Key:
        return (resource[0], resource[1], namespace or "", name)

    def _react(self, verb: str, what: str, obj: Mapping[str, Any] | None) -> None:
        for reactor in self.reactors:
            reactor(verb, what, obj)

    # -- APIClient

    async def create(
        self, resource: ResourceRef, obj: Mapping[str, Any], *, namespace: str = "", subresource: str = ""
    ) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        what = resource[1] + (f"/{subresource}" if subresource else "")
        self._record("create", what, meta.get("name", ""))
        self._react("create", what, obj)
        if subresource == "binding":
            key = self._key(resource, namespace, meta["name"])
            pod = self.objects.get(key)
            if pod is None:
                raise st.not_found(resource[0], resource[1], meta["name"])
            if (pod.get("spec") or {}).get("nodeName"):
                raise st.conflict(resource[0], resource[1], meta["name"], "pod is already assigned to a node")
            pod.setdefault("spec", {})["nodeName"] = obj["target"]["name"]
            pod["metadata"]["resourceVersion"] = str(next(self._rv))
            return copy.deepcopy(dict(obj))
        key = self._key(resource, meta.get("namespace", namespace), meta["name"])
        if key in self.objects:
            raise st.already_exists(resource[0], resource[1], meta["name"])
        stored = copy.deepcopy(dict(obj))
        stored["metadata"]["resourceVersion"] = str(next(self._rv))
        stored["metadata"].setdefault("uid", f"uid-{meta['name']}-{stored['metadata']['resourceVersion']}")
        self.objects[key] = stored
        return copy.deepcopy(stored)

    async def get(self, resource: ResourceRef, name: str, *, namespace: str = "") -> dict[str, Any]:
        self._record("get", resource[1], name)
        obj = self.objects.get(self._key(resource, namespace, name))
        if obj is None:
            raise st.not_found(resource[0], resource[1], name)
        return copy.deepcopy(obj)

    async def _write(
        self, verb: str, resource: ResourceRef, obj: Mapping[str, Any], status_only: bool
    ) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        what = resource[1] + ("/status" if status_only else "")
        self._record(verb, what, meta.get("name", ""))
        self._react(verb, what, obj)
        key = self._key(resource, meta.get("namespace", ""), meta["name"])
        current = self.objects.get(key)
        if current is None:
            raise st.not_found(resource[0], resource[1], meta["name"])
        if meta.get("resourceVersion") and meta["resourceVersion"] != current["metadata"]["resourceVersion"]:
            raise st.modified_conflict(resource[0], resource[1], meta["name"])
        new = copy.deepcopy(current)
        if status_only:
            new["status"] = copy.deepcopy(obj.get("status"))
            if new["status"] is None:
                new.pop("status")
        else:
            new = copy.deepcopy(dict(obj))
            if "status" in current:
                new["status"] = copy.deepcopy(current["status"])
        new["metadata"]["resourceVersion"] = str(next(self._rv))
        self.objects[key] = new
        return copy.deepcopy(new)

    async def update(self, resource: ResourceRef, obj: Mapping[str, Any]) -> dict[str, Any]:
        return await self._write("update", resource, obj, False)

    async def update_status(self, resource: ResourceRef, obj: Mapping[str, Any]) -> dict[str, Any]:
        return await self._write("update", resource, obj, True)

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
        what = resource[1] + (f"/{subresource}" if subresource else "")
        self._record("patch", what, name)
        self._react("patch", what, patch)
        key = self._key(resource, namespace, name)
        current = self.objects.get(key)
        if current is None:
            raise st.not_found(resource[0], resource[1], name)
        new = merge_patch(current, patch)
        new["metadata"]["resourceVersion"] = str(next(self._rv))
        self.objects[key] = new
        return copy.deepcopy(new)

    async def delete(self, resource: ResourceRef, name: str, *, namespace: str = "") -> None:
        self._record("delete", resource[1], name)
        self._react("delete", resource[1], None)
        if self.objects.pop(self._key(resource, namespace, name), None) is None:
            raise st.not_found(resource[0], resource[1], name)

    async def write_chain(self, writes: Sequence[Write]) -> list[WriteResult]:
        self.trips.append([" ".join(_spelled(write)) for write in writes])
        self._chained = True
        try:
            return await write_one_by_one(self, writes)
        finally:
            self._chained = False
