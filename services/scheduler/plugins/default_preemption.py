"""DefaultPreemption (PostFilter), reduced to its verdict: draplane never evicts pods.

kube-scheduler's PostFilter output is part of the FailedScheduling message
(``preemption: 0/3 nodes are available: 3 Preemption is not helpful for
scheduling.``). draplane does not implement victim selection, so every
candidate node reports that preemption cannot help; a pod with
``preemptionPolicy: Never`` reports ``not eligible due to preemptionPolicy=Never.``
as kube does. The message format is kube's FitError format.
"""

from __future__ import annotations

from services.scheduler.framework import CycleState, NodeToStatus, Pod, PostFilterResult
from services.scheduler.messages import fit_error_message
from services.scheduler.plugins import names
from services.scheduler.plugins._objects import spec
from services.scheduler.status import Code, Status, new_status

PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."


class DefaultPreemption:
    name = names.DEFAULT_PREEMPTION

    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus, num_all_nodes: int
    ) -> tuple[PostFilterResult | None, Status | None]:
        if spec(pod).get("preemptionPolicy") == "Never":
            return None, new_status(Code.UNSCHEDULABLE, "preemption: " + NOT_ELIGIBLE_NEVER)
        verdicts = {node: new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, PREEMPTION_NOT_HELPFUL) for node in statuses}
        message = fit_error_message(len(verdicts), verdicts)
        return PostFilterResult(""), new_status(Code.UNSCHEDULABLE, "preemption: " + message)
