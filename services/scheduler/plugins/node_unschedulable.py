"""NodeUnschedulable: keeps pods off cordoned nodes (``spec.unschedulable``).

A pod that tolerates the ``node.kubernetes.io/unschedulable:NoSchedule`` taint
may still go there. Its hints requeue a pod when a node becomes schedulable or
is added schedulable, and when the pod itself gains that toleration.
"""

from __future__ import annotations

from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import ClusterEventWithHint, CycleState, Obj, Pod, QueueingHint
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins import names
from services.scheduler.plugins._objects import expect_kind, spec, uid
from services.scheduler.status import Code, Status, new_status
from services.scheduler.taints import NO_SCHEDULE, TAINT_NODE_UNSCHEDULABLE, Toleration, tolerations_tolerate_taint

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

_UNSCHEDULABLE_TAINT = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": NO_SCHEDULE}


def pod_tolerates_unschedulable(tolerations: list[Toleration]) -> bool:
    return tolerations_tolerate_taint(tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable:
    name = names.NODE_UNSCHEDULABLE
    node_local = True  # Filter/Score depend only on the pod spec and the NodeInfo (node_local_memo)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.POD, ActionType.UPDATE_POD_TOLERATIONS),
                self.is_schedulable_after_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        expect_kind(old, "Node")
        expect_kind(new, "Node")
        if new is None:
            return QueueingHint.QUEUE_SKIP
        now_unschedulable = bool(spec(new).get("unschedulable"))
        if old is not None and spec(old).get("unschedulable") and not now_unschedulable:
            return QueueingHint.QUEUE
        if old is None and not now_unschedulable:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_toleration_change(self, pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        expect_kind(old, "Pod")
        expect_kind(new, "Pod")
        if new is None or old is None:
            return QueueingHint.QUEUE_SKIP
        if (
            uid(pod) == uid(new)
            and not pod_tolerates_unschedulable(list(spec(old).get("tolerations") or ()))
            and pod_tolerates_unschedulable(list(spec(new).get("tolerations") or ()))
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None or not spec(node).get("unschedulable"):
            return None
        if not pod_tolerates_unschedulable(list(spec(pod).get("tolerations") or ())):
            return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)
        return None
