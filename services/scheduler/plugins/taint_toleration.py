"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score.

Filter names the first untolerated taint in kube's format
(``node(s) had untolerated taint {key: value}``). Score counts the
PreferNoSchedule taints a pod does not tolerate and is normalized in reverse,
so fewer intolerable taints score higher. Hints requeue when a node add/update
turns an untolerated node into a tolerated one, and when the pod itself gains
a toleration.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import (
    MAX_NODE_SCORE,
    ClusterEventWithHint,
    CycleState,
    NodeScore,
    Obj,
    Pod,
    QueueingHint,
    StateNotFoundError,
    default_normalize_score,
)
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins import names
from services.scheduler.plugins._objects import expect_kind, uid
from services.scheduler.status import Code, Status, new_status
from services.scheduler.taints import (
    PREFER_NO_SCHEDULE,
    Toleration,
    do_not_schedule,
    find_matching_untolerated_taint,
    node_taints,
    pod_tolerations,
    tolerations_tolerate_taint,
)

_PRE_SCORE_KEY = "PreScore" + names.TAINT_TOLERATION


def untolerated_reason(taint_key: str, taint_value: str) -> str:
    return f"node(s) had untolerated taint {{{taint_key}: {taint_value}}}"


def _prefer_no_schedule_tolerations(tolerations: list[Toleration]) -> list[Toleration]:
    return [t for t in tolerations if not t.get("effect") or t.get("effect") == PREFER_NO_SCHEDULE]


def count_intolerable_taints_prefer_no_schedule(node: Obj, tolerations: list[Toleration]) -> int:
    return sum(
        1
        for taint in node_taints(node)
        if taint.get("effect") == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, taint)
    )


class TaintToleration:
    name = names.TAINT_TOLERATION
    node_local = True  # Filter/Score depend only on the pod spec and the NodeInfo (node_local_memo)
    default_normalize_reverse = True  # normalize_score is default_normalize_score(MAX_NODE_SCORE, True, ...)

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
        tolerations = pod_tolerations(pod)
        was_untolerated = True
        if old is not None:
            was_untolerated = (
                find_matching_untolerated_taint(node_taints(old), tolerations, do_not_schedule) is not None
            )
        is_untolerated = find_matching_untolerated_taint(node_taints(new), tolerations, do_not_schedule) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_toleration_change(self, pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        expect_kind(new, "Pod")
        if new is not None and uid(new) == uid(pod):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        taint = find_matching_untolerated_taint(node_taints(node_info.node), pod_tolerations(pod), do_not_schedule)
        if taint is None:
            return None
        return new_status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            untolerated_reason(str(taint.get("key", "")), str(taint.get("value") or "")),
        )

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_PRE_SCORE_KEY, _prefer_no_schedule_tolerations(pod_tolerations(pod)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            tolerations = state.read(_PRE_SCORE_KEY)
        except StateNotFoundError:
            tolerations = _prefer_no_schedule_tolerations(pod_tolerations(pod))
        assert node_info.node is not None
        return count_intolerable_taints_prefer_no_schedule(node_info.node, tolerations), None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None
