"""The scheduler service: the pure ``SchedulerCore`` wired onto the log.

Why this module exists: the core decides; this module feeds it and publishes
what it decided, the way kube-scheduler's ``scheduler.go``, ``eventhandlers.go``
and ``schedule_one.go`` surround the framework:

* **In.** One informer (shared with other components when ``draplane up``
  passes one in) delivers every change of pods, nodes, ResourceClaims,
  ResourceSlices and DeviceClasses — and of PodSchedulingContexts only with
  DRAControlPlaneController on; with it off no handler for them exists at
  all. Pods in a terminal phase are invisible, as kube's informer field
  selector ``status.phase!=Succeeded,status.phase!=Failed`` makes them.
  Scheduling starts only once the informer has caught up with the log, so a
  restarted scheduler never hands out a device whose allocation it has not
  read yet.
* **The loop.** One task pops a pod and runs its scheduling cycle; a
  successful cycle's binding cycle (PreBind writes, Bind, PostBind) runs as
  its own task, so one pod's round trips through the committer never stall
  the next pod. The core's assume caches (pods and claims) make the next
  cycle see what is still being written.
* **Out.** Writes go through the committer as ``system:kube-scheduler``
  (``api_client.LogAPIClient``). FailedScheduling and Scheduled Events (source
  ``default-scheduler``) and one decision record per attempt go to their own
  topics through a batching ``Outbox``, never through the committer. A failed
  attempt also sets the pod's ``PodScheduled=False`` condition with a
  strategic-merge status patch, only when reason or message changed, as
  kube's ``updatePod`` does.

With leader election (``SchedulerConfig.leader_election``, on in ``draplane
scheduler`` as in kube-scheduler) a replica keeps its informer and queue warm
and schedules only while it holds the ``kube-system/kube-scheduler`` Lease,
after the predecessor-drain step (docs/decisions/leader-election.md); its
identity is in every decision record it writes.

Everything is re-derived from the log, so the service is restart-safe: claims
allocated and reserved for a pod by a previous run are found allocated and
the pod goes to the node they were allocated on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client import registry as prom_registry

from services.api.admission.authorization import SCHEDULER
from services.bus.port import Bus, OutRecord
from services.kube.feature_gates import (
    DRA_DEVICE_TAINT_RULES,
    DRA_DEVICE_TAINTS,
    DRA_EXTENDED_RESOURCE,
    SCHEDULER_POP_FROM_BACKOFF_Q,
    FeatureGates,
)
from services.kube.structured import Features
from services.runtime.client import Client
from services.runtime.events import EventRecorder, event_key
from services.runtime.informer import Informer, Obj
from services.runtime.leader_election import LeaderElectionConfig, LeaderElector
from services.runtime.snapshot import SnapshotStore
from services.scheduler import decisions
from services.scheduler.api_client import LogAPIClient
from services.scheduler.cache import CacheError
from services.scheduler.client import APIClient
from services.scheduler.cluster_events import Resource
from services.scheduler.dra.assume_cache import ClaimAssumeCache
from services.scheduler.dra.binding_conditions import DEFAULT_BINDING_TIMEOUT
from services.scheduler.dra.binding_metrics import BindingConditionsMetrics
from services.scheduler.dra.binding_wait import EVENT_REASON_PENDING, BindingConditions, pending_event_message
from services.scheduler.dra.stores import ObjectStore
from services.scheduler.metrics import SchedulerMetrics
from services.scheduler.outbox import Outbox
from services.scheduler.plugins.default_binder import DefaultBinder
from services.scheduler.plugins.dynamic_resources import DynamicResources
from services.scheduler.plugins.dynamic_resources_args import filter_timeout
from services.scheduler.pod_condition import ConditionWriter
from services.scheduler.profile import Profile, default_plugins
from services.scheduler.queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
    DEFAULT_SCHEDULER_NAME,
    QueuedPodInfo,
    scheduler_name,
)
from services.scheduler.scheduler import REASON_SCHEDULER_ERROR, REASON_UNSCHEDULABLE, Attempt, SchedulerCore
from topics.declarations import EVENTS
from topics.envelope import EventType, UserInfo, encode_event

log = logging.getLogger(__name__)

SCHEDULER_USER = UserInfo(SCHEDULER, ("system:authenticated",))
COMPONENT = DEFAULT_SCHEDULER_NAME
NOTE_LENGTH_LIMIT = 1024  # validation.NoteLengthLimit: the longest Event message
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})

RG = "resource.k8s.io"
# Registration order: what pods depend on first, pods last, so that replaying a
# shared informer's stores does not gate pods on claims that are merely not
# replayed yet.
STRUCTURED_RESOURCES: tuple[tuple[str, str, str], ...] = (
    ("", "nodes", Resource.NODE),
    (RG, "deviceclasses", Resource.DEVICE_CLASS),
    (RG, "resourceslices", Resource.RESOURCE_SLICE),
    (RG, "resourceclaims", Resource.RESOURCE_CLAIM),
)
CLASSIC_RESOURCES: tuple[tuple[str, str, str], ...] = ((RG, "podschedulingcontexts", Resource.POD_SCHEDULING_CONTEXT),)
TAINT_RULES: tuple[str, str, str] = (RG, "devicetaintrules", Resource.DEVICE_TAINT_RULE)
PODS: tuple[str, str, str] = ("", "pods", Resource.POD)


def truncate_message(message: str) -> str:
    """kube's truncateMessage: Event messages are cut at the note length limit."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return message[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


def visible_pod(pod: Obj | None) -> Obj | None:
    """The pod as the scheduler's informer sees it: terminal pods do not exist."""
    if pod is None or (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
        return None
    return pod


class _Feed:
    """An informer handler that hands every change of one resource to the core."""

    def __init__(self, change: Callable[[str, Obj | None, Obj | None], None], resource: str) -> None:
        self._change = change
        self._resource = resource

    def on_add(self, obj: Obj) -> None:
        self._change(self._resource, None, obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self._change(self._resource, old, new)

    def on_delete(self, obj: Obj) -> None:
        self._change(self._resource, obj, None)


class _PodFeed(_Feed):
    """Pods, with terminal ones filtered out (a pod finishing is a delete)."""

    def on_add(self, obj: Obj) -> None:
        if visible_pod(obj) is not None:
            super().on_add(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        before, after = visible_pod(old), visible_pod(new)
        if before is None and after is None:
            return
        self._change(self._resource, before, after)

    def on_delete(self, obj: Obj) -> None:
        if visible_pod(obj) is not None:
            super().on_delete(obj)


def feed(change: Callable[[str, Obj | None, Obj | None], None], resource: str) -> _Feed:
    """The informer handler that hands ``resource`` changes to ``change`` (the core's ``on_object_change``)."""
    return _PodFeed(change, resource) if resource == Resource.POD else _Feed(change, resource)


def watched_resources(gates: FeatureGates) -> list[tuple[str, str, str]]:
    """(group, plural, event resource) of everything a scheduler with these gates has a handler for, in order."""
    dra = gates.dynamic_resource_allocation
    resources: list[tuple[str, str, str]] = [STRUCTURED_RESOURCES[0]]
    if dra:
        resources += STRUCTURED_RESOURCES[1:]
    if dra and gates.dra_control_plane_controller:
        resources += CLASSIC_RESOURCES
    if dra and _taint_rules_enabled(gates):
        resources.insert(3, TAINT_RULES)  # before the claims, like the slices the rules apply to
    resources.append(PODS)
    return resources


def _taint_rules_enabled(gates: FeatureGates) -> bool:
    """DeviceTaintRules count only when both DRADeviceTaints and DRADeviceTaintRules are on."""
    return gates.enabled(DRA_DEVICE_TAINTS) and gates.enabled(DRA_DEVICE_TAINT_RULES)


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """What ``draplane scheduler`` flags set (kube-scheduler's KubeSchedulerConfiguration subset)."""

    gates: FeatureGates = field(default_factory=FeatureGates)
    pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF
    pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF
    pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
    percentage_of_nodes_to_score: int | None = None
    client_timeout: float = 10.0
    host: str = ""  # Event source host (reportingInstance)
    leader_election: LeaderElectionConfig | None = None  # None: schedule at once, as --leader-elect=false
    # DynamicResourcesArgs.bindingTimeout in seconds (DRADeviceBindingConditions); None: 600 s.
    binding_timeout: float | None = None
    dra_filter_timeout: float | None = None  # DynamicResourcesArgs.filterTimeout, seconds (None: its default)


def build_core(
    config: SchedulerConfig,
    *,
    api: APIClient,
    clock: Callable[[], float],
    metrics: SchedulerMetrics | None = None,
) -> tuple[SchedulerCore, DynamicResources]:
    """The core with kube's default profile and the DynamicResources plugin, as ``config``'s gates set them.

    One wiring for the live scheduler and for ``draplane replay --scheduler``,
    so a replay runs exactly the plugins the recorded scheduler ran. ``api``
    is where the plugins write (claims, bindings, PodSchedulingContexts).
    """
    gates = config.gates
    dra_enabled = gates.dynamic_resource_allocation
    control_plane_controller = dra_enabled and gates.dra_control_plane_controller
    features = Features.from_gates(gates)
    binding_timeout = DEFAULT_BINDING_TIMEOUT if config.binding_timeout is None else config.binding_timeout
    dynamic_resources = DynamicResources(
        client=api,
        classes=ObjectStore(),
        slices=ObjectStore(),
        claims=ClaimAssumeCache(),
        scheduling_contexts=ObjectStore() if control_plane_controller else None,
        taint_rules=ObjectStore() if dra_enabled and _taint_rules_enabled(gates) else None,
        enabled=dra_enabled,
        control_plane_controller=control_plane_controller,
        features=features,
        binding_conditions=BindingConditions(enabled=features.binding_conditions, timeout=binding_timeout),
        filter_timeout=filter_timeout(gates, config.dra_filter_timeout),
        extended_resources=dra_enabled and gates.enabled(DRA_EXTENDED_RESOURCE),
    )
    profile = Profile(default_plugins(binder=DefaultBinder(api), dynamic_resources=dynamic_resources))
    core = SchedulerCore(
        profiles=[profile],
        clock=clock,
        metrics=metrics,
        pod_initial_backoff=config.pod_initial_backoff,
        pod_max_backoff=config.pod_max_backoff,
        pod_max_in_unschedulable_pods_duration=config.pod_max_in_unschedulable_pods_duration,
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        dra_enabled=dra_enabled,
        pop_from_backoff_q=gates.enabled(SCHEDULER_POP_FROM_BACKOFF_Q),
    )
    return core, dynamic_resources


async def between_cycles() -> None:
    """Two turns of the event loop between two scheduling cycles.

    `PriorityQueue.pop` returns at once while pods are active, so without a
    turn the informer, the replies and the binding tasks would wait for the
    queue to empty. One turn runs the binding task of the cycle just done up
    to its requests' send; the bus appends them in a task of its own
    (`services.bus.embedded.appender`), which the second turn runs. With one
    turn that append waited for the whole next cycle: the pod's requests
    reached the log ~2 ms later at the median (docs/decisions/latency.md,
    "Fourteenth pass"). kube's binding cycle is a goroutine; it never waits for
    the next scheduling cycle either.
    """
    await asyncio.sleep(0)
    await asyncio.sleep(0)


class SchedulerService:
    """kube-scheduler over the log; ``await run()`` until the task is cancelled.

    ``informer``: a shared, already constructed informer (started or not); the
    service starts and stops only one it created itself (from ``snapshot``
    when given, so a restart reads only the log's tail). ``registry`` holds
    kube-scheduler's metrics (``exposition()`` renders ``/metrics``).
    """

    def __init__(
        self,
        bus: Bus,
        *,
        config: SchedulerConfig | None = None,
        informer: Informer | None = None,
        snapshot: SnapshotStore | None = None,
        user: UserInfo = SCHEDULER_USER,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bus = bus
        self.config = config or SchedulerConfig()
        gates = self.config.gates
        self.dra_enabled = gates.dynamic_resource_allocation
        self.control_plane_controller = self.dra_enabled and gates.dra_control_plane_controller
        self._own_informer = informer is None
        self.informer = informer or Informer(bus, snapshot=snapshot, name="scheduler")
        self.client = Client(bus, user=user, informer=self.informer, timeout=self.config.client_timeout)
        self.api = LogAPIClient(self.client)
        self.registry = registry or CollectorRegistry()
        self.metrics = SchedulerMetrics(self.registry)
        self.recorder = EventRecorder(bus, component=COMPONENT, host=self.config.host)
        self.outbox = Outbox(bus)
        self.conditions = ConditionWriter(self.client)
        self.core, self.dynamic_resources = build_core(self.config, api=self.api, clock=clock, metrics=self.metrics)
        election = self.config.leader_election
        self.elector = (
            LeaderElector(
                election, client=self.client, component=COMPONENT, host=self.config.host, registry=self.registry
            )
            if election is not None and election.enabled
            else None
        )
        binding = self.dynamic_resources.binding
        binding.on_wait = lambda pod, node: self._event(
            pod, "Normal", EVENT_REASON_PENDING, pending_event_message(node)
        )
        if binding.enabled:  # kube registers these metrics only with DRADeviceBindingConditions on
            binding.on_done = BindingConditionsMetrics(self.registry, profile=DEFAULT_SCHEDULER_NAME).record
        # Set once the informer caught up (a warm standby is ready) and, without election, drained;
        # ``leading`` once this replica schedules.
        self.ready = asyncio.Event()
        self.leading = asyncio.Event()
        self._bindings: set[asyncio.Task[None]] = set()
        self._registered = False

    # ------------------------------------------------------------- lifecycle

    def watched(self) -> list[tuple[str, str, str]]:
        """(group, plural, event resource) of everything the service has a handler for."""
        return watched_resources(self.config.gates)

    def register(self) -> None:
        """Install the informer handlers (idempotent); objects already in the stores replay as adds."""
        if self._registered:
            return
        self._registered = True
        for group, plural, resource in self.watched():
            self.informer.add_handler(group, plural, feed(self.core.on_object_change, resource))

    async def run(self) -> None:
        try:
            if self._own_informer:
                await self.informer.start()
            # No await between start and registration: handlers see the
            # snapshot's objects as adds and then every record after them.
            self.register()
            await self.client.start()
            await self.outbox.start()
            await self.informer.synced.wait()
            if self.elector is None:
                await self._lead()
                return
            log.info("scheduler ready (standby until it holds the lease)", extra={"position": self.informer.position})
            self.ready.set()
            await self.elector.run(self._lead)
        finally:
            await self._shutdown()

    async def _lead(self) -> None:
        """The active scheduler's life: drain what a predecessor sent, then schedule until stopped."""
        await self.client.wait_for_predecessors()  # a predecessor's last writes, decided and seen
        log.info("scheduler ready", extra={"position": self.informer.position})
        self.ready.set()
        self.leading.set()
        try:
            await self._scheduling_loop()
        finally:
            self.leading.clear()
            await self._stop_bindings()  # before a release lets a successor start

    async def _stop_bindings(self) -> None:
        for task in list(self._bindings):
            task.cancel()
        for task in list(self._bindings):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _shutdown(self) -> None:
        self.core.queue.close()
        await self._stop_bindings()
        with contextlib.suppress(Exception):
            await self.conditions.close()
        with contextlib.suppress(Exception):
            await self.outbox.close()
        with contextlib.suppress(Exception):
            await self.client.close()
        if self._own_informer:
            with contextlib.suppress(Exception):
                await self.informer.stop()

    def exposition(self, *, include_process: bool = True) -> bytes:
        """``/metrics`` text: kube-scheduler's metrics (and the process-wide runtime ones)."""
        text = generate_latest(self.registry)
        if include_process:
            text = generate_latest(prom_registry.REGISTRY) + text
        return text

    async def flush(self) -> None:
        """Wait until the binding cycles, condition writes, Events and decisions begun so far are done.

        Tests and benchmarks call it before reading ``events`` or ``decisions``:
        a pod can look bound to another informer before its binding task has
        recorded the decision.
        """
        if self._bindings:
            await asyncio.gather(*list(self._bindings), return_exceptions=True)
        await self.conditions.idle()
        await self.outbox.flush()

    # --------------------------------------------------------- scheduling loop

    async def _scheduling_loop(self) -> None:
        queue = self.core.queue
        while True:
            pinfo = await queue.pop()
            if pinfo is None:
                return
            await self._schedule(pinfo)
            await between_cycles()

    async def _schedule(self, pinfo: QueuedPodInfo) -> None:
        started = datetime.now(UTC)
        # What the attempt sees, for replay: every objects record below the informer's position (the
        # core is fed synchronously by the informer, which never yields mid-batch), and the node the
        # round-robin filter starts from.
        position = self.informer.position
        algorithm = self.core.algorithms.get(scheduler_name(pinfo.pod))
        start_node_index = algorithm.next_start_node_index if algorithm is not None else 0
        begin = time.perf_counter()
        try:
            attempt = await self.core.attempt(pinfo)
        except Exception:
            log.exception("scheduling cycle failed", extra={"key": pinfo.key})
            self._retry_after_error(pinfo)
            return
        self.metrics.scheduling_algorithm_duration.observe(time.perf_counter() - begin)
        pod = pinfo.pod
        record = decisions.with_context(
            attempt.decision,
            started=started,
            pod_resource_version=str((pod.get("metadata") or {}).get("resourceVersion") or ""),
            cycle=self.core.queue.scheduling_cycle,
            objects_position=position,
            start_node_index=start_node_index,
            scheduler=self.elector.identity if self.elector is not None else "",
        )
        if attempt.succeeded:
            task = asyncio.create_task(self._binding_cycle(attempt, record), name=f"bind-{pinfo.key}")
            self._bindings.add(task)
            task.add_done_callback(self._bindings.discard)
            return
        if not attempt.skipped:
            self._failed(pod, reason=attempt.reason, message=attempt.message)
        self._decide(record)

    async def _binding_cycle(self, attempt: Attempt, record: dict[str, Any]) -> None:
        node = attempt.outcome.node
        pod = attempt.outcome.assumed_pod or attempt.pinfo.pod
        try:
            result = await self.core.bind(attempt)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("binding cycle failed", extra={"key": attempt.pinfo.key})
            with contextlib.suppress(CacheError):
                self.core.cache.forget_pod(pod)
            self._retry_after_error(attempt.pinfo)
            self._decide(decisions.with_binding(record, node=node, bound=False, message=str(exc)))
            return
        if result.succeeded:
            meta = pod.get("metadata") or {}
            self._event(
                pod,
                "Normal",
                "Scheduled",
                f"Successfully assigned {meta.get('namespace')}/{meta.get('name')} to {node}",
            )
            self._decide(decisions.with_binding(record, node=node, bound=True))
            return
        status = result.status
        rejected = status is not None and status.is_rejected()
        message = result.message()
        self._failed(
            attempt.pinfo.pod, reason=REASON_UNSCHEDULABLE if rejected else REASON_SCHEDULER_ERROR, message=message
        )
        failed = decisions.with_binding(record, node=node, bound=False, message=message)
        failed["result"] = decisions.RESULT_UNSCHEDULABLE if rejected else decisions.RESULT_ERROR
        self._decide(failed)

    def _retry_after_error(self, pinfo: QueuedPodInfo) -> None:
        """A cycle that raised (a bug, not a verdict): the pod goes back with no rejectors, i.e. after backoff."""
        try:
            self.core.queue.add_unschedulable_if_not_present(pinfo)
        except Exception:
            log.exception("could not requeue pod", extra={"key": pinfo.key})
            self.core.queue.done(pinfo.uid)

    # -------------------------------------------------------------- publishing

    def _failed(self, pod: Mapping[str, Any], *, reason: str, message: str) -> None:
        """kube's handleSchedulingFailure, after requeueing: the Event and the pod condition."""
        self._event(pod, "Warning", "FailedScheduling", truncate_message(message))
        meta = pod.get("metadata") or {}
        self.conditions.submit(
            str(meta.get("namespace", "")),
            str(meta.get("name", "")),
            uid=str(meta.get("uid", "")),
            reason=reason,
            message=message,
        )

    def _event(self, pod: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        event = self.recorder.build(dict(pod), type_, reason, message)
        meta = event["metadata"]
        kind: EventType = "ADDED" if int(event.get("count", 1)) <= 1 else "MODIFIED"
        self.outbox.put(
            OutRecord(EVENTS, event_key(meta["namespace"], meta["name"]).encode(), encode_event(kind, event))
        )

    def _decide(self, record: Mapping[str, Any]) -> None:
        self.outbox.put(decisions.decision_record(record))
