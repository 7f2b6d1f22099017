"""The binding cycle: PreBind → Bind → PostBind, run after the scheduling cycle moved on.

kube-scheduler runs it in its own goroutine so one pod's API writes never
stall the next pod's scheduling; draplane runs it as its own asyncio task. On
failure every Reserve plugin's Unreserve runs (in reverse), the assumed pod
leaves the cache, and a rejection by a plugin (DynamicResources' Pending
"waiting for resource driver", say) is reported like a fit error on that one
node so the queue knows which plugin to wait for.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.scheduler.cache import CacheError, SchedulerCache
from services.scheduler.cycle import FitError
from services.scheduler.framework import CycleState, Diagnosis, Pod
from services.scheduler.profile import Profile
from services.scheduler.status import Code, Status


@dataclass(slots=True)
class BindingOutcome:
    pod: Pod
    node: str
    status: Status | None = None
    fit_error: FitError | None = None

    @property
    def succeeded(self) -> bool:
        return self.status is None

    def message(self) -> str:
        if self.fit_error is not None:
            return self.fit_error.message()
        return self.status.message() if self.status is not None else ""

    def rejectors(self) -> tuple[set[str], set[str]]:
        if self.fit_error is None:
            return set(), set()
        diag = self.fit_error.diagnosis
        return set(diag.unschedulable_plugins), set(diag.pending_plugins)


async def run_binding_cycle(
    *,
    profile: Profile,
    cache: SchedulerCache,
    state: CycleState,
    assumed_pod: Pod,
    node: str,
) -> BindingOutcome:
    status = await profile.run_pre_bind(state, assumed_pod, node)
    if status is None or status.is_success():
        status = await profile.run_bind(state, assumed_pod, node)
    if status is None or status.is_success():
        cache.finish_binding(assumed_pod)
        await profile.run_post_bind(state, assumed_pod, node)
        return BindingOutcome(assumed_pod, node)

    await profile.run_unreserve(state, assumed_pod, node)
    try:
        cache.forget_pod(assumed_pod)
    except CacheError:
        pass
    outcome = BindingOutcome(assumed_pod, node)
    if status.is_rejected():
        diagnosis = Diagnosis(node_to_status={node: status})
        diagnosis.add_plugin_status(status)
        outcome.fit_error = FitError(assumed_pod, 1, diagnosis)
        outcome.status = Status(status.code, (outcome.fit_error.message(),), status.plugin, outcome.fit_error)
    else:
        outcome.status = status if status.code == Code.ERROR else Status(Code.ERROR, status.reasons, status.plugin)
    return outcome
