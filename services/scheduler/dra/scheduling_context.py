"""PodSchedulingContext bookkeeping for classic DRA: collect changes, write once.

During a cycle the plugin decides the potential nodes (PreScore) and the
selected node (Reserve, or clearing it in PostFilter). Those decisions are
only *recorded* here; ``publish`` then writes them in a single API call — one
create when no object exists, otherwise one merge patch of ``spec`` with just
the changed fields — and only when something changed (the behaviour of
kubernetes commit "DRA scheduler: refactor PodSchedulingContext updates").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.kube.resourceclaim import is_controlled_by
from services.scheduler.client import POD_SCHEDULING_CONTEXTS, APIClient, Lister

POD_SCHEDULING_NODE_LIST_MAX_SIZE = 128
"""``PodSchedulingNodeListMaxSize``: the most potential nodes a PodSchedulingContext lists."""

class SchedulingContextError(Exception):
    pass


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


@dataclass(slots=True)
class PodSchedulingState:
    scheduling_ctx: Mapping[str, Any] | None = None
    selected_node: str | None = None  # set iff the selected node must be written
    potential_nodes: list[str] | None = None  # set iff the potential nodes must be written

    def is_dirty(self) -> bool:
        return self.selected_node is not None or self.potential_nodes is not None

    def init(self, pod: Mapping[str, Any], lister: Lister | None) -> None:
        """Load the pod's PodSchedulingContext if one exists (no-op with the gate off)."""
        if lister is None:
            return
        meta = _meta(pod)
        ctx = lister.get(str(meta.get("name", "")), str(meta.get("namespace", "")))
        if ctx is None:
            return
        if not is_controlled_by(ctx, pod):
            raise SchedulingContextError(
                f"PodSchedulingContext object with UID {_meta(ctx).get('uid', '')} is not owned by Pod "
                f"{meta.get('namespace', '')}/{meta.get('name', '')}"
            )
        self.scheduling_ctx = ctx

    def spec(self) -> Mapping[str, Any]:
        return (self.scheduling_ctx or {}).get("spec") or {}

    async def publish(self, pod: Mapping[str, Any], client: APIClient) -> None:
        """Write the recorded changes, if any: one create or one patch."""
        if not self.is_dirty():
            return
        meta = _meta(pod)
        namespace = str(meta.get("namespace", ""))
        name = str(meta.get("name", ""))
        changes: dict[str, Any] = {}
        if self.selected_node is not None:
            changes["selectedNode"] = self.selected_node
        if self.potential_nodes is not None:
            changes["potentialNodes"] = list(self.potential_nodes)
        if self.scheduling_ctx is not None:
            self.scheduling_ctx = await client.patch(
                POD_SCHEDULING_CONTEXTS, name, {"spec": changes}, namespace=namespace
            )
        else:
            obj = {
                "apiVersion": "resource.k8s.io/v1alpha3",
                "kind": "PodSchedulingContext",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "name": name,
                            "uid": meta.get("uid", ""),
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {k: v for k, v in changes.items() if v},
            }
            self.scheduling_ctx = await client.create(POD_SCHEDULING_CONTEXTS, obj, namespace=namespace)
        self.selected_node = None
        self.potential_nodes = None


def status_for_claim(scheduling_ctx: Mapping[str, Any] | None, pod_claim_name: str) -> Mapping[str, Any] | None:
    if scheduling_ctx is None:
        return None
    for status in (scheduling_ctx.get("status") or {}).get("resourceClaims") or ():
        if status.get("name") == pod_claim_name:
            return status
    return None
