"""The scheduling queue: activeQ, backoffQ and the unschedulable pool (kube-scheduler 1.31; 1.33+ pops from backoffQ).

* **activeQ** holds pods ready for an attempt, highest ``spec.priority`` first,
  then first-in first-out by the time they were queued.
* **backoffQ** holds pods that failed recently; a pod waits 1 s after its first
  attempt, doubling per attempt up to 10 s, counted from its last failure.
  Pods that failed with an error (no rejecting plugin) wait in a heap of their
  own, as kube's entityErrorBackoffQ.
* **pop from backoffQ** (``pop_from_backoff_q``: the SchedulerPopFromBackoffQ
  gate, beta and on from 1.33, absent at 1.31): when activeQ is empty, ``pop``
  takes the head of backoffQ instead of waiting for its backoff to expire —
  never a pod that failed with an error. Then a pod put into backoffQ wakes a
  waiting ``pop``; PreEnqueue runs when a pod enters backoffQ rather than when
  it leaves it; and a backoff expiry is aligned down to its 1 s ordering window
  (a pod leaves backoffQ when that window is over, the whole window at once),
  inside which backoffQ is ordered as activeQ is (priority, then time queued).
  Without the gate the queue is 1.31's.
* **unschedulable pool** holds pods rejected by plugins, and pods *gated* by a
  PreEnqueue plugin. A pod leaves it only when a cluster event matches a
  registration of a plugin that rejected it and that plugin's queueing hint
  says Queue (see ``queueing_hints.py``), or after the configurable
  unschedulable timeout (5 minutes by default). There is no other flush.
* **in-flight events**: while a pod is being scheduled, every interesting event
  is recorded; when the attempt fails, the events that arrived meanwhile are
  replayed against the pod's rejectors, so a change that raced with the attempt
  is never lost.

Time comes from an injected clock (seconds as a float), so tests drive it
explicitly; ``pop`` is the only coroutine and it waits for work or for the next
backoff/timeout deadline, never polling.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from services.scheduler import cluster_events as ce
from services.scheduler.cluster_events import ClusterEvent, Resource
from services.scheduler.framework import Obj, Pod, PreEnqueuePlugin
from services.scheduler.in_flight import InFlight
from services.scheduler.node_info import pod_key, pod_uid
from services.scheduler.queueing_hints import QueueingHintMap, QueueingStrategy, is_pod_worth_requeuing
from services.scheduler.status import Status

log = logging.getLogger(__name__)

Clock = Callable[[], float]

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
DEFAULT_SCHEDULER_NAME = "default-scheduler"
BACKOFF_Q_ORDERING_WINDOW = 1.0
"""Seconds; popping from backoffQ, backoff expiries align down to these (kube's backoffQOrderingWindowDuration)."""

ACTIVE_Q = "active"
BACKOFF_Q = "backoff"
UNSCHEDULABLE_PODS = "unschedulable"
GATED = "gated"


class QueueError(Exception):
    """A pod was handed to the queue in a state the queue does not allow."""


class QueueProfile(Protocol):
    """What the queue needs from a scheduling profile."""

    @property
    def pre_enqueue_plugins(self) -> Sequence[PreEnqueuePlugin]: ...

    @property
    def hint_map(self) -> QueueingHintMap: ...


class QueueMetrics(Protocol):
    """The subset of SchedulerMetrics the queue records (see metrics.py)."""

    def queue_incoming(self, queue: str, event: str) -> None: ...

    def set_pending(self, active: int, backoff: int, unschedulable: int, gated: int) -> None: ...

    def unschedulable_reason(self, plugin: str, profile: str, delta: int) -> None: ...


def scheduler_name(pod: Pod) -> str:
    return str((pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME)


def pod_priority(pod: Pod) -> int:
    return int((pod.get("spec") or {}).get("priority") or 0)


@dataclass(eq=False)
class QueuedPodInfo:
    """A pod plus its queueing history."""

    pod: Pod
    timestamp: float
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    gating_status: Status | None = None  # the PreEnqueue status that gated the pod, for events

    @property
    def key(self) -> str:
        return pod_key(self.pod)

    @property
    def uid(self) -> str:
        return pod_uid(self.pod) or self.key

    def rejector_plugins(self) -> set[str]:
        return self.unschedulable_plugins | self.pending_plugins

    def failed_with_error(self) -> bool:
        """Rejected by no plugin: the attempt ended in an error (kube keeps such pods in entityErrorBackoffQ)."""
        return not self.unschedulable_plugins and not self.pending_plugins


BackoffEntry = tuple[float, int, float, int, str]
"""(backoff expiry, -priority, time queued, seq, key); the middle two are 0 where expiry alone orders."""


class PriorityQueue:
    """The three-part scheduling queue; every method but ``pop`` is synchronous."""

    def __init__(
        self,
        *,
        clock: Clock,
        profiles: Mapping[str, QueueProfile],
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        metrics: QueueMetrics | None = None,
        pop_from_backoff_q: bool = False,
    ) -> None:
        """``pop_from_backoff_q``: the SchedulerPopFromBackoffQ gate (off: kube-scheduler 1.31's queue)."""
        self._clock = clock
        self._profiles = dict(profiles)
        self._initial_backoff = pod_initial_backoff
        self._max_backoff = pod_max_backoff
        self._max_in_unschedulable = pod_max_in_unschedulable_pods_duration
        self._metrics = metrics
        self._pop_from_backoff = pop_from_backoff_q
        self._seq = itertools.count()

        self._active: dict[str, tuple[int, QueuedPodInfo]] = {}
        self._active_heap: list[tuple[int, float, int, str]] = []
        self._backoff: dict[str, tuple[int, QueuedPodInfo]] = {}
        self._backoff_heap: list[BackoffEntry] = []  # pods rejected by plugins: the ones pop may take early
        self._error_backoff_heap: list[BackoffEntry] = []  # pods whose attempt failed with an error
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._gated: set[str] = set()
        # Timeout bookkeeping: (timestamp, seq, key), stale entries skipped lazily.
        self._unschedulable_heap: list[tuple[float, int, str]] = []
        self._unschedulable_seq: dict[str, tuple[int, float]] = {}

        self._in_flight = InFlight()

        self.scheduling_cycle = 0
        self._closed = False
        self._wakeup = asyncio.Event()

    # ------------------------------------------------------------ helpers

    def _now(self) -> float:
        return self._clock()

    def _profile(self, pod: Pod) -> QueueProfile | None:
        return self._profiles.get(scheduler_name(pod))

    @property
    def pop_from_backoff_q(self) -> bool:
        """Whether an empty activeQ pops from backoffQ (SchedulerPopFromBackoffQ)."""
        return self._pop_from_backoff

    def responsible_for(self, pod: Pod) -> bool:
        return scheduler_name(pod) in self._profiles

    def new_queued_pod_info(self, pod: Pod) -> QueuedPodInfo:
        return QueuedPodInfo(pod=pod, timestamp=self._now())

    def _incoming(self, queue: str, event: str) -> None:
        if self._metrics is not None:
            self._metrics.queue_incoming(queue, event)

    def _report_pending(self) -> None:
        if self._metrics is not None:
            gated = len(self._gated)
            self._metrics.set_pending(len(self._active), len(self._backoff), len(self._unschedulable) - gated, gated)

    def _broadcast(self) -> None:
        self._wakeup.set()

    # activeQ
    def _active_push(self, pinfo: QueuedPodInfo) -> None:
        seq = next(self._seq)
        key = pinfo.key
        self._active[key] = (seq, pinfo)
        heapq.heappush(self._active_heap, (-pod_priority(pinfo.pod), pinfo.timestamp, seq, key))

    def _active_remove(self, key: str) -> QueuedPodInfo | None:
        entry = self._active.pop(key, None)
        return entry[1] if entry else None

    def _active_pop(self) -> QueuedPodInfo | None:
        while self._active_heap:
            _, _, seq, key = heapq.heappop(self._active_heap)
            entry = self._active.get(key)
            if entry is not None and entry[0] == seq:
                del self._active[key]
                return entry[1]
        return None

    # backoffQ
    def _backoff_push(self, pinfo: QueuedPodInfo) -> None:
        seq = next(self._seq)
        key = pinfo.key
        self._backoff[key] = (seq, pinfo)
        expiry = self.backoff_expiry(pinfo)
        if pinfo.failed_with_error():
            heapq.heappush(self._error_backoff_heap, (expiry, 0, 0.0, seq, key))
        elif self._pop_from_backoff:  # inside an ordering window, as activeQ orders
            heapq.heappush(self._backoff_heap, (expiry, -pod_priority(pinfo.pod), pinfo.timestamp, seq, key))
        else:
            heapq.heappush(self._backoff_heap, (expiry, 0, 0.0, seq, key))
        # A waiting pop must learn the new (possibly earlier) deadline, or, popping from backoffQ, take the pod.
        self._broadcast()

    def _backoff_remove(self, key: str) -> QueuedPodInfo | None:
        entry = self._backoff.pop(key, None)
        return entry[1] if entry else None

    def _backoff_peek(self, heap: list[BackoffEntry]) -> tuple[float, QueuedPodInfo] | None:
        while heap:
            expiry, _, _, seq, key = heap[0]
            entry = self._backoff.get(key)
            if entry is not None and entry[0] == seq:
                return expiry, entry[1]
            heapq.heappop(heap)
        return None

    def _backoff_pop_head(self) -> QueuedPodInfo | None:
        """The head of the rejected pods' backoffQ, backing off or not (never an error pod's)."""
        head = self._backoff_peek(self._backoff_heap)
        if head is None:
            return None
        heapq.heappop(self._backoff_heap)
        self._backoff_remove(head[1].key)
        return head[1]

    # unschedulable pool
    def _unschedulable_put(self, pinfo: QueuedPodInfo) -> None:
        key = pinfo.key
        self._unschedulable[key] = pinfo
        if pinfo.gated:
            self._gated.add(key)
        else:
            self._gated.discard(key)
        known = self._unschedulable_seq.get(key)
        if known is None or known[1] != pinfo.timestamp:
            seq = next(self._seq)
            self._unschedulable_seq[key] = (seq, pinfo.timestamp)
            heapq.heappush(self._unschedulable_heap, (pinfo.timestamp, seq, key))
            self._broadcast()  # its unschedulable timeout is a new deadline for a waiting pop

    def _unschedulable_remove(self, key: str) -> QueuedPodInfo | None:
        self._gated.discard(key)
        self._unschedulable_seq.pop(key, None)
        return self._unschedulable.pop(key, None)

    def _unschedulable_oldest(self) -> QueuedPodInfo | None:
        while self._unschedulable_heap:
            _, seq, key = self._unschedulable_heap[0]
            known = self._unschedulable_seq.get(key)
            if known is not None and known[0] == seq:
                return self._unschedulable[key]
            heapq.heappop(self._unschedulable_heap)
        return None

    # ------------------------------------------------------------ backoff

    def backoff_duration(self, pinfo: QueuedPodInfo) -> float:
        """1 s after the first attempt, doubling per attempt, capped at the maximum."""
        if pinfo.attempts == 0:
            return 0.0
        duration = self._initial_backoff
        for _ in range(1, pinfo.attempts):
            if duration > self._max_backoff - duration:
                return self._max_backoff
            duration += duration
        return duration

    def _align(self, t: float) -> float:
        """``t`` truncated to its ordering window when popping from backoffQ (kube's alignToWindow)."""
        if not self._pop_from_backoff:
            return t
        return math.floor(t / BACKOFF_Q_ORDERING_WINDOW) * BACKOFF_Q_ORDERING_WINDOW

    def backoff_expiry(self, pinfo: QueuedPodInfo) -> float:
        return self._align(pinfo.timestamp + self.backoff_duration(pinfo))

    def _expired(self, expiry: float, now: float) -> bool:
        """Whether a backoff expiring at ``expiry`` is over; an aligned one only once its window is."""
        if self._pop_from_backoff:
            return expiry < self._align(now)
        return expiry <= now

    def _expiry_deadline(self, expiry: float) -> float:
        """When ``_expired(expiry, ...)`` turns true."""
        return expiry + BACKOFF_Q_ORDERING_WINDOW if self._pop_from_backoff else expiry

    def is_backing_off(self, pinfo: QueuedPodInfo) -> bool:
        if pinfo.attempts == 0:
            return False  # never attempted: no backoff
        return not self._expired(self.backoff_expiry(pinfo), self._now())

    # ----------------------------------------------------------- PreEnqueue

    def _run_pre_enqueue(self, pinfo: QueuedPodInfo) -> bool:
        profile = self._profile(pinfo.pod)
        pinfo.gating_status = None
        if profile is None:
            return True
        for plugin in profile.pre_enqueue_plugins:
            status = plugin.pre_enqueue(pinfo.pod)
            if status is None or status.is_success():
                continue
            pinfo.unschedulable_plugins.add(plugin.name)
            pinfo.gating_status = status.with_plugin(plugin.name)
            if self._metrics is not None:
                self._metrics.unschedulable_reason(plugin.name, scheduler_name(pinfo.pod), 1)
            log.debug("pod %s gated by PreEnqueue plugin %s: %s", pinfo.key, plugin.name, status)
            return False
        return True

    def _move_to_active_q(self, pinfo: QueuedPodInfo, event: str, *, from_backoff: bool = False) -> bool:
        if not (from_backoff and self._pop_from_backoff):  # else PreEnqueue ran when it entered backoffQ
            pinfo.gated = not self._run_pre_enqueue(pinfo)
        key = pinfo.key
        if pinfo.gated:
            if key in self._active or key in self._backoff:
                return False
            self._unschedulable_put(pinfo)
            return False
        if pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self._now()
        self._active_push(pinfo)
        self._unschedulable_remove(key)
        self._backoff_remove(key)
        self._incoming(ACTIVE_Q, event)
        self._broadcast()
        return True

    def _move_to_backoff_q(self, pinfo: QueuedPodInfo, event: str) -> bool:
        """Put a pod into backoffQ; popping from backoffQ, PreEnqueue runs here and a gated pod goes to the pool."""
        if self._pop_from_backoff:
            pinfo.gated = not self._run_pre_enqueue(pinfo)
            if pinfo.gated:
                self._unschedulable_put(pinfo)
                return False
        self._backoff_push(pinfo)
        self._incoming(BACKOFF_Q, event)
        return True

    # ---------------------------------------------------------------- API

    def add(self, pod: Pod) -> None:
        """A new unscheduled pod (informer add)."""
        pinfo = self.new_queued_pod_info(pod)
        self._move_to_active_q(pinfo, ce.POD_ADD)
        self._report_pending()

    def pop_nowait(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None; also moves pods whose backoff or timeout expired.

        Popping from backoffQ, an empty activeQ gives the head of backoffQ.
        """
        self.flush()
        pinfo = self._active_pop()
        if pinfo is None and self._pop_from_backoff:
            pinfo = self._backoff_pop_head()
            if pinfo is not None:
                self._incoming(ACTIVE_Q, ce.POP_FROM_BACKOFF_Q)
        if pinfo is None:
            self._report_pending()
            return None
        pinfo.attempts += 1
        self.scheduling_cycle += 1
        self._in_flight.start(pinfo.uid)
        if self._metrics is not None:
            for plugin in pinfo.rejector_plugins():
                self._metrics.unschedulable_reason(plugin, scheduler_name(pinfo.pod), -1)
        pinfo.unschedulable_plugins = set()
        pinfo.pending_plugins = set()
        if not self._active:
            self._wakeup.clear()
        self._report_pending()
        return pinfo

    async def pop(self) -> QueuedPodInfo | None:
        """Wait until a pod is ready (or the queue is closed, then None)."""
        while not self._closed:
            pinfo = self.pop_nowait()
            if pinfo is not None:
                return pinfo
            self._wakeup.clear()
            deadline = self.next_deadline()
            timeout = None if deadline is None else max(0.0, deadline - self._now())
            try:
                async with asyncio.timeout(timeout):
                    await self._wakeup.wait()
            except TimeoutError:
                pass
        return None

    def close(self) -> None:
        self._closed = True
        self._broadcast()

    def next_deadline(self) -> float | None:
        """When the next pod leaves backoff or hits the unschedulable timeout."""
        deadlines: list[float] = []
        for heap in (self._backoff_heap, self._error_backoff_heap):
            head = self._backoff_peek(heap)
            if head is not None:
                deadlines.append(self._expiry_deadline(head[0]))
        oldest = self._unschedulable_oldest()
        if oldest is not None:
            deadlines.append(oldest.timestamp + self._max_in_unschedulable)
        return min(deadlines) if deadlines else None

    def flush(self) -> None:
        self.flush_backoff_completed()
        self.flush_unschedulable_pods_leftover()

    def flush_backoff_completed(self) -> None:
        now = self._now()
        for heap in (self._backoff_heap, self._error_backoff_heap):
            while True:
                head = self._backoff_peek(heap)
                if head is None or not self._expired(head[0], now):
                    break
                _, pinfo = head
                self._backoff_remove(pinfo.key)
                heapq.heappop(heap)
                self._move_to_active_q(pinfo, ce.BACKOFF_COMPLETE, from_backoff=True)
        self._report_pending()

    def flush_unschedulable_pods_leftover(self) -> None:
        """Move pods that waited the unschedulable timeout (kube's flushUnschedulablePodsLeftover).

        A pod that stays (still gated) restarts its timeout, so a gated pod is
        re-checked once per timeout rather than on every pop.
        """
        now = self._now()
        stale: list[QueuedPodInfo] = []
        while True:
            oldest = self._unschedulable_oldest()
            if oldest is None or now - oldest.timestamp < self._max_in_unschedulable:
                break
            stale.append(oldest)
            heapq.heappop(self._unschedulable_heap)
            self._unschedulable_seq.pop(oldest.key, None)
        if not stale:
            return
        self._move_pods(stale, ce.UNSCHEDULABLE_TIMEOUT, None, None)
        for pinfo in stale:
            if self._unschedulable.get(pinfo.key) is pinfo:
                pinfo.timestamp = now
                self._unschedulable_put(pinfo)
        self._report_pending()

    def add_unschedulable_if_not_present(self, pinfo: QueuedPodInfo, *, scheduling_cycle: int | None = None) -> str:
        """Return a pod after a failed attempt; returns the queue it landed in.

        ``pinfo.unschedulable_plugins``/``pending_plugins`` must hold the
        rejectors of the attempt (empty when it failed with an error). Events
        received while the pod was in flight are replayed against them.
        """
        try:
            key = pinfo.key
            if self._in_flight.is_gone(pinfo.uid):
                log.debug("pod %s was deleted while being scheduled; not requeued", key)
                return ""
            if key in self._unschedulable:
                raise QueueError(f"Pod {key} is already present in unschedulable queue")
            if key in self._active:
                raise QueueError(f"Pod {key} is already present in the active queue")
            if key in self._backoff:
                raise QueueError(f"Pod {key} is already present in the backoff queue")
            pinfo.timestamp = self._now()
            if self._metrics is not None:
                for plugin in pinfo.rejector_plugins():
                    self._metrics.unschedulable_reason(plugin, scheduler_name(pinfo.pod), 1)
            strategy = self._hint_for_in_flight_pod(pinfo)
            queue = self._requeue_via_hint(pinfo, strategy, ce.SCHEDULE_ATTEMPT_FAILURE)
            log.debug("pod %s moved to %s after a failed attempt (%s)", key, queue, strategy.name)
            return queue
        finally:
            self.done(pinfo.uid)
            self._report_pending()

    def done(self, uid: str) -> None:
        """The attempt for ``uid`` is over (bound or requeued): stop recording events for it."""
        self._in_flight.done(uid)

    def in_flight_pod_count(self) -> int:
        return self._in_flight.pod_count()

    def in_flight_event_count(self) -> int:
        return self._in_flight.event_count()

    def update(self, old: Pod | None, new: Pod) -> None:
        """An unscheduled pod changed (informer update)."""
        try:
            uid = pod_uid(new) or pod_key(new)
            if uid in self._in_flight:
                # Replayed against the attempt's result if the pod comes back.
                self._in_flight.record_for_pod(ce.UNSCHEDULED_POD_UPDATE, old, new)
                return
            key = pod_key(new)
            if old is not None:
                entry = self._active.get(key)
                if entry is not None:
                    pinfo = entry[1]
                    pinfo.pod = new
                    self._active_push(pinfo)  # re-sort: the priority may have changed
                    return
                entry = self._backoff.get(key)
                if entry is not None:
                    pinfo = entry[1]
                    pinfo.pod = new
                    if self._pop_from_backoff:
                        self._backoff_push(pinfo)  # re-sort: backoffQ orders by priority inside a window
                    return
            pinfo_or_none = self._unschedulable.get(key)
            if pinfo_or_none is not None:
                pinfo = pinfo_or_none
                pinfo.pod = new
                for event in ce.pod_scheduling_properties_change(new, old or new):
                    strategy = self._worth_requeuing(pinfo, event, old, new)
                    if strategy == QueueingStrategy.QUEUE_SKIP:
                        continue
                    self._unschedulable_remove(key)
                    queue = self._requeue_via_hint(pinfo, strategy, ce.UNSCHEDULED_POD_UPDATE.label)
                    if queue == ACTIVE_Q:
                        break
                return
            self._move_to_active_q(self.new_queued_pod_info(new), ce.POD_UPDATE)
        finally:
            self._report_pending()

    def delete(self, pod: Pod) -> None:
        """An unscheduled pod was deleted (or got assigned by someone else)."""
        key = pod_key(pod)
        uid = pod_uid(pod) or key
        self._in_flight.mark_gone(uid)
        self._active_remove(key)
        self._backoff_remove(key)
        self._unschedulable_remove(key)
        self._report_pending()

    def move_all_to_active_or_backoff_queue(
        self,
        event: ClusterEvent,
        old: Obj | None,
        new: Obj | None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> None:
        """Offer a cluster event to every unschedulable pod (MoveAllToActiveOrBackoffQueue)."""
        if not self._is_event_of_interest(event):
            return
        keys = self._narrowed(event, old, new)
        if keys is None:
            pods: Iterable[QueuedPodInfo] = self._unschedulable.values()
        else:
            pods = (p for k in keys if (p := self._unschedulable.get(k)) is not None)
        candidates = [p for p in pods if pre_check is None or pre_check(p.pod)]
        self._offer(candidates, event, old, new)
        self._report_pending()

    def _narrowed(self, event: ClusterEvent, old: Obj | None, new: Obj | None) -> set[str] | None:
        """The only pod keys worth asking about ``event`` (see queueing_hints: event narrowing), or None."""
        keys: set[str] = set()
        for profile in self._profiles.values():
            found = profile.hint_map.narrow(event, old, new)
            if found is None:
                return None
            keys |= found
        return keys

    def on_object_change(
        self,
        resource: str,
        old: Obj | None,
        new: Obj | None,
        *,
        is_assumed: Callable[[Pod], bool] | None = None,
        dra_enabled: bool = True,
    ) -> None:
        """Route one informer change into the queue, as kube's event handlers do.

        Unscheduled pods of this scheduler are added, updated or deleted; every
        other change becomes cluster events offered to the unschedulable pods.
        ``is_assumed`` lets the caller ignore updates of pods whose binding is in
        progress, so they are not queued twice.
        """
        if resource == Resource.POD:
            old_assigned = ce.is_assigned(old)
            new_assigned = ce.is_assigned(new)
            if old is not None and not old_assigned and self.responsible_for(old) and (new is None or new_assigned):
                self.delete(old)
            if new is not None and not new_assigned and self.responsible_for(new):
                if old is None:
                    self.add(new)
                else:
                    if _resource_version(old) and _resource_version(old) == _resource_version(new):
                        return
                    if is_assumed is not None and is_assumed(new):
                        return
                    self.update(old, new)
                return
        for event in ce.events_for_change(resource, old, new, dra_enabled=dra_enabled):
            self.move_all_to_active_or_backoff_queue(event, old, new)

    # ------------------------------------------------------------- moving

    def _is_event_of_interest(self, event: ClusterEvent) -> bool:
        if event.is_wildcard():
            return True
        return any(p.hint_map.is_event_of_interest(event) for p in self._profiles.values())

    def _worth_requeuing(
        self, pinfo: QueuedPodInfo, event: ClusterEvent, old: Obj | None, new: Obj | None
    ) -> QueueingStrategy:
        profile = self._profile(pinfo.pod)
        return is_pod_worth_requeuing(
            profile.hint_map if profile is not None else None,
            pod=pinfo.pod,
            unschedulable_plugins=pinfo.unschedulable_plugins,
            pending_plugins=pinfo.pending_plugins,
            event=event,
            old=old,
            new=new,
        )

    def _move_pods(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Obj | None, new: Obj | None) -> None:
        if self._is_event_of_interest(event):
            self._offer(pods, event, old, new)

    def _offer(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Obj | None, new: Obj | None) -> None:
        """``_move_pods`` for an event already known to be of interest."""
        for pinfo in pods:
            if pinfo.gated and "SchedulingGates" in pinfo.unschedulable_plugins:
                # Only an update of the pod itself can remove its scheduling gates.
                continue
            strategy = self._worth_requeuing(pinfo, event, old, new)
            if strategy == QueueingStrategy.QUEUE_SKIP:
                continue
            self._unschedulable_remove(pinfo.key)
            queue = self._requeue_via_hint(pinfo, strategy, str(event))
            log.debug("pod %s moved to %s by %s", pinfo.key, queue, event)
        self._in_flight.record(event, old, new)

    def _requeue_via_hint(self, pinfo: QueuedPodInfo, strategy: QueueingStrategy, event: str) -> str:
        if strategy == QueueingStrategy.QUEUE_SKIP:
            self._unschedulable_put(pinfo)
            self._incoming(UNSCHEDULABLE_PODS, event)
            return UNSCHEDULABLE_PODS
        # The pod may have finished its backoff while it was in the pool.
        if strategy == QueueingStrategy.QUEUE_AFTER_BACKOFF and self.is_backing_off(pinfo):
            return BACKOFF_Q if self._move_to_backoff_q(pinfo, event) else UNSCHEDULABLE_PODS
        if self._move_to_active_q(pinfo, event):
            return ACTIVE_Q
        return UNSCHEDULABLE_PODS  # gated: _move_to_active_q put it into the pool

    def _hint_for_in_flight_pod(self, pinfo: QueuedPodInfo) -> QueueingStrategy:
        events = self._in_flight.events_since(pinfo.uid)
        if events is None:
            if pinfo.unschedulable_plugins:
                log.error("in-flight pod %s isn't found in the scheduling queue", pinfo.key)
                return QueueingStrategy.QUEUE_AFTER_BACKOFF
            if self.in_flight_event_count() > 0:
                return QueueingStrategy.QUEUE_AFTER_BACKOFF
            return QueueingStrategy.QUEUE_SKIP
        if not pinfo.rejector_plugins():
            # Failed for no plugin (an error): retry after backoff.
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        strategy = QueueingStrategy.QUEUE_SKIP
        for recorded in events:
            result = self._worth_requeuing(pinfo, recorded.event, recorded.old, recorded.new)
            if result == QueueingStrategy.QUEUE_IMMEDIATELY:
                return result
            if result == QueueingStrategy.QUEUE_AFTER_BACKOFF:
                strategy = result
                if not pinfo.pending_plugins:
                    return strategy
        return strategy

    # ---------------------------------------------------------- inspection

    def where(self, pod: Pod) -> str | None:
        """Which queue holds ``pod`` (active, backoff, unschedulable, gated) or None."""
        key = pod_key(pod)
        if key in self._active:
            return ACTIVE_Q
        if key in self._backoff:
            return BACKOFF_Q
        if key in self._unschedulable:
            return GATED if key in self._gated else UNSCHEDULABLE_PODS
        return None

    def get(self, pod: Pod) -> QueuedPodInfo | None:
        key = pod_key(pod)
        if key in self._active:
            return self._active[key][1]
        if key in self._backoff:
            return self._backoff[key][1]
        return self._unschedulable.get(key)

    def pending_counts(self) -> dict[str, int]:
        gated = len(self._gated)
        return {
            ACTIVE_Q: len(self._active),
            BACKOFF_Q: len(self._backoff),
            UNSCHEDULABLE_PODS: len(self._unschedulable) - gated,
            GATED: gated,
        }

    def pending_pods(self) -> list[Pod]:
        pods = [e[1].pod for e in self._active.values()]
        pods += [e[1].pod for e in self._backoff.values()]
        pods += [p.pod for p in self._unschedulable.values()]
        return pods


def _resource_version(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")
