"""The namespace controller of the controller-manager: empties a terminating namespace, then finalizes it.

Why this module exists: a DELETE of a namespace only marks it (the committer
sets ``deletionTimestamp`` and phase ``Terminating``, and keeps it while
``spec.finalizers`` holds ``kubernetes``); this controller deletes what the
namespace holds and then removes that finalizer, as Kubernetes' namespace
controller does. The decisions are `services.controllers.namespace_deletion`;
this module reads the shared informer, sends the writes and is woken by events.

It is event-driven: a namespace that is deleted, and any change or deletion
of an object inside a terminating namespace, enqueues the namespace's name.
Everything is re-derived from the informer on every sync — nothing is kept in
memory between syncs — so a restarted controller-manager picks up a
namespace half-way through from the objects themselves. Pods are deleted as
the API deletes them (gracefully: the node agent stops them and unprepares
their claims); their claims are deleted only once the pods are gone, and the
resourceclaim controller deallocates them and lifts their delete-protection
finalizer on its usual path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from services.api.machinery import status as st
from services.api.types import registry
from services.api.types.registry import ResourceType
from services.controllers import namespace_deletion as plan
from services.controllers.metrics import ControllerMetrics
from services.controllers.ports import Writer
from services.kube import namespaces as ns_rules
from services.kube.times import now_text
from services.runtime.informer import Informer
from services.runtime.workers import run_workers
from services.runtime.workqueue import WorkQueue

log = logging.getLogger(__name__)

Obj = dict[str, Any]
CONTROLLER_NAME = "namespace"
DEFAULT_WORKERS = 2  # kube-controller-manager's --concurrent-namespace-syncs is 10; draplane's namespaces are few


class NamespaceController:
    """See the module docstring. ``register()`` right after the informer starts, then ``await run()``."""

    def __init__(
        self,
        informer: Informer,
        client: Writer,
        *,
        workers: int = DEFAULT_WORKERS,
        metrics: ControllerMetrics | None = None,
        resources: Sequence[ResourceType] = registry.STORED_RESOURCES,
        clock: Callable[[], str] = now_text,
    ) -> None:
        self.informer = informer
        self.client = client
        self.workers = workers
        self.metrics = metrics or ControllerMetrics()
        self.resources = plan.namespaced_resources(resources)
        self.clock = clock
        self.queue: WorkQueue[str] = WorkQueue()
        self._registered = False

    # -- wiring ---------------------------------------------------------------

    def register(self) -> None:
        """Watch namespaces and everything namespaced (idempotent); existing objects replay as adds."""
        if self._registered:
            return
        self._registered = True
        self.informer.add_handler("", "namespaces", _NamespaceHandler(self))
        for rt in self.resources:
            self.informer.add_handler(rt.group, rt.plural, _ContentHandler(self))

    async def run(self) -> None:
        self.register()
        await self.informer.synced.wait()
        await run_workers(
            self.queue,
            self.sync,
            workers=self.workers,
            name=CONTROLLER_NAME,
            on_failure=self.metrics.sync_failed(CONTROLLER_NAME),
            expected=(st.StatusError, _ContentNotDeleted),
        )

    def _namespace(self, name: str) -> Obj | None:
        return self.informer.store("", "namespaces").get("", name)

    def observe_namespace(self, namespace: Obj) -> None:
        if plan.needs_work(namespace):
            self.queue.add(str(namespace["metadata"]["name"]))

    def observe_content(self, obj: Obj) -> None:
        name = str((obj.get("metadata") or {}).get("namespace") or "")
        if name and plan.needs_work(self._namespace(name)):
            self.queue.add(name)

    # -- work -----------------------------------------------------------------

    def _contents(self, name: str, resources: Sequence[ResourceType]) -> dict[ResourceType, list[Obj]]:
        return {rt: self.informer.store(rt.group, rt.plural).list(name) for rt in resources}

    async def sync(self, name: str) -> None:
        namespace = self._namespace(name)
        if namespace is None or not plan.needs_work(namespace):
            return
        if not ns_rules.is_terminating(namespace):
            status = {**(namespace.get("status") or {}), "phase": ns_rules.TERMINATING}
            namespace = await self.client.update_status("", "namespaces", {**namespace, "status": status})
        pods = [rt for rt in self.resources if (rt.group, rt.plural) == ("", "pods")]
        errors, _ = await self._delete_all(name, pods)
        if any(self._contents(name, pods).values()):
            # Pods go first; the rest waits for their deletion events.
            await self._report(namespace, remaining=None, errors=errors)
            if errors:
                raise _ContentNotDeleted(errors)
            return
        others = [rt for rt in self.resources if rt not in pods]
        more, failed = await self._delete_all(name, others)
        errors += more
        # A resource whose deletes failed is reported by its error alone, not counted (as kube's deleter).
        left = plan.remaining(name, self._contents(name, [rt for rt in self.resources if rt not in failed]))
        errors += left.errors
        namespace = await self._report(namespace, remaining=left, errors=errors)
        if errors:
            raise _ContentNotDeleted(errors)
        if not left.empty:
            return  # finalizers still to run: their updates and deletions wake us
        log.info("namespace emptied; removing the kubernetes finalizer", extra={"namespace": name})
        try:
            await self.client.update(
                "", "namespaces", {**namespace, "spec": plan.finalized_spec(namespace)}, subresource="finalize"
            )
        except st.StatusError as err:
            if err.code != 404:
                raise

    async def _delete_all(self, name: str, resources: Sequence[ResourceType]) -> tuple[list[str], set[ResourceType]]:
        """Delete every object of ``resources`` in the namespace not already being deleted.

        Returns the errors and the resources they happened on.
        """
        errors: list[str] = []
        failed: set[ResourceType] = set()
        for rt, objects in self._contents(name, resources).items():
            for obj in plan.to_delete(objects):
                meta = obj["metadata"]
                try:
                    await self.client.delete(
                        rt.group,
                        rt.plural,
                        name,
                        str(meta["name"]),
                        propagationPolicy="Background",
                        preconditions={"uid": meta.get("uid")},
                    )
                except st.StatusError as err:
                    if err.code in (404, 405, 409):
                        continue  # gone, not deletable, or replaced by an object the next sync sees
                    errors.append(str(err.status.get("message") or err))
                    failed.add(rt)
                    break  # as deleteEachItem: the first failure ends this resource's pass
        return errors, failed

    async def _report(self, namespace: Obj, *, remaining: plan.Remaining | None, errors: list[str]) -> Obj:
        now = self.clock()
        status = namespace.get("status") or {}
        failures = plan.failure_conditions(remaining=remaining, errors=errors, now=now)
        conditions = plan.updated_conditions(status.get("conditions") or [], failures, now=now)
        if conditions is None:
            return namespace
        try:
            return await self.client.update_status(
                "", "namespaces", {**namespace, "status": {**status, "conditions": conditions}}
            )
        except st.StatusError as err:
            # As Kubernetes: a condition that could not be written does not stop the deletion.
            log.warning("could not update the namespace's conditions", extra={"error": err.status.get("message")})
            return self._namespace(str(namespace["metadata"]["name"])) or namespace


class _ContentNotDeleted(Exception):
    """Some deletes failed; the sync is retried with backoff."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))


class _NamespaceHandler:
    def __init__(self, controller: NamespaceController) -> None:
        self.controller = controller

    def on_add(self, obj: Obj) -> None:
        self.controller.observe_namespace(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self.controller.observe_namespace(new)

    def on_delete(self, obj: Obj) -> None:
        pass


class _ContentHandler:
    def __init__(self, controller: NamespaceController) -> None:
        self.controller = controller

    def on_add(self, obj: Obj) -> None:
        self.controller.observe_content(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self.controller.observe_content(new)

    def on_delete(self, obj: Obj) -> None:
        self.controller.observe_content(obj)
