"""DynamicResources: makes sure a pod's ResourceClaims are allocated and reserved (kube 1.31).

Structured parameters: the scheduler allocates devices itself — PreFilter
prepares an allocator over the pod's unallocated claims, Filter tries it per
node, Reserve keeps the chosen node's allocation *in flight* (so no other pod
can take those devices), PreBind writes finalizer, allocation and
``reservedFor`` with retries on conflict, and the claim is then *assumed*
until the informer catches up. A claim's writes go as one chain
(``APIClient.write_chain``: the status write applied only on the version
the finalizer's wrote), and the last claim's are left to the framework when
nothing has to happen between them and the binding, which it then chains
after them (``services.scheduler.binding_chain``).

Classic DRA (``spec.controller``, behind DRAControlPlaneController): the
scheduler negotiates through the pod's PodSchedulingContext — potential nodes
in PreScore, the selected node in Reserve — and the driver allocates. With the
gate off such a claim makes the pod UnschedulableAndUnresolvable with
``resourceclaim depends on disabled DRAControlPlaneController feature`` and no
PodSchedulingContext is ever read or written.

Queueing: PreEnqueue keeps pods whose claims do not exist yet out of the
queue; the hints requeue a pod only for changes that can help it, in the
decision order of kube's isSchedulableAfterClaimChange,
isSchedulableAfterPodSchedulingContextChange and isSchedulableAfterPodChange.

1.37 inputs: the allocator gets what allocated claims hold split as
``AllocatedState`` (exclusive devices, shared devices, consumed capacity; the
assume cache keeps it, in-flight allocations included) and the taints of the
DeviceTaintRules per device. The allocation memo and equivalence keys carry
the rules' change counter; shared capacity moves the pools' usage generations.
A DeviceTaintRule change wakes only the pods with an unallocated claim that
could use a device the rule stops tainting.

Extended resources backed by DRA (DRAExtendedResource, ``extended_resources``):
a pod asking for a DeviceClass's extended resource on a node that does not
advertise it gets devices through a claim the scheduler creates in PreBind;
``plugins/extended_resource_claims`` holds those steps, ``dra/extended_resources``
the pure rules.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.api.machinery.status import StatusError
from services.kube.device_taints import NO_EXECUTE, NO_SCHEDULE, rule_selects, rules_taints, slice_devices
from services.kube.extended_resources import NO_CLASSES, ExtendedResourceClasses
from services.kube.node_selectors import NodeSelector, NodeSelectorError
from services.kube.resourceclaim import (
    FINALIZER,
    ClaimLookupError,
    allocation,
    can_be_reserved,
    check_is_for_pod,
    claim_key,
    claim_name,
    claim_not_found,
    is_reserved_for_pod,
)
from services.kube.structured import (
    AllocationAborted,
    AllocationError,
    Allocator,
    Features,
    PoolError,
    SelectorCache,
    SliceIndex,
)
from services.runtime import backoff
from services.scheduler import binding_chain
from services.scheduler.binding_chain import BindingChain
from services.scheduler.client import (
    POD_SCHEDULING_CONTEXTS,
    RESOURCE_CLAIMS,
    APIClient,
    Lister,
    Write,
    WriteResult,
    is_conflict,
)
from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.dra.allocation_memo import MISSING, AllocationMemo, claims_signature, node_identity
from services.scheduler.dra.assume_cache import ClaimAssumeCache
from services.scheduler.dra.binding_conditions import DeviceBindingError
from services.scheduler.dra.binding_wait import BindingConditions
from services.scheduler.dra.extended_resources import ExtendedClaimIndex, ExtendedState
from services.scheduler.dra.node_usage import NodeUsage
from services.scheduler.dra.scheduling_context import (
    POD_SCHEDULING_NODE_LIST_MAX_SIZE,
    PodSchedulingState,
    SchedulingContextError,
    status_for_claim,
)
from services.scheduler.dra.score import ScoreError, compute_score, has_prioritized_list
from services.scheduler.equivalence_cache import UNCACHEABLE
from services.scheduler.framework import (
    MAX_NODE_SCORE,
    ClusterEventWithHint,
    CycleState,
    NodeScore,
    NodeToStatus,
    Obj,
    Pod,
    PostFilterResult,
    QueueingHint,
    StateNotFoundError,
    default_normalize_score,
)
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins import extended_resource_claims as extended_claims
from services.scheduler.plugins import names
from services.scheduler.plugins._objects import expect_kind, meta, spec, status, uid
from services.scheduler.status import Code, Status, as_status, new_status

log = logging.getLogger(__name__)

STATE_KEY = names.DYNAMIC_RESOURCES
DECISION_KEY = "decision/" + names.DYNAMIC_RESOURCES

MSG_CONTROL_PLANE_DISABLED = "resourceclaim depends on disabled DRAControlPlaneController feature"
MSG_MUST_BE_REALLOCATED = "resourceclaim must be reallocated"
MSG_IN_USE = "resourceclaim in use"
MSG_NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
MSG_DEALLOCATION_COMPLETED = "deallocation of ResourceClaim completed"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"
MSG_CANNOT_ALLOCATE_ALL = "cannot allocate all claims"
MSG_NOT_AVAILABLE = "resourceclaim not available on the node"
MSG_CLASS_NODE_FILTER = "excluded by device class node filter"
MSG_UNSUITABLE = "resourceclaim cannot be allocated for the node (unsuitable)"
MSG_WAITING_FOR_DRIVER_INFO = "waiting for resource driver to provide information"
MSG_WAITING_FOR_DRIVER = "waiting for resource driver"

_NODE_ACTIONS = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT


def unschedulable(reason: str) -> Status:
    """kube's statusUnschedulable: always UnschedulableAndUnresolvable."""
    return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def _kobj(obj: Mapping[str, Any]) -> str:
    return claim_key(obj) if meta(obj).get("namespace") else str(meta(obj).get("name", ""))


@dataclass(slots=True)
class ClaimInfo:
    """Per-claim information gathered in PreFilter and Reserve."""

    available_on_nodes: dict[str, NodeSelector] | None = None  # "" for an allocated claim, else class names
    scheduling_status: Mapping[str, Any] | None = None  # driver's PodSchedulingContext status of a classic claim
    structured: bool = False
    allocation: dict[str, Any] | None = None  # set by Reserve, written by PreBind


@dataclass(slots=True)
class StateData:
    claims: list[Mapping[str, Any]] = field(default_factory=list)
    pod_claim_names: list[str] = field(default_factory=list)  # pod.spec.resourceClaims[].name per claim
    infos: list[ClaimInfo] = field(default_factory=list)
    scheduling: PodSchedulingState = field(default_factory=PodSchedulingState)
    allocator: Allocator | None = None
    claims_to_allocate: list[Mapping[str, Any]] = field(default_factory=list)
    unavailable_claims: set[int] = field(default_factory=set)
    node_allocations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # Allocations of nodes whose verdict came from the equivalence cache (node name -> allocations or None).
    recalled_allocations: Callable[[str], Any] | None = None
    pre_scored: bool = False
    # (claims signature, classes, slices and DeviceTaintRules versions) for the memo
    memo_prefix: tuple[bytes, int, int, int] | None = None
    # Every claim is structured and unallocated, without node filters: Filter only needs to allocate.
    allocate_only: bool = False
    extended: ExtendedState | None = None  # the pod's extended resource claim (DRAExtendedResource)


class DynamicResources:
    """The DynamicResources plugin; one instance per scheduler, shared by all cycles."""

    name = names.DYNAMIC_RESOURCES

    def __init__(
        self,
        *,
        client: APIClient,
        classes: Lister,
        slices: Lister,
        claims: ClaimAssumeCache | None = None,
        scheduling_contexts: Lister | None = None,
        taint_rules: Lister | None = None,
        enabled: bool = True,
        control_plane_controller: bool = False,
        features: Features | None = None,
        selector_cache: SelectorCache | None = None,
        conflict_retry_delays: Sequence[float] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        remember: bool = True,
        binding_conditions: BindingConditions | None = None,
        filter_timeout: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        extended_resources: bool = False,
    ) -> None:
        """``scheduling_contexts`` is used only with DRAControlPlaneController on (``control_plane_controller``).

        ``binding_conditions`` carries bindingTimeout (DRADeviceBindingConditions; by default as ``features`` say).
        ``filter_timeout`` (seconds; None or 0: none) bounds the allocator's search per node in Filter
        (DynamicResourcesArgs' ``filterTimeout`` with DRASchedulerFilterTimeout; ``clock`` measures it).

        ``remember=False`` runs the allocator for every node and pod (no allocation memo, no equivalence key).
        ``conflict_retry_delays`` fixes the pauses between conflict retries (tests); by default each
        retry loop draws them from client-go's ``retry.DefaultRetry`` (`backoff.retry_on_conflict`).
        """
        self.remember = remember
        self.filter_timeout = filter_timeout or None
        self._clock = clock
        self.enabled = enabled
        self.control_plane_controller = control_plane_controller
        self.client = client
        self.classes = classes
        self.slices = slices
        self.claims = claims if claims is not None else ClaimAssumeCache()
        self.scheduling_contexts = scheduling_contexts if control_plane_controller else None
        self.features = features or Features()
        # DeviceTaintRules (DRADeviceTaintRules); their taints count only with DRADeviceTaints on.
        self.taint_rules = taint_rules if self.features.device_taints else None
        self._device_taints: tuple[Hashable, Mapping[tuple[str, str, str], Any]] | None = None
        self.selector_cache = selector_cache or SelectorCache()
        self._retry_delays = None if conflict_retry_delays is None else tuple(conflict_retry_delays)
        self._sleep = sleep
        self._slice_index: SliceIndex | None = None
        self._slice_index_version: int | None = None
        self.memo = AllocationMemo()
        self._pool_generations = self.claims.pool_generations()  # a live view, looked up per node
        # (namespace, claim name) -> keys of the pods that name it (spec or status), for narrow_event
        self._pods_by_claim: dict[tuple[str, str], set[str]] = {}
        self._indexing_pods = False  # the index is complete only when every pod change comes through observe
        # node name -> (node object, its identity, (driver, pool) of the pools it reaches or None) for the index
        self._node_pools: dict[str, tuple[Mapping[str, Any], Any, tuple[tuple[str, str], ...] | None]] = {}
        self._usage = NodeUsage()  # per node, the usage version of the pools it reaches (equivalence classes)
        self.claims.on_pool_change(self._usage.pool_changed)
        self.binding = binding_conditions or BindingConditions(enabled=self.features.binding_conditions)
        self.extended_resources = extended_resources  # DRAExtendedResource
        self.extended_claims = ExtendedClaimIndex()
        self._extended_classes = extended_claims.ClassesCache(self.classes)

    # ------------------------------------------------------------ informers

    def observe(self, resource: str, old: Obj | None, new: Obj | None) -> None:
        """Feed one informer change (SchedulerCore calls this before the queue sees the event).

        ResourceClaims go to the assume cache; DeviceClasses, ResourceSlices and
        PodSchedulingContexts go to the listers when those accept changes (an
        ``ObjectStore``), and are ignored when the listers read elsewhere.
        """
        if resource == Resource.RESOURCE_CLAIM:
            self.claims.observe(old, new)
            self.binding.observe(new)  # wakes a PreBind waiting for this claim's binding conditions
            self.extended_claims.observe(old, new)
            return
        if resource == Resource.POD:
            self._indexing_pods = True
            self._index_pod(old, new)
            return
        lister: Any = {
            Resource.DEVICE_CLASS: self.classes,
            Resource.RESOURCE_SLICE: self.slices,
            Resource.POD_SCHEDULING_CONTEXT: self.scheduling_contexts,
            Resource.DEVICE_TAINT_RULE: self.taint_rules,
        }.get(resource)
        observe = getattr(lister, "observe", None)
        if callable(observe):
            observe(old, new)

    def slice_index(self) -> SliceIndex:
        """The ResourceSlices indexed for per-node pool gathering, rebuilt only when they changed.

        The index also remembers each node's pools, and the selector cache each
        pool's device list, so keeping it across pods saves the per-pod rebuild
        that dominated the scheduling cycle. A lister without a ``version``
        (change counter) gets a fresh index every time.
        """
        version = getattr(self.slices, "version", None)
        if self._slice_index is None or version is None or version != self._slice_index_version:
            self._slice_index = SliceIndex(self.slices.list())
            self._slice_index_version = version
            self._node_pools.clear()
            self._usage.clear()
        return self._slice_index

    def extended_resource_classes(self) -> ExtendedResourceClasses:
        """Extended resource name -> DeviceClass (explicit and implicit names); empty with DRAExtendedResource off."""
        return self._extended_classes.get() if self.extended_resources else NO_CLASSES

    def taint_rules_version(self) -> int | None:
        """The DeviceTaintRules' change counter (0 without rules; None: a lister that cannot tell)."""
        if self.taint_rules is None:
            return 0
        version = getattr(self.taint_rules, "version", None)
        return None if version is None else int(version)

    def device_taints(self) -> Mapping[tuple[str, str, str], Any]:
        """Per published device, the taints DeviceTaintRules give it; rebuilt when rules or slices change."""
        if self.taint_rules is None:
            return {}
        self.slice_index()  # brings _slice_index_version up to date
        rules_version = self.taint_rules_version()
        key = (rules_version, self._slice_index_version)
        if self._device_taints is not None and rules_version is not None and self._device_taints[0] == key:
            return self._device_taints[1]
        taints = rules_taints(self.taint_rules.list(), slice_devices(self.slices.list()))
        self._device_taints = (key, taints)
        return taints

    # -------------------------------------------------------------- events

    def _index_pod(self, old: Obj | None, new: Obj | None) -> None:
        before = _referenced_claims(old) if old is not None else ()
        after = _referenced_claims(new) if new is not None else ()
        if before == after:
            return
        if old is not None:
            key = _pod_key(old)
            for claim in before:
                pods = self._pods_by_claim.get(claim)
                if pods is not None:
                    pods.discard(key)
                    if not pods:
                        del self._pods_by_claim[claim]
        if new is not None:
            key = _pod_key(new)
            for claim in after:
                self._pods_by_claim.setdefault(claim, set()).add(key)

    def narrow_event(self, event: ClusterEvent, old: Obj | None, new: Obj | None) -> set[str] | None:
        """The only pods whose DynamicResources hints can say Queue for this event (None: any pod may).

        A claim change matters to every pod only when it deallocates a
        structured claim; otherwise only to pods that name the claim. A
        PodSchedulingContext matters only to the pod of the same name.
        """
        if not self._indexing_pods:
            return None
        if event.resource == Resource.RESOURCE_CLAIM and new is not None:
            old_alloc = allocation(old) if old is not None else None
            if old_alloc is not None and not old_alloc.get("controller") and allocation(new) is None:
                return None
            claim_meta = meta(new)
            return set(
                self._pods_by_claim.get((str(claim_meta.get("namespace", "")), str(claim_meta.get("name", ""))), ())
            )
        if event.resource == Resource.POD_SCHEDULING_CONTEXT and new is not None:
            return {_pod_key(new)}
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        # 1.37 also registers deletes: an allocated claim that is deleted frees its devices.
        claim_deletes = ActionType.DELETE if self.features.kube_1_37 else ActionType.NONE
        events = [
            # Allocation is tracked in ResourceClaims, so any changes may make the pods schedulable.
            ClusterEventWithHint(
                ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE | claim_deletes),
                self.is_schedulable_after_claim_change,
            ),
            # Adding the ResourceClaim name to the pod status makes pods waiting for their claim schedulable.
            ClusterEventWithHint(
                ClusterEvent(Resource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.is_schedulable_after_pod_change,
            ),
            # A resource might depend on node labels for topology filtering.
            ClusterEventWithHint(ClusterEvent(Resource.NODE, _NODE_ACTIONS)),
            # A pod might be waiting for a class to get created or modified.
            ClusterEventWithHint(ClusterEvent(Resource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            # New or updated slices might have made devices available.
            ClusterEventWithHint(ClusterEvent(Resource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
        ]
        if self.taint_rules is not None:
            # A rule that stops tainting a device may make it available to waiting pods.
            events.append(
                ClusterEventWithHint(
                    ClusterEvent(Resource.DEVICE_TAINT_RULE, ActionType.ADD | ActionType.UPDATE | ActionType.DELETE),
                    self.is_schedulable_after_device_taint_rule_change,
                )
            )
        if self.scheduling_contexts is not None:
            # A driver that provided information may make a waiting pod schedulable.
            events.append(
                ClusterEventWithHint(
                    ClusterEvent(Resource.POD_SCHEDULING_CONTEXT, ActionType.ADD | ActionType.UPDATE),
                    self.is_schedulable_after_pod_scheduling_context_change,
                )
            )
        return events

    # ---------------------------------------------------------- claim lookup

    def foreach_pod_resource_claim(
        self, pod: Pod, callback: Callable[[str, Mapping[str, Any]], None] | None = None
    ) -> None:
        """Check that each claim of the pod exists (and is its own); raise ClaimLookupError if not."""
        namespace = str(meta(pod).get("namespace", ""))
        for pod_claim in spec(pod).get("resourceClaims") or ():
            name, must_check_owner = claim_name(pod, pod_claim)
            if name is None:
                continue  # no claim was needed
            claim = self.claims.get(namespace, name)
            if claim is None:
                raise ClaimLookupError(claim_not_found(namespace, name))
            if meta(claim).get("deletionTimestamp"):
                raise ClaimLookupError(f'resourceclaim "{meta(claim).get("name", "")}" is being deleted')
            if must_check_owner:
                check_is_for_pod(pod, claim)
            if callback is not None:
                callback(str(pod_claim.get("name", "")), claim)

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.enabled:
            return None
        try:
            self.foreach_pod_resource_claim(pod)
        except ClaimLookupError as err:
            return unschedulable(str(err))
        return None

    # ---------------------------------------------------------------- hints

    def is_schedulable_after_claim_change(self, pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        expect_kind(old, "ResourceClaim")
        expect_kind(new, "ResourceClaim")
        if new is None:
            # 1.37: a deleted claim that still had an allocation (unusual: it is deallocated first) freed devices.
            freed = self.features.kube_1_37 and old is not None and allocation(old) is not None
            return QueueingHint.QUEUE if freed else QueueingHint.QUEUE_SKIP
        old_alloc = allocation(old) if old is not None else None
        deallocated = old_alloc is not None and not old_alloc.get("controller") and allocation(new) is None
        if not deallocated and not _may_reference(pod, new):
            # Shortcut, same verdict: only a deallocation can help a pod that does not use this claim,
            # and a pod whose claims cannot be found is skipped either way.
            return QueueingHint.QUEUE_SKIP
        modified_uid = uid(new)
        uses_claim = False

        def check(_: str, claim: Mapping[str, Any]) -> None:
            nonlocal uses_claim
            if uid(claim) == modified_uid:
                uses_claim = True

        try:
            self.foreach_pod_resource_claim(pod, check)
        except ClaimLookupError:
            return QueueingHint.QUEUE_SKIP
        if deallocated:
            # A structured claim was deallocated: devices may have become free for this pod.
            return QueueingHint.QUEUE
        if not uses_claim:
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        if (old.get("status") or {}) == (new.get("status") or {}):
            return QueueingHint.QUEUE_SKIP  # e.g. only the finalizer was added
        return QueueingHint.QUEUE

    def is_schedulable_after_device_taint_rule_change(self, pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        """Queue only when the change frees a device that one of the pod's unallocated claims could use.

        A device is freed when the old rule kept it out of allocation (NoSchedule
        or NoExecute) and the new rule (none after a delete) no longer gives it
        that taint. Adding a rule only takes devices away. "Could use" is the
        allocator's matching (class and request selectors) on the node the
        device's slice is published for.
        """
        expect_kind(old, "DeviceTaintRule")
        expect_kind(new, "DeviceTaintRule")
        freed = self._freed_devices(old, new)
        if not freed:
            return QueueingHint.QUEUE_SKIP
        unallocated: list[Mapping[str, Any]] = []

        def collect(_: str, claim: Mapping[str, Any]) -> None:
            if allocation(claim) is None and not spec(claim).get("controller"):
                unallocated.append(claim)

        try:
            self.foreach_pod_resource_claim(pod, collect)
        except ClaimLookupError:
            return QueueingHint.QUEUE_SKIP
        if not unallocated:
            return QueueingHint.QUEUE_SKIP
        allocator = Allocator(
            unallocated,
            frozenset(),
            {str(meta(c).get("name", "")): c for c in self.classes.list()},
            self.slice_index(),
            features=self.features,
            cache=self.selector_cache,
        )
        for node in self._nodes_publishing(freed):
            try:
                matches = allocator.matching_devices(node)
            except AllocationError:
                return QueueingHint.QUEUE  # cannot tell: let the pod try
            if any(device in freed for match in matches for device in match.matching):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _freed_devices(self, old: Obj | None, new: Obj | None) -> set[tuple[str, str, str]]:
        if old is None:
            return set()
        old_taint = (old.get("spec") or {}).get("taint") or {}
        if old_taint.get("effect") not in (NO_SCHEDULE, NO_EXECUTE):
            return set()
        new_taint = ((new or {}).get("spec") or {}).get("taint") or {}
        still = new is not None and _same_taint(old_taint, new_taint)
        return {
            device
            for device in slice_devices(self.slices.list())
            if rule_selects(old, device) and not (still and new is not None and rule_selects(new, device))
        }

    def _nodes_publishing(self, devices: set[tuple[str, str, str]]) -> list[Mapping[str, Any] | None]:
        """A node (by name) per slice that publishes one of ``devices``; None for slices not tied to a node name."""
        nodes: dict[str, Mapping[str, Any] | None] = {}
        for slice_ in self.slices.list():
            slice_spec = slice_.get("spec") or {}
            driver = str(slice_spec.get("driver", ""))
            pool = str((slice_spec.get("pool") or {}).get("name", ""))
            if not any((driver, pool, str(d.get("name", ""))) in devices for d in slice_spec.get("devices") or ()):
                continue
            node_name = str(slice_spec.get("nodeName") or "")
            nodes[node_name] = {"metadata": {"name": node_name}} if node_name else None
        return list(nodes.values())

    def is_schedulable_after_pod_scheduling_context_change(
        self, pod: Pod, old: Obj | None, new: Obj | None
    ) -> QueueingHint:
        if old is not None and new is None:
            return QueueingHint.QUEUE_SKIP  # deleted, possibly by us
        expect_kind(old, "PodSchedulingContext")
        expect_kind(new, "PodSchedulingContext")
        assert new is not None
        if meta(new).get("name") != meta(pod).get("name") or meta(new).get("namespace") != meta(pod).get("namespace"):
            return QueueingHint.QUEUE_SKIP
        pending = 0

        def count(pod_claim_name: str, claim: Mapping[str, Any]) -> None:
            nonlocal pending
            if allocation(claim) is None and status_for_claim(new, pod_claim_name) is None:
                pending += 1

        try:
            self.foreach_pod_resource_claim(pod, count)
        except ClaimLookupError:
            return QueueingHint.QUEUE_SKIP
        if pending > 0:
            return QueueingHint.QUEUE_SKIP  # wait until all drivers replied
        new_claims = (new.get("status") or {}).get("resourceClaims") or []
        if old is None or len((old.get("status") or {}).get("resourceClaims") or []) < len(new_claims):
            return QueueingHint.QUEUE
        selected = spec(new).get("selectedNode") or ""
        if selected:
            for claim_status in new_claims:
                if selected in (claim_status.get("unsuitableNodes") or ()):
                    return QueueingHint.QUEUE
        if (old.get("spec") or {}) != (new.get("spec") or {}) and (old.get("status") or {}) == (
            new.get("status") or {}
        ):
            return QueueingHint.QUEUE_SKIP  # only the scheduler's own spec changes
        return QueueingHint.QUEUE

    def is_schedulable_after_pod_change(self, pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        expect_kind(new, "Pod")
        if new is None:
            raise TypeError("unexpected nil object in isSchedulableAfterPodChange")
        if uid(pod) != uid(new):
            return QueueingHint.QUEUE_SKIP
        try:
            self.foreach_pod_resource_claim(new)
        except ClaimLookupError:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    # ------------------------------------------------------------ PreFilter

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[None, Status | None]:
        if not self.enabled:
            return None, new_status(Code.SKIP)
        s = StateData()
        state.write(STATE_KEY, s)

        claims: list[Mapping[str, Any]] = []
        pod_claim_names: list[str] = []

        def collect(pod_claim_name: str, claim: Mapping[str, Any]) -> None:
            claims.append(claim)
            pod_claim_names.append(pod_claim_name)

        try:
            self.foreach_pod_resource_claim(pod, collect)
        except ClaimLookupError as err:
            return None, unschedulable(str(err))
        if self.extended_resources:
            s.extended = extended_claims.pre_filter(self, pod)
        if not claims and s.extended is None:
            return None, new_status(Code.SKIP)

        try:
            s.scheduling.init(pod, self.scheduling_contexts)
        except SchedulingContextError as err:
            return None, as_status(err)

        s.infos = [ClaimInfo() for _ in claims]
        to_allocate: list[Mapping[str, Any]] = []
        for index, claim in enumerate(claims):
            claim_spec = spec(claim)
            claim_status = status(claim)
            info = s.infos[index]
            if claim_spec.get("controller") and not self.control_plane_controller:
                # Stays unschedulable until the gate is on or the claim is replaced (a cluster event).
                return None, unschedulable(MSG_CONTROL_PLANE_DISABLED)
            if claim_status.get("deallocationRequested"):
                return None, unschedulable(MSG_MUST_BE_REALLOCATED)
            alloc = allocation(claim)
            if alloc is not None and not self._can_be_reserved(claim) and not is_reserved_for_pod(pod, claim):
                return None, unschedulable(MSG_IN_USE)
            if alloc is not None:
                info.structured = not alloc.get("controller")
                if alloc.get("nodeSelector") is not None:
                    try:
                        info.available_on_nodes = {"": NodeSelector.parse(alloc["nodeSelector"])}
                    except NodeSelectorError as err:
                        return None, as_status(err)
                continue
            structured = not claim_spec.get("controller")
            info.structured = structured
            if structured:
                to_allocate.append(claim)
                if self.claims.has_in_flight(uid(claim)):
                    return None, unschedulable(f"resource claim {_kobj(claim)} is in the process of being allocated")
            else:
                info.scheduling_status = status_for_claim(s.scheduling.scheduling_ctx, pod_claim_names[index])
            for request in (claim_spec.get("devices") or {}).get("requests") or ():
                request_name = request.get("name", "")
                class_name = request.get("deviceClassName") or ""
                if not class_name and request.get("firstAvailable"):
                    if not self.features.prioritized_list:
                        return None, unschedulable(
                            f"resource claim {_kobj(claim)}, request {request_name}: has subrequests, "
                            "but the DRAPrioritizedList feature is disabled"
                        )
                    for sub in request["firstAvailable"]:
                        sub_class = str(sub.get("deviceClassName") or "")
                        if self.classes.get(sub_class) is None:
                            return None, unschedulable(
                                f"request {request_name}/{sub.get('name', '')}: device class {sub_class} does not exist"
                            )
                    continue  # classic claims have no subrequests
                if not class_name:
                    return None, as_status(ValueError(f"request {request_name}: unsupported request type"))
                device_class = self.classes.get(class_name)
                if device_class is None:
                    # Unschedulable until the class appears: its Add event wakes the pod, no retries.
                    return None, unschedulable(f"request {request_name}: device class {class_name} does not exist")
                suitable = spec(device_class).get("suitableNodes")
                if suitable is not None and not structured:
                    try:
                        selector = NodeSelector.parse(suitable)
                    except NodeSelectorError as err:
                        return None, as_status(err)
                    if info.available_on_nodes is None:
                        info.available_on_nodes = {}
                    info.available_on_nodes[class_name] = selector

        if to_allocate:
            s.allocator = Allocator(
                to_allocate,
                self.claims.allocated_devices(),
                {str(meta(c).get("name", "")): c for c in self.classes.list()},
                self.slice_index(),
                features=self.features,
                cache=self.selector_cache,
                shared_devices=self.claims.shared_devices(),
                allocated_capacity=self.claims.allocated_capacity(),
                device_taints=self.device_taints(),
            )
            s.claims_to_allocate = to_allocate
            classes_version = getattr(self.classes, "version", None)
            rules_version = self.taint_rules_version()
            if (
                self.remember
                and self._slice_index_version is not None
                and classes_version is not None
                and rules_version is not None
            ):
                s.memo_prefix = (
                    claims_signature(to_allocate),
                    int(classes_version),
                    self._slice_index_version,
                    rules_version,
                )
        s.claims = claims
        s.pod_claim_names = pod_claim_names
        s.allocate_only = (
            s.extended is None
            and len(to_allocate) == len(claims)
            and all(info.available_on_nodes is None and info.scheduling_status is None for info in s.infos)
        )
        return None, None

    # --------------------------------------------------------------- Filter

    @staticmethod
    def _state(state: CycleState) -> StateData:
        data = state.read(STATE_KEY)
        if not isinstance(data, StateData):
            raise TypeError("unable to convert state into stateData")
        return data

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        s = state.get(STATE_KEY)
        if type(s) is StateData and s.extended is not None:
            claims_verdict = lambda: self._filter_claims(state, pod, node_info)  # noqa: E731
            return extended_claims.filter_node(self, s, pod, node_info, claims_verdict)
        return self._filter_claims(state, pod, node_info)

    def _filter_claims(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(STATE_KEY)
        if type(s) is not StateData:
            try:
                s = self._state(state)
            except (StateNotFoundError, TypeError) as err:
                return as_status(err)
        if not s.claims:
            return None
        node = node_info.node
        assert node is not None
        if s.allocate_only and s.allocator is not None:
            # The loop below would find nothing to check (see StateData.allocate_only).
            try:
                outcome = self._allocate(s, s.allocator, node, node_info.name)
            except AllocationError as err:
                return as_status(err)
            if outcome is None or len(outcome) != len(s.claims_to_allocate):
                return unschedulable(MSG_CANNOT_ALLOCATE_ALL)
            s.node_allocations[node_info.name] = outcome
            return None
        unavailable: list[int] = []
        for index, claim in enumerate(s.claims):
            info = s.infos[index]
            if allocation(claim) is not None:
                for selector in (info.available_on_nodes or {}).values():
                    if not selector.matches(node):
                        unavailable.append(index)
                        break
                else:
                    if self.binding.unavailable(claim):  # binding failed or timed out: PostFilter deallocates
                        unavailable.append(index)
                continue
            if status(claim).get("deallocationRequested"):
                return unschedulable(MSG_MUST_BE_REALLOCATED)
            for selector in (info.available_on_nodes or {}).values():
                if not selector.matches(node):
                    return unschedulable(MSG_CLASS_NODE_FILTER)
            if info.scheduling_status is not None and node_info.name in (
                info.scheduling_status.get("unsuitableNodes") or ()
            ):
                return unschedulable(MSG_UNSUITABLE)

        allocations: list[dict[str, Any]] | None = None
        if s.allocator is not None:
            try:
                allocations = self._allocate(s, s.allocator, node, node_info.name)
            except AllocationError as err:
                # Something is wrong with the claim or class: abort this attempt, retry with backoff.
                return as_status(err)
            if allocations is None or len(allocations) != len(s.claims_to_allocate):
                return unschedulable(MSG_CANNOT_ALLOCATE_ALL)

        if unavailable:
            s.unavailable_claims.update(unavailable)
            return unschedulable(MSG_NOT_AVAILABLE)
        if allocations is not None:
            s.node_allocations[node_info.name] = allocations
        return None

    # ------------------------------------------------- equivalence classes

    def equivalence_key(self, state: CycleState) -> Hashable | None:
        """The cycle's part of the pod's equivalence class (``equivalence_cache``), or None.

        Only when Filter just allocates (``allocate_only``) is its verdict on a
        node a function of the allocation memo's inputs; otherwise the claims'
        own state (allocations, node filters, a driver's unsuitable nodes) counts.
        """
        s = state.get(STATE_KEY)
        if type(s) is not StateData or not s.allocate_only or s.memo_prefix is None:
            return None
        return s.memo_prefix

    def node_dependency(self, state: CycleState, node_info: NodeInfo) -> Hashable:
        """The usage version of the pools the node reaches (``dra/node_usage``; its labels count through the node).

        ``UNCACHEABLE`` when its pools cannot be read (the allocator reports why).
        """
        node = node_info.node
        known = self._node_pools.get(node_info.name)
        if known is None or known[0] is not node:
            assert node is not None
            self._learn_node_pools(node_info.name, node)
        return self._usage.versions.get(node_info.name, UNCACHEABLE)

    def node_dependencies(self, state: CycleState) -> Mapping[str, Hashable]:
        """``node_dependency`` of every node whose pools were learned from the node object it has now.

        The equivalence cache reads it only for an entry computed for the
        node's current object, so a node relabelled since is never looked up
        here before ``node_dependency`` learned its pools again.
        """
        return self._usage.versions

    def keep(self, state: CycleState, node_name: str) -> Any:
        """What Filter recorded for a node that fits: its allocation, for Reserve."""
        return self._state(state).node_allocations.get(node_name)

    def recall(self, state: CycleState, kept: Callable[[str], Any]) -> None:
        """Where Reserve finds the allocation of a node whose Filter verdict was reused."""
        self._state(state).recalled_allocations = kept

    def _learn_node_pools(
        self, name: str, node: Mapping[str, Any]
    ) -> tuple[Mapping[str, Any], Any, tuple[tuple[str, str], ...] | None]:
        """Remember the node's identity and the (driver, pool) of the pools it reaches (None: unreadable)."""
        assert self._slice_index is not None
        try:
            pools: tuple[tuple[str, str], ...] | None = tuple(
                (pool.driver, pool.name) for pool in self._slice_index.pools_for(node)
            )
        except PoolError:
            pools = None  # the allocator reports it
        known = (node, node_identity(node), pools)
        self._node_pools[name] = known
        self._usage.learn(name, pools)
        return known

    def _allocate(
        self, s: StateData, allocator: Allocator, node: Mapping[str, Any], name: str
    ) -> list[dict[str, Any]] | None:
        """``allocator.allocate(node)``, or its remembered outcome for identical inputs (see allocation_memo)."""
        key = None
        if s.memo_prefix is not None and self._slice_index is not None:
            known = self._node_pools.get(name)
            if known is None or known[0] is not node:
                known = self._learn_node_pools(name, node)
            if known[2] is not None:
                generations = self._pool_generations
                key = (s.memo_prefix, known[1], tuple([generations.get(pool, 0) for pool in known[2]]))
                remembered = self.memo.get(key)
                if remembered is not MISSING:
                    return remembered
        try:
            allocations = allocator.allocate(node, expired=self._expiry())
        except AllocationAborted:
            # Potentially transient: an Error (backoff), not a verdict on the node (kube 1.37).
            raise AllocationError(f"node {name}: timed out trying to allocate devices") from None
        if key is not None:
            self.memo.put(key, allocations)
        return allocations

    def _can_be_reserved(self, claim: Mapping[str, Any]) -> bool:
        """1.31: checked ahead (32); 1.37: CanBeReserved as kube has it, the 256 limit is validation's."""
        return can_be_reserved(claim, limit=None) if self.features.kube_1_37 else can_be_reserved(claim)

    def _expiry(self) -> Callable[[], bool] | None:
        """What tells the allocator that this node's filter timeout ran out (None without one)."""
        if self.filter_timeout is None:
            return None
        clock = self._clock
        deadline = clock() + self.filter_timeout
        return lambda: clock() >= deadline

    # ----------------------------------------------------------- PostFilter

    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus, num_all_nodes: int
    ) -> tuple[PostFilterResult | None, Status | None]:
        if not self.enabled:
            return None, new_status(Code.UNSCHEDULABLE, "plugin disabled")
        try:
            s = self._state(state)
        except (StateNotFoundError, TypeError) as err:
            return None, as_status(err)
        if not s.claims and s.extended is None:
            return None, new_status(Code.UNSCHEDULABLE, MSG_NO_CLAIMS_TO_DEALLOCATE)
        for index in sorted(s.unavailable_claims):
            claim = s.claims[index]
            reserved = status(claim).get("reservedFor") or []
            if len(reserved) == 0 or (len(reserved) == 1 and reserved[0].get("uid") == uid(pod)):
                structured = s.infos[index].structured
                ctx = s.scheduling.scheduling_ctx
                if not structured and ctx is not None and (ctx.get("spec") or {}).get("selectedNode"):
                    # Stop asking the driver to allocate before asking it to deallocate.
                    s.scheduling.selected_node = ""
                    try:
                        await s.scheduling.publish(pod, self.client)
                    except StatusError as err:
                        return None, as_status(err)
                updated = copy.deepcopy(dict(claim))
                new_status_obj = dict(updated.get("status") or {})
                new_status_obj.pop("reservedFor", None)
                if structured:
                    new_status_obj.pop("allocation", None)
                    new_status_obj.pop("devices", None)
                else:
                    new_status_obj["deallocationRequested"] = True
                updated["status"] = new_status_obj
                try:
                    await self.client.update_status(RESOURCE_CLAIMS, updated)
                except StatusError as err:
                    return None, as_status(err)
                return None, new_status(Code.UNSCHEDULABLE, MSG_DEALLOCATION_COMPLETED)
        if s.extended is not None and not s.extended.in_memory:
            return None, await extended_claims.delete_stale(self, s.extended)
        return None, new_status(Code.UNSCHEDULABLE, MSG_STILL_NOT_SCHEDULABLE)

    # ------------------------------------------------------------- PreScore

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if not self.enabled:
            return None
        try:
            s = self._state(state)
        except (StateNotFoundError, TypeError) as err:
            return as_status(err)
        s.pre_scored = True
        # Score can only tell nodes apart by the subrequests they got: without any, skip it.
        scored = self.features.prioritized_list and s.allocator is not None and has_prioritized_list(s.claims)
        done = None if scored else new_status(Code.SKIP)
        if not s.claims:
            return done
        pending = any(allocation(claim) is None and not s.infos[i].structured for i, claim in enumerate(s.claims))
        if not pending:
            return done
        node_names = [info.name for info in nodes]
        existing = s.scheduling.spec().get("potentialNodes") or []
        if s.scheduling.scheduling_ctx is not None and all(n in existing for n in node_names):
            return done
        if len(node_names) > POD_SCHEDULING_NODE_LIST_MAX_SIZE:
            # kube picks a random subset; a deterministic one keeps attempts reproducible.
            node_names = sorted(node_names)[:POD_SCHEDULING_NODE_LIST_MAX_SIZE]
        s.scheduling.potential_nodes = sorted(node_names)
        return done

    # ---------------------------------------------------------------- Score

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Nodes where earlier subrequests of prioritized lists fit score higher (``dra/score``)."""
        if not self.enabled or not self.features.prioritized_list:
            return 0, None
        try:
            s = self._state(state)
        except (StateNotFoundError, TypeError) as err:
            return 0, as_status(err)
        if not s.claims:
            return 0, None
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None and s.recalled_allocations is not None and s.allocator is not None:
            allocations = s.recalled_allocations(node_info.name)
        if allocations is None:
            return 0, None
        try:
            return compute_score(s.claims, allocations, to_allocate=[i.structured for i in s.infos]), None
        except ScoreError as err:
            return 0, as_status(err)

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        if self.enabled:
            default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    # -------------------------------------------------------------- Reserve

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        try:
            s = self._state(state)
        except (StateNotFoundError, TypeError) as err:
            return as_status(err)
        if s.extended is not None:
            extended_claims.reserve(self, s.extended, node_name)
        if not s.claims:
            return None

        delayed_pending = with_status_info = with_allocator = 0
        for index, claim in enumerate(s.claims):
            if allocation(claim) is not None:
                continue  # reserved for real in PreBind
            if s.infos[index].structured:
                with_allocator += 1
                continue
            delayed_pending += 1
            if status_for_claim(s.scheduling.scheduling_ctx, s.pod_claim_names[index]) is not None:
                with_status_info += 1
        if delayed_pending == 0 and with_allocator == 0:
            return None

        if not s.pre_scored and delayed_pending > 0:
            # Only one node passed Filter, so PreScore did not run: ask about that node.
            potential = s.scheduling.spec().get("potentialNodes") or []
            if s.scheduling.scheduling_ctx is None or node_name not in potential:
                s.scheduling.potential_nodes = [node_name]

        if s.allocator is not None:
            allocations = s.node_allocations.get(node_name)
            if allocations is None and s.recalled_allocations is not None:
                allocations = s.recalled_allocations(node_name)
            if allocations is None:
                return as_status(RuntimeError("claim allocation not found for node"))
            if len(allocations) != len(s.claims_to_allocate) or len(allocations) != with_allocator:
                return as_status(
                    RuntimeError(
                        f"internal error, have {len(allocations)} allocations, {len(s.claims_to_allocate)} claims "
                        f"to allocate, want {with_allocator} claims"
                    )
                )
            published: dict[str, Any] = {}
            for claim, shared in zip(s.claims_to_allocate, allocations, strict=True):
                alloc = copy.deepcopy(shared)  # outcomes may be shared with other pods (allocation memo)
                index = next(i for i, c in enumerate(s.claims) if c is claim)
                s.infos[index].allocation = alloc
                in_flight = dict(claim)  # only top-level keys are replaced below; the informer's object stays intact
                finalizers = list(meta(in_flight).get("finalizers") or [])
                if FINALIZER not in finalizers:
                    finalizers.append(FINALIZER)
                in_flight["metadata"] = {**in_flight.get("metadata", {}), "finalizers": finalizers}
                in_flight["status"] = {**(in_flight.get("status") or {}), "allocation": alloc}
                self.claims.add_in_flight(in_flight)
                published[claim_key(claim)] = alloc
            state.write(DECISION_KEY, {"node": node_name, "allocations": published})

        if (delayed_pending == 1 and with_allocator == 0) or (
            with_status_info + with_allocator == delayed_pending and with_allocator < delayed_pending
        ):
            if s.scheduling.scheduling_ctx is None or s.scheduling.spec().get("selectedNode") != node_name:
                s.scheduling.selected_node = node_name
                return None  # published in PreBind or Unreserve
        if s.scheduling.is_dirty():
            return None
        if delayed_pending == 0:
            return None
        return new_status(Code.PENDING, MSG_WAITING_FOR_DRIVER_INFO)

    async def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if not self.enabled:
            return
        try:
            s = self._state(state)
        except (StateNotFoundError, TypeError):
            return
        if s.extended is not None:
            await extended_claims.unreserve(self, s.extended)
        if not s.claims:
            return
        if s.scheduling.is_dirty():
            try:
                await s.scheduling.publish(pod, self.client)
            except StatusError:
                log.exception("publish PodSchedulingContext")
        for index, claim in enumerate(s.claims):
            if s.infos[index].structured and self.claims.remove_in_flight(uid(claim)) is not None:
                self.claims.restore(str(meta(claim).get("namespace", "")), str(meta(claim).get("name", "")))
            if allocation(claim) is not None and is_reserved_for_pod(pod, claim):
                try:
                    await self._remove_reservation(claim, pod)
                except StatusError:
                    log.exception("unreserve %s", claim_key(claim))  # retried when the pod is scheduled again

    def _conflict_delays(self) -> tuple[float, ...]:
        """The pauses between the attempts of one conflict retry loop (one fewer than the attempts)."""
        if self._retry_delays is not None:
            return self._retry_delays
        retry = backoff.retry_on_conflict()
        return tuple(retry.step() for _ in range((retry.steps or 1) - 1))

    async def _remove_reservation(self, claim: Mapping[str, Any], pod: Pod) -> None:
        current: Mapping[str, Any] = claim
        delays = self._conflict_delays()
        for attempt in range(len(delays) + 1):
            if attempt:
                await self._sleep(delays[attempt - 1])
                current = await self.client.get(
                    RESOURCE_CLAIMS, str(meta(claim).get("name", "")), namespace=str(meta(claim).get("namespace", ""))
                )
            if not is_reserved_for_pod(pod, current):
                return
            updated = copy.deepcopy(dict(current))
            claim_status = dict(updated.get("status") or {})
            claim_status["reservedFor"] = [r for r in claim_status.get("reservedFor") or [] if r.get("uid") != uid(pod)]
            updated["status"] = claim_status
            try:
                await self.client.update_status(RESOURCE_CLAIMS, updated)
                return
            except StatusError as err:
                if not is_conflict(err) or attempt == len(delays):
                    raise

    # -------------------------------------------------------------- PreBind

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        try:
            s = self._state(state)
        except (StateNotFoundError, TypeError) as err:
            return as_status(err)
        if not s.claims:
            return await extended_claims.pre_bind(self, s.extended, pod)
        if s.scheduling.is_dirty():
            try:
                await s.scheduling.publish(pod, self.client)
            except StatusError as err:
                return as_status(err)
            return new_status(Code.PENDING, MSG_WAITING_FOR_DRIVER)
        unbound = [index for index, claim in enumerate(s.claims) if not is_reserved_for_pod(pod, claim)]
        offer = self._binding_chain(state, s)
        for index in unbound:
            if offer is not None and index == unbound[-1] and self._defer_bind_claim(offer, s, index, pod):
                return None  # the framework sends the claim's writes with the binding chained after them
            try:
                s.claims[index] = await self._bind_claim(s, index, pod)
            except BindClaimError as err:
                return as_status(err)
        try:  # DRADeviceBindingConditions: until the devices' binding conditions are True
            s.claims[:] = await self.binding.wait(s.claims, self.claims.get, pod=pod, node_name=node_name)
        except (DeviceBindingError, LookupError) as err:
            return as_status(err)
        return await extended_claims.pre_bind(self, s.extended, pod)

    def _binding_chain(self, state: CycleState, s: StateData) -> BindingChain | None:
        """The framework's offer to chain the binding after the last claim's writes, if nothing must come between.

        Nothing may: no wait for binding conditions (DRADeviceBindingConditions),
        no claim for extended resources still to create, no PodSchedulingContext.
        """
        offer = binding_chain.offered(state, self.client)
        if offer is None or s.scheduling.scheduling_ctx is not None or extended_claims.writes_in_pre_bind(s.extended):
            return None
        as_written = [
            claim if info.allocation is None else {"status": {"allocation": info.allocation}}
            for claim, info in zip(s.claims, s.infos, strict=True)
        ]
        return None if self.binding.would_wait(as_written) else offer

    def _defer_bind_claim(self, offer: BindingChain, s: StateData, index: int, pod: Pod) -> bool:
        """Leave the first attempt's writes of this claim to the framework (False: bind it here instead)."""
        claim: dict[str, Any] = dict(s.claims[index])
        try:
            first = self._claim_writes(claim, s.infos[index].allocation, pod, _kobj(claim))
        except BindClaimError:
            return False  # _bind_claim reports it, and drops the claim from the in-flight allocations

        async def settle(results: Sequence[WriteResult]) -> Status | None:
            try:
                s.claims[index] = await self._bind_claim(s, index, pod, first=(first, results))
            except BindClaimError as err:
                return as_status(err)
            return None

        offer.defer(self.name, first.writes, settle)
        return True

    async def _bind_claim(
        self, s: StateData, index: int, pod: Pod, first: tuple[ClaimWrites, Sequence[WriteResult]] | None = None
    ) -> Mapping[str, Any]:
        """Write finalizer, allocation (from Reserve) and reservedFor, as one chain; retry on conflicts.

        As client-go's ``retry.RetryOnConflict``: a conflict re-reads the claim and
        tries again, up to five attempts; other errors end the attempt at once.
        ``first``: the first attempt's writes and their answers, when the
        framework sent them (chained before the binding).
        """
        # A shallow copy: _claim_writes replaces top-level keys only, never edits what they hold.
        claim: dict[str, Any] = dict(s.claims[index])
        alloc = s.infos[index].allocation
        ref = _kobj(claim)
        namespace = str(meta(claim).get("namespace", ""))
        name = str(meta(claim).get("name", ""))
        succeeded = False
        delays = self._conflict_delays()
        try:
            for attempt in range(len(delays) + 1):
                if attempt:
                    await self._sleep(delays[attempt - 1])
                    try:
                        claim = await self.client.get(RESOURCE_CLAIMS, name, namespace=namespace)
                    except StatusError as err:
                        raise BindClaimError(f"get updated claim {ref} after conflict: {err}") from err
                try:
                    if attempt == 0 and first is not None:
                        claim = first[0].written(first[1])
                    else:
                        writes = self._claim_writes(claim, alloc, pod, ref)
                        claim = writes.written(await self.client.write_chain(writes.writes))
                except BindClaimError as err:
                    if err.conflict and attempt < len(delays):
                        continue
                    raise
                succeeded = True
                return claim
            raise AssertionError("unreachable")
        finally:
            if alloc is not None:
                if succeeded:
                    self.claims.assume(claim)
                self.claims.remove_in_flight(uid(claim))

    def _claim_writes(self, claim: dict[str, Any], alloc: dict[str, Any] | None, pod: Pod, ref: str) -> ClaimWrites:
        """One attempt's writes: the finalizer if missing (an update), then allocation and reservedFor (status).

        Raises BindClaimError when the claim as read cannot be bound. The
        status write is chained after the finalizer's, on the version it
        writes: what kube's sequential writes do, in one trip through the log.
        """
        if meta(claim).get("deletionTimestamp"):
            raise BindClaimError(f"claim {ref} got deleted in the meantime")
        writes: list[Write] = []
        doing: list[str] = []
        if alloc is not None:
            if allocation(claim) is not None:
                raise BindClaimError(f"claim {ref} got allocated elsewhere in the meantime")
            finalizers = list(meta(claim).get("finalizers") or [])
            if FINALIZER not in finalizers:
                # The finalizer needs a normal update; it may already be there after an interruption.
                claim["metadata"] = {**claim["metadata"], "finalizers": [*finalizers, FINALIZER]}
                writes.append(Write("update", RESOURCE_CLAIMS, obj=claim))
                doing.append(f"add finalizer to claim {ref}")
                # The status write names no version: it must find the claim as the finalizer's write left it.
                claim = {**claim, "metadata": {k: v for k, v in claim["metadata"].items() if k != "resourceVersion"}}
            claim["status"] = {**(claim.get("status") or {}), "allocation": alloc}
        if self.binding.enabled:
            if allocation(claim) is None:
                raise BindClaimError(f"claim {ref} got deallocated elsewhere in the meantime")
            claim["status"] = {**claim["status"], "allocation": self.binding.stamp(claim["status"]["allocation"])}
        pod_meta = meta(pod)
        reserved = list((claim.get("status") or {}).get("reservedFor") or [])
        reserved.append({"resource": "pods", "name": pod_meta.get("name", ""), "uid": pod_meta.get("uid", "")})
        claim["status"] = {**(claim.get("status") or {}), "reservedFor": reserved}
        writes.append(Write("update_status", RESOURCE_CLAIMS, obj=claim, after_version=bool(writes)))
        doing.append(f"add {'allocation and reservation' if alloc is not None else 'reservation'} to claim {ref}")
        return ClaimWrites(tuple(writes), tuple(doing))

    # ------------------------------------------------------------- PostBind

    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Delete the PodSchedulingContext, best effort (garbage collection catches the rest).

        kube issues the delete whenever the pod has claims; draplane skips it with
        DRAControlPlaneController off, where no such object can have been created,
        so that structured-only pods cost no extra write.
        """
        if not self.enabled or self.scheduling_contexts is None:
            return
        try:
            s = self._state(state)
        except (StateNotFoundError, TypeError):
            return
        if not s.claims:
            return
        try:
            await self.client.delete(
                POD_SCHEDULING_CONTEXTS, str(meta(pod).get("name", "")), namespace=str(meta(pod).get("namespace", ""))
            )
        except StatusError as err:
            if err.code != 404:
                log.error("delete PodSchedulingContext: %s", err)


def _same_taint(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all((a.get(k) or "") == (b.get(k) or "") for k in ("key", "value", "effect"))


def _pod_key(obj: Mapping[str, Any]) -> str:
    return f"{meta(obj).get('namespace', '')}/{meta(obj).get('name', '')}"


def _referenced_claims(pod: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
    """(namespace, name) of every claim the pod names, directly or through its status."""
    namespace = str(meta(pod).get("namespace", ""))
    names = {pc.get("resourceClaimName") for pc in spec(pod).get("resourceClaims") or ()}
    names.update(st.get("resourceClaimName") for st in status(pod).get("resourceClaimStatuses") or ())
    return frozenset((namespace, str(n)) for n in names if n)


def _may_reference(pod: Pod, claim: Mapping[str, Any]) -> bool:
    """Whether the pod can refer to this claim at all: same namespace, and its name among the pod's claims."""
    claim_meta = meta(claim)
    pod_meta = meta(pod)
    if claim_meta.get("namespace") != pod_meta.get("namespace"):
        return False
    name = claim_meta.get("name")
    for pod_claim in spec(pod).get("resourceClaims") or ():
        if pod_claim.get("resourceClaimName") == name:
            return True
    return any(s.get("resourceClaimName") == name for s in status(pod).get("resourceClaimStatuses") or ())


@dataclass(frozen=True, slots=True)
class ClaimWrites:
    """One attempt to bind a claim: its writes, in chain order, and what each does (kube's error prefix)."""

    writes: tuple[Write, ...]
    doing: tuple[str, ...]

    def written(self, results: Sequence[WriteResult]) -> dict[str, Any]:
        """The claim as the last write stored it; BindClaimError for the first write refused."""
        for doing, result in zip(self.doing, results, strict=True):
            if isinstance(result, StatusError):
                raise BindClaimError(f"{doing}: {result}", conflict=is_conflict(result)) from result
        last = results[-1]
        assert not isinstance(last, StatusError)
        return last


class BindClaimError(Exception):
    """Binding a claim failed; ``str()`` is kube's message, ``conflict`` allows a retry."""

    def __init__(self, message: str, *, conflict: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict
