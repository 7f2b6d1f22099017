"""An in-memory `Backend` test double for the HTTP layer.

It is not a product feature: it exists so the REST handlers can be tested (and
driven by the real kubectl) without the log and the committer. It keeps the
contract the handlers rely on — 404/409/410 Status errors, resourceVersions
that increase, list snapshots with continue tokens, watches that resume from a
version and can be expired — and implements just enough of the committer
(create, update, status update, merge/strategic/apply/JSON patches, delete,
binding) for kubectl flows to work.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import orjson

from services.api.machinery import status as st
from services.api.types.registry import ResourceType, by_resource
from services.apiserver.backend import ListResult, ObjectFilter, WatchEvent, WriteResult
from topics.envelope import Request, object_key


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "env": "name",
    "volumes": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "conditions": "type",
    "reservedFor": "uid",
    "resourceClaims": "name",
}


def strategic_patch(target: Any, patch: Any) -> Any:
    """A small strategic merge: merge keys for the lists kubectl touches, directives dropped."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$"):
            continue
        if k.startswith("$setElementOrder/"):
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list) and k in _MERGE_KEYS and isinstance(out.get(k), list):
            key = _MERGE_KEYS[k]
            merged = [dict(x) if isinstance(x, dict) else x for x in out[k]]
            for item in v:
                if not isinstance(item, dict):
                    merged.append(item)
                    continue
                if item.get("$patch") == "delete":
                    merged = [m for m in merged if not (isinstance(m, dict) and m.get(key) == item.get(key))]
                    continue
                for i, m in enumerate(merged):
                    if isinstance(m, dict) and m.get(key) == item.get(key):
                        merged[i] = strategic_patch(m, item)
                        break
                else:
                    merged.append(strategic_patch({}, item))
            out[k] = merged
        else:
            out[k] = strategic_patch(out.get(k), v)
    return out


def json_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    doc = copy.deepcopy(doc)
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = parts[-1]
        kind = op["op"]
        if kind in ("add", "replace"):
            if isinstance(parent, list):
                if last == "-":
                    parent.append(op["value"])
                elif kind == "add":
                    parent.insert(int(last), op["value"])
                else:
                    parent[int(last)] = op["value"]
            else:
                parent[last] = op["value"]
        elif kind == "remove":
            if isinstance(parent, list):
                parent.pop(int(last))
            else:
                del parent[last]
        elif kind == "test":
            cur = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if cur != op["value"]:
                raise st.StatusError(
                    st.make_status(422, "Invalid", "the server rejected our request due to an error in our request")
                )
    return doc


class MemoryBackend:
    """Objects in a dict, history in a list; every write bumps one counter."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.history: list[tuple[int, str, ResourceType, dict[str, Any]]] = []
        self.rv = 100
        self.oldest = 0  # versions at or below this are "compacted": 410 Gone
        self.requests: list[Request] = []
        self._watchers: list[_Watcher] = []
        self.watches_opened = 0  # every watch that started, closed ones included
        self._watches_changed = asyncio.Event()  # a watch started or ended

    # ------------------------------------------------------------- helpers

    def _key(self, rt: ResourceType, namespace: str, name: str) -> str:
        return object_key(rt.group, rt.plural, namespace if rt.namespaced else "", name)

    def seed(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """Store an object directly (test setup), as a committed ADDED."""
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("creationTimestamp", _now())
        meta.setdefault("uid", str(uuid.uuid4()))
        if rt.namespaced:
            meta.setdefault("namespace", "default")
        obj.setdefault("apiVersion", rt.api_version)
        obj.setdefault("kind", rt.kind)
        self._commit(rt, "ADDED", obj)
        return obj

    def _commit(self, rt: ResourceType, type_: str, obj: dict[str, Any]) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        meta = obj["metadata"]
        key = self._key(rt, meta.get("namespace", ""), meta["name"])
        if type_ == "DELETED":
            self.objects.pop(key, None)
        else:
            self.objects[key] = obj
        self.history.append((self.rv, type_, rt, copy.deepcopy(obj)))
        for w in self._watchers:
            w.wake.set()

    def send_bookmark(self) -> None:
        for w in self._watchers:
            w.bookmark = True
            w.wake.set()

    async def wait_for_watches(self, opened: int, timeout: float = 5.0) -> None:
        """Wait until ``opened`` watches have started here (the server iterates them after sending headers)."""
        async with asyncio.timeout(timeout):
            while self.watches_opened < opened:
                self._watches_changed.clear()
                await self._watches_changed.wait()

    async def wait_for_open_watches(self, count: int, timeout: float = 5.0) -> None:
        """Wait until exactly ``count`` watches are open (the server ends one once it notices its client left)."""
        async with asyncio.timeout(timeout):
            while len(self._watchers) != count:
                self._watches_changed.clear()
                await self._watches_changed.wait()

    @property
    def open_watches(self) -> int:
        return len(self._watchers)

    # ------------------------------------------------------------- reads

    async def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self.objects.get(self._key(rt, namespace, name))
        if obj is None:
            raise st.not_found(rt.group, rt.plural, name)
        return copy.deepcopy(obj)

    def _select(self, rt: ResourceType, namespace: str | None, match: ObjectFilter | None) -> list[dict[str, Any]]:
        prefix = object_key(rt.group, rt.plural, "", "")[:-2] + "/"
        items = []
        for key in sorted(self.objects):
            if not key.startswith(prefix):
                continue
            obj = self.objects[key]
            if namespace is not None and obj["metadata"].get("namespace") != namespace:
                continue
            if match is not None and not match(obj):
                continue
            items.append(obj)
        return items

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
        items = self._select(rt, namespace, match)
        rv = str(self.rv)
        if continue_token:
            try:
                tok = orjson.loads(base64.urlsafe_b64decode(continue_token))
                start, rv = tok["start"], tok["rv"]
            except Exception:
                raise st.bad_request("continue key is not valid: invalid token") from None
            items = [o for o in items if _sort_key(o) > start]
        token = None
        remaining = None
        if limit is not None and len(items) > limit:
            remaining = len(items) - limit
            items = items[:limit]
            token = base64.urlsafe_b64encode(orjson.dumps({"start": _sort_key(items[-1]), "rv": rv})).decode()
        return ListResult([copy.deepcopy(o) for o in items], rv, token, remaining)

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
        def wanted(ev_rt: ResourceType, obj: dict[str, Any]) -> bool:
            if ev_rt != rt:
                return False
            if namespace is not None and obj["metadata"].get("namespace") != namespace:
                return False
            return match is None or match(obj)

        watcher = _Watcher()
        self._watchers.append(watcher)
        self.watches_opened += 1
        self._watches_changed.set()
        try:
            if resource_version in (None, "", "0") or send_initial_events:
                start = self.rv
                for obj in self._select(rt, namespace, match):
                    yield WatchEvent("ADDED", copy.deepcopy(obj))
                if send_initial_events:
                    yield WatchEvent(
                        "BOOKMARK",
                        {
                            "metadata": {
                                "resourceVersion": str(start),
                                "annotations": {"k8s.io/initial-events-end": "true"},
                            }
                        },
                    )
            else:
                start = int(resource_version)
                if start < self.oldest:
                    raise st.too_old_resource_version(resource_version, str(self.oldest))
            pos = start
            while True:
                watcher.wake.clear()
                for rv, type_, ev_rt, obj in self.history:
                    if rv > pos:
                        pos = rv
                        if wanted(ev_rt, obj):
                            yield WatchEvent(type_, copy.deepcopy(obj))  # type: ignore[arg-type]
                if watcher.bookmark:
                    watcher.bookmark = False
                    yield WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": str(self.rv)}})
                    continue
                if self.rv <= pos:
                    await watcher.wake.wait()
        finally:
            self._watchers.remove(watcher)
            self._watches_changed.set()

    # ------------------------------------------------------------- writes

    async def write(self, request: Request) -> WriteResult:
        self.requests.append(request)
        rt = by_resource(request.group, request.resource)
        assert rt is not None
        dry = "All" in (request.options.get("dryRun") or [])
        sub = request.options.get("subresource")
        key = self._key(rt, request.namespace, request.name)
        current = self.objects.get(key)
        if request.op == "create" and sub == "binding":
            if current is None:
                raise st.not_found(rt.group, rt.plural, request.name)
            pod = copy.deepcopy(current)
            if (pod.get("spec") or {}).get("nodeName"):
                raise st.conflict(
                    rt.group,
                    rt.plural,
                    request.name,
                    f"pod {request.name} is already assigned to node {pod['spec']['nodeName']!r}",
                )
            pod.setdefault("spec", {})["nodeName"] = ((request.object or {}).get("target") or {}).get("name")
            if not dry:
                self._commit(rt, "MODIFIED", pod)
            return WriteResult(201, st.success_status())
        if request.op == "create":
            obj = copy.deepcopy(request.object or {})
            meta = obj.setdefault("metadata", {})
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
            if not meta.get("name"):
                raise st.invalid(
                    rt.group, rt.kind, "", [_required("metadata.name", "name or generateName is required")]
                )
            key = self._key(rt, request.namespace, meta["name"])
            if key in self.objects:
                raise st.already_exists(rt.group, rt.plural, meta["name"])
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = _now()
            meta.pop("resourceVersion", None)
            if rt.plural == "namespaces":
                obj.setdefault("status", {})["phase"] = "Active"
            if not dry:
                self._commit(rt, "ADDED", obj)
            return WriteResult(201, copy.deepcopy(obj))
        if current is None and request.op == "patch" and request.patch_type == "apply":
            obj = copy.deepcopy(request.patch)
            meta = obj.setdefault("metadata", {})
            meta.update(uid=str(uuid.uuid4()), creationTimestamp=_now(), name=request.name)
            if rt.namespaced:
                meta["namespace"] = request.namespace
            if not dry:
                self._commit(rt, "ADDED", obj)
            return WriteResult(201, copy.deepcopy(obj))
        if current is None:
            raise st.not_found(rt.group, rt.plural, request.name)
        if request.op in ("update", "update_status"):
            obj = copy.deepcopy(request.object or {})
            given = obj.get("metadata", {}).get("resourceVersion")
            if given and given != current["metadata"]["resourceVersion"]:
                raise st.modified_conflict(rt.group, rt.plural, request.name)
            if request.op == "update_status":
                new = copy.deepcopy(current)
                new["status"] = obj.get("status")
            else:
                new = obj
                new["metadata"]["uid"] = current["metadata"]["uid"]
                new["metadata"]["creationTimestamp"] = current["metadata"]["creationTimestamp"]
                if "status" in current:
                    new["status"] = current["status"]
        elif request.op == "patch":
            base = copy.deepcopy(current)
            if request.patch_type == "json":
                new = json_patch(base, request.patch)
            elif request.patch_type == "strategic":
                new = strategic_patch(base, request.patch)
            else:
                new = merge_patch(base, request.patch)
            if sub == "status":
                kept = copy.deepcopy(current)
                kept["status"] = new.get("status")
                new = kept
        elif request.op == "delete":
            pre = request.options.get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != current["metadata"]["uid"]:
                raise st.conflict(
                    rt.group,
                    rt.plural,
                    request.name,
                    f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                    f"{current['metadata']['uid']}",
                )
            if pre.get("resourceVersion") and pre["resourceVersion"] != current["metadata"]["resourceVersion"]:
                raise st.conflict(
                    rt.group,
                    rt.plural,
                    request.name,
                    f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                    f"ResourceVersion in object meta: {current['metadata']['resourceVersion']}",
                )
            gone = copy.deepcopy(current)
            if not dry:
                self._commit(rt, "DELETED", gone)
            return WriteResult(200, gone)
        else:  # pragma: no cover
            raise st.bad_request(f"unknown op {request.op}")
        if not dry:
            self._commit(rt, "MODIFIED", new)
        return WriteResult(200, copy.deepcopy(new))


def _required(field: str, detail: str) -> Any:
    from services.api.machinery.field_errors import ErrorType, FieldError

    return FieldError(ErrorType.REQUIRED, field, detail=detail)


def _sort_key(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


class _Watcher:
    def __init__(self) -> None:
        self.wake = asyncio.Event()
        self.bookmark = False
