"""The resource-allocation scorer shared by NodeResourcesFit and BalancedAllocation.

For each configured resource it pairs the node's allocatable with what the
node would have requested after placing the pod. LeastAllocated counts
unset cpu/memory requests as the scheduler's defaults (NonZeroRequested);
BalancedAllocation uses the real requests — both as in kube 1.31.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from services.kube.quantity import milli_value, value
from services.scheduler.framework import MAX_NODE_SCORE, Pod
from services.scheduler.node_info import NodeInfo
from services.scheduler.resources import CPU, EPHEMERAL_STORAGE, MEMORY, NON_ZERO_DEFAULTS, PODS, pod_requests


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))

Scorer = Callable[[Sequence[int], Sequence[int]], int]


def is_scalar_resource(name: str) -> bool:
    return name not in (CPU, MEMORY, PODS, EPHEMERAL_STORAGE)


def pod_request_list(pod: Pod, resources: Sequence[ResourceSpec], *, use_requested: bool) -> list[int]:
    requests = pod_requests(pod, non_missing_defaults=None if use_requested else NON_ZERO_DEFAULTS)
    out = []
    for res in resources:
        qty = requests.get(res.name, 0)
        out.append(milli_value(qty) if res.name == CPU else value(qty))
    return out


def _allocatable_and_requested(
    node_info: NodeInfo, resource: str, pod_request: int, use_requested: bool
) -> tuple[int, int]:
    requested = node_info.requested if use_requested else node_info.non_zero_requested
    if pod_request == 0 and is_scalar_resource(resource):
        return 0, 0
    if resource == CPU:
        return node_info.allocatable.milli_cpu, requested.milli_cpu + pod_request
    if resource == MEMORY:
        return node_info.allocatable.memory, requested.memory + pod_request
    if resource == EPHEMERAL_STORAGE:
        return node_info.allocatable.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
    if resource in node_info.allocatable.scalar:
        return node_info.allocatable.scalar[resource], node_info.requested.scalar.get(resource, 0) + pod_request
    return 0, 0


def score_node(
    node_info: NodeInfo,
    pod_requests_list: Sequence[int],
    resources: Sequence[ResourceSpec],
    scorer: Scorer,
    *,
    use_requested: bool,
) -> int:
    requested_so_far = node_info.requested if use_requested else node_info.non_zero_requested
    allocatable_res = node_info.allocatable
    requested: list[int] = []
    allocatable: list[int] = []
    for res, pod_request in zip(resources, pod_requests_list, strict=True):
        name = res.name
        if name == CPU:  # the common cases first, without the generic lookup
            alloc, req = allocatable_res.milli_cpu, requested_so_far.milli_cpu + pod_request
        elif name == MEMORY:
            alloc, req = allocatable_res.memory, requested_so_far.memory + pod_request
        else:
            alloc, req = _allocatable_and_requested(node_info, name, pod_request, use_requested)
        if alloc == 0:
            requested.append(0)
            allocatable.append(0)
        else:
            requested.append(req)
            allocatable.append(alloc)
    return scorer(requested, allocatable)


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return ((capacity - requested) * MAX_NODE_SCORE) // capacity


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i in range(len(requested)):
            if allocatable[i] == 0:
                continue
            weight = resources[i].weight
            node_score += least_requested_score(requested[i], allocatable[i]) * weight
            weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    return scorer


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return (requested * MAX_NODE_SCORE) // capacity


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i in range(len(requested)):
            if allocatable[i] == 0:
                continue
            weight = resources[i].weight
            node_score += most_requested_score(requested[i], allocatable[i]) * weight
            weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    return scorer


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = min(req / alloc, 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)
