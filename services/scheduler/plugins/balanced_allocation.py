"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory usage stay balanced.

Score is ``(1 - std(fractions)) * 100`` over the requested/allocatable
fractions after placing the pod. It only scores and never rejects a pod, so
it registers no cluster events.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.scheduler.framework import CycleState, Pod, StateNotFoundError
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins import names
from services.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    balanced_resource_scorer,
    pod_request_list,
    score_node,
)
from services.scheduler.status import Status

_PRE_SCORE_KEY = "PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION


class BalancedAllocation:
    name = names.NODE_RESOURCES_BALANCED_ALLOCATION
    node_local = True  # Filter/Score depend only on the pod spec and the NodeInfo (node_local_memo)

    def __init__(self, *, resources: Sequence[ResourceSpec] = DEFAULT_RESOURCES) -> None:
        self._resources = tuple(resources)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_PRE_SCORE_KEY, pod_request_list(pod, self._resources, use_requested=True))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            requests = state.read(_PRE_SCORE_KEY)
        except StateNotFoundError:
            requests = pod_request_list(pod, self._resources, use_requested=True)
        return score_node(node_info, requests, self._resources, balanced_resource_scorer, use_requested=True), None
