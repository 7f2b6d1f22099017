"""The ownerReference garbage collector of the controller-manager.

Why this module exists: dependents whose owners are gone must go too (a
generated ResourceClaim when its pod is deleted), and the propagation policies
of a delete — Background, Foreground, Orphan — must mean what they mean in
Kubernetes. The committer only marks an owner (``foregroundDeletion`` or
``orphan`` finalizer plus ``deletionTimestamp``); this collector does the rest.

It keeps no graph of its own. The shared informer already holds every object
of every resource in `services.api.types.registry`, so an index by owner uid gives
the dependents and a lookup by kind and name gives the owners. Because the log
is totally ordered and an owner's uid exists before any reference to it, an
owner that the informer does not have (while it has the dependent) is gone:
no live read is needed. Everything is re-derived from informer state on every
pass, so the collector is idempotent and a restart simply looks at everything
again. The decisions are `services.controllers.ownership.plan`; this module
enqueues keys from informer events and executes the actions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from services.api.machinery import status as st
from services.api.types import registry
from services.api.types.registry import ResourceType
from services.controllers.metrics import ControllerMetrics
from services.controllers.mutation_cache import indexed
from services.controllers.object_edits import (
    with_unblocked_owner_references,
    without_finalizer,
    without_owner_references,
)
from services.controllers.ownership import (
    Action,
    Delete,
    Enqueue,
    OrphanDependents,
    RemoveFinalizer,
    TrimOwnerReferences,
    UnblockOwnerReferences,
    check_owners,
    is_deleting_dependents,
    is_orphaning,
    owner_references,
    owner_type,
    plan,
    uid_of,
)
from services.controllers.ports import Writer
from services.runtime.informer import Informer, by_owner_uid
from services.runtime.workers import run_workers
from services.runtime.workqueue import WorkQueue

log = logging.getLogger(__name__)

Obj = dict[str, Any]
GCKey = tuple[str, str, str, str]
"""(group, resource, namespace, name)."""

CONTROLLER_NAME = "garbage-collector"
OWNER_UID_INDEX = "garbage-collector/owner-uid"
DEFAULT_WORKERS = 4


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    return meta


def key_of(rt: ResourceType, obj: Mapping[str, Any]) -> GCKey:
    meta = _meta(obj)
    return (rt.group, rt.plural, str(meta.get("namespace", "") or ""), str(meta.get("name", "")))


class GarbageCollector:
    """See the module docstring. Construct, then ``await run()`` (cancel the task to stop)."""

    def __init__(
        self,
        informer: Informer,
        client: Writer,
        *,
        workers: int = DEFAULT_WORKERS,
        metrics: ControllerMetrics | None = None,
        resources: Sequence[ResourceType] = registry.STORED_RESOURCES,
        queue: WorkQueue[GCKey] | None = None,
    ) -> None:
        self.informer = informer
        self.client = client
        self.workers = workers
        self.metrics = metrics or ControllerMetrics()
        self.resources = tuple(resources)
        self.queue: WorkQueue[GCKey] = queue or WorkQueue()
        self._types = {(rt.group, rt.plural): rt for rt in self.resources}
        self._registered = False

    # -- wiring ---------------------------------------------------------------

    def register(self) -> None:
        """Index every resource by owner uid and watch it (idempotent); existing objects replay as adds."""
        if self._registered:
            return
        self._registered = True
        for rt in self.resources:
            self.informer.store(rt.group, rt.plural).add_index(OWNER_UID_INDEX, by_owner_uid)
        for rt in self.resources:
            self.informer.add_handler(rt.group, rt.plural, _Handler(self, rt))

    async def run(self) -> None:
        """Wait for the informer, then work the queue with ``workers`` workers until cancelled."""
        self.register()
        await self.informer.synced.wait()
        await run_workers(
            self.queue,
            self.sync,
            workers=self.workers,
            name=CONTROLLER_NAME,
            on_failure=self.metrics.sync_failed(CONTROLLER_NAME),
            describe="/".join,
            expected=(st.StatusError,),
        )

    # -- lookups --------------------------------------------------------------

    def lookup(self, rt: ResourceType, namespace: str, name: str) -> Obj | None:
        return self.informer.store(rt.group, rt.plural).get(namespace, name)

    def dependents_of(self, uid: str) -> list[tuple[ResourceType, Obj]]:
        if not uid:
            return []
        found = []
        for rt in self.resources:
            for obj in indexed(self.informer.store(rt.group, rt.plural), OWNER_UID_INDEX, uid):
                found.append((rt, obj))
        return found

    def _owners_of(self, obj: Mapping[str, Any]) -> Iterable[tuple[ResourceType, Obj]]:
        namespace = str(_meta(obj).get("namespace", "") or "")
        for ref in owner_references(obj):
            rt = owner_type(ref)
            if rt is None or (rt.group, rt.plural) not in self._types:
                continue
            owner = self.lookup(rt, namespace if rt.namespaced else "", str(ref.get("name", "")))
            if owner is not None and uid_of(owner) == ref.get("uid"):
                yield rt, owner

    # -- event handlers (inside the informer; they only enqueue) -------------

    def observe(self, rt: ResourceType, obj: Obj, old: Obj | None = None) -> None:
        if owner_references(obj) or is_deleting_dependents(obj) or is_orphaning(obj):
            self.queue.add(key_of(rt, obj))
        self._wake_waiting_owners(obj, old)

    def forget(self, rt: ResourceType, obj: Obj) -> None:
        # Its dependents may now be dangling; owners waiting for it may finish.
        for dep_rt, dep in self.dependents_of(uid_of(obj)):
            self.queue.add(key_of(dep_rt, dep))
        self._wake_waiting_owners(obj, None)

    def _wake_waiting_owners(self, obj: Obj, old: Obj | None) -> None:
        for source in (obj, old):
            if source is None:
                continue
            for owner_rt, owner in self._owners_of(source):
                if is_deleting_dependents(owner):
                    self.queue.add(key_of(owner_rt, owner))

    # -- work -----------------------------------------------------------------

    async def sync(self, key: GCKey) -> None:
        group, resource, namespace, name = key
        rt = self._types.get((group, resource))
        if rt is None:
            return
        item = self.lookup(rt, namespace, name)
        if item is None:
            return
        dependents = self.dependents_of(uid_of(item))
        actions = plan(item, owners=check_owners(item, self.lookup), dependents=[d for _, d in dependents])
        dependent_types = {id(d): drt for drt, d in dependents}
        for action in actions:
            item = await self._execute(rt, item, action, dependent_types)
            if item is None:
                return

    async def _execute(self, rt: ResourceType, item: Obj, action: Action, types: dict[int, ResourceType]) -> Obj | None:
        meta = _meta(item)
        ctx = {"key": "/".join(key_of(rt, item)), "resourceVersion": meta.get("resourceVersion")}
        if isinstance(action, Delete):
            log.info("deleting dependent whose owners are gone", extra={**ctx, "propagationPolicy": action.policy})
            try:
                await self.client.delete(
                    rt.group,
                    rt.plural,
                    str(meta.get("namespace", "") or ""),
                    str(meta.get("name", "")),
                    propagationPolicy=action.policy,
                    preconditions={"uid": meta.get("uid")},
                )
            except st.StatusError as err:
                if err.code not in (404, 409):
                    raise
                return None  # already gone, or replaced by a new object with its own owners
            self.metrics.gc_deletes.labels(resource=rt.group_resource, policy=action.policy).inc()
            return None
        if isinstance(action, TrimOwnerReferences):
            log.info("removing references to absent or waiting owners", extra={**ctx, "owners": sorted(action.uids)})
            updated = await self.client.update(rt.group, rt.plural, without_owner_references(item, action.uids))
            self.metrics.gc_owner_references_removed.labels(resource=rt.group_resource).inc()
            return updated
        if isinstance(action, UnblockOwnerReferences):
            return await self.client.update(rt.group, rt.plural, with_unblocked_owner_references(item))
        if isinstance(action, OrphanDependents):
            uid = frozenset({uid_of(item)})
            for dependent in action.dependents:
                dep_rt = types[id(dependent)]
                log.info("orphaning dependent", extra={**ctx, "dependent": "/".join(key_of(dep_rt, dependent))})
                try:
                    await self.client.update(dep_rt.group, dep_rt.plural, without_owner_references(dependent, uid))
                except st.StatusError as err:
                    if err.code != 404:
                        raise
                self.metrics.gc_owner_references_removed.labels(resource=dep_rt.group_resource).inc()
            return item
        if isinstance(action, RemoveFinalizer):
            log.info("removing finalizer", extra={**ctx, "finalizer": action.finalizer})
            updated = await self.client.update(rt.group, rt.plural, without_finalizer(item, action.finalizer))
            self.metrics.gc_finalizers_removed.labels(finalizer=action.finalizer).inc()
            return updated
        if isinstance(action, Enqueue):
            for obj in action.objects:
                self.queue.add(key_of(types[id(obj)], obj))
            return item
        raise AssertionError(f"unknown action {action!r}")


class _Handler:
    def __init__(self, gc: GarbageCollector, rt: ResourceType) -> None:
        self.gc = gc
        self.rt = rt

    def on_add(self, obj: Obj) -> None:
        self.gc.observe(self.rt, obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self.gc.observe(self.rt, new, old)

    def on_delete(self, obj: Obj) -> None:
        self.gc.forget(self.rt, obj)
