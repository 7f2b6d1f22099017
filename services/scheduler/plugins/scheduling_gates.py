"""SchedulingGates: a pod with ``spec.schedulingGates`` is not attempted until they are removed.

It is the PreEnqueue plugin every profile has; its hint requeues the pod when
its own gates are all removed.
"""

from __future__ import annotations

from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import ClusterEventWithHint, Obj, Pod, QueueingHint
from services.scheduler.plugins import names
from services.scheduler.plugins._objects import expect_kind, spec, uid
from services.scheduler.status import Code, Status, new_status


class SchedulingGates:
    name = names.SCHEDULING_GATES

    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = spec(pod).get("schedulingGates") or ()
        if not gates:
            return None
        gate_names = " ".join(str(g.get("name", "")) for g in gates)
        return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{gate_names}]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self.is_schedulable_after_update_pod_scheduling_gates_eliminated,
            )
        ]

    def is_schedulable_after_update_pod_scheduling_gates_eliminated(
        self, pod: Pod, old: Obj | None, new: Obj | None
    ) -> QueueingHint:
        expect_kind(new, "Pod")
        if new is None or uid(new) != uid(pod):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
