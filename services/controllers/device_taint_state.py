"""The device-taint-eviction controller's decisions, without I/O (Kubernetes 1.37's ``devicetainteviction``).

Why this module exists: which pods must go, when, and because of which taint
is the whole of the controller's logic, and it must be testable event by
event, as upstream's ``device_taint_eviction_test.go`` does. `EvictionState`
holds what the informer handlers feed it (ResourceSlices by pool, allocated
ResourceClaims with their eviction time, DeviceTaintRules with the NoExecute
effect) and reacts like upstream's ``handle*`` methods: a pod of an allocated
claim whose device has a NoExecute taint that the allocation result's
tolerations do not tolerate gets a deletion time (``timeAdded`` plus the
smallest matching ``tolerationSeconds``, now if none), a removed taint
cancels it (with the "Cancelling deletion" Event), and rules whose taint
affects pods get a status update queued. `rule_status` computes the
``EvictionInProgress`` condition with upstream's reasons and messages. The
I/O around it (the work queue's workers, the pod delete, the status write)
is `services.controllers.device_taint_eviction`.

A taint without ``timeAdded`` counts from when this state first saw it, and
keeps that time while the taint stays the same. The committer stamps every
taint written since stop 38, as kube-apiserver does
(`defaults.default_device_taint_times`), so only taints of a log written
before that, or of an object replayed from one, lack it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol

from services.controllers.reserved_for import UIDCache
from services.kube.device_taints import NO_EXECUTE, NONE, tolerates_taint
from services.kube.resourceclaim import ClaimNameError, claim_name, is_for_pod, is_reserved_for_pod
from services.kube.times import parse_time, time_text

Obj = Mapping[str, Any]

RULE_STATUS_PERIOD = 10.0
"""``ruleStatusPeriod``: the shortest time between two status updates of a rule while eviction is in progress."""
MAX_UID_CACHE_ENTRIES = 500
EVICTION_IN_PROGRESS = "EvictionInProgress"
DISRUPTION_TARGET = "DisruptionTarget"
DELETION_REASON = "DeletionByDeviceTaintManager"
DELETION_MESSAGE = "Device Taint manager: deleting due to NoExecute taint"
EVENT_REASON = "DeviceTaintManagerEviction"
EVENT_DELETE = "Marking for deletion"
EVENT_CANCEL = "Cancelling deletion"


class PodRef(NamedTuple):
    """``tainteviction.NamespacedObject`` for a pod."""

    namespace: str
    name: str
    uid: str


class RuleRef(NamedTuple):
    name: str
    uid: str


WorkItem = PodRef | RuleRef


def pod_ref(pod: Obj) -> PodRef:
    meta = pod.get("metadata") or {}
    return PodRef(str(meta.get("namespace", "")), str(meta.get("name", "")), str(meta.get("uid", "")))


def rule_ref(rule: Obj) -> RuleRef:
    meta = rule.get("metadata") or {}
    return RuleRef(str(meta.get("name", "")), str(meta.get("uid", "")))


class TrackedTaint(NamedTuple):
    """Where a taint comes from: a DeviceTaintRule (``rule``) or a ResourceSlice device's taint #``index``.

    The taint's content is part of it, so a changed taint is a different reason
    (upstream compares the objects it points to). Sorted as upstream sorts:
    rules first by name, then slices by driver, pool, device and index.
    """

    kind: int  # 0: rule, 1: slice
    rule: str  # rule name
    driver: str
    pool: str
    device: str
    taint_index: int
    origin: str  # rule uid, or slice name
    taint: tuple[str, str, str, float]  # key, value, effect, timeAdded

    def describe(self) -> str:
        if self.kind == 0:
            return f"DeviceTaintRule {self.rule}"
        return f"ResourceSlice {self.origin} {self.driver}/{self.pool}/{self.device} taint #{self.taint_index}"


@dataclass(frozen=True)
class Eviction:
    """``evictionAndReason``: when eviction starts, and every taint that causes it."""

    when: float
    reasons: tuple[TrackedTaint, ...]

    def rule_uids(self) -> set[str]:
        return {r.origin for r in self.reasons if r.kind == 0}


def _taint_tuple(taint: Obj, time_added: float) -> tuple[str, str, str, float]:
    return (str(taint.get("key") or ""), str(taint.get("value") or ""), str(taint.get("effect") or ""), time_added)


@dataclass
class Pool:
    """The slices of one (driver, pool); only those of the newest generation count."""

    slices: dict[str, Obj] = field(default_factory=dict)
    max_generation: int = -(2**63)

    def add(self, slice_: Obj | None) -> None:
        if slice_ is None:
            return
        self.slices[_name(slice_)] = slice_
        self.max_generation = max(self.max_generation, _generation(slice_))

    def remove(self, slice_: Obj | None) -> None:
        if slice_ is None:
            return
        self.slices.pop(_name(slice_), None)
        if _generation(slice_) == self.max_generation:
            self.max_generation = max((_generation(s) for s in self.slices.values()), default=-(2**63))

    def current(self) -> Iterator[Obj]:
        return (s for s in self.slices.values() if _generation(s) == self.max_generation)

    def tainted_devices(self) -> dict[str, list[Obj]]:
        """NoExecute taints per device name."""
        out: dict[str, list[Obj]] = {}
        for slice_ in self.current():
            for device in _devices(slice_):
                for taint in device_taints(device):
                    if taint.get("effect") == NO_EXECUTE:
                        out.setdefault(str(device.get("name", "")), []).append(taint)
        return out

    def device(self, name: str) -> tuple[Obj | None, Obj | None]:
        for slice_ in self.current():
            for device in _devices(slice_):
                if device.get("name") == name:
                    return slice_, device
        return None, None


@dataclass
class AllocatedClaim:
    claim: Obj
    eviction: Eviction | None


class Queue(Protocol):
    """What the state puts work on (``workqueue.TypedRateLimitingInterface``'s adds)."""

    def add(self, item: WorkItem) -> None: ...

    def add_after(self, item: WorkItem, delay: float) -> None: ...


class NopQueue:
    """Drops everything (upstream's ``NOPQueue``, for the None-effect simulation)."""

    def add(self, item: WorkItem) -> None:
        pass

    def add_after(self, item: WorkItem, delay: float) -> None:
        pass


class PodLookup(Protocol):
    def get(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class PodEvent:
    """An Event about a pod (reason ``DeviceTaintManagerEviction``) the controller must record."""

    pod: PodRef
    message: str


@dataclass(frozen=True)
class RuleStatusDecision:
    """What to do with a rule's status: write ``condition`` (if set), look again after ``delay`` (if > 0)."""

    delay: float = 0.0
    condition: dict[str, Any] | None = None


class EvictionState:
    """See the module docstring. Handlers take old/new objects (None for add/delete) like informer handlers."""

    def __init__(self, *, pods: PodLookup, queue: Queue, clock: Callable[[], float]) -> None:
        self.pods = pods
        self.queue = queue
        self.clock = clock
        self.delete_pod_at: dict[PodRef, Eviction] = {}
        self.allocated_claims: dict[tuple[str, str], AllocatedClaim] = {}
        self.pools: dict[tuple[str, str], Pool] = {}
        self.evicting_rules: dict[str, Obj] = {}
        self.rule_stats: dict[str, int] = {}  # rule uid -> pods evicted since start
        self.evicted_pods = UIDCache(MAX_UID_CACHE_ENTRIES)
        self.events: list[PodEvent] = []
        self.maybe_delete_pod_count = 0
        # First sighting of taints that lack timeAdded: (origin, key, value, effect) -> time.
        self._first_seen: dict[tuple[str, ...], float] = {}

    # -- taint times ----------------------------------------------------------

    def _time_added(self, origin: str, taint: Obj) -> float:
        stamped = parse_time(taint.get("timeAdded"))
        if stamped is not None:
            return stamped.timestamp()
        key = (origin, str(taint.get("key") or ""), str(taint.get("value") or ""), str(taint.get("effect") or ""))
        return self._first_seen.setdefault(key, self.clock())

    # -- handlers ---------------------------------------------------------------

    def handle_claim_change(self, old: Obj | None, new: Obj | None) -> None:
        claim = new if new is not None else old
        assert claim is not None
        key = _nsname(claim)
        if new is None:
            self.allocated_claims.pop(key, None)
            self._handle_pods(claim)
            return
        if old is None:
            if _allocation(claim) is None:
                return
            self.allocated_claims[key] = AllocatedClaim(claim, self.claim_eviction_time(claim))
            self._handle_pods(claim)
            return
        if _uid(old) != _uid(new):
            self.handle_claim_change(old, None)
            self.handle_claim_change(None, new)
            return

        def sync_both() -> None:
            if _reserved(old) != _reserved(new):
                self._handle_pods(old)
                self._handle_pods(new)
            else:
                self._handle_pods(new)

        if _allocation(old) is None and _allocation(new) is not None:
            self.allocated_claims[key] = AllocatedClaim(new, self.claim_eviction_time(new))
            sync_both()
        elif _allocation(old) is not None and _allocation(new) is None:
            self.allocated_claims.pop(key, None)
            sync_both()
        elif _allocation(new) is not None:
            # The allocation is immutable: the eviction time stays.
            known = self.allocated_claims.get(key)
            self.allocated_claims[key] = AllocatedClaim(new, known.eviction if known else self.claim_eviction_time(new))
            sync_both()

    def handle_rule_change(self, old: Obj | None, new: Obj | None) -> None:
        if old is None and new is not None:
            # The status is updated at least once, right away, before any pod is evicted.
            self.queue.add(rule_ref(new))
        if new is None and old is not None:
            self.rule_stats.pop(_uid(old), None)
            self.evicting_rules.pop(_name(old), None)
        if old is not None and new is not None and _uid(old) == _uid(new):
            if (old.get("spec") or {}) == (new.get("spec") or {}):
                return
            self.queue.add(rule_ref(new))
        if old is not None and _rule_effect(old) == NO_EXECUTE:
            self.evicting_rules.pop(_name(old), None)
        if new is not None and _rule_effect(new) == NO_EXECUTE:
            self.evicting_rules[_name(new)] = new
        for key, known in list(self.allocated_claims.items()):
            eviction = self.claim_eviction_time(known.claim)
            self.allocated_claims[key] = AllocatedClaim(known.claim, eviction)
            if eviction != known.eviction:
                self._handle_pods(known.claim)

    def handle_slice_change(self, old: Obj | None, new: Obj | None) -> None:
        slice_ = new if new is not None else old
        assert slice_ is not None
        spec = slice_.get("spec") or {}
        pool_id = (str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", "")))
        pool = self.pools.setdefault(pool_id, Pool())
        before = pool.tainted_devices()
        pool.remove(old)
        pool.add(new)
        if not pool.slices:
            del self.pools[pool_id]
        after = pool.tainted_devices()
        if not before and not after:
            return
        modified = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
        if not modified:
            return
        for key, known in list(self.allocated_claims.items()):
            if not _uses_device(known.claim, pool_id, modified):
                continue
            eviction = self.claim_eviction_time(known.claim)
            if eviction == known.eviction:
                continue
            self.allocated_claims[key] = AllocatedClaim(known.claim, eviction)
            self._handle_pods(known.claim)

    def handle_pod_change(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            assert old is not None
            self._cancel_evict(pod_ref(old))  # gone: no Event
            return
        if old is not None and _pod_claim_state(old) == _pod_claim_state(new):
            return  # nothing that matters here changed (e.g. the DisruptionTarget condition we added)
        self._handle_pod(new)

    # -- evaluation -------------------------------------------------------------

    def claim_eviction_time(self, claim: Obj, *, rules: Mapping[str, Obj] | None = None) -> Eviction | None:
        """The earliest time a NoExecute taint on an allocated device is no longer tolerated, None if never."""
        rules = self.evicting_rules if rules is None else rules
        when: float | None = None
        reasons: set[TrackedTaint] = set()
        for result in _results(claim):
            driver, pool_name, device_name = (str(result.get(k, "")) for k in ("driver", "pool", "device"))
            pool = self.pools.get((driver, pool_name))
            slice_, device = pool.device(device_name) if pool is not None else (None, None)
            for tracked, taint in self._evicting_taints(result, slice_, device, rules):
                added = tracked.taint[3]
                seconds: float = math.inf
                forever = False
                for toleration in result.get("tolerations") or ():
                    if toleration.get("effect") != NO_EXECUTE or not tolerates_taint(toleration, taint):
                        continue
                    if toleration.get("tolerationSeconds") is None:
                        forever = True
                        break
                    seconds = min(seconds, max(int(toleration["tolerationSeconds"]), 0))
                if forever:
                    continue
                at = added + (seconds if seconds != math.inf else 0)
                reasons.add(tracked)
                when = at if when is None else min(when, at)
        if when is None:
            return None
        return Eviction(when, tuple(sorted(reasons)))

    def _evicting_taints(
        self, result: Obj, slice_: Obj | None, device: Obj | None, rules: Mapping[str, Obj]
    ) -> Iterator[tuple[TrackedTaint, Obj]]:
        driver, pool_name, device_name = (str(result.get(k, "")) for k in ("driver", "pool", "device"))
        if device is not None and slice_ is not None:
            for index, taint in enumerate(device_taints(device)):
                if taint.get("effect") != NO_EXECUTE:
                    continue
                added = self._time_added(f"slice:{driver}/{pool_name}/{device_name}", taint)
                tracked = TrackedTaint(
                    1, "", driver, pool_name, device_name, index, _name(slice_), _taint_tuple(taint, added)
                )
                yield tracked, taint
        for rule in rules.values():
            if not rule_matches_device(rule, driver, pool_name, device_name):
                continue
            taint = (rule.get("spec") or {}).get("taint") or {}
            added = self._time_added(f"rule:{_uid(rule)}", taint)
            yield TrackedTaint(0, _name(rule), "", "", "", 0, _uid(rule), _taint_tuple(taint, added)), taint

    def pod_eviction_time(
        self, pod: Obj, *, claims: Mapping[tuple[str, str], AllocatedClaim] | None = None
    ) -> Eviction | None:
        """When the pod must go (the earliest of its claims), None when it may stay or is not scheduled."""
        if not (pod.get("spec") or {}).get("nodeName"):
            return None
        claims = self.allocated_claims if claims is None else claims
        namespace = str((pod.get("metadata") or {}).get("namespace", ""))
        eviction: Eviction | None = None
        for name, must_check_owner in pod_claims(pod):
            known = claims.get((namespace, name))
            if known is None:
                continue
            if must_check_owner and not is_for_pod(dict(pod), dict(known.claim)):
                continue
            if not is_reserved_for_pod(dict(pod), dict(known.claim)):
                continue
            if known.eviction is None:
                continue
            if eviction is None:
                eviction = known.eviction
            else:
                eviction = Eviction(
                    min(eviction.when, known.eviction.when),
                    tuple(sorted(set(eviction.reasons) | set(known.eviction.reasons))),
                )
        return eviction

    def _handle_pods(self, claim: Obj) -> None:
        namespace = str((claim.get("metadata") or {}).get("namespace", ""))
        for consumer in _reserved(claim):
            if (consumer.get("apiGroup") or "") != "" or consumer.get("resource") != "pods":
                continue  # PodGroups (DRAWorkloadResourceClaims) are not modelled
            pod = self.pods.get(namespace, str(consumer.get("name", "")))
            if pod is None or _uid(pod) != consumer.get("uid"):
                continue
            self._handle_pod(pod)

    def _handle_pod(self, pod: Obj) -> None:
        eviction = self.pod_eviction_time(pod)
        ref = pod_ref(pod)
        if eviction is None:
            if self._cancel_evict(ref):
                self.events.append(PodEvent(ref, EVENT_CANCEL))
            return
        self._evict_pod(ref, eviction)
        # Eviction is in progress: the rules' status may need an update, but not
        # right away (more pod changes may be coming).
        for reason in eviction.reasons:
            if reason.kind == 0:
                self.queue.add_after(RuleRef(reason.rule, reason.origin), RULE_STATUS_PERIOD)

    def _evict_pod(self, ref: PodRef, eviction: Eviction) -> None:
        self.delete_pod_at[ref] = eviction
        delay = eviction.when - self.clock()
        if delay <= 0:
            self.queue.add(ref)
        else:
            self.queue.add_after(ref, delay)

    def _cancel_evict(self, ref: PodRef) -> bool:
        return self.delete_pod_at.pop(ref, None) is not None

    # -- work -------------------------------------------------------------------

    def pod_due(self, ref: PodRef) -> tuple[float, Eviction | None]:
        """For a pod work item: (delay, eviction). No eviction: nothing to do; a delay > 0: look again then."""
        self.maybe_delete_pod_count += 1
        eviction = self.delete_pod_at.get(ref)
        if eviction is None or ref.uid in self.evicted_pods:
            return 0.0, None
        return max(eviction.when - self.clock(), 0.0), eviction

    def pod_done(self, ref: PodRef, eviction: Eviction, *, evicted: bool) -> None:
        """The pod is gone (``evicted``: by us): forget it, count it for its rules, schedule their status."""
        self.delete_pod_at.pop(ref, None)
        self.evicted_pods.add(ref.uid)
        if not evicted:
            return
        for reason in eviction.reasons:
            if reason.kind == 0:
                self.rule_stats[reason.origin] = self.rule_stats.get(reason.origin, 0) + 1
                # Not right away: it would race with the informer's view of the pod.
                self.queue.add_after(RuleRef(reason.rule, reason.origin), RULE_STATUS_PERIOD)

    def count_pending_pods(
        self, rule: Obj, *, claims: Mapping[tuple[str, str], AllocatedClaim] | None = None
    ) -> tuple[int, int]:
        uid = _uid(rule)
        pods = 0
        namespaces: set[str] = set()
        for pod in self.pods.list():
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                continue
            eviction = self.pod_eviction_time(pod, claims=claims)
            if eviction is None:
                continue
            for reason in eviction.reasons:
                if reason.kind == 0 and reason.origin == uid:
                    pods += 1
                    namespaces.add(str((pod.get("metadata") or {}).get("namespace", "")))
        return pods, len(namespaces)

    def count_tainted_devices(self, rule: Obj) -> tuple[int, int]:
        in_slices = 0
        for (driver, pool_name), pool in self.pools.items():
            for slice_ in pool.current():
                for device in _devices(slice_):
                    if rule_matches_device(rule, driver, pool_name, str(device.get("name", ""))):
                        in_slices += 1
        allocated = 0
        for known in self.allocated_claims.values():
            for result in _results(known.claim):
                if rule_matches_device(rule, *(str(result.get(k, "")) for k in ("driver", "pool", "device"))):
                    allocated += 1
        return in_slices, allocated

    def rule_status(self, rule: Obj) -> RuleStatusDecision:
        """``maybeUpdateRuleStatus`` without the write: the new condition, if it changed, and when to look again."""
        now = self.clock()
        existing = _condition(rule, EVICTION_IN_PROGRESS)
        generation = int((rule.get("metadata") or {}).get("generation") or 0)
        if existing is not None:
            transitioned = parse_time(existing.get("lastTransitionTime"))
            since = now - (transitioned.timestamp() if transitioned is not None else 0.0)
            if int(existing.get("observedGeneration") or 0) == generation and since < RULE_STATUS_PERIOD:
                return RuleStatusDecision(delay=RULE_STATUS_PERIOD - since)
        effect = _rule_effect(rule)
        pending = namespaces = in_slices = allocated = 0
        if effect == NONE:
            # What would happen with NoExecute: a throw-away copy sees the rule change effect.
            simulated = EvictionState(pods=self.pods, queue=NopQueue(), clock=self.clock)
            simulated.allocated_claims = {k: replace(v) for k, v in self.allocated_claims.items()}
            simulated.pools = self.pools
            simulated._first_seen = self._first_seen
            evicting = _with_effect(rule, NO_EXECUTE)
            simulated.handle_rule_change(rule, evicting)
            pending, namespaces = simulated.count_pending_pods(rule)
            in_slices, allocated = simulated.count_tainted_devices(rule)
        elif effect == NO_EXECUTE:
            pending, namespaces = self.count_pending_pods(rule)
        evicted = self.rule_stats.get(_uid(rule), 0)
        condition = eviction_condition(
            effect,
            generation=generation,
            pending_pods=pending,
            pending_namespaces=namespaces,
            evicted_pods=evicted,
            slice_devices=in_slices,
            allocated_devices=allocated,
        )
        comparable = ("type", "status", "reason", "message", "observedGeneration")
        if existing is not None and all(existing.get(k) == condition.get(k) for k in comparable):
            return RuleStatusDecision()
        condition["lastTransitionTime"] = time_text(datetime.fromtimestamp(int(now), UTC))
        return RuleStatusDecision(condition=condition)

    def drain_events(self) -> list[PodEvent]:
        events, self.events = self.events, []
        return events


def eviction_condition(
    effect: str,
    *,
    generation: int,
    pending_pods: int,
    pending_namespaces: int,
    evicted_pods: int,
    slice_devices: int = 0,
    allocated_devices: int = 0,
) -> dict[str, Any]:
    """The ``EvictionInProgress`` condition (without ``lastTransitionTime``) in 1.37's reasons and words."""
    status, reason, message = "False", f"Effect{effect}", ""
    if effect == NO_EXECUTE:
        if pending_pods > 0:
            status, reason = "True", "PodsPendingEviction"
            message = (
                "1 pod needs to be evicted in " if pending_pods == 1 else f"{pending_pods} pods need to be evicted in "
            )
            message += "1 namespace." if pending_namespaces == 1 else f"{pending_namespaces} different namespaces."
        elif evicted_pods > 0:
            reason = "Completed"
        else:
            reason = "NotStarted"
    elif effect == NONE:
        reason = "NoEffect"
        message += (
            "1 published device selected. " if slice_devices == 1 else f"{slice_devices} published devices selected. "
        )
        message += (
            "1 allocated device selected. "
            if allocated_devices == 1
            else f"{allocated_devices} allocated devices selected. "
        )
        message += "1 pod would be evicted in " if pending_pods == 1 else f"{pending_pods} pods would be evicted in "
        message += "1 namespace " if pending_namespaces == 1 else f"{pending_namespaces} different namespaces "
        message += (
            "if the effect was NoExecute. This information will not be updated again. "
            "Recreate the DeviceTaintRule to trigger an update."
        )
    else:
        reason = "OtherEffect"
        message = "Eviction only happens for the NoExecute effect."
    if evicted_pods > 0:
        if message:
            message += " "
        message += "1 pod " if evicted_pods == 1 else f"{evicted_pods} pods "
        message += "evicted since starting the controller."
    return {
        "type": EVICTION_IN_PROGRESS,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
    }


def disruption_condition(now: float) -> dict[str, Any]:
    """The pod condition added before the delete."""
    return {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": DELETION_REASON,
        "message": DELETION_MESSAGE,
        "lastTransitionTime": time_text(datetime.fromtimestamp(int(now), UTC)),
    }


def has_disruption_condition(pod: Obj) -> bool:
    found = _condition(pod, DISRUPTION_TARGET)
    return (
        found is not None
        and found.get("status") == "True"
        and found.get("reason") == DELETION_REASON
        and found.get("message") == DELETION_MESSAGE
    )


def rule_matches_device(rule: Obj, driver: str, pool: str, device: str) -> bool:
    """``ruleMatchesDevice``: a rule without a device selector selects nothing; empty fields match all."""
    selector = (rule.get("spec") or {}).get("deviceSelector")
    if selector is None:
        return False
    for key, value in (("driver", driver), ("pool", pool), ("device", device)):
        wanted = selector.get(key)
        if wanted is not None and wanted != value:
            return False
    return True


def pod_claims(pod: Obj) -> Iterable[tuple[str, bool]]:
    """``resourceclaim.PodClaims``: (claim name, must check owner) of every claim the pod uses that exists."""
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        try:
            name, must_check_owner = claim_name(dict(pod), pod_claim)
        except ClaimNameError:
            continue
        if name is not None:
            yield name, must_check_owner
    extended = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    if extended.get("resourceClaimName"):
        yield str(extended["resourceClaimName"]), True


def _pod_claim_state(pod: Obj) -> tuple[Any, ...]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    return (
        spec.get("nodeName") or "",
        status.get("resourceClaimStatuses") or [],
        status.get("extendedResourceClaimStatus") or None,
    )


def _with_effect(rule: Obj, effect: str) -> dict[str, Any]:
    spec = dict(rule.get("spec") or {})
    spec["taint"] = {**(spec.get("taint") or {}), "effect": effect}
    return {**rule, "spec": spec}


def _condition(obj: Obj, type_: str) -> Mapping[str, Any] | None:
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if condition.get("type") == type_:
            found: Mapping[str, Any] = condition
            return found
    return None


def _uses_device(claim: Obj, pool_id: tuple[str, str], devices: set[str]) -> bool:
    return any((r.get("driver"), r.get("pool")) == pool_id and r.get("device") in devices for r in _results(claim))


def _rule_effect(rule: Obj) -> str:
    return str(((rule.get("spec") or {}).get("taint") or {}).get("effect") or "")


def _allocation(claim: Obj) -> Obj | None:
    found: Obj | None = (claim.get("status") or {}).get("allocation")
    return found


def _results(claim: Obj) -> list[Obj]:
    allocation = _allocation(claim) or {}
    return list((allocation.get("devices") or {}).get("results") or ())


def _reserved(claim: Obj) -> list[Obj]:
    return list((claim.get("status") or {}).get("reservedFor") or ())


def device_taints(device: Obj) -> list[Obj]:
    """A slice device's taints: under ``basic`` in the stored (v1beta1) form, at the top in v1."""
    basic = device.get("basic")
    holder: Obj = basic if isinstance(basic, Mapping) else device
    return list(holder.get("taints") or ())


def _devices(slice_: Obj) -> list[Obj]:
    return list((slice_.get("spec") or {}).get("devices") or ())


def _generation(slice_: Obj) -> int:
    return int(((slice_.get("spec") or {}).get("pool") or {}).get("generation") or 0)


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid", ""))


def _nsname(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))
