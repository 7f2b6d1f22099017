"""NodeName: a pod with ``spec.nodeName`` preset may only go to that node.

Only a new node can change the outcome, so the plugin registers Node/Add
without a hint (every such event requeues, as in kube 1.31 with hints on).
"""

from __future__ import annotations

from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import ClusterEventWithHint, CycleState, Pod
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins import names
from services.scheduler.plugins._objects import spec
from services.scheduler.status import Code, Status, new_status

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    wanted = spec(pod).get("nodeName") or ""
    return not wanted or wanted == node_info.name


class NodeName:
    name = names.NODE_NAME
    node_local = True  # Filter/Score depend only on the pod spec and the NodeInfo (node_local_memo)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD))]

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.node is None:
            return new_status(Code.ERROR, "node not found")
        if not fits(pod, node_info):
            return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None
