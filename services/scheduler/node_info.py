"""NodeInfo and Snapshot: the per-node view a scheduling cycle filters and scores.

A NodeInfo aggregates a node with the pods assigned (or assumed) to it and the
resources those pods request, so that Filter and Score plugins never walk the
pod list. A Snapshot is the consistent set of NodeInfos one cycle works on; it
is taken from the SchedulerCache at the start of the cycle and does not change
while plugins run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from services.scheduler.resources import Resource, pod_non_zero_cpu_memory, pod_resource


def pod_key(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def pod_uid(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("uid", ""))


def node_name(node: Mapping[str, Any] | None) -> str:
    if not node:
        return ""
    return str((node.get("metadata") or {}).get("name", ""))


class NodeInfo:
    """A node, its pods and the sums the resource plugins need."""

    __slots__ = (
        "_pod_resources",
        "allocatable",
        "generation",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "requested",
    )

    def __init__(self, node: Mapping[str, Any] | None = None, pods: Iterable[Mapping[str, Any]] = ()) -> None:
        self.node: Mapping[str, Any] | None = None
        self.name = ""
        self.pods: dict[str, Mapping[str, Any]] = {}
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.generation = 0
        self._pod_resources: dict[str, tuple[Resource, int, int]] = {}
        if node is not None:
            self.set_node(node)
        for pod in pods:
            self.add_pod(pod)

    def set_node(self, node: Mapping[str, Any]) -> None:
        self.node = node
        self.name = node_name(node)
        self.allocatable = Resource.from_list((node.get("status") or {}).get("allocatable"))

    def add_pod(self, pod: Mapping[str, Any]) -> None:
        key = pod_uid(pod) or pod_key(pod)
        if key in self.pods:
            self.remove_pod(pod)
        res = pod_resource(pod)
        cpu, mem = pod_non_zero_cpu_memory(pod)
        self.pods[key] = pod
        self._pod_resources[key] = (res, cpu, mem)
        self.requested.add(res)
        self.non_zero_requested.milli_cpu += cpu
        self.non_zero_requested.memory += mem

    def remove_pod(self, pod: Mapping[str, Any]) -> bool:
        key = pod_uid(pod) or pod_key(pod)
        if key not in self.pods:
            return False
        del self.pods[key]
        res, cpu, mem = self._pod_resources.pop(key)
        self.requested.add(res, sign=-1)
        self.non_zero_requested.milli_cpu -= cpu
        self.non_zero_requested.memory -= mem
        return True

    def clone(self) -> NodeInfo:
        other = NodeInfo.__new__(NodeInfo)
        other.node = self.node
        other.name = self.name
        other.pods = dict(self.pods)
        other.requested = self.requested.clone()
        other.non_zero_requested = self.non_zero_requested.clone()
        other.allocatable = self.allocatable.clone()
        other.generation = self.generation
        other._pod_resources = dict(self._pod_resources)
        return other

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, requested={self.requested})"


class Snapshot:
    """An immutable-by-convention list of NodeInfos with lookup by name."""

    __slots__ = ("_by_name", "_list", "_positions", "generation")

    def __init__(self, node_infos: Iterable[NodeInfo] = (), generation: int = 0) -> None:
        self._list: list[NodeInfo] = [n for n in node_infos if n.node is not None]
        self._by_name: dict[str, NodeInfo] = {n.name: n for n in self._list}
        self._positions: dict[str, int] = {n.name: i for i, n in enumerate(self._list)}
        self.generation = generation

    @classmethod
    def build(cls, nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]] = ()) -> Snapshot:
        """A snapshot from plain objects: pods are placed by ``spec.nodeName``."""
        infos = {node_name(n): NodeInfo(n) for n in nodes}
        for pod in pods:
            name = (pod.get("spec") or {}).get("nodeName")
            if name and name in infos:
                infos[name].add_pod(pod)
        return cls(infos.values())

    def nodes(self) -> list[NodeInfo]:
        return self._list

    def get(self, name: str) -> NodeInfo | None:
        return self._by_name.get(name)

    def num_nodes(self) -> int:
        return len(self._list)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._list)

    def __len__(self) -> int:
        return len(self._list)

    def position(self, name: str) -> int | None:
        """Where the node is in ``nodes()`` (the filter order), or None."""
        return self._positions.get(name)

    def _put(self, position: int, info: NodeInfo) -> None:
        """Replace the NodeInfo at ``position`` by a newer one of the same node (``info.node`` is set)."""
        self._list[position] = info
        self._by_name[info.name] = info

    def _replace(self, node_infos: list[NodeInfo], generation: int) -> None:
        self._list = [n for n in node_infos if n.node is not None]
        self._by_name = {n.name: n for n in self._list}
        self._positions = {n.name: i for i, n in enumerate(self._list)}
        self.generation = generation
