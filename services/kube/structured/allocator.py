"""The structured-parameters allocator of Kubernetes 1.31 DRA, on wire-form objects.

Mirrors ``structured.Allocator`` (``k8s.io/dynamic-resource-allocation``):
for one node, pick devices for every request of every claim of a pod, or
report that there is no solution (None) or that the input is broken (an
`AllocationError` carrying Kubernetes' message, which the scheduler reports
instead of trying other nodes).

The search is exhaustive backtracking that stops at the first full solution:
claims in order, requests in order, one device at a time, devices in pool and
slice order. A device is eligible when it is not in use (unless the request
asks for admin access), matches the class's and then the request's CEL
selectors, and keeps every ``matchAttribute`` constraint of its claim.
``All`` requests take every matching device of the node's pools, and fail on
an incomplete or invalid pool.

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

from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.kube.cel import CelRuntimeError, CompiledSelector
from services.kube.cel import compile as compile_selector
from services.kube.structured.constraints import MatchAttributeConstraint
from services.kube.structured.pools import DeviceID, Pool, PoolError, SliceIndex
from services.kube.structured.results import ResultError, allocation_result, class_and_claim_configs, node_selector_for
from services.kube.structured.selectors import DeviceEntry, SelectorCache

ALLOCATION_RESULTS_MAX_SIZE = 32
"""``resourceapi.AllocationResultsMaxSize``: devices per claim."""

EXACT_COUNT = "ExactCount"
ALL = "All"


class AllocationError(Exception):
    """Allocation cannot proceed because of invalid input; ``str()`` is Kubernetes' message."""


@dataclass(frozen=True, slots=True)
class Features:
    """Feature gates the allocator honours.

    ``admin_access`` is ``DRAAdminAccess`` (1.32+); 1.31 always allowed
    ``adminAccess``, hence the default.
    """

    admin_access: bool = True


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


class _Stop(Exception):
    """No solution exists; stop searching (Go's errStop)."""


@dataclass(slots=True, eq=False)
class _Request:
    claim_index: int
    name: str
    device_class: Mapping[str, Any]
    class_name: str
    class_selectors: list[CompiledSelector]
    selectors: list[CompiledSelector]
    admin_access: bool
    num_devices: int = 0
    all_devices: list[DeviceEntry] | None = None
    memo: dict[int, bool] = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class _Slot:
    request: _Request
    device_index: int
    same_request_as_previous: bool


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


class Allocator:
    """Allocates a pod's claims on one node at a time (``structured.Allocator``).

    Build one per pod (per set of claims to allocate) and call `allocate` for
    each candidate node. ``classes`` is a mapping of DeviceClass name to object
    or an iterable of DeviceClasses; ``allocated_devices`` holds the
    (driver, pool, device) triples that other claims already use. Pass a
    shared `SelectorCache` to reuse CEL results across pods.
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
    ) -> None:
        self.claims_to_allocate = list(claims_to_allocate)
        self.allocated_devices = allocated_devices
        self.classes = _class_index(classes)
        self.features = features
        self.cache = cache if cache is not None else SelectorCache()
        self._slices = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)

    # ------------------------------------------------------------------ API

    def allocate(self, node: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
        """One wire-form AllocationResult per claim, None without a solution.

        Raises `AllocationError` for input that makes allocation impossible
        anywhere (unknown class, CEL errors, an ``All`` request on an
        incomplete pool, too many devices, ...).
        """
        return _Run(self, node).run()

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
            for request in run.requests[claim_index]:
                matching = [
                    c.id for position, c in enumerate(run.candidates) if run.selectable(request, position, c)
                ]
                free = [d for d in matching if request.admin_access or d not in self.allocated_devices]
                out.append(
                    RequestMatch(
                        claim=ref,
                        request=request.name,
                        class_name=request.class_name,
                        count=request.num_devices,
                        all_devices=request.all_devices is not None,
                        matching=tuple(matching),
                        free=tuple(free),
                    )
                )
        return out


class _Run:
    """The state of one `Allocator.allocate` call."""

    def __init__(self, allocator: Allocator, node: Mapping[str, Any] | None) -> None:
        self.a = allocator
        self.node = node
        self.cache = allocator.cache
        self.allocating: set[DeviceID] = set()
        self.requests: list[list[_Request]] = []
        self.constraints: list[list[MatchAttributeConstraint]] = []
        self.picked: list[list[tuple[_Request, DeviceEntry]]] = []
        self.candidates: list[DeviceEntry] = []
        self.pools: list[Pool] = []

    # ------------------------------------------------------------ set up

    def gather(self) -> None:
        try:
            self.pools = self.a._slices.pools_for(self.node)
        except PoolError as err:
            raise AllocationError(f"gather pool information: {err}") from None
        for pool in self.pools:
            self.candidates += self.cache.devices(pool)

    def prepare_claim(self, claim_index: int, claim: Mapping[str, Any]) -> None:
        ref = claim_ref(claim)
        devices_spec = (claim.get("spec") or {}).get("devices") or {}
        requests: list[_Request] = []
        num_devices = 0
        for request in devices_spec.get("requests") or ():
            name = str(request.get("name", ""))
            selectors = request.get("selectors") or []
            for i, selector in enumerate(selectors):
                if selector.get("cel") is None:
                    raise AllocationError(
                        f"claim {ref}, request {name}, selector #{i}: CEL expression empty (unsupported selector type?)"
                    )
            admin_access = bool(request.get("adminAccess"))
            if admin_access and not self.a.features.admin_access:
                raise AllocationError(
                    f"claim {ref}, request {name}: admin access is requested, but the feature is disabled"
                )
            class_name = str(request.get("deviceClassName") or "")
            if not class_name:
                raise AllocationError(
                    f"claim {ref}, request {name}: missing device class name (unsupported request type?)"
                )
            device_class = self.a.classes.get(class_name)
            if device_class is None:
                raise AllocationError(
                    f"claim {ref}, request {name}: could not retrieve device class {class_name}: "
                    f'deviceclass.resource.k8s.io "{class_name}" not found'
                )
            class_selectors = [
                compile_selector(str((s.get("cel") or {}).get("expression", "")))
                for s in (device_class.get("spec") or {}).get("selectors") or ()
            ]
            data = _Request(
                claim_index=claim_index,
                name=name,
                device_class=device_class,
                class_name=class_name,
                class_selectors=class_selectors,
                selectors=[compile_selector(str(s["cel"].get("expression", ""))) for s in selectors],
                admin_access=admin_access,
            )
            mode = request.get("allocationMode") or EXACT_COUNT
            if mode == EXACT_COUNT:
                count = request.get("count")
                data.num_devices = 1 if count is None else int(count)
            elif mode == ALL:
                data.all_devices = self.all_devices(ref, data)
                data.num_devices = len(data.all_devices)
            else:
                raise AllocationError(f"claim {ref}, request {name}: unsupported count mode {mode}")
            requests.append(data)
            num_devices += data.num_devices
        if num_devices > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocationError(
                f"claim {ref}: number of requested devices {num_devices} exceeds the claim limit of "
                f"{ALLOCATION_RESULTS_MAX_SIZE}"
            )
        constraints: list[MatchAttributeConstraint] = []
        for i, constraint in enumerate(devices_spec.get("constraints") or ()):
            attribute = constraint.get("matchAttribute")
            if not attribute:
                raise AllocationError(f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)")
            constraints.append(MatchAttributeConstraint(str(attribute), frozenset(constraint.get("requests") or ())))
        self.requests.append(requests)
        self.constraints.append(constraints)
        self.picked.append([])

    def all_devices(self, ref: str, request: _Request) -> list[DeviceEntry]:
        for pool in self.pools:
            if pool.is_incomplete:
                raise AllocationError(
                    f"claim {ref}, request {request.name}: asks for all devices, "
                    f"but resource pool {pool.pool_id} is currently being updated"
                )
            if pool.is_invalid:
                raise AllocationError(
                    f"claim {ref}, request {request.name}: asks for all devices, "
                    f"but resource pool {pool.pool_id} is currently invalid"
                )
        return [c for position, c in enumerate(self.candidates) if self.selectable(request, position, c)]

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
        for i, selector in enumerate(request.class_selectors):
            if not self.selector_matches(selector, candidate, basic, request, i, from_class=True):
                request.memo[position] = False
                return False
        for i, selector in enumerate(request.selectors):
            if not self.selector_matches(selector, candidate, basic, request, i, from_class=False):
                request.memo[position] = False
                return False
        request.memo[position] = True
        return True

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

    # ------------------------------------------------------------ search

    def add_device(self, request: _Request, candidate: DeviceEntry, *, must: bool) -> bool:
        if not request.admin_access and self.in_use(candidate.id):
            return False
        constraints = self.constraints[request.claim_index]
        for i, constraint in enumerate(constraints):
            if not constraint.add(request.name, candidate.attributes, candidate.pool.driver):
                if must:
                    claim = self.a.claims_to_allocate[request.claim_index]
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {request.name}: cannot add device "
                        f"{_device_id_text(candidate.id)} because a claim constraint would not be satisfied"
                    )
                for previous in constraints[:i]:
                    previous.remove(request.name)
                return False
        if not request.admin_access:
            self.allocating.add(candidate.id)
        self.picked[request.claim_index].append((request, candidate))
        return True

    def remove_device(self, request: _Request, candidate: DeviceEntry) -> None:
        for constraint in self.constraints[request.claim_index]:
            constraint.remove(request.name)
        if not request.admin_access:
            self.allocating.discard(candidate.id)
        self.picked[request.claim_index].pop()

    def search(self, slots: list[_Slot], index: int, lower_bound: int) -> bool:
        if index == len(slots):
            return True
        slot = slots[index]
        request = slot.request
        if request.all_devices is not None:
            candidate = request.all_devices[slot.device_index]
            if not request.admin_access and candidate.id in self.a.allocated_devices:
                raise _Stop  # used by another claim: no order of ours can free it
            if not self.add_device(request, candidate, must=True):
                return False
            if self.search(slots, index + 1, -1):
                return True
            self.remove_device(request, candidate)
            return False
        candidates = self.candidates
        start = lower_bound + 1 if slot.same_request_as_previous else 0
        for position in range(start, len(candidates)):
            candidate = candidates[position]
            if not request.admin_access and self.in_use(candidate.id):
                continue
            if not self.selectable(request, position, candidate):
                continue
            pool = candidate.pool
            if pool.is_invalid:
                # Allocating from other pools of a driver would be fine, but not from this one.
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            if not self.add_device(request, candidate, must=False):
                continue
            if self.search(slots, index + 1, position):
                return True
            self.remove_device(request, candidate)
        return False

    # ------------------------------------------------------------ result

    def build_results(self) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        for claim_index, claim in enumerate(self.a.claims_to_allocate):
            picked = self.picked[claim_index]
            device_results = [
                {"request": r.name, "driver": c.id[0], "pool": c.id[1], "device": c.id[2]} for r, c in picked
            ]
            devices_spec = (claim.get("spec") or {}).get("devices") or {}
            configs = class_and_claim_configs(
                requests=[(r.name, r.device_class) for r in self.requests[claim_index]],
                claim_configs=devices_spec.get("config") or (),
            )
            try:
                node_selector = node_selector_for([c.slice for _, c in picked])
            except ResultError as err:
                name = (claim.get("metadata") or {}).get("name", "")
                raise AllocationError(f"create NodeSelector for claim {name}: {err}") from None
            results.append(allocation_result(results=device_results, configs=configs, node_selector=node_selector))
        return results

    def run(self) -> list[dict[str, Any]] | None:
        self.gather()
        for claim_index, claim in enumerate(self.a.claims_to_allocate):
            self.prepare_claim(claim_index, claim)
        slots: list[_Slot] = []
        for requests in self.requests:
            for request in requests:
                for device_index in range(request.num_devices):
                    slots.append(_Slot(request, device_index, device_index > 0))
        try:
            if not self.search(slots, 0, -1):
                return None
        except _Stop:
            return None
        return self.build_results()
