"""``draplane replay --scheduler``: re-run the scheduler over the recorded log and report where it decides otherwise.

How a replay works:

1. **The recorded attempts.** Every record on ``decisions`` is one attempt:
   the pod version it scheduled (``podResourceVersion``), the scheduler's
   position in ``objects`` when it began (``objectsPosition``) and what it
   decided (`services.replay.scheduler_diff`).
2. **The same scheduler, fed the same changes.** A fresh core, wired as the
   live scheduler wires it (``services.scheduler.service.build_core``, with
   ``--feature-gates``), reads ``objects`` from the beginning through the
   live scheduler's own handlers (terminal pods invisible, only the
   resources its gates watch). Feeding every record, not a folded state,
   keeps the node order — the tie-breaker between equal scores — as the
   live scheduler had it.
3. **Each attempt on the state it saw.** When the walk reaches an
   attempt's position, the replayed core runs a scheduling cycle for the
   pod version the attempt saw, the result is compared with the record, and
   the cycle is rolled back (Unreserve, forget the assumed pod). The core's
   write client writes nothing (`services.replay.no_write_client`).
4. **The recorded scheduler's state, not the replay's.** Between an
   attempt and the records of its binding appearing in ``objects``, the live
   scheduler held the pod *assumed* on its node and its claims' allocation
   *in flight*, and later attempts saw both. The replay re-creates that from
   the *recorded* decision of every bound attempt, until the recorded
   binding and allocation arrive through the log. Each attempt is thus
   compared on exactly the state its recorded counterpart had, and one
   difference does not cascade into every later attempt.

Within ``min.compaction.lag.ms`` the log is complete and the replay exact;
``decisions`` keeps three days.
"""

from __future__ import annotations

import copy
import logging
import time
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from services.bus.port import BEGINNING, Bus, Record
from services.kube.resourceclaim import FINALIZER, allocation
from services.replay.no_write_client import NoWriteClient
from services.replay.overrides import Rewrite
from services.replay.rebuild import timestamp_at
from services.replay.scheduler_diff import (
    RecordedAttempt,
    Window,
    attempt_time_ms,
    compare,
    estimated_point,
    recorded_position,
    view,
)
from services.replay.scheduler_report import Comparison, NotReplayed, Report
from services.runtime.log_fold import MalformedRecord, fold, read_change
from services.runtime.metrics import MALFORMED_RECORDS
from services.scheduler import decisions
from services.scheduler.cache import CacheError
from services.scheduler.client import ResourceRef
from services.scheduler.cycle import decision_record, run_scheduling_cycle
from services.scheduler.framework import CycleState
from services.scheduler.queue import scheduler_name
from services.scheduler.service import SchedulerConfig, build_core, feed, visible_pod, watched_resources
from topics.declarations import DECISIONS, OBJECTS

log = logging.getLogger(__name__)

Obj = dict[str, Any]
PODS: ResourceRef = ("", "pods")
CLAIMS: ResourceRef = ("resource.k8s.io", "resourceclaims")
DRA_PLUGIN = "DynamicResources"
# Decisions read before the window: attempts whose assumptions may still be open when it begins.
ASSUMPTION_HORIZON_MS = 5 * 60 * 1000
MAX_IDLE_POLLS = 50  # 10 s without a record below the offset the walk must reach


class ReplayError(Exception):
    """The log could not be read as far as the replay needs."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


class SchedulerReplayer:
    """A scheduler core fed recorded ``objects`` records, asked to redo recorded attempts. No I/O.

    ``apply`` takes records in log order; ``redo`` runs one recorded attempt
    on the state fed so far; ``assume_recorded`` then holds what the recorded
    attempt left assumed. ``rewrite`` changes objects before the core sees
    them (what-if replays, `services.replay.overrides`).
    """

    def __init__(self, config: SchedulerConfig | None = None, *, rewrite: Rewrite | None = None) -> None:
        self.config = config or SchedulerConfig()
        self.client = NoWriteClient(self._lookup)
        self.core, self.dynamic_resources = build_core(self.config, api=self.client, clock=time.monotonic)
        self._handlers = {
            (group, plural): feed(self.core.on_object_change, resource)
            for group, plural, resource in watched_resources(self.config.gates)
        }
        self._rewrite = rewrite
        self._stores: dict[ResourceRef, dict[tuple[str, str], Obj]] = {}
        self._wanted: set[int] = set()  # pod resourceVersions that recorded attempts scheduled
        self._pods_at: dict[int, Obj] = {}
        self._in_flight: set[str] = set()  # claim uids held in flight for recorded attempts
        self.position = 0  # every record below this offset has been applied
        self.skipped: list[tuple[int, str]] = []  # (offset, error) of malformed records

    # ------------------------------------------------------------- feeding

    def want_pod_versions(self, versions: Iterable[int | None]) -> None:
        """Keep these versions of pods as they go by: the pods the attempts scheduled."""
        self._wanted.update(v for v in versions if v is not None)

    def _lookup(self, resource: ResourceRef, namespace: str, name: str) -> Obj | None:
        return self._stores.get(resource, {}).get((namespace, name))

    def apply(self, record: Record) -> None:
        """Feed one ``objects`` record to the core, as the live scheduler's informer handlers did."""
        self.position = record.offset + 1
        try:
            # Resources a scheduler with these gates does not watch are not even decoded.
            change = read_change(record, kinds=self._handlers)
        except MalformedRecord as exc:
            self.skipped.append((record.offset, str(exc)))
            return
        if change is None:
            return  # a tombstone, or not watched
        kind = (change.group, change.resource)
        handler = self._handlers[kind]
        if self._rewrite is not None:
            change = change._replace(obj=self._rewrite(change.group, change.resource, change.obj))
        obj = change.obj
        deleted = change.deleted
        old = fold(self._stores, change)
        try:
            if deleted:
                handler.on_delete(obj)
            elif old is None:
                handler.on_add(obj)
            else:
                handler.on_update(old, obj)
        except Exception:
            log.exception("replayed scheduler handler failed", extra={"offset": record.offset})
        if kind == PODS and record.offset in self._wanted:
            self._pods_at[record.offset] = obj
        elif kind == CLAIMS:
            self._settle(obj, deleted=deleted)

    def _settle(self, claim: Obj, *, deleted: bool) -> None:
        """A recorded allocation held in flight ends once the log shows the claim allocated (or gone)."""
        uid = str(_meta(claim).get("uid") or "")
        if uid in self._in_flight and (deleted or allocation(claim) is not None):
            self._in_flight.discard(uid)
            self.dynamic_resources.claims.remove_in_flight(uid)

    # ------------------------------------------------------------ attempts

    async def redo(self, attempt: RecordedAttempt) -> Comparison | NotReplayed:
        """Run the recorded attempt's scheduling cycle on the state fed so far, compare, and roll it back."""
        pod_rv = attempt.pod_resource_version
        if pod_rv is None:
            return NotReplayed(attempt, "the record names no pod resourceVersion")
        if pod_rv >= attempt.point:
            return NotReplayed(attempt, f"pod version {pod_rv} lies after the attempt's point {attempt.point}")
        pod = self._pods_at.get(pod_rv)
        if pod is None:
            return NotReplayed(attempt, f"pod version {pod_rv} is not in the objects log (compacted away?)")
        if str(_meta(pod).get("uid") or "") != attempt.uid:
            return NotReplayed(attempt, f"the pod at version {pod_rv} has uid {_meta(pod).get('uid')}")
        if visible_pod(pod) is None:
            return NotReplayed(attempt, f"the pod at version {pod_rv} has finished")
        name = scheduler_name(pod)
        profile = self.core.profiles.get(name)
        if profile is None:
            return NotReplayed(attempt, f"no profile for scheduler {name!r}")
        algorithm = self.core.algorithms[name]
        start = attempt.record.get("startNodeIndex")
        if isinstance(start, int) and not isinstance(start, bool) and start >= 0:
            algorithm.next_start_node_index = start
        cache = self.core.cache
        self.core.snapshot = cache.update_snapshot(self.core.snapshot)
        try:
            outcome = await run_scheduling_cycle(
                algorithm=algorithm, cache=cache, snapshot=self.core.snapshot, pod=pod, state=CycleState()
            )
        except CacheError as exc:
            return NotReplayed(attempt, f"the replayed scheduler already has the pod on a node ({exc})")
        replayed = decision_record(outcome, attempt=attempt.attempt, profile=name)
        if outcome.succeeded and outcome.assumed_pod is not None:
            await profile.run_unreserve(outcome.state, outcome.assumed_pod, outcome.node)
            cache.forget_pod(outcome.assumed_pod)
        recorded_view, replayed_view = view(attempt.record), view(replayed)
        return Comparison(attempt, recorded_view, replayed_view, compare(recorded_view, replayed_view))

    def assume_recorded(self, attempt: RecordedAttempt) -> None:
        """Hold what a recorded, bound attempt left assumed: its pod on its node, its allocations in flight."""
        record = attempt.record
        binding = record.get("binding") or {}
        if binding.get("result") != decisions.BOUND:
            return  # nothing stayed assumed: the attempt failed, or its binding did
        pod = self._pods_at.get(attempt.pod_resource_version or -1)
        node = str(record.get("node") or binding.get("node") or "")
        if pod is None or not node:
            return
        try:
            self.core.cache.finish_binding(self.core.cache.assume_pod(pod, node))
        except CacheError:
            pass  # the log already shows it bound
        if not self.dynamic_resources.enabled:
            return
        claims = self.dynamic_resources.claims
        published = ((record.get("plugins") or {}).get(DRA_PLUGIN) or {}).get("allocations") or {}
        for key, alloc in published.items():
            namespace, _, name = str(key).partition("/")
            claim = claims.get(namespace, name)
            if claim is None or allocation(claim) is not None:
                continue  # gone, or the log already shows it allocated
            in_flight = copy.deepcopy(dict(claim))
            finalizers = list(_meta(in_flight).get("finalizers") or [])
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
            in_flight["metadata"] = {**in_flight["metadata"], "finalizers": finalizers}
            in_flight["status"] = {**(in_flight.get("status") or {}), "allocation": alloc}
            claims.add_in_flight(in_flight)
            self._in_flight.add(str(_meta(claim).get("uid") or ""))


# ------------------------------------------------------------------ the log


async def decisions_since(bus: Bus, window: Window, horizon_ms: int = ASSUMPTION_HORIZON_MS) -> int | None:
    """Where reading ``decisions`` starts: early enough for the attempts still assumed when the window opens."""
    if window.start is None:
        return None
    kind, value = window.start
    if kind == "time":
        return value - horizon_ms
    found = await timestamp_at(bus, OBJECTS, value)
    return None if found is None else found - horizon_ms


async def locate(bus: Bus, decision: decisions.Decision, *, log_end: int) -> RecordedAttempt:
    """The recorded attempt with its point: recorded, or estimated from its start time for older records."""
    record = decision.record
    time_ms = attempt_time_ms(record, decision.timestamp_ms)
    position = recorded_position(record)
    if position is not None:
        return RecordedAttempt(decision.offset, record, position, time_ms)
    after = await bus.offset_for_time(OBJECTS, time_ms + 1)
    point = estimated_point(record, log_end if after is None else after)
    return RecordedAttempt(decision.offset, record, point, time_ms, exact=False)


def _malformed(offset: int, error: str) -> None:
    MALFORMED_RECORDS.labels(topic=DECISIONS).inc()
    log.warning("skipping malformed record", extra={"topic": DECISIONS, "offset": offset, "error": error})


async def replay_scheduler(
    bus: Bus,
    *,
    window: Window | None = None,
    config: SchedulerConfig | None = None,
    rewrite: Rewrite | None = None,
) -> Report:
    """Replay every recorded attempt in ``window`` and compare; raises ReplayError if the log cannot be read."""
    window = window or Window()
    report = Report()
    recorded = await decisions.read_decisions(bus, since_ms=await decisions_since(bus, window), on_malformed=_malformed)
    begin = await bus.beginning_offset(OBJECTS)
    end = await bus.end_offset(OBJECTS)
    attempts = sorted([await locate(bus, d, log_end=end) for d in recorded], key=RecordedAttempt.sort_key)
    selected: set[int] = set()
    for attempt in attempts:
        if not window.contains(attempt):
            continue
        if attempt.point > end:
            report.not_replayed.append(NotReplayed(attempt, f"its point {attempt.point} lies past the end of objects"))
        elif attempt.point < begin:
            report.not_replayed.append(NotReplayed(attempt, f"objects before offset {begin} are no longer in the log"))
        else:
            selected.add(attempt.decision_offset)
    if not selected:
        return report
    last = max(a.point for a in attempts if a.decision_offset in selected)
    pending = deque(a for a in attempts if a.point <= last)
    replayer = SchedulerReplayer(config, rewrite=rewrite)
    replayer.want_pod_versions(a.pod_resource_version for a in pending)

    async def run_due(offset: int) -> None:
        """Every attempt that happened before the record at ``offset`` was applied."""
        while pending and pending[0].point <= offset:
            attempt = pending.popleft()
            if attempt.decision_offset in selected:
                outcome = await replayer.redo(attempt)
                if isinstance(outcome, Comparison):
                    report.compared.append(outcome)
                else:
                    report.not_replayed.append(outcome)
            replayer.assume_recorded(attempt)

    consumer = await bus.consumer(OBJECTS, start=BEGINNING)
    try:
        idle = 0
        while consumer.position() < last:
            records = await consumer.getmany(timeout_ms=200)
            idle = 0 if records else idle + 1
            if idle > MAX_IDLE_POLLS:
                raise ReplayError(f"objects could not be read up to offset {last} (stuck at {consumer.position()})")
            for record in records:
                if record.offset >= last:
                    break
                await run_due(record.offset)
                replayer.apply(record)
    finally:
        await consumer.close()
    await run_due(last)
    for offset, error in replayer.skipped:
        MALFORMED_RECORDS.labels(topic=OBJECTS).inc()
        log.warning("skipping malformed record", extra={"topic": OBJECTS, "offset": offset, "error": error})
    report.compared.sort(key=lambda c: c.attempt.sort_key())
    return report
