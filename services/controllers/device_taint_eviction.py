"""The device-taint-eviction controller: pods on NoExecute-tainted devices are deleted (Kubernetes 1.37).

Why this module exists: it is the I/O around `services.controllers.device_taint_state`,
following ``pkg/controller/devicetainteviction``. The informer handlers feed
pods, ResourceClaims, ResourceSlices and (with DRADeviceTaintRules)
DeviceTaintRules into the state, which puts work on a rate-limited queue:

- a pod (``PodRef``) whose deletion time has come gets the
  ``DisruptionTarget`` condition (reason ``DeletionByDeviceTaintManager``), a
  ``DeviceTaintManagerEviction`` Event ("Marking for deletion") and is
  deleted with its uid as precondition; one whose time has not come is looked
  at again then (a timer per pod, which a removed taint cancels);
- a DeviceTaintRule (``RuleRef``) gets its ``EvictionInProgress`` condition
  written, at most every ``RULE_STATUS_PERIOD`` while eviction is in progress.

The controller runs only with DRADeviceTaints on (on by default since 1.37,
off at ``--emulated-version=1.31``); DeviceTaintRules are watched only with
DRADeviceTaintRules on as well.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from services.api.machinery import status as st
from services.api.types.registry import RESOURCE_GROUP
from services.controllers.device_taint_state import (
    EVENT_DELETE,
    EVENT_REASON,
    EVICTION_IN_PROGRESS,
    EvictionState,
    PodEvent,
    PodRef,
    RuleRef,
    WorkItem,
    disruption_condition,
    has_disruption_condition,
)
from services.controllers.gates import Gates, gate_enabled
from services.controllers.metrics import ControllerMetrics
from services.controllers.ports import EventRecorder, Writer
from services.kube.feature_gates import DRA_DEVICE_TAINT_RULES, DRA_DEVICE_TAINTS
from services.runtime.informer import Informer
from services.runtime.workers import RequeueAfter, run_workers
from services.runtime.workqueue import WorkQueue

log = logging.getLogger(__name__)

Obj = dict[str, Any]

CONTROLLER_NAME = "device-taint-eviction-controller"
"""``names.DeviceTaintEvictionController``: the controller's name and its Events' source component."""
DEFAULT_WORKERS = 8
"""``ConcurrentSyncs`` of kube-controller-manager's DeviceTaintEvictionController (its default is 8)."""


def enabled(gates: Gates) -> bool:
    return gate_enabled(gates, DRA_DEVICE_TAINTS)


def rules_enabled(gates: Gates) -> bool:
    return enabled(gates) and gate_enabled(gates, DRA_DEVICE_TAINT_RULES)


class DeviceTaintEvictionController:
    """See the module docstring. ``register()`` right after the informer starts, then ``await run()``."""

    def __init__(
        self,
        informer: Informer,
        client: Writer,
        *,
        gates: Gates = None,
        recorder: EventRecorder | None = None,
        metrics: ControllerMetrics | None = None,
        workers: int = DEFAULT_WORKERS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.informer = informer
        self.client = client
        self.recorder = recorder
        self.metrics = metrics or ControllerMetrics()
        self.workers = workers
        self.clock = clock
        self.watch_rules = rules_enabled(gates)
        self.queue: WorkQueue[WorkItem] = WorkQueue()
        self.pods = informer.store("", "pods")
        self.rules = informer.store(RESOURCE_GROUP, "devicetaintrules")
        self.state = EvictionState(pods=self.pods, queue=self.queue, clock=clock)
        self._event_tasks: set[asyncio.Task[Any]] = set()
        self._registered = False

    def register(self) -> None:
        if self._registered:
            return
        self._registered = True
        self.informer.add_handler("", "pods", _Handler(self, self.state.handle_pod_change))
        self.informer.add_handler(RESOURCE_GROUP, "resourceclaims", _Handler(self, self.state.handle_claim_change))
        self.informer.add_handler(RESOURCE_GROUP, "resourceslices", _Handler(self, self.state.handle_slice_change))
        if self.watch_rules:
            self.informer.add_handler(RESOURCE_GROUP, "devicetaintrules", _Handler(self, self.state.handle_rule_change))

    async def run(self) -> None:
        self.register()
        await self.informer.synced.wait()
        try:
            await run_workers(
                self.queue,
                self.sync,
                workers=self.workers,
                name=CONTROLLER_NAME,
                on_failure=self.metrics.sync_failed(CONTROLLER_NAME),
                expected=(st.StatusError,),
            )
        finally:
            for task in list(self._event_tasks):
                task.cancel()

    # -- events from the handlers ------------------------------------------------

    def flush_events(self) -> None:
        """Record the Events the last handler produced (the recorder is async; handlers are not)."""
        for event in self.state.drain_events():
            self._emit(event)

    def _emit(self, event: PodEvent) -> None:
        if self.recorder is None:
            log.info(
                "pod eviction event", extra={"key": f"{event.pod.namespace}/{event.pod.name}", "note": event.message}
            )
            return
        task = asyncio.get_running_loop().create_task(
            self.recorder.record(_involved(event.pod), "Normal", EVENT_REASON, event.message)
        )
        self._event_tasks.add(task)
        task.add_done_callback(self._event_tasks.discard)

    # -- work ---------------------------------------------------------------------

    async def sync(self, item: WorkItem) -> None:
        if isinstance(item, PodRef):
            await self.maybe_delete_pod(item)
        else:
            await self.maybe_update_rule_status(item)

    async def maybe_delete_pod(self, ref: PodRef) -> None:
        delay, eviction = self.state.pod_due(ref)
        if eviction is None:
            return
        if delay > 0:
            raise RequeueAfter(delay)
        pod = self.pods.get(ref.namespace, ref.name)
        if pod is None or (pod.get("metadata") or {}).get("uid") != ref.uid:
            # Gone, or replaced by a pod of the same name: nothing left to evict.
            self.state.pod_done(ref, eviction, evicted=False)
            return
        if not (pod.get("metadata") or {}).get("deletionTimestamp"):
            self._emit(PodEvent(ref, EVENT_DELETE))
            if not has_disruption_condition(pod):
                patch = {"status": {"conditions": [disruption_condition(self.clock())]}}
                try:
                    await self.client.patch(
                        "", "pods", ref.namespace, ref.name, patch, patch_type="strategic", subresource="status"
                    )
                except st.StatusError as err:
                    if err.code == 404:
                        self.state.pod_done(ref, eviction, evicted=False)
                        return
                    raise
            try:
                await self.client.delete("", "pods", ref.namespace, ref.name, preconditions={"uid": ref.uid})
            except st.StatusError as err:
                if err.code == 404:
                    self.state.pod_done(ref, eviction, evicted=False)
                    return
                raise  # a conflict: the next attempt sees the pod that replaced it
            latency = max(self.clock() - eviction.when, 0.0)
            self.metrics.taint_pod_deletions.inc()
            self.metrics.taint_pod_deletion_latency.observe(latency)
            log.info(
                "evicted pod by deleting it",
                extra={
                    "key": f"{ref.namespace}/{ref.name}",
                    "latency": round(latency, 3),
                    "reason": ", ".join(r.describe() for r in eviction.reasons),
                },
            )
        self.state.pod_done(ref, eviction, evicted=True)

    async def maybe_update_rule_status(self, ref: RuleRef) -> None:
        rule = self.rules.get("", ref.name)
        if rule is None or (rule.get("metadata") or {}).get("uid") != ref.uid:
            return  # deleted or replaced
        decision = self.state.rule_status(rule)
        if decision.condition is not None:
            new = {**rule, "status": dict(rule.get("status") or {})}
            others = [c for c in new["status"].get("conditions") or () if c.get("type") != EVICTION_IN_PROGRESS]
            new["status"]["conditions"] = [*others, decision.condition]
            await self.client.update_status(RESOURCE_GROUP, "devicetaintrules", new)
            log.info(
                "updated DeviceTaintRule status",
                extra={"key": ref.name, "reason": decision.condition["reason"], "status": decision.condition["status"]},
            )
        if decision.delay > 0:
            raise RequeueAfter(decision.delay)


def _involved(ref: PodRef) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": ref.namespace, "name": ref.name, "uid": ref.uid},
    }


class _Handler:
    """Informer handler feeding one kind of object into the state (old/new, None for add/delete)."""

    def __init__(self, controller: DeviceTaintEvictionController, handle: Callable[[Obj | None, Obj | None], None]):
        self.controller = controller
        self.handle = handle

    def on_add(self, obj: Obj) -> None:
        self.handle(None, obj)
        self.controller.flush_events()

    def on_update(self, old: Obj, new: Obj) -> None:
        self.handle(old, new)
        self.controller.flush_events()

    def on_delete(self, obj: Obj) -> None:
        self.handle(obj, None)
        self.controller.flush_events()
