"""The scheduler cache: nodes and assigned pods, including pods assumed to be bound.

The binding cycle runs after the scheduling cycle has already moved on, so the
next pod must see the resources of a pod that is still being bound. kube-scheduler
solves this by *assuming* the pod onto its node in the cache (AssumePod) until
the informer reports it assigned (AddPod confirms it) or binding fails
(ForgetPod). ``update_snapshot`` copies only the NodeInfos that changed since
the last snapshot, as kube's generation-based UpdateSnapshot does, so a cycle
over hundreds of nodes does not copy them all.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from services.scheduler.node_info import NodeInfo, Snapshot, node_name, pod_key


class CacheError(Exception):
    """A pod or node is not in the state the operation expects."""


class SchedulerCache:
    """Pure in-memory cache; every method is synchronous and does no I/O."""

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._pod_node: dict[str, str] = {}  # pod key -> node name
        self._pods: dict[str, Mapping[str, Any]] = {}
        self._assumed: set[str] = set()
        self._binding_finished: set[str] = set()
        self._generation = itertools.count(1)
        self._latest_generation = 0
        self._node_count = 0
        self._node_set_changed = True
        self._dirty: set[str] = set()
        self._last_snapshot: Snapshot | None = None
        self._last_generation = -1

    # ----------------------------------------------------------------- nodes

    def _info(self, name: str) -> NodeInfo:
        info = self._nodes.get(name)
        if info is None:
            info = NodeInfo()
            info.name = name
            self._nodes[name] = info
            self._node_set_changed = True
        return info

    def _touch(self, info: NodeInfo) -> None:
        info.generation = self._latest_generation = next(self._generation)
        self._dirty.add(info.name)

    def add_node(self, node: Mapping[str, Any]) -> None:
        info = self._info(node_name(node))
        if info.node is None:
            self._node_set_changed = True
            self._node_count += 1
        info.set_node(node)
        self._touch(info)

    update_node = add_node

    def remove_node(self, node: Mapping[str, Any]) -> None:
        name = node_name(node)
        info = self._nodes.get(name)
        if info is None:
            return
        if info.node is not None:
            self._node_count -= 1
        if info.pods:
            # Keep the pods' accounting until they are deleted, as kube does.
            info.node = None
            self._touch(info)
        else:
            del self._nodes[name]
        self._node_set_changed = True

    def node_names(self) -> list[str]:
        return [name for name, info in self._nodes.items() if info.node is not None]

    # ------------------------------------------------------------------ pods

    def _place(self, pod: Mapping[str, Any], node: str) -> None:
        key = pod_key(pod)
        info = self._info(node)
        info.add_pod(pod)
        self._touch(info)
        self._pod_node[key] = node
        self._pods[key] = pod

    def _unplace(self, key: str) -> None:
        node = self._pod_node.pop(key, None)
        pod = self._pods.pop(key, None)
        if node is None or pod is None:
            return
        info = self._nodes.get(node)
        if info is None:
            return
        info.remove_pod(pod)
        self._touch(info)
        if info.node is None and not info.pods:
            del self._nodes[node]
            self._node_set_changed = True

    def is_assumed(self, pod: Mapping[str, Any]) -> bool:
        return pod_key(pod) in self._assumed

    def assume_pod(self, pod: Mapping[str, Any], node: str) -> Mapping[str, Any]:
        """Place a copy of ``pod`` with ``spec.nodeName`` set; returns the assumed copy."""
        key = pod_key(pod)
        if key in self._pods:
            raise CacheError(f"pod {key} is in the cache, so can't be assumed")
        assumed = dict(pod)
        assumed["spec"] = {**(pod.get("spec") or {}), "nodeName": node}
        self._place(assumed, node)
        self._assumed.add(key)
        return assumed

    def finish_binding(self, pod: Mapping[str, Any]) -> None:
        key = pod_key(pod)
        if key in self._assumed:
            self._binding_finished.add(key)

    def forget_pod(self, pod: Mapping[str, Any]) -> None:
        key = pod_key(pod)
        if key not in self._assumed:
            raise CacheError(f"pod {key} wasn't assumed so cannot be forgotten")
        self._assumed.discard(key)
        self._binding_finished.discard(key)
        self._unplace(key)

    def add_pod(self, pod: Mapping[str, Any]) -> None:
        """An assigned pod reported by the informer (confirms an assumed pod)."""
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return
        key = pod_key(pod)
        self._assumed.discard(key)
        self._binding_finished.discard(key)
        self._unplace(key)
        self._place(pod, node)

    def update_pod(self, old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> None:
        if old is not None and pod_key(old) != pod_key(new):
            self.remove_pod(old)
        self.add_pod(new)

    def remove_pod(self, pod: Mapping[str, Any]) -> None:
        key = pod_key(pod)
        self._assumed.discard(key)
        self._binding_finished.discard(key)
        self._unplace(key)

    def pod_count(self) -> int:
        return len(self._pods)

    def assumed_count(self) -> int:
        return len(self._assumed)

    # -------------------------------------------------------------- snapshot

    def update_snapshot(self, snapshot: Snapshot) -> Snapshot:
        """Bring ``snapshot`` up to date, cloning only NodeInfos changed since it was taken.

        Changes are tracked as a set of touched nodes, so the cost is proportional
        to what changed, not to the cluster size. A snapshot this cache did not
        produce last (or a fresh one) is rebuilt from scratch.
        """
        if snapshot is not self._last_snapshot or snapshot.generation != self._last_generation:
            self._dirty = set(self._nodes)
            self._node_set_changed = True
        if self._node_set_changed:
            infos: list[NodeInfo] = []
            for name, info in self._nodes.items():
                if info.node is None:
                    continue
                existing = snapshot.get(name)
                infos.append(info.clone() if existing is None or name in self._dirty else existing)
            snapshot._replace(infos, self._latest_generation)
        elif self._dirty:
            for name in self._dirty:
                current = self._nodes.get(name)
                if current is None or current.node is None:
                    continue
                position = snapshot.position(name)
                if position is not None:
                    snapshot._put(position, current.clone())
            snapshot.generation = self._latest_generation
        self._dirty.clear()
        self._node_set_changed = False
        self._last_snapshot = snapshot
        self._last_generation = snapshot.generation
        return snapshot

    def snapshot(self) -> Snapshot:
        """A fresh full snapshot."""
        return self.update_snapshot(Snapshot())

    def node_count(self) -> int:
        return self._node_count
