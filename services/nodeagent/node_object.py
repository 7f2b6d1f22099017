"""The Node a node agent registers and keeps alive, built as kubelet builds it.

Why this module exists: the scheduler only places pods on Nodes that exist,
are Ready and have capacity; the DRA allocator matches node selectors against
the Node's labels. kubelet registers its Node with ``kubernetes.io/hostname``,
``kubernetes.io/os`` and ``kubernetes.io/arch`` labels, capacity and
allocatable for cpu, memory and pods, addresses, node info and conditions
(``Ready`` plus the three pressure conditions), and then heartbeats by moving
``lastHeartbeatTime`` forward. Everything here is pure: objects in, objects out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from services.kube.times import time_text

Obj = dict[str, Any]

HOSTNAME_LABEL = "kubernetes.io/hostname"
OS_LABEL = "kubernetes.io/os"
ARCH_LABEL = "kubernetes.io/arch"
KUBELET_VERSION = "v1.31.0"

DEFAULT_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110"}

_GO_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "arm"}


def go_arch(machine: str) -> str:
    """``runtime.GOARCH`` for ``platform.machine()`` (``x86_64`` → ``amd64``)."""
    return _GO_ARCH.get(machine.lower(), machine.lower() or "amd64")


def node_address(name: str) -> str:
    """A stable InternalIP for a node without a configured one (10.89.x.y from the name)."""
    digest = hashlib.sha256(name.encode()).digest()
    return f"10.89.{digest[0]}.{1 + digest[1] % 254}"


def node_labels(name: str, *, arch: str) -> dict[str, str]:
    return {HOSTNAME_LABEL: name, OS_LABEL: "linux", ARCH_LABEL: arch}


def _condition(type_: str, status: str, reason: str, message: str, now: str, previous: Mapping[str, Any] | None) -> Obj:
    transition = now
    if previous is not None and previous.get("status") == status and previous.get("lastTransitionTime"):
        transition = previous["lastTransitionTime"]
    return {
        "type": type_,
        "status": status,
        "lastHeartbeatTime": now,
        "lastTransitionTime": transition,
        "reason": reason,
        "message": message,
    }


def conditions(now: datetime, previous: list[Mapping[str, Any]] | None = None) -> list[Obj]:
    """kubelet's node conditions: no memory, disk or PID pressure, and Ready."""
    stamp = time_text(now)
    old = {c.get("type"): c for c in previous or ()}
    return [
        _condition(
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
            stamp,
            old.get("MemoryPressure"),
        ),
        _condition(
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
            stamp,
            old.get("DiskPressure"),
        ),
        _condition(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
            stamp,
            old.get("PIDPressure"),
        ),
        _condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", stamp, old.get("Ready")),
    ]


def node_status(
    name: str,
    *,
    capacity: Mapping[str, str],
    address: str,
    arch: str,
    now: datetime,
    previous: Mapping[str, Any] | None = None,
) -> Obj:
    """The full status kubelet reports for its node."""
    machine_id = hashlib.sha256(f"machine/{name}".encode()).hexdigest()[:32]
    return {
        "capacity": dict(capacity),
        "allocatable": dict(capacity),
        "conditions": conditions(now, list((previous or {}).get("conditions") or ())),
        "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": machine_id,
            "systemUUID": machine_id,
            "bootID": hashlib.sha256(f"boot/{name}".encode()).hexdigest()[:32],
            "kernelVersion": "draplane",
            "osImage": "draplane node agent",
            "containerRuntimeVersion": "draplane://0.1.0",
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": arch,
        },
    }


def new_node(name: str, *, arch: str, labels: Mapping[str, str] | None = None) -> Obj:
    """The Node object to create (its status is written right after, through ``nodes/status``)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**node_labels(name, arch=arch), **dict(labels or {})}},
        "spec": {},
    }


def missing_labels(node: Mapping[str, Any], wanted: Mapping[str, str]) -> dict[str, str] | None:
    """The labels to set when some of ``wanted`` are absent or differ, else None."""
    labels = dict((node.get("metadata") or {}).get("labels") or {})
    if all(labels.get(k) == v for k, v in wanted.items()):
        return None
    labels.update(wanted)
    return labels


def heartbeat(node: Mapping[str, Any], *, now: datetime) -> Obj:
    """The node with its conditions' heartbeat moved to ``now`` (and Ready asserted)."""
    status = dict(node.get("status") or {})
    status["conditions"] = conditions(now, list(status.get("conditions") or ()))
    return {**node, "status": status}
