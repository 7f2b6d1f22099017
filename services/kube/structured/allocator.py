"""The structured-parameters allocator of Kubernetes DRA, 1.31 to 1.37, on wire-form objects.

Mirrors ``structured.Allocator`` (``k8s.io/dynamic-resource-allocation``):
for one node, pick devices for every request of every claim of a pod, or
report that there is no solution (None) or that the input is broken (an
`AllocationError` carrying Kubernetes' message, which the scheduler reports
instead of trying other nodes).

The search is exhaustive backtracking that stops at the first full solution:
claims in order, requests in order, one device at a time, devices in pool and
slice order. A device is eligible when it is not in use (unless the request
asks for admin access), matches the class's and then the request's CEL
selectors, and keeps every constraint of its claim. ``All`` requests take
every matching device of the node's pools.

`Features` says which Kubernetes this is. ``Features()`` is 1.31;
`Features.from_gates` gives the release and gates a component runs with. The
1.32-1.37 additions (v0.37's "incubating" allocator), each behind its gate:

* ``DRAPrioritizedList``: a request with ``firstAvailable`` tries its
  subrequests in order and takes the first that can be satisfied; results
  name ``<request>/<subrequest>``, constraints and claim configs may too;
* ``DRAAdminAccess``: an ``adminAccess`` request takes devices in use (not
  one its own claim is taking), and its results say ``adminAccess: true``;
* ``DRADeviceTaints``: a device with a NoSchedule or NoExecute taint (from
  its slice, or from DeviceTaintRules the caller merges in as
  ``device_taints``) is only given to a request that tolerates it; results
  carry the request's tolerations;
* ``DRAPartitionableDevices``: devices consume counters of their pool's
  counter sets (``sharedCounters``); what allocated devices anywhere in the
  pool consume is subtracted first, and a device that would overdraw a
  counter is skipped, which backtracking undoes like anything else; a slice
  may select nodes per device;
* ``DRAConsumableCapacity``: a device with ``allowMultipleAllocations`` is
  not used up by an allocation; each takes a share of its capacity
  (`services.kube.structured.capacity`), and its result carries a fresh
  ``shareID`` and the ``consumedCapacity``; ``distinctAttribute`` constraints;
* ``DRADeviceBindingConditions``: results carry the device's binding
  conditions, devices with ``bindsToNode`` pin the allocation to the node,
  and such pools are tried last; without the gate those devices are skipped.

And without a gate since 1.33-1.36 (``Features.kube_1_37``): ``All`` needs at
least one device; pools sort by driver and name; incomplete and invalid pools
are skipped (an invalid one is reported only when nothing else fits); claim
configs that name none of the claim's requests are left out and one that
names all of them applies to all.

Deliberate differences from the Go code, none of which changes which inputs
have a solution:

* two devices for the same request are tried as combinations, not
  permutations (the devices of one request are a set), which prunes failing
  searches from n!/(n-k)! to n-choose-k orderings;
* backtracking through an ``All`` request undoes its devices and continues,
  so a solution that needs an earlier request to pick another device is found.

Everything here is pure: no I/O, no awaits, the inputs are never modified.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from services.kube import feature_gates as fg
from services.kube import quantity as q
from services.kube.cel import CelRuntimeError, CompiledSelector
from services.kube.cel import compile as compile_selector
from services.kube.device_taints import taint_prevents_allocation
from services.kube.structured.capacity import Amount, CapacityError, capacity_value, consumed_capacity, fits
from services.kube.structured.constraints import (
    Constraint,
    DistinctAttributeConstraint,
    MatchAttributeConstraint,
    RequestNames,
)
from services.kube.structured.pools import DeviceID, Pool, PoolError, PoolMode, SliceIndex, device_node_matches
from services.kube.structured.results import ResultError, allocation_result, class_and_claim_configs, node_selector_for
from services.kube.structured.selectors import DeviceEntry, SelectorCache

ALLOCATION_RESULTS_MAX_SIZE = 32
"""``resourceapi.AllocationResultsMaxSize``: devices per claim."""

EXACT_COUNT = "ExactCount"
ALL = "All"


class AllocationError(Exception):
    """Allocation cannot proceed because of invalid input; ``str()`` is Kubernetes' message."""


class AllocationAborted(Exception):
    """``expired`` said stop (the scheduler's Filter timeout); Go's ``filter operation aborted``."""


@dataclass(frozen=True, slots=True)
class Features:
    """Feature gates (and release) the allocator honours; ``Features()`` is Kubernetes 1.31.

    ``admin_access`` is ``DRAAdminAccess`` (1.32+); 1.31 always allowed
    ``adminAccess``, hence the default. ``kube_1_37`` turns on what changed
    without a gate between 1.32 and 1.37.
    """

    admin_access: bool = True
    prioritized_list: bool = False
    device_taints: bool = False
    partitionable_devices: bool = False
    consumable_capacity: bool = False
    binding_conditions: bool = False
    kube_1_37: bool = False

    @classmethod
    def from_gates(cls, gates: fg.FeatureGates) -> Features:
        """The allocator of the release ``gates`` are evaluated at, with their values."""
        if fg.release_key(gates.release) < fg.release_key(fg.RELEASE_1_37):
            return cls(admin_access=gates.dra_admin_access)
        return cls(
            admin_access=gates.dra_admin_access,
            prioritized_list=gates.enabled(fg.DRA_PRIORITIZED_LIST),
            device_taints=gates.enabled(fg.DRA_DEVICE_TAINTS),
            partitionable_devices=gates.enabled(fg.DRA_PARTITIONABLE_DEVICES),
            consumable_capacity=gates.enabled(fg.DRA_CONSUMABLE_CAPACITY),
            binding_conditions=gates.enabled(fg.DRA_DEVICE_BINDING_CONDITIONS),
            kube_1_37=True,
        )

    @property
    def pool_mode(self) -> PoolMode:
        return PoolMode(self.kube_1_37, self.partitionable_devices, self.binding_conditions)


@dataclass(frozen=True, slots=True)
class RequestMatch:
    """The devices one request could take on one node: what matches its class and selectors, and what is free.

    ``count`` is how many devices the request needs (every matching device
    for ``allocationMode: All``); ``free`` leaves out devices other claims
    use, unless the request asks for admin access.
    """

    claim: str
    request: str
    class_name: str
    count: int
    all_devices: bool
    matching: tuple[DeviceID, ...]
    free: tuple[DeviceID, ...]
    untolerated: tuple[DeviceID, ...] = ()
    """Matching devices with a NoSchedule or NoExecute taint the request does not tolerate (DRADeviceTaints)."""


class _Stop(Exception):
    """No solution exists; stop searching (Go's errStop)."""


class _MaxSize(Exception):
    """The claim's results would exceed their limit: back out to the last prioritized list."""


@dataclass(slots=True, eq=False)
class _Request:
    claim_index: int
    name: str
    """The name in results: ``<request>`` or ``<request>/<subrequest>``."""
    names: RequestNames
    """The names a constraint or config may use for it."""
    spec: Mapping[str, Any]
    device_class: Mapping[str, Any]
    class_name: str
    class_selectors: list[CompiledSelector]
    selectors: list[CompiledSelector]
    admin_access: bool
    is_subrequest: bool = False
    tolerations: list[Mapping[str, Any]] = field(default_factory=list)
    capacity_requests: Mapping[str, Any] | None = None
    num_devices: int = 0
    all_devices: list[DeviceEntry] | None = None
    memo: dict[int, bool] = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class _Share:
    """One allocation of a device with ``allowMultipleAllocations``."""

    share_id: str
    consumed: dict[str, Amount]


_Picked = tuple[_Request, DeviceEntry, bool, _Share | None]
"""A device picked for a request: (request, device, whether it was marked in use, its share)."""


def claim_ref(claim: Mapping[str, Any]) -> str:
    """``klog.KObj``: ``namespace/name``, or ``name`` without a namespace."""
    metadata = claim.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    name = metadata.get("name") or ""
    return f"{namespace}/{name}" if namespace else str(name)


def _class_index(
    classes: Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]],
) -> dict[str, Mapping[str, Any]]:
    if isinstance(classes, Mapping):
        return dict(classes)
    return {str((c.get("metadata") or {}).get("name", "")): c for c in classes}


def _device_id_text(device_id: DeviceID) -> str:
    return "/".join(device_id)


def _new_share_id() -> str:
    return str(uuid.uuid4())


_EMPTY: Mapping[Any, Any] = {}


class Allocator:
    """Allocates a pod's claims on one node at a time (``structured.Allocator``).

    Build one per pod (per set of claims to allocate) and call `allocate` for
    each candidate node. ``classes`` is a mapping of DeviceClass name to object
    or an iterable of DeviceClasses; ``allocated_devices`` holds the
    (driver, pool, device) triples that other claims use exclusively (not
    admin-access results, not results with a ``shareID``). Pass a shared
    `SelectorCache` to reuse CEL results across pods.

    1.37 inputs: ``shared_devices`` are the devices that have at least one
    allocation with a ``shareID``; ``allocated_capacity`` sums their
    ``consumedCapacity`` per device (`AllocatedState` builds all three from
    allocation results); ``device_taints`` adds the taints of DeviceTaintRules
    per device; ``new_share_id`` makes share IDs (random UUIDs).
    """

    def __init__(
        self,
        claims_to_allocate: Sequence[Mapping[str, Any]],
        allocated_devices: Container[DeviceID],
        classes: Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]],
        slices: Iterable[Mapping[str, Any]] | SliceIndex,
        *,
        features: Features = Features(),
        cache: SelectorCache | None = None,
        shared_devices: Container[DeviceID] = frozenset(),
        allocated_capacity: Mapping[DeviceID, Mapping[str, Fraction]] = _EMPTY,
        device_taints: Mapping[DeviceID, Sequence[Mapping[str, Any]]] = _EMPTY,
        new_share_id: Callable[[], str] = _new_share_id,
    ) -> None:
        self.claims_to_allocate = list(claims_to_allocate)
        self.allocated_devices = allocated_devices
        self.classes = _class_index(classes)
        self.features = features
        self.cache = cache if cache is not None else SelectorCache()
        self.shared_devices = shared_devices
        self.allocated_capacity = allocated_capacity
        self.device_taints = device_taints
        self.new_share_id = new_share_id
        self._slices = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        self.pool_mode = features.pool_mode
        # Per pool: counters left after what allocated devices consume (computed once, read-only).
        self._available_counters: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}

    # ------------------------------------------------------------------ API

    def allocate(
        self, node: Mapping[str, Any] | None, *, expired: Callable[[], bool] | None = None
    ) -> list[dict[str, Any]] | None:
        """One wire-form AllocationResult per claim, None without a solution.

        Raises `AllocationError` for input that makes allocation impossible
        anywhere (unknown class, CEL errors, an ``All`` request on an
        incomplete pool, too many devices, ...). ``expired`` is asked before
        every device the search places, as Go's ``allocateOne`` checks its
        context; when it says True the search stops with `AllocationAborted`.
        """
        run = _Run(self, node)
        run.expired = expired
        return run.run()

    def matching_devices(self, node: Mapping[str, Any] | None) -> list[RequestMatch]:
        """Per request of every claim, in order: the node's devices it matches and how many of those are free.

        The same matching as `allocate` (class selectors, then the request's),
        without the search; raises `AllocationError` where `allocate` would.
        """
        run = _Run(self, node)
        run.gather()
        out: list[RequestMatch] = []
        for claim_index, claim in enumerate(self.claims_to_allocate):
            run.prepare_claim(claim_index, claim)
            ref = claim_ref(claim)
            for request in (r for alternatives in run.requests[claim_index] for r in alternatives):
                matching = [c.id for position, c in enumerate(run.candidates) if run.selectable(request, position, c)]
                free = [d for d in matching if request.admin_access or d not in self.allocated_devices]
                untolerated = [
                    c.id
                    for position, c in enumerate(run.candidates)
                    if run.f.device_taints and run.selectable(request, position, c) and run.taint_prevents(request, c)
                ]
                out.append(
                    RequestMatch(
                        claim=ref,
                        request=request.name,
                        class_name=request.class_name,
                        count=request.num_devices,
                        all_devices=request.all_devices is not None,
                        matching=tuple(matching),
                        free=tuple(free),
                        untolerated=tuple(untolerated),
                    )
                )
        return out

    def is_allocated(self, device_id: DeviceID) -> bool:
        """``IsDeviceAllocated``: exclusively, shared, or with consumed capacity."""
        return (
            device_id in self.allocated_devices
            or device_id in self.shared_devices
            or device_id in self.allocated_capacity
        )

    def available_counters(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        key = (pool.driver, pool.name)
        available = self._available_counters.get(key)
        if available is not None:
            return available
        available = {
            set_name: {name: q.amount_value(c.get("value", 0)) for name, c in counters.items()}
            for set_name, counters in pool.counter_sets.items()
        }
        for slice_ in [*pool.slices, *pool.slices_elsewhere]:
            spec = slice_.get("spec") or {}
            for device in spec.get("devices") or ():
                consumes = (device.get("basic") or {}).get("consumesCounters")
                if not consumes or not self.is_allocated((pool.driver, pool.name, str(device.get("name", "")))):
                    continue
                for consumption in consumes:
                    counters = available.get(str(consumption.get("counterSet", "")))
                    if counters is None:
                        continue
                    for name, c in (consumption.get("counters") or {}).items():
                        if name in counters:
                            counters[name] -= q.amount_value(c.get("value", 0))
        self._available_counters[key] = available
        return available


class _Run:
    """The state of one `Allocator.allocate` call."""

    def __init__(self, allocator: Allocator, node: Mapping[str, Any] | None) -> None:
        self.a = allocator
        self.f = allocator.features
        self.node = node
        self.cache = allocator.cache
        # Devices being allocated in this attempt (LIFO: a pick unmarks only what it marked).
        self.allocating: set[DeviceID] = set()
        self.kube_1_37 = self.f.kube_1_37
        # Per request of each claim, its alternatives: one, or the subrequests of a prioritized list.
        self.groups: list[list[_Request]] = []
        self.group_claims: list[int] = []
        self.chosen: list[_Request | None] = []
        self.requests: list[list[list[_Request]]] = []
        self.constraints: list[list[Constraint]] = []
        self.picked: list[list[_Picked]] = []
        self.candidates: list[DeviceEntry] = []
        self.pools: list[Pool] = []
        self.invalid_pools = False
        # 1.37 bookkeeping, touched only by devices that use the features.
        self.consumed_counters: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.allocating_shares: dict[DeviceID, int] = {}
        self.taint_rules = self.f.device_taints and bool(allocator.device_taints)
        self.expired: Callable[[], bool] | None = None

    # ------------------------------------------------------------ set up

    def gather(self) -> None:
        try:
            self.pools = self.a._slices.pools_for(self.node, self.a.pool_mode)
        except PoolError as err:
            raise AllocationError(f"gather pool information: {err}") from None
        if not self.kube_1_37:
            for pool in self.pools:
                self.candidates += self.cache.devices(pool)
            return
        for pool in self.pools:
            if pool.is_incomplete or pool.is_invalid:
                self.invalid_pools = self.invalid_pools or pool.is_invalid
                continue
            self.candidates += self.cache.devices(pool)

    def prepare_claim(self, claim_index: int, claim: Mapping[str, Any]) -> None:
        ref = claim_ref(claim)
        devices_spec = (claim.get("spec") or {}).get("devices") or {}
        claim_requests: list[list[_Request]] = []
        num_devices = 0
        for request in devices_spec.get("requests") or ():
            name = str(request.get("name", ""))
            subrequests = request.get("firstAvailable")
            if subrequests:
                if not self.f.prioritized_list:
                    raise AllocationError(
                        f"claim {ref}, request {name}: has subrequests, but the DRAPrioritizedList feature is disabled"
                    )
                alternatives = [
                    self.prepare_request(ref, claim_index, sub, parent=name, is_subrequest=True) for sub in subrequests
                ]
            else:
                alternatives = [self.prepare_request(ref, claim_index, request, parent="", is_subrequest=False)]
            minimum = min([r.num_devices for r in alternatives]) if subrequests else alternatives[0].num_devices
            if self.kube_1_37 and minimum > ALLOCATION_RESULTS_MAX_SIZE - num_devices:
                raise AllocationError(
                    f"claim {ref}, request {name}: adding {minimum} devices exceeds the claim limit of "
                    f"{ALLOCATION_RESULTS_MAX_SIZE}, with {num_devices} already accounted for"
                )
            num_devices += minimum
            claim_requests.append(alternatives)
            self.groups.append(alternatives)
            self.group_claims.append(claim_index)
            self.chosen.append(None if subrequests else alternatives[0])
        if num_devices > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocationError(
                f"claim {ref}: number of requested devices {num_devices} exceeds the claim limit of "
                f"{ALLOCATION_RESULTS_MAX_SIZE}"
            )
        constraints: list[Constraint] = []
        for i, constraint in enumerate(devices_spec.get("constraints") or ()):
            names = frozenset(constraint.get("requests") or ())
            if constraint.get("matchAttribute"):
                constraints.append(MatchAttributeConstraint(str(constraint["matchAttribute"]), names))
            elif constraint.get("distinctAttribute") and self.f.consumable_capacity:
                constraints.append(DistinctAttributeConstraint(str(constraint["distinctAttribute"]), names))
            else:
                raise AllocationError(f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)")
        self.requests.append(claim_requests)
        self.constraints.append(constraints)
        self.picked.append([])

    def prepare_request(
        self, ref: str, claim_index: int, request: Mapping[str, Any], *, parent: str, is_subrequest: bool
    ) -> _Request:
        own = str(request.get("name", ""))
        name = f"{parent}/{own}" if parent else own
        shown = own  # Kubernetes names the (sub)request by its own name in messages.
        selectors = request.get("selectors") or []
        for i, selector in enumerate(selectors):
            if selector.get("cel") is None:
                raise AllocationError(
                    f"claim {ref}, request {shown}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        admin_access = bool(request.get("adminAccess")) and not is_subrequest
        if admin_access and not self.f.admin_access:
            raise AllocationError(
                f"claim {ref}, request {shown}: admin access is requested, but the feature is disabled"
            )
        capacity = request.get("capacity")
        if capacity is not None and not self.f.consumable_capacity and self.f.kube_1_37:
            kind = "subrequest" if is_subrequest else "request"
            raise AllocationError(
                f"claim {ref}, {kind} {shown}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
            )
        class_name = str(request.get("deviceClassName") or "")
        if not class_name:
            raise AllocationError(
                f"claim {ref}, request {shown}: missing device class name (unsupported request type?)"
            )
        device_class = self.a.classes.get(class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {ref}, request {shown}: could not retrieve device class {class_name}: "
                f'deviceclass.resource.k8s.io "{class_name}" not found'
            )
        class_selectors = [
            compile_selector(str((s.get("cel") or {}).get("expression", "")))
            for s in (device_class.get("spec") or {}).get("selectors") or ()
        ]
        data = _Request(
            claim_index=claim_index,
            name=name,
            names=(parent, name) if parent else (name,),
            spec=request,
            device_class=device_class,
            class_name=class_name,
            class_selectors=class_selectors,
            selectors=[compile_selector(str(s["cel"].get("expression", ""))) for s in selectors],
            admin_access=admin_access,
            is_subrequest=is_subrequest,
            tolerations=list(request.get("tolerations") or ()) if self.f.device_taints else [],
            capacity_requests=((capacity or {}).get("requests") or None) if self.f.consumable_capacity else None,
        )
        mode = request.get("allocationMode") or EXACT_COUNT
        if mode == EXACT_COUNT:
            count = request.get("count")
            data.num_devices = 1 if count is None else int(count)
        elif mode == ALL:
            data.all_devices = self.all_devices(ref, data)
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"claim {ref}, request {shown}: unsupported count mode {mode}")
        return data

    def all_devices(self, ref: str, request: _Request) -> list[DeviceEntry]:
        shown = request.name.rpartition("/")[2]
        for pool in self.pools:
            if pool.is_incomplete:
                raise AllocationError(
                    f"claim {ref}, request {shown}: asks for all devices, "
                    f"but resource pool {pool.pool_id} is currently being updated"
                )
            if pool.is_invalid:
                raise AllocationError(
                    f"claim {ref}, request {shown}: asks for all devices, "
                    f"but resource pool {pool.pool_id} is currently invalid"
                )
        devices = [c for position, c in enumerate(self.candidates) if self.selectable(request, position, c)]
        if self.f.consumable_capacity:
            # Static capacity only: devices that could never hold the request are not part of "all".
            devices = [c for c in devices if self.static_capacity_fits(ref, request, c)]
        return devices

    def static_capacity_fits(self, ref: str, request: _Request, candidate: DeviceEntry) -> bool:
        capacity = (candidate.basic or {}).get("capacity") or {}
        try:
            consumed = consumed_capacity(request.capacity_requests, capacity)
        except CapacityError as err:
            raise AllocationError(
                f"claim {ref}, request {request.name.rpartition('/')[2]}: checking capacity for device "
                f"{candidate.id[2]}: {err}"
            ) from None
        return consumed is not None and fits(consumed, capacity, allocated=_EMPTY, allocating=_EMPTY)

    # ------------------------------------------------------------ matching

    def selectable(self, request: _Request, position: int, candidate: DeviceEntry) -> bool:
        memo = request.memo.get(position)
        if memo is not None:
            return memo
        basic = candidate.basic
        if basic is None:
            # Some future device type: cannot be selected.
            request.memo[position] = False
            return False
        if candidate.special and self.kube_1_37 and not self.f.binding_conditions and basic.get("bindingConditions"):
            request.memo[position] = False
            return False
        for i, selector in enumerate(request.class_selectors):
            if not self.selector_matches(selector, candidate, basic, request, i, from_class=True):
                request.memo[position] = False
                return False
        for i, selector in enumerate(request.selectors):
            if not self.selector_matches(selector, candidate, basic, request, i, from_class=False):
                request.memo[position] = False
                return False
        result = True
        if (
            candidate.special
            and self.f.partitionable_devices
            and (candidate.slice.get("spec") or {}).get("perDeviceNodeSelection")
        ):
            try:
                result = device_node_matches(candidate.device, self.node)
            except PoolError as err:
                raise AllocationError(str(err)) from None
        request.memo[position] = result
        return result

    def selector_matches(
        self,
        selector: CompiledSelector,
        candidate: DeviceEntry,
        basic: Mapping[str, Any],
        request: _Request,
        index: int,
        *,
        from_class: bool,
    ) -> bool:
        if selector.error is None:
            result = self.cache.matches(selector, candidate.key, basic)
            if not isinstance(result, CelRuntimeError):
                return result
            problem = f"CEL runtime error: {result}"
        else:
            problem = f"CEL compile error: {selector.error}"
        if from_class:
            owner = f"class {request.class_name}"
        else:
            owner = f"claim {claim_ref(self.a.claims_to_allocate[request.claim_index])}"
        raise AllocationError(f"{owner}: selector #{index}: {problem}")

    def in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.allocating or device_id in self.a.allocated_devices

    def is_multi(self, candidate: DeviceEntry) -> bool:
        return (
            candidate.special
            and self.f.consumable_capacity
            and bool((candidate.basic or {}).get("allowMultipleAllocations"))
        )

    # ------------------------------------------------------------ search

    def add_device(self, request: _Request, candidate: DeviceEntry, *, must: bool) -> bool:
        if self.kube_1_37 and (
            candidate.special
            or request.capacity_requests is not None
            or (self.taint_rules and candidate.id in self.a.device_taints)
        ):
            return self.add_special_device(request, candidate, must=must)
        device_id = candidate.id
        if request.admin_access:
            if self.kube_1_37 and self.allocating_for_claim(request.claim_index, device_id):
                return False
        elif device_id in self.allocating or device_id in self.a.allocated_devices:
            return False
        if self.constraints[request.claim_index] and not self.add_constraints(request, candidate, must=must):
            return False
        # 1.31 never marks an admin-access device; 1.37 marks it for the other claims of the pod.
        marked = (self.kube_1_37 or not request.admin_access) and device_id not in self.allocating
        if marked:
            self.allocating.add(device_id)
        self.picked[request.claim_index].append((request, candidate, marked, None))
        return True

    def allocating_for_claim(self, claim_index: int, device_id: DeviceID) -> bool:
        """``allocatingDeviceForClaim``: this claim already takes the device (not as a share)."""
        return any(entry.id == device_id and share is None for _, entry, _, share in self.picked[claim_index])

    def add_constraints(self, request: _Request, candidate: DeviceEntry, *, must: bool) -> bool:
        constraints = self.constraints[request.claim_index]
        for i, constraint in enumerate(constraints):
            if not constraint.add(request.names, candidate.attributes, candidate.pool.driver):
                for previous in constraints[:i]:
                    previous.remove(request.names)
                if must:
                    claim = self.a.claims_to_allocate[request.claim_index]
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {request.name.rpartition('/')[2]}: cannot add device "
                        f"{_device_id_text(candidate.id)} because a claim constraint would not be satisfied"
                    )
                return False
        return True

    def add_special_device(self, request: _Request, candidate: DeviceEntry, *, must: bool) -> bool:
        """`add_device` for a device with taints, counters, sharing or binding (1.37 only)."""
        basic = candidate.basic or {}
        device_id = candidate.id
        multi = self.is_multi(candidate)
        if not multi and request.admin_access and self.allocating_for_claim(request.claim_index, device_id):
            return False
        if not request.admin_access and self.in_use(device_id):
            return False
        consumes = basic.get("consumesCounters")
        if consumes and not self.f.partitionable_devices:
            return False
        if self.f.device_taints and self.taint_prevents(request, candidate):
            return False
        reserve = bool(consumes) and not (multi and self.capacity_in_use(device_id))
        if reserve and not self.reserve_counters(candidate, consumes or ()):
            return False
        consumed: dict[str, Amount] | None = None
        if self.f.consumable_capacity:
            consumed = self.capacity_for(request, candidate)
            if consumed is None:
                if reserve:
                    self.release_counters(candidate, consumes)
                return False
        if not self.add_constraints(request, candidate, must=must):
            if reserve:
                self.release_counters(candidate, consumes)
            return False
        share: _Share | None = None
        marked = False
        if multi:
            assert consumed is not None
            share = _Share(self.a.new_share_id(), consumed)
            allocating = self.allocating_capacity.setdefault(device_id, {})
            for name, amount in consumed.items():
                allocating[name] = allocating.get(name, Fraction(0)) + amount.value
            self.allocating_shares[device_id] = self.allocating_shares.get(device_id, 0) + 1
        elif device_id not in self.allocating:
            self.allocating.add(device_id)
            marked = True
        self.picked[request.claim_index].append((request, candidate, marked, share))
        return True

    def remove_device(self, request: _Request, candidate: DeviceEntry) -> None:
        _, _, marked, share = self.picked[request.claim_index].pop()
        for constraint in self.constraints[request.claim_index]:
            constraint.remove(request.names)
        if marked:
            self.allocating.discard(candidate.id)
        if not candidate.special or not self.kube_1_37:
            return
        consumes = (candidate.basic or {}).get("consumesCounters")
        if share is not None:
            allocating = self.allocating_capacity[candidate.id]
            for name, amount in share.consumed.items():
                allocating[name] -= amount.value
            shares = self.allocating_shares[candidate.id] - 1
            if shares:
                self.allocating_shares[candidate.id] = shares
            else:
                del self.allocating_shares[candidate.id]
                del self.allocating_capacity[candidate.id]
            # Counters were reserved only if the device's capacity was not in use before.
            if not self.capacity_in_use(candidate.id):
                self.release_counters(candidate, consumes)
        elif consumes and self.f.partitionable_devices:
            self.release_counters(candidate, consumes)

    def taint_prevents(self, request: _Request, candidate: DeviceEntry) -> bool:
        taints = list((candidate.basic or {}).get("taints") or ())
        taints += self.a.device_taints.get(candidate.id, ())
        return taint_prevents_allocation(taints, request.tolerations)

    def capacity_in_use(self, device_id: DeviceID) -> bool:
        """``deviceCapacityInUse``: some allocation, made or being made, holds a share of the device."""
        return (
            device_id in self.a.allocated_capacity
            or device_id in self.a.shared_devices
            or device_id in self.allocating_shares
        )

    def capacity_for(self, request: _Request, candidate: DeviceEntry) -> dict[str, Amount] | None:
        """What the request would consume of the device, None when it does not fit (any device, 1.37)."""
        basic = candidate.basic or {}
        capacity = basic.get("capacity") or {}
        try:
            consumed = consumed_capacity(request.capacity_requests, capacity)
        except CapacityError as err:
            claim = self.a.claims_to_allocate[request.claim_index]
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {request.name.rpartition('/')[2]}: checking capacity for device "
                f"{_device_id_text(candidate.id)}: {err}"
            ) from None
        if consumed is None:
            return None
        allocated = self.a.allocated_capacity.get(candidate.id, _EMPTY)
        allocating = self.allocating_capacity.get(candidate.id, _EMPTY)
        if not fits(consumed, capacity, allocated=allocated, allocating=allocating):
            return None
        return consumed

    def reserve_counters(self, candidate: DeviceEntry, consumes: Sequence[Mapping[str, Any]]) -> bool:
        pool = candidate.pool
        available = self.a.available_counters(pool)
        consumed = self.consumed_counters.setdefault((pool.driver, pool.name), {})
        for consumption in consumes:
            counters = consumed.setdefault(str(consumption.get("counterSet", "")), {})
            for name, c in (consumption.get("counters") or {}).items():
                counters[name] = counters.get(name, Fraction(0)) + q.amount_value(c.get("value", 0))
        for set_name, counters in available.items():
            used = consumed.get(set_name)
            if not used:
                continue
            for name, left in counters.items():
                if left < used.get(name, 0):
                    self.release_counters(candidate, consumes)
                    return False
        return True

    def release_counters(self, candidate: DeviceEntry, consumes: Sequence[Mapping[str, Any]] | None) -> None:
        if not consumes:
            return
        consumed = self.consumed_counters[(candidate.pool.driver, candidate.pool.name)]
        for consumption in consumes:
            counters = consumed[str(consumption.get("counterSet", ""))]
            for name, c in (consumption.get("counters") or {}).items():
                counters[name] -= q.amount_value(c.get("value", 0))

    def search_group(self, group_index: int) -> bool:
        """Allocate the request at ``group_index`` and everything after it."""
        if group_index == len(self.groups):
            return True
        alternatives = self.groups[group_index]
        first = alternatives[0]
        if not first.is_subrequest:
            if self.kube_1_37 and first.num_devices > ALLOCATION_RESULTS_MAX_SIZE - len(self.picked[first.claim_index]):
                return self.overflow(group_index)
            if group_index and self.group_claims[group_index] != self.group_claims[group_index - 1]:
                # A claim's result limit does not reach into the next claim's choices.
                try:
                    return self.search(first, group_index, 0, -1)
                except _MaxSize:
                    return False
            return self.search(first, group_index, 0, -1)
        # A prioritized list: the first subrequest that leads to a solution wins. When every
        # subrequest would overflow the claim's results, an earlier choice has to change (Go's
        # errAllocationResultMaxSizeExceeded).
        room = ALLOCATION_RESULTS_MAX_SIZE - len(self.picked[first.claim_index])
        overflow = True
        for request in alternatives:
            if request.num_devices > room:
                continue
            try:
                found = self.search(request, group_index, 0, -1)
            except _MaxSize:
                continue
            overflow = False
            if found:
                self.chosen[group_index] = request
                return True
        if overflow:
            return self.overflow(group_index)
        return False

    def overflow(self, group_index: int) -> bool:
        """The claim's results would overflow: back out to the claim's last prioritized list, not beyond."""
        if group_index and self.group_claims[group_index] != self.group_claims[group_index - 1]:
            return False
        raise _MaxSize

    def search(self, request: _Request, group_index: int, device_index: int, lower_bound: int) -> bool:
        if self.expired is not None and self.expired():
            raise AllocationAborted("filter operation aborted")
        if device_index >= request.num_devices:
            if request.all_devices is not None and not request.all_devices and self.f.kube_1_37:
                return False  # 1.33: "All" needs at least one device.
            return self.search_group(group_index + 1)
        if request.all_devices is not None:
            candidate = request.all_devices[device_index]
            if not request.admin_access and candidate.id in self.a.allocated_devices and not request.is_subrequest:
                raise _Stop  # used by another claim: no order of ours can free it
            if not self.add_device(request, candidate, must=True):
                return False
            try:
                if self.search(request, group_index, device_index + 1, -1):
                    return True
            except _MaxSize:
                self.remove_device(request, candidate)
                raise
            self.remove_device(request, candidate)
            return False
        candidates = self.candidates
        start = lower_bound + 1 if device_index > 0 else 0
        admin = request.admin_access
        allocating, allocated = self.allocating, self.a.allocated_devices
        for position in range(start, len(candidates)):
            candidate = candidates[position]
            if not admin and not candidate.special and (candidate.id in allocating or candidate.id in allocated):
                continue
            if not self.selectable(request, position, candidate):
                continue
            pool = candidate.pool
            if pool.is_invalid:
                # 1.31: allocating from other pools of a driver would be fine, but not from this one.
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            if not self.add_device(request, candidate, must=False):
                continue
            try:
                if self.search(request, group_index, device_index + 1, position):
                    return True
            except _MaxSize:
                self.remove_device(request, candidate)
                raise
            self.remove_device(request, candidate)
        return False

    # ------------------------------------------------------------ result

    def device_result(self, picked: _Picked) -> dict[str, Any]:
        request, entry, _, share = picked
        out: dict[str, Any] = {
            "request": request.name,
            "driver": entry.id[0],
            "pool": entry.id[1],
            "device": entry.id[2],
        }
        if not self.f.kube_1_37:
            return out
        if request.admin_access:
            out["adminAccess"] = True
        if request.tolerations:
            out["tolerations"] = [dict(t) for t in request.tolerations]
        if self.f.binding_conditions and entry.special:
            basic = entry.basic or {}
            if basic.get("bindingConditions"):
                out["bindingConditions"] = list(basic["bindingConditions"])
            if basic.get("bindingFailureConditions"):
                out["bindingFailureConditions"] = list(basic["bindingFailureConditions"])
        if share is not None:
            out["shareID"] = share.share_id
            if share.consumed:
                out["consumedCapacity"] = {name: amount.text for name, amount in share.consumed.items()}
        return out

    def claim_configs(self, claim_index: int, devices_spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """1.37: the claim's configs that name one of its requests or a chosen subrequest."""
        chosen = [self.chosen[g] for g in range(len(self.groups)) if self.group_claims[g] == claim_index]
        names = [r.names for r in chosen if r is not None]
        return [
            config
            for config in devices_spec.get("config") or ()
            if not config.get("requests")
            or any(n in config["requests"] for request_names in names for n in request_names)
        ]

    def clear_all_covering(self, claim_index: int, configs: list[dict[str, Any]]) -> None:
        """1.37: a config whose ``requests`` name every request of the claim applies to all (no ``requests``)."""
        names = [r.names for g, r in enumerate(self.chosen) if self.group_claims[g] == claim_index and r is not None]
        for config in configs:
            requests = config.get("requests")
            if requests and all(any(n in requests for n in request_names) for request_names in names):
                del config["requests"]

    def build_results(self) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        for claim_index, claim in enumerate(self.a.claims_to_allocate):
            picked = self.picked[claim_index]
            device_results = [self.device_result(p) for p in picked]
            devices_spec = (claim.get("spec") or {}).get("devices") or {}
            if self.f.kube_1_37:
                used = [self.chosen[g] for g in range(len(self.groups)) if self.group_claims[g] == claim_index]
                configs = class_and_claim_configs(
                    requests=[(r.name, r.device_class) for r in used if r is not None],
                    claim_configs=self.claim_configs(claim_index, devices_spec),
                )
                self.clear_all_covering(claim_index, configs)
            else:
                configs = class_and_claim_configs(
                    requests=[(alts[0].name, alts[0].device_class) for alts in self.requests[claim_index]],
                    claim_configs=devices_spec.get("config") or (),
                )
            try:
                node_selector = node_selector_for(
                    [p[1].slice for p in picked],
                    devices=[p[1].device for p in picked] if self.f.kube_1_37 else None,
                    node=self.node,
                )
            except ResultError as err:
                name = (claim.get("metadata") or {}).get("name", "")
                raise AllocationError(f"create NodeSelector for claim {name}: {err}") from None
            results.append(allocation_result(results=device_results, configs=configs, node_selector=node_selector))
        return results

    def run(self) -> list[dict[str, Any]] | None:
        self.gather()
        for claim_index, claim in enumerate(self.a.claims_to_allocate):
            self.prepare_claim(claim_index, claim)
        try:
            found = self.search_group(0)
        except (_Stop, _MaxSize):
            found = False
        if not found:
            if self.invalid_pools:
                raise AllocationError("invalid resource pools were encountered")
            return None
        return self.build_results()


@dataclass(slots=True)
class AllocatedState:
    """What allocated claims hold, as the allocator takes it (``schedulerapi.AllocatedState``).

    ``devices``: exclusively allocated devices; ``shared_devices``: devices with
    at least one ``shareID`` allocation; ``capacity``: per shared device, the sum
    of ``consumedCapacity``. Admin-access results hold nothing.
    """

    devices: set[DeviceID] = field(default_factory=set)
    shared_devices: set[DeviceID] = field(default_factory=set)
    capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def add(self, allocation: Mapping[str, Any]) -> None:
        """Count one claim's ``status.allocation``."""
        for result in (allocation.get("devices") or {}).get("results") or ():
            if result.get("adminAccess"):
                continue
            device_id = (str(result.get("driver", "")), str(result.get("pool", "")), str(result.get("device", "")))
            if result.get("shareID") is None:
                self.devices.add(device_id)
                continue
            self.shared_devices.add(device_id)
            consumed = result.get("consumedCapacity")
            if consumed:
                totals = self.capacity.setdefault(device_id, {})
                for name, raw in consumed.items():
                    totals[name] = totals.get(name, Fraction(0)) + q.amount_value(capacity_value(raw))
