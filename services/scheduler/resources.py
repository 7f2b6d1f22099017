"""Pod resource requests and node allocatable, computed as kube-scheduler does.

``pod_requests`` reproduces ``resourcehelper.PodRequests`` (1.31): the sum of
the regular containers, raised to the largest init-container need (restartable
"sidecar" init containers accumulate), plus pod overhead. With
``non_missing_defaults`` a container that omits cpu or memory counts as the
scheduler's defaults (100m, 200Mi), which is how scoring and the node's
``NonZeroRequested`` avoid piling zero-request pods onto one node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from services.kube.quantity import amount_value, milli_value, value

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"

DEFAULT_MILLI_CPU_REQUEST = 100  # 0.1 core
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # 200 MiB

NON_ZERO_DEFAULTS: Mapping[str, str | int] = {CPU: "100m", MEMORY: DEFAULT_MEMORY_REQUEST}

ResourceList = dict[str, Any]  # resource name -> quantity (string or number), as in the wire form


def _add(total: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for name, qty in extra.items():
        total[name] = amount_value(total[name]) + amount_value(qty) if name in total else amount_value(qty)


def _maximum(total: dict[str, Any], other: Mapping[str, Any]) -> None:
    for name, qty in other.items():
        candidate = amount_value(qty)
        if name not in total or candidate > amount_value(total[name]):
            total[name] = candidate


def container_requests(container: Mapping[str, Any]) -> ResourceList:
    """A container's requests; a resource with only a limit requests its limit (API defaulting)."""
    resources = container.get("resources") or {}
    requests = dict(resources.get("requests") or {})
    for name, qty in (resources.get("limits") or {}).items():
        requests.setdefault(name, qty)
    return requests


def _with_defaults(requests: ResourceList, defaults: Mapping[str, Any] | None) -> ResourceList:
    if not defaults:
        return requests
    filled = dict(requests)
    for name, qty in defaults.items():
        filled.setdefault(name, qty)
    return filled


def pod_requests(
    pod: Mapping[str, Any],
    *,
    non_missing_defaults: Mapping[str, Any] | None = None,
    exclude_overhead: bool = False,
) -> dict[str, Any]:
    """Effective requests of the whole pod, by resource name (values are exact fractions)."""
    spec = pod.get("spec") or {}
    total: dict[str, Any] = {}
    for container in spec.get("containers") or ():
        _add(total, _with_defaults(container_requests(container), non_missing_defaults))

    restartable: dict[str, Any] = {}
    init_max: dict[str, Any] = {}
    for container in spec.get("initContainers") or ():
        requests = _with_defaults(container_requests(container), non_missing_defaults)
        if container.get("restartPolicy") == "Always":
            _add(total, requests)
            _add(restartable, requests)
            need: dict[str, Any] = dict(restartable)
        else:
            need = {}
            _add(need, requests)
            _add(need, restartable)
        _maximum(init_max, need)
    _maximum(total, init_max)

    overhead = spec.get("overhead")
    if overhead and not exclude_overhead:
        _add(total, overhead)
    return total


@dataclass(slots=True)
class Resource:
    """Amounts of compute resources: cpu in millicores, the rest in whole units."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, resources: Mapping[str, Any] | None) -> Resource:
        res = cls()
        res.add_list(resources or {})
        return res

    def add_list(self, resources: Mapping[str, Any]) -> None:
        for name, qty in resources.items():
            if name == CPU:
                self.milli_cpu += milli_value(qty)
            elif name == MEMORY:
                self.memory += value(qty)
            elif name == PODS:
                self.allowed_pod_number += value(qty)
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += value(qty)
            else:
                self.scalar[name] = self.scalar.get(name, 0) + value(qty)

    def add(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        for name, amount in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + sign * amount

    def clone(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, dict(self.scalar))

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def is_zero(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalar)


def pod_resource(pod: Mapping[str, Any]) -> Resource:
    """The pod's requests as a Resource (what NodeResourcesFit's PreFilter computes)."""
    return Resource.from_list(pod_requests(pod))


def pod_non_zero_cpu_memory(pod: Mapping[str, Any]) -> tuple[int, int]:
    """The pod's (milli-cpu, memory) with the scheduler's defaults for unset requests."""
    reqs = pod_requests(pod, non_missing_defaults=NON_ZERO_DEFAULTS)
    return milli_value(reqs.get(CPU, 0)), value(reqs.get(MEMORY, 0))
