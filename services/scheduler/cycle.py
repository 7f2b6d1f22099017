"""The scheduling cycle: PreFilter → Filter → (PostFilter) → PreScore → Score → select → Reserve.

``SchedulingAlgorithm.schedule_pod`` is kube-scheduler's ``schedulePod``: it
filters the nodes (starting where the previous cycle stopped, and stopping
early once enough feasible nodes are found on large clusters), scores them and
picks the best, or raises ``FitError`` carrying every node's status — the
material of the FailedScheduling event and of the ``decisions`` record.
``run_scheduling_cycle`` adds what kube's ``schedulingCycle`` does around it:
PostFilter on a fit error, assuming the pod in the cache and Reserve (with
Unreserve on failure). Only PostFilter and Unreserve await; everything else is
synchronous and pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.scheduler import rejections
from services.scheduler.cache import SchedulerCache
from services.scheduler.equivalence_cache import UNCACHEABLE, ClassPlan, Entry
from services.scheduler.framework import CycleState, Diagnosis, Pod
from services.scheduler.messages import ERR_NO_NODES_AVAILABLE, fit_error_message
from services.scheduler.node_info import NodeInfo, Snapshot, pod_key
from services.scheduler.node_local_memo import pod_signature
from services.scheduler.plugins._objects import meta
from services.scheduler.profile import Profile
from services.scheduler.status import Code, SchedulingError, Status, new_status

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
FILTERED_BY_PRE_FILTER_RESULT = "node is filtered out by the prefilter result"
DECISION_SCORED_NODES = 10  # nodes whose scores a decision record keeps (the best ones)
_STALE: Any = object()  # no current remembered verdict for the node


class FitError(Exception):
    """No node fits the pod; ``str()`` is the FailedScheduling message."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def message(self) -> str:
        return fit_error_message(
            self.num_all_nodes,
            self.diagnosis.node_to_status,
            pre_filter_msg=self.diagnosis.pre_filter_msg,
            post_filter_msg=self.diagnosis.post_filter_msg,
        )

    def __str__(self) -> str:
        return self.message()


class NoNodesAvailableError(SchedulingError):
    def __init__(self) -> None:
        super().__init__(ERR_NO_NODES_AVAILABLE)


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    # The feasible nodes in filter order, with their weighted totals and each plugin's weighted scores.
    names: list[str] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    plugin_scores: dict[str, list[int]] = field(default_factory=dict)
    rejections: Mapping[str, Status] = field(default_factory=dict)  # the nodes Filter passed over, and why


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes are enough before filtering stops (kube's adaptive rule)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        pct = max(pct, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * pct // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


class SchedulingAlgorithm:
    """Filters and scores; keeps the round-robin start index between cycles."""

    def __init__(self, profile: Profile, *, percentage_of_nodes_to_score: int | None = None) -> None:
        self.profile = profile
        self.percentage_of_nodes_to_score = (
            profile.percentage_of_nodes_to_score
            if profile.percentage_of_nodes_to_score is not None
            else percentage_of_nodes_to_score
        )
        self.next_start_node_index = 0

    def schedule_pod(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> ScheduleResult:
        """The chosen node, or raise FitError / SchedulingError."""
        if snapshot.num_nodes() == 0:
            raise NoNodesAvailableError()
        if state.pod_signature is None and self.profile.node_local:
            state.pod_signature = pod_signature(pod)
        feasible, diagnosis = self.find_nodes_that_fit_pod(state, pod, snapshot)
        if not feasible:
            raise FitError(pod, snapshot.num_nodes(), diagnosis)
        evaluated = len(feasible) + len(diagnosis.node_to_status)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1, rejections=diagnosis.node_to_status)
        status = self.profile.run_pre_score(state, pod, feasible)
        if status is not None and not status.is_success():
            raise status.as_error()
        totals, per_plugin, status = self.profile.run_score(state, pod, feasible)
        if status is not None:
            raise status.as_error()
        names = [info.name for info in feasible]
        best = select_host(names, totals)
        return ScheduleResult(best, evaluated, len(feasible), names, totals, per_plugin, diagnosis.node_to_status)

    def find_nodes_that_fit_pod(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        all_nodes = snapshot.nodes()
        result, status = self.profile.run_pre_filter(state, pod, all_nodes)
        if status is not None and not status.is_success():
            if not status.is_rejected():
                raise status.as_error()
            for info in all_nodes:
                diagnosis.node_to_status[info.name] = status
            diagnosis.pre_filter_msg = status.message()
            diagnosis.add_plugin_status(status)
            return [], diagnosis

        nodes: Sequence[NodeInfo] = all_nodes
        if result is not None and not result.all_nodes():
            assert result.node_names is not None
            narrowed: list[NodeInfo] = []
            for info in all_nodes:
                if info.name not in result.node_names:
                    diagnosis.node_to_status[info.name] = new_status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, FILTERED_BY_PRE_FILTER_RESULT
                    )
                    continue
                narrowed.append(info)
            nodes = narrowed
        feasible, processed = self.find_nodes_that_pass_filters(state, pod, diagnosis, nodes)
        if nodes:
            self.next_start_node_index = (self.next_start_node_index + processed) % len(nodes)
        return feasible, diagnosis

    def find_nodes_that_pass_filters(
        self, state: CycleState, pod: Pod, diagnosis: Diagnosis, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], int]:
        """Feasible nodes (at most enough of them) and how many nodes were examined."""
        num_all = len(nodes)
        if num_all == 0:
            return [], 0
        to_find = num_feasible_nodes_to_find(self.percentage_of_nodes_to_score, num_all)
        start = self.next_start_node_index % num_all
        feasible: list[NodeInfo] = []
        if not self.profile.filter_plugins:
            found = [nodes[(start + i) % num_all] for i in range(min(to_find, num_all))]
            return found, len(found)
        plan = self.profile.class_plan(state)
        if plan is not None:
            return self._pass_filters_remembered(plan, state, pod, diagnosis, nodes, start, to_find)
        processed = 0
        for i in range(num_all):
            info = nodes[(start + i) % num_all]
            processed += 1
            status = self.profile.run_filter(state, pod, info)
            if status is None or status.is_success():
                feasible.append(info)
                if len(feasible) >= to_find:
                    break
                continue
            if status.code == Code.ERROR:
                raise status.as_error()
            diagnosis.node_to_status[info.name] = status
            diagnosis.add_plugin_status(status)
        return feasible, processed

    def _pass_filters_remembered(
        self,
        plan: ClassPlan,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        nodes: Sequence[NodeInfo],
        start: int,
        to_find: int,
    ) -> tuple[list[NodeInfo], int]:
        """``find_nodes_that_pass_filters`` with the verdicts of the pod's equivalence class.

        The same nodes in the same order, the same early stop and the same
        statuses as running the Filter chain on each node; only nodes whose
        entry is not current run it (see ``equivalence_cache``).
        """
        table = plan.table
        if len(table) > 2 * len(nodes) + 64:
            plan.prune({info.name for info in nodes})  # nodes that went away (a long-lived class)
        run_filter = self.profile.run_filter
        non_local = plan.plugin is not None
        known = plan.dependencies
        plan.lend(state)
        feasible: list[NodeInfo] = []
        entries: list[Entry | None] = []  # the feasible nodes' entries, for their Score rows
        plan.feasible = (feasible, entries)
        node_to_status = diagnosis.node_to_status
        shared = plan.cache.shared
        last_rejection: Status | None = None  # the diagnosis already holds its plugin
        processed = misses = 0
        num_all = len(nodes)
        for i in range(num_all):
            info = nodes[(start + i) % num_all]
            processed += 1
            name = info.name
            entry = table.get(name)
            verdict: Any = _STALE
            if entry is not None and entry.generation == info.generation and entry.node is info.node:
                if not non_local:
                    dependency = None
                elif known is not None:
                    dependency = known.get(name, UNCACHEABLE)
                else:
                    dependency = plan.dependency(state, info)
                if dependency is not UNCACHEABLE and entry.dependency == dependency:
                    verdict = entry.verdict
            if verdict is _STALE:
                misses += 1
                # The plugin learns what the node's dependency is now (before Filter, which may depend on it).
                dependency = plan.dependency(state, info) if non_local else None
                verdict = run_filter(state, pod, info)
                if verdict is not None and verdict.code == Code.ERROR:
                    raise verdict.as_error()
                if dependency is UNCACHEABLE:
                    entry = None
                else:
                    if verdict is None:
                        kept = plan.keep(state, name)
                    else:
                        kept = None
                        verdict = shared(verdict)
                    entry = table[name] = Entry(info.generation, info.node, dependency, verdict, kept)
            status: Status | None = verdict
            if status is None or status.code == Code.SUCCESS:
                feasible.append(info)
                entries.append(entry)
                if len(feasible) >= to_find:
                    break
                continue
            node_to_status[name] = status
            if status is not last_rejection:  # equal verdicts are one object (``shared``)
                diagnosis.add_plugin_status(status)
                last_rejection = status
        plan.cache.hits += processed - misses
        plan.cache.misses += misses
        return feasible, processed


def select_host(names: Sequence[str], totals: Sequence[int]) -> str:
    """The highest total; ties go to the first in filter order (deterministic, round-robin spread)."""
    if not totals:
        raise SchedulingError("empty priorityList")
    return names[max(range(len(totals)), key=totals.__getitem__)]


# ----------------------------------------------------------- the whole cycle


@dataclass(slots=True)
class CycleOutcome:
    """What a scheduling cycle decided; exactly one of ``node`` or ``status`` is meaningful."""

    pod: Pod
    state: CycleState
    node: str = ""
    assumed_pod: Pod | None = None
    result: ScheduleResult | None = None
    status: Status | None = None  # failure status (Unschedulable, Pending, Error ...)
    fit_error: FitError | None = None
    error: BaseException | None = None

    @property
    def succeeded(self) -> bool:
        return bool(self.node) and self.status is None

    def message(self) -> str:
        """The FailedScheduling message of a failed cycle."""
        if self.fit_error is not None:
            return self.fit_error.message()
        if self.error is not None:
            return str(self.error)
        return self.status.message() if self.status is not None else ""

    def rejectors(self) -> tuple[set[str], set[str]]:
        """(unschedulable_plugins, pending_plugins) for the queue."""
        if self.fit_error is None:
            return set(), set()
        diag = self.fit_error.diagnosis
        return set(diag.unschedulable_plugins), set(diag.pending_plugins)


async def run_scheduling_cycle(
    *,
    algorithm: SchedulingAlgorithm,
    cache: SchedulerCache,
    snapshot: Snapshot,
    pod: Pod,
    state: CycleState | None = None,
) -> CycleOutcome:
    """One scheduling cycle of kube's ``schedulingCycle`` (without Permit, which draplane lacks)."""
    profile = algorithm.profile
    state = state or CycleState()
    outcome = CycleOutcome(pod=pod, state=state)
    if meta(pod).get("deletionTimestamp"):
        outcome.status = new_status(Code.SKIP, "pod is being deleted")
        return outcome
    try:
        result = algorithm.schedule_pod(state, pod, snapshot)
    except FitError as err:
        no_fit: FitError | None = err
    except Exception as err:
        outcome.error = err
        outcome.status = Status(Code.ERROR, (str(err),), error=err)
        return outcome
    else:
        no_fit = None
    if no_fit is not None:
        if profile.post_filter_plugins:
            _, post_status = await profile.run_post_filter(
                state, pod, no_fit.diagnosis.node_to_status, no_fit.num_all_nodes
            )
            no_fit.diagnosis.post_filter_msg = post_status.message()
        outcome.fit_error = no_fit
        outcome.status = Status(Code.UNSCHEDULABLE, (no_fit.message(),), error=no_fit)
        return outcome

    outcome.result = result
    assumed = cache.assume_pod(pod, result.suggested_host)
    status = profile.run_reserve(state, assumed, result.suggested_host)
    if status is not None and not status.is_success():
        await profile.run_unreserve(state, assumed, result.suggested_host)
        cache.forget_pod(assumed)
        if status.is_rejected():
            diagnosis = Diagnosis(node_to_status={result.suggested_host: status})
            diagnosis.add_plugin_status(status)
            fit_error = FitError(pod, 1, diagnosis)
            outcome.fit_error = fit_error
            outcome.status = Status(status.code, (fit_error.message(),), status.plugin, fit_error)
        else:
            outcome.error = status.as_error()
            outcome.status = status
        return outcome
    outcome.node = result.suggested_host
    outcome.assumed_pod = assumed
    return outcome


def decision_record(outcome: CycleOutcome, *, attempt: int, profile: str) -> dict[str, Any]:
    """A JSON-ready record of one attempt for the ``decisions`` topic.

    It lists the nodes rejected, grouped by plugin, code and reasons
    (``rejections``; for a scheduled pod, the nodes Filter passed over before
    it found enough), the
    chosen node with its scores (and those of the runners-up, at most
    ``DECISION_SCORED_NODES`` nodes), and whatever plugins published under the
    ``decision/`` cycle-state keys (DynamicResources publishes the allocation).
    """
    pod = outcome.pod
    record: dict[str, Any] = {
        "pod": pod_key(pod),
        "uid": str(meta(pod).get("uid", "")),
        "attempt": attempt,
        "profile": profile,
    }
    if outcome.succeeded:
        record["result"] = "scheduled"
        record["node"] = outcome.node
        result = outcome.result
        if result is not None:
            record["evaluatedNodes"] = result.evaluated_nodes
            record["feasibleNodes"] = result.feasible_nodes
            # The best-scored nodes only: all feasible nodes (230 of 500) would make every record large.
            best = sorted(range(len(result.totals)), key=lambda i: -result.totals[i])[:DECISION_SCORED_NODES]
            record["scores"] = {result.names[i]: result.totals[i] for i in best}
            record["pluginScores"] = {
                plugin: {result.names[i]: scores[i] for i in best} for plugin, scores in result.plugin_scores.items()
            }
            record[rejections.KEY] = rejections.encode(result.rejections)
    elif outcome.status is not None and outcome.status.code == Code.SKIP:
        record["result"] = "skipped"
    else:
        record["result"] = "error" if outcome.fit_error is None else "unschedulable"
        record["message"] = outcome.message()
    if outcome.fit_error is not None:
        diag = outcome.fit_error.diagnosis
        record[rejections.KEY] = rejections.encode(diag.node_to_status)
        record["unschedulablePlugins"] = sorted(diag.unschedulable_plugins)
        record["pendingPlugins"] = sorted(diag.pending_plugins)
        if diag.pre_filter_msg:
            record["preFilterMessage"] = diag.pre_filter_msg
        if diag.post_filter_msg:
            record["postFilterMessage"] = diag.post_filter_msg
    published = _published(outcome.state)
    if published:
        record["plugins"] = published
    return record


def _published(state: CycleState) -> Mapping[str, Any]:
    return {key[len("decision/") :]: value for key, value in state._data.items() if key.startswith("decision/")}
