"""NodeResourcesFit: the pod's cpu, memory, ephemeral-storage, extended resources and pod count must fit.

Filter reports every shortage with kube's reasons (``Insufficient cpu``,
``Insufficient memory``, ``Too many pods`` …) as Unschedulable, so preemption
or a freed node can resolve it. Score is LeastAllocated by default (or
MostAllocated). Hints requeue when a scheduled pod is deleted, when a node is
added that could fit the pod, or when a node's allocatable grows in a resource
the pod requests.

DRAExtendedResource (``dra_classes``): an extended resource that a DeviceClass
provides is left to DynamicResources on a node that does not advertise it as
allocatable (kube's shouldDelegateResourceToDRA). Which names those are
depends on the DeviceClasses, so PreFilter adds them to the cycle's pod
signature: remembered verdicts (node_local_memo) stay per class mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass

from services.kube.extended_resources import ExtendedResourceClasses, mapped_resources
from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import ClusterEventWithHint, CycleState, Obj, Pod, QueueingHint, StateNotFoundError
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins import names
from services.scheduler.plugins._objects import expect_kind, spec
from services.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    least_resource_scorer,
    most_resource_scorer,
    pod_request_list,
    score_node,
)
from services.scheduler.resources import Resource as Res
from services.scheduler.resources import pod_resource
from services.scheduler.status import Code, Status, new_status

_PRE_FILTER_KEY = "PreFilter" + names.NODE_RESOURCES_FIT
_PRE_SCORE_KEY = "PreScore" + names.NODE_RESOURCES_FIT
_THROUGH_DRA_KEY = "PreFilter" + names.NODE_RESOURCES_FIT + "/dra"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int


def fits_request(
    request: Res, node_info: NodeInfo, *, through_dra: Set[str] = frozenset()
) -> list[InsufficientResource]:
    """Every resource the node lacks for ``request`` (kube's fitsRequest).

    ``through_dra``: extended resources a DeviceClass provides; they are not checked on a node
    without allocatable for them.
    """
    insufficient: list[InsufficientResource] = []
    allowed = node_info.allocatable.allowed_pod_number
    if len(node_info.pods) + 1 > allowed:
        insufficient.append(InsufficientResource("pods", "Too many pods", 1, len(node_info.pods), allowed))
    if request.is_zero():
        return insufficient
    alloc = node_info.allocatable
    used = node_info.requested
    if request.milli_cpu > 0 and request.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        insufficient.append(
            InsufficientResource("cpu", "Insufficient cpu", request.milli_cpu, used.milli_cpu, alloc.milli_cpu)
        )
    if request.memory > 0 and request.memory > alloc.memory - used.memory:
        insufficient.append(
            InsufficientResource("memory", "Insufficient memory", request.memory, used.memory, alloc.memory)
        )
    if request.ephemeral_storage > 0 and request.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        insufficient.append(
            InsufficientResource(
                "ephemeral-storage", "Insufficient ephemeral-storage", request.ephemeral_storage,
                used.ephemeral_storage, alloc.ephemeral_storage,
            )
        )
    for name, qty in request.scalar.items():
        if qty == 0:
            continue
        if name in through_dra and alloc.scalar.get(name, 0) <= 0:
            continue
        free = alloc.scalar.get(name, 0) - used.scalar.get(name, 0)
        if qty > free:
            used_qty, capacity = used.scalar.get(name, 0), alloc.scalar.get(name, 0)
            insufficient.append(InsufficientResource(name, f"Insufficient {name}", qty, used_qty, capacity))
    return insufficient


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    return fits_request(pod_resource(pod), node_info)


def _is_fit(pod: Pod, node: Obj | None) -> bool:
    if node is None:
        return False
    return not fits(pod, NodeInfo(node))


def have_any_requested_resources_increased(pod: Pod, old: Obj, new: Obj) -> bool:
    request = pod_resource(pod)
    before = NodeInfo(old).allocatable
    after = NodeInfo(new).allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if request.is_zero():
        return False
    if (
        (request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (request.memory > 0 and after.memory > before.memory)
        or (request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(qty and after.scalar.get(name, 0) > before.scalar.get(name, 0) for name, qty in request.scalar.items())


class NodeResourcesFit:
    name = names.NODE_RESOURCES_FIT
    node_local = True  # Filter/Score depend only on the pod spec and the NodeInfo (node_local_memo)

    def __init__(
        self,
        *,
        scoring_strategy: str = LEAST_ALLOCATED,
        resources: Sequence[ResourceSpec] = DEFAULT_RESOURCES,
        dra_classes: Callable[[], ExtendedResourceClasses] | None = None,
    ) -> None:
        """``dra_classes``: the DeviceClasses' extended resource mapping (DRAExtendedResource on), or None."""
        self._dra_classes = dra_classes
        self._resources = tuple(resources)
        if scoring_strategy == LEAST_ALLOCATED:
            self._scorer = least_resource_scorer(self._resources)
        elif scoring_strategy == MOST_ALLOCATED:
            self._scorer = most_resource_scorer(self._resources)
        else:
            raise ValueError(f"scoring strategy {scoring_strategy} is not supported")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE), self.is_schedulable_after_pod_change),
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        expect_kind(old, "Pod")
        expect_kind(new, "Pod")
        if new is None:
            if old is None or not spec(old).get("nodeName"):
                return QueueingHint.QUEUE_SKIP
            return QueueingHint.QUEUE
        # In-place pod resize is off in 1.31, so an update cannot free resources.
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        expect_kind(old, "Node")
        expect_kind(new, "Node")
        if not _is_fit(pod, new):
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        assert new is not None
        if not have_any_requested_resources_increased(pod, old, new):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[None, Status | None]:
        request = pod_resource(pod)
        state.write(_PRE_FILTER_KEY, request)
        through_dra = mapped_resources(request.scalar, self._dra_classes()) if self._dra_classes else frozenset()
        state.write(_THROUGH_DRA_KEY, through_dra)
        if through_dra and state.pod_signature is not None:
            state.pod_signature += b"\0dra:" + ",".join(sorted(through_dra)).encode()
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            request = state.read(_PRE_FILTER_KEY)
        except StateNotFoundError:
            return new_status(Code.ERROR, f'error reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        insufficient = fits_request(request, node_info, through_dra=state.get(_THROUGH_DRA_KEY) or frozenset())
        if insufficient:
            return new_status(Code.UNSCHEDULABLE, *(r.reason for r in insufficient))
        return None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_PRE_SCORE_KEY, pod_request_list(pod, self._resources, use_requested=False))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            requests = state.read(_PRE_SCORE_KEY)
        except StateNotFoundError:
            requests = pod_request_list(pod, self._resources, use_requested=False)
        return score_node(node_info, requests, self._resources, self._scorer, use_requested=False), None
