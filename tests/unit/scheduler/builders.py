"""Wire-form object builders for scheduler tests (the role of kube's scheduler/testing wrappers)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

_uids = itertools.count(1)


class FakeClock:
    """A settable clock: ``clock()`` returns the current time, ``step`` advances it."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def step(self, seconds: float) -> None:
        self.now += seconds


def make_pod(
    name: str = "p",
    *,
    namespace: str = "default",
    uid: str | None = None,
    priority: int | None = None,
    node_name: str | None = None,
    scheduler_name: str | None = None,
    requests: Mapping[str, Any] | None = None,
    containers: Iterable[Mapping[str, Any]] | None = None,
    init_containers: Iterable[Mapping[str, Any]] | None = None,
    overhead: Mapping[str, Any] | None = None,
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    tolerations: Iterable[Mapping[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    scheduling_gates: Iterable[str] | None = None,
    resource_claims: Iterable[Mapping[str, Any]] | None = None,
    resource_claim_statuses: Iterable[Mapping[str, Any]] | None = None,
    resource_version: str | None = None,
    deletion_timestamp: str | None = None,
    preemption_policy: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if containers is not None:
        spec["containers"] = [dict(c) for c in containers]
    else:
        container: dict[str, Any] = {"name": "c", "image": "busybox"}
        if requests is not None:
            container["resources"] = {"requests": dict(requests)}
        spec["containers"] = [container]
    if init_containers is not None:
        spec["initContainers"] = [dict(c) for c in init_containers]
    if overhead is not None:
        spec["overhead"] = dict(overhead)
    if priority is not None:
        spec["priority"] = priority
    if node_name is not None:
        spec["nodeName"] = node_name
    if scheduler_name is not None:
        spec["schedulerName"] = scheduler_name
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        spec["affinity"] = dict(affinity)
    if tolerations is not None:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if scheduling_gates is not None:
        spec["schedulingGates"] = [{"name": g} for g in scheduling_gates]
    if resource_claims is not None:
        spec["resourceClaims"] = [dict(c) for c in resource_claims]
    if preemption_policy is not None:
        spec["preemptionPolicy"] = preemption_policy
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"}
    if labels is not None:
        metadata["labels"] = dict(labels)
    if resource_version is not None:
        metadata["resourceVersion"] = resource_version
    if deletion_timestamp is not None:
        metadata["deletionTimestamp"] = deletion_timestamp
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    if resource_claim_statuses is not None:
        pod["status"] = {"resourceClaimStatuses": [dict(s) for s in resource_claim_statuses]}
    return pod


def container(
    name: str = "c",
    *,
    requests: Mapping[str, Any] | None = None,
    limits: Mapping[str, Any] | None = None,
    restart_policy: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "image": "busybox"}
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = dict(requests)
    if limits is not None:
        resources["limits"] = dict(limits)
    if resources:
        out["resources"] = resources
    if restart_policy is not None:
        out["restartPolicy"] = restart_policy
    return out


def make_node(
    name: str = "n",
    *,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, Any]] | None = None,
    unschedulable: bool | None = None,
    allocatable: Mapping[str, Any] | None = None,
    annotations: Mapping[str, str] | None = None,
    conditions: Iterable[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "uid": f"node-uid-{name}"}
    if labels is not None:
        metadata["labels"] = dict(labels)
    if annotations is not None:
        metadata["annotations"] = dict(annotations)
    spec: dict[str, Any] = {}
    if taints is not None:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable is not None:
        spec["unschedulable"] = unschedulable
    status: dict[str, Any] = {
        "allocatable": dict(allocatable) if allocatable is not None else {"cpu": "4", "memory": "8Gi", "pods": "110"}
    }
    if conditions is not None:
        status["conditions"] = [dict(c) for c in conditions]
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "spec": spec, "status": status}


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, Any]:
    out = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    return out


def toleration(key: str = "", *, operator: str | None = None, value: str = "", effect: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if key:
        out["key"] = key
    if operator is not None:
        out["operator"] = operator
    if value:
        out["value"] = value
    if effect:
        out["effect"] = effect
    return out
