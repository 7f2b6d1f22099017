"""The scheduler core without I/O: cache, queue, profiles and one attempt at a time.

The asyncio service (informers in, events/decisions/status out) is a thin loop
around this class:

    core.on_object_change(resource, old, new)      # every informer change
    attempt = await core.schedule_one()              # pops, runs a scheduling cycle
    publish(attempt.decision, attempt.message ...)   # FailedScheduling, decisions
    if attempt.succeeded:
        task = asyncio.create_task(core.bind(attempt))   # binding cycle, in parallel

``schedule_one`` and ``bind`` also put failed pods back into the queue exactly
as kube-scheduler's FailureHandler does, including the AssignedPodDelete event
that forgetting an assumed pod implies.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.scheduler import cluster_events as ce
from services.scheduler.binding import BindingOutcome, run_binding_cycle
from services.scheduler.cache import SchedulerCache
from services.scheduler.cluster_events import Resource
from services.scheduler.cycle import CycleOutcome, SchedulingAlgorithm, decision_record, run_scheduling_cycle
from services.scheduler.framework import CycleState, Obj
from services.scheduler.metrics import SchedulerMetrics
from services.scheduler.node_info import Snapshot, pod_uid
from services.scheduler.profile import Profile
from services.scheduler.queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
    Clock,
    PriorityQueue,
    QueuedPodInfo,
    scheduler_name,
)
from services.scheduler.status import Code

log = logging.getLogger(__name__)

REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


@dataclass(slots=True)
class Attempt:
    """One scheduling attempt: what happened and what the service should publish."""

    pinfo: QueuedPodInfo
    profile: Profile
    outcome: CycleOutcome
    started: float
    queue: str = ""  # where a failed pod went
    decision: dict[str, Any] = field(default_factory=dict)

    @property
    def succeeded(self) -> bool:
        return self.outcome.succeeded

    @property
    def skipped(self) -> bool:
        return self.outcome.status is not None and self.outcome.status.code == Code.SKIP

    @property
    def message(self) -> str:
        return self.outcome.message()

    @property
    def reason(self) -> str:
        """The PodScheduled condition reason of a failure (Unschedulable or SchedulerError)."""
        status = self.outcome.status
        return REASON_UNSCHEDULABLE if status is not None and status.is_rejected() else REASON_SCHEDULER_ERROR


class SchedulerCore:
    def __init__(
        self,
        *,
        profiles: Sequence[Profile],
        clock: Clock,
        metrics: SchedulerMetrics | None = None,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        percentage_of_nodes_to_score: int | None = None,
        dra_enabled: bool = True,
        pop_from_backoff_q: bool = False,
    ) -> None:
        """``pop_from_backoff_q``: the SchedulerPopFromBackoffQ gate (see `services.scheduler.queue`)."""
        self.clock = clock
        self.metrics = metrics
        self.dra_enabled = dra_enabled
        self.profiles: Mapping[str, Profile] = {p.scheduler_name: p for p in profiles}
        self.cache = SchedulerCache()
        self.snapshot = Snapshot()
        self.queue = PriorityQueue(
            clock=clock,
            profiles=self.profiles,
            pod_initial_backoff=pod_initial_backoff,
            pod_max_backoff=pod_max_backoff,
            pod_max_in_unschedulable_pods_duration=pod_max_in_unschedulable_pods_duration,
            metrics=metrics,
            pop_from_backoff_q=pop_from_backoff_q,
        )
        self.algorithms = {
            name: SchedulingAlgorithm(p, percentage_of_nodes_to_score=percentage_of_nodes_to_score)
            for name, p in self.profiles.items()
        }
        self._observers: list[Callable[[str, Obj | None, Obj | None], None]] = []
        for profile in self.profiles.values():
            for plugin in profile.plugins:
                observe = getattr(plugin, "observe", None)
                if callable(observe):
                    self._observers.append(observe)

    # ----------------------------------------------------------- informers

    def on_object_change(self, resource: str, old: Obj | None, new: Obj | None) -> None:
        """Feed one informer change (``old``/``new`` None on add/delete)."""
        if resource == Resource.NODE:
            if new is None:
                if old is not None:
                    self.cache.remove_node(old)
            else:
                self.cache.add_node(new)
        elif resource == Resource.POD:
            if new is None:
                if old is not None and ce.is_assigned(old):
                    self.cache.remove_pod(old)
            elif ce.is_assigned(new):
                self.cache.update_pod(old, new)
        for observe in self._observers:
            observe(resource, old, new)
        self.queue.on_object_change(resource, old, new, is_assumed=self.cache.is_assumed, dra_enabled=self.dra_enabled)
        if self.metrics is not None:
            self.metrics.set_cache_size(self.cache.node_count(), self.cache.pod_count(), self.cache.assumed_count())

    # ------------------------------------------------------------- attempts

    async def schedule_one(self) -> Attempt | None:
        """Pop the next pod and run its scheduling cycle; None when the queue is closed."""
        pinfo = await self.queue.pop()
        if pinfo is None:
            return None
        return await self.attempt(pinfo)

    async def attempt(self, pinfo: QueuedPodInfo) -> Attempt:
        profile = self.profiles.get(scheduler_name(pinfo.pod))
        started = self.clock()
        if profile is None:
            raise LookupError(f"no profile for scheduler {scheduler_name(pinfo.pod)!r}")
        algorithm = self.algorithms[profile.scheduler_name]
        self.snapshot = self.cache.update_snapshot(self.snapshot)
        outcome = await run_scheduling_cycle(
            algorithm=algorithm, cache=self.cache, snapshot=self.snapshot, pod=pinfo.pod, state=CycleState()
        )
        attempt = Attempt(pinfo, profile, outcome, started)
        attempt.decision = decision_record(outcome, attempt=pinfo.attempts, profile=profile.scheduler_name)
        if outcome.succeeded:
            return attempt
        if attempt.skipped:
            self.queue.done(pinfo.uid)
            return attempt
        attempt.queue = self._requeue(pinfo, *outcome.rejectors())
        if self.metrics is not None:
            duration = self.clock() - started
            if outcome.fit_error is not None:
                self.metrics.pod_unschedulable(profile.scheduler_name, duration)
            else:
                self.metrics.pod_schedule_error(profile.scheduler_name, duration)
        return attempt

    async def bind(self, attempt: Attempt) -> BindingOutcome:
        """The binding cycle of a successful attempt, with kube's failure handling."""
        outcome = attempt.outcome
        assert outcome.assumed_pod is not None
        result = await run_binding_cycle(
            profile=attempt.profile,
            cache=self.cache,
            state=outcome.state,
            assumed_pod=outcome.assumed_pod,
            node=outcome.node,
        )
        pinfo = attempt.pinfo
        if result.succeeded:
            self.queue.done(pinfo.uid)
            if self.metrics is not None:
                self.metrics.pod_scheduled(attempt.profile.scheduler_name, self.clock() - attempt.started)
                first = pinfo.initial_attempt_timestamp or attempt.started
                self.metrics.pod_bound(pinfo.attempts, self.clock() - first)
            return result
        # Forgetting the assumed pod frees its resources: an AssignedPodDelete for everyone else.
        assumed = outcome.assumed_pod
        uid = pod_uid(assumed)
        if result.status is not None and result.status.is_rejected():
            attempt.queue = self._requeue(pinfo, *result.rejectors())
            self.queue.move_all_to_active_or_backoff_queue(
                ce.ASSIGNED_POD_DELETE, assumed, None, lambda p: pod_uid(p) != uid
            )
        else:
            self.queue.move_all_to_active_or_backoff_queue(ce.ASSIGNED_POD_DELETE, assumed, None)
            attempt.queue = self._requeue(pinfo, set(), set())
        if self.metrics is not None:
            self.metrics.pod_schedule_error(attempt.profile.scheduler_name, self.clock() - attempt.started)
        return result

    def _requeue(self, pinfo: QueuedPodInfo, unschedulable: set[str], pending: set[str]) -> str:
        pinfo.unschedulable_plugins = unschedulable
        pinfo.pending_plugins = pending
        return self.queue.add_unschedulable_if_not_present(pinfo)
