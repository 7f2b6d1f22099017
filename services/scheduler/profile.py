"""A scheduling profile: its plugins per extension point and how they run (framework runtime).

This is kube-scheduler's ``framework/runtime/framework.go``: the order plugins
run in, how their statuses combine and the exact error wording
(``running PreFilter plugin "X": ...``, ``running "X" filter plugin: ...``).
``default_plugins`` lists kube 1.31's default profile (DynamicResources right
before DefaultPreemption) restricted to the plugins draplane has.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from services.api.machinery.status import StatusError
from services.scheduler import binding_chain
from services.scheduler.client import is_conflict
from services.scheduler.equivalence_cache import ClassPlan, EquivalenceCache, class_plan
from services.scheduler.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    ChainedBindPlugin,
    CycleState,
    FilterPlugin,
    NodeScore,
    NormalizeScorePlugin,
    Pod,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
    default_normalized,
)
from services.scheduler.node_info import NodeInfo
from services.scheduler.node_local_memo import MISSING, NodeLocalMemo, is_node_local
from services.scheduler.plugins import names
from services.scheduler.queue import DEFAULT_SCHEDULER_NAME
from services.scheduler.queueing_hints import QueueingHintMap
from services.scheduler.status import Code, SchedulingError, Status, as_status, new_status

log = logging.getLogger(__name__)

_FILTER_PLAN_KEY = "profile/filter-plan"
_CLASS_PLAN_KEY = "profile/equivalence-class"

DEFAULT_SCORE_WEIGHTS: Mapping[str, int] = {
    names.TAINT_TOLERATION: 3,
    names.NODE_AFFINITY: 2,
    names.NODE_RESOURCES_FIT: 1,
    names.NODE_RESOURCES_BALANCED_ALLOCATION: 1,
    names.DYNAMIC_RESOURCES: 2,  # 1.37's applyDynamicResources (its Score ranks prioritized-list subrequests)
}


def _error(template: str, plugin: str, status: Status) -> Status:
    err = SchedulingError(template.format(plugin=plugin, err=status.message()))
    return as_status(err).with_plugin(plugin)


def _pre_bind_failure(plugin: str, status: Status) -> Status:
    if status.is_rejected():
        return status.with_plugin(plugin)
    return _error('running PreBind plugin "{plugin}": {err}', plugin, status)


def _bind_failure(plugin: str, status: Status) -> Status:
    if status.is_rejected():
        return status.with_plugin(plugin)
    return _error('running Bind plugin "{plugin}": {err}', plugin, status)


class Profile:
    """Plugins of one ``schedulerName``, grouped by extension point in configuration order."""

    def __init__(
        self,
        plugins: Sequence[Any],
        *,
        scheduler_name: str = DEFAULT_SCHEDULER_NAME,
        score_weights: Mapping[str, int] | None = None,
        percentage_of_nodes_to_score: int | None = None,
        remember: bool = True,
    ) -> None:
        """``remember=False`` turns off every reuse of results across cycles (the memos, equivalence classes)."""
        self.scheduler_name = scheduler_name
        self.plugins = list(plugins)
        weights = dict(DEFAULT_SCORE_WEIGHTS)
        weights.update(score_weights or {})
        self.score_weights = weights
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self._pre_enqueue = [p for p in self.plugins if isinstance(p, PreEnqueuePlugin)]
        self.pre_filter_plugins = [p for p in self.plugins if isinstance(p, PreFilterPlugin)]
        self.filter_plugins = [p for p in self.plugins if isinstance(p, FilterPlugin)]
        self.post_filter_plugins = [p for p in self.plugins if isinstance(p, PostFilterPlugin)]
        self.pre_score_plugins = [p for p in self.plugins if isinstance(p, PreScorePlugin)]
        self.score_plugins = [p for p in self.plugins if isinstance(p, ScorePlugin)]
        self.reserve_plugins = [p for p in self.plugins if isinstance(p, ReservePlugin)]
        self.pre_bind_plugins = [p for p in self.plugins if isinstance(p, PreBindPlugin)]
        self.bind_plugins = [p for p in self.plugins if isinstance(p, BindPlugin)]
        self.post_bind_plugins = [p for p in self.plugins if isinstance(p, PostBindPlugin)]
        # The Bind plugin whose write PreBind's last writes may carry (binding_chain); None: no chaining.
        first_binder = self.bind_plugins[0] if self.bind_plugins and self.pre_bind_plugins else None
        self._chained_binder = first_binder if isinstance(first_binder, ChainedBindPlugin) else None
        self._hint_map = QueueingHintMap.from_plugins(self.plugins)
        # Filter statuses and raw scores of node-local plugins, reused for the same pod spec and node version.
        self.node_local = frozenset(p.name for p in self.plugins if is_node_local(p)) if remember else frozenset()
        # isinstance against a runtime-checkable Protocol is slow: decide once.
        self._normalizes = frozenset(p.name for p in self.score_plugins if isinstance(p, NormalizeScorePlugin))
        # Plugins whose normalize_score is the default normalization: run on plain values (same result).
        self._default_normalize: dict[str, bool] = {}
        for p in self.score_plugins:
            reverse = getattr(p, "default_normalize_reverse", None)
            if p.name in self._normalizes and reverse is not None:
                self._default_normalize[p.name] = bool(reverse)
        self.filter_memo = NodeLocalMemo()
        self.score_memo = NodeLocalMemo()
        self.equivalence = EquivalenceCache()

    # -- QueueProfile

    @property
    def pre_enqueue_plugins(self) -> Sequence[PreEnqueuePlugin]:
        return self._pre_enqueue

    @property
    def hint_map(self) -> QueueingHintMap:
        return self._hint_map

    def plugin(self, name: str) -> Any | None:
        return next((p for p in self.plugins if p.name == name), None)

    # -- PreFilter / Filter / PostFilter

    def run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        result: PreFilterResult | None = None
        plugins_with_nodes: list[str] = []
        skip: set[str] = set()
        returned: Status | None = None
        for plugin in self.pre_filter_plugins:
            try:
                r, status = plugin.pre_filter(state, pod, nodes)
            except Exception as err:
                log.exception("PreFilter plugin %s failed", plugin.name)
                r, status = None, as_status(err)
            if status is not None and status.is_skip():
                skip.add(plugin.name)
                continue
            if status is not None and not status.is_success():
                status = status.with_plugin(plugin.name)
                if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, status
                if status.code == Code.UNSCHEDULABLE:
                    returned = status
                    continue
                return None, _error('running PreFilter plugin "{plugin}": {err}', plugin.name, status)
            if r is not None and not r.all_nodes():
                plugins_with_nodes.append(plugin.name)
            result = r if result is None else result.merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                if len(plugins_with_nodes) == 1:
                    msg = f"node(s) didn't satisfy plugin {plugins_with_nodes[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) [{' '.join(plugins_with_nodes)}] simultaneously"
                return result, new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
        state.skip_filter_plugins = skip
        return result, returned

    def _filter_plan(self, state: CycleState) -> list[tuple[str, list[Any]]]:
        """The active Filter plugins of this cycle in order, consecutive node-local ones grouped.

        A group's name (non-empty) is its memo key: one remembered verdict per
        group and node replaces one call per plugin. Plugins that are not
        node-local form groups of one with an empty name.
        """
        plan: list[tuple[str, list[Any]]] | None = state.get(_FILTER_PLAN_KEY)
        if plan is not None:
            return plan
        plan = []
        remember = state.pod_signature is not None
        for plugin in self.filter_plugins:
            if plugin.name in state.skip_filter_plugins:
                continue
            local = remember and plugin.name in self.node_local
            if local and plan and plan[-1][0]:
                plan[-1][1].append(plugin)
                plan[-1] = (f"{plan[-1][0]},{plugin.name}", plan[-1][1])
            else:
                plan.append((plugin.name if local else "", [plugin]))
        state.write(_FILTER_PLAN_KEY, plan)
        return plan

    def class_plan(self, state: CycleState) -> ClassPlan | None:
        """This cycle's equivalence class (after PreFilter), or None when its results cannot be reused."""
        plan: ClassPlan | bool | None = state.get(_CLASS_PLAN_KEY, False)
        if plan is False:
            plan = class_plan(self.equivalence, state, self.filter_plugins, self.node_local)
            state.write(_CLASS_PLAN_KEY, plan)
        assert plan is not True
        return plan

    def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        signature = state.pod_signature
        for group, plugins in self._filter_plan(state):
            if group:
                assert signature is not None
                verdict = self.filter_memo.get(group, signature, node_info)
                if verdict is MISSING:
                    verdict, clean = self._filter_group(plugins, state, pod, node_info)
                    if clean:
                        self.filter_memo.put(group, signature, node_info, verdict)
            else:
                verdict, _ = self._filter_group(plugins, state, pod, node_info)
            if verdict is None:
                continue
            name, status = verdict
            if not status.is_rejected():
                return _error('running "{plugin}" filter plugin: {err}', name, status)
            return status.with_plugin(name)
        return None

    @staticmethod
    def _filter_group(
        plugins: Sequence[Any], state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> tuple[tuple[str, Status] | None, bool]:
        """(plugin name and status of the first plugin that did not succeed, or None; no exception raised)."""
        for plugin in plugins:
            try:
                status = plugin.filter(state, pod, node_info)
            except Exception as err:
                log.exception("Filter plugin %s failed", plugin.name)
                return (plugin.name, as_status(err)), False
            if status is not None and not status.is_success():
                return (plugin.name, status), True
        return None, True

    async def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status], num_all_nodes: int
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.post_filter_plugins:
            try:
                r, status = await plugin.post_filter(state, pod, statuses, num_all_nodes)
            except Exception as err:
                log.exception("PostFilter plugin %s failed", plugin.name)
                r, status = None, as_status(err)
            if status is None or status.is_success():
                return r, status or Status()
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, status.with_plugin(plugin.name)
            if not status.is_rejected():
                return None, as_status(status.as_error()).with_plugin(plugin.name)
            if r is not None:
                result = r
            reasons.extend(status.reasons)
            if not rejector:
                rejector = plugin.name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    # -- PreScore / Score

    def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        skip: set[str] = set()
        for plugin in self.pre_score_plugins:
            try:
                status = plugin.pre_score(state, pod, nodes)
            except Exception as err:
                log.exception("PreScore plugin %s failed", plugin.name)
                status = as_status(err)
            if status is None or status.is_success():
                continue
            if status.is_skip():
                skip.add(plugin.name)
                continue
            return _error('running PreScore plugin "{plugin}": {err}', plugin.name, status)
        state.skip_score_plugins = skip
        return None

    def run_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], dict[str, list[int]], Status | None]:
        """Weighted totals per node, and each plugin's weighted scores (for decisions), in ``nodes`` order."""
        plugins = [p for p in self.score_plugins if p.name not in state.skip_score_plugins]
        per_plugin: dict[str, list[int]] = {}
        if not plugins:
            return [1] * len(nodes), per_plugin, None
        remembered = self._node_local_scores(plugins, state, pod, nodes)
        totals: list[int] | None = None
        for plugin in plugins:
            values = remembered.get(plugin.name)
            if values is None:
                values, failure = self._score_nodes(plugin, state, pod, nodes)
                if failure is not None:
                    return [], {}, failure
            reverse = self._default_normalize.get(plugin.name)
            if reverse is not None:
                values = default_normalized(MAX_NODE_SCORE, reverse, values)
            elif plugin.name in self._normalizes:
                scores = [NodeScore(info.name, v) for info, v in zip(nodes, values, strict=True)]
                status = plugin.normalize_score(state, pod, scores)  # type: ignore[attr-defined]
                if status is not None and not status.is_success():
                    inner = f'plugin "{plugin.name}" failed with: {status.message()}'
                    return [], {}, as_status(SchedulingError(f"running Normalize on Score plugins: {inner}"))
                values = [s.score for s in scores]
            if values and not (MIN_NODE_SCORE <= min(values) and max(values) <= MAX_NODE_SCORE):
                value = next(v for v in values if not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE)
                inner = (
                    f'plugin "{plugin.name}" returns an invalid score {value}, it should in the range of '
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                )
                return [], {}, as_status(SchedulingError(f"applying score defaultWeights on Score plugins: {inner}"))
            weight = self.score_weights.get(plugin.name, 1)
            weighted = list(values) if weight == 1 else [v * weight for v in values]
            per_plugin[plugin.name] = weighted
            totals = weighted if totals is None else [t + w for t, w in zip(totals, weighted, strict=True)]
        assert totals is not None
        return totals, per_plugin, None

    @staticmethod
    def _score_nodes(
        plugin: Any, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """One plugin's raw scores of every node, or the Error status of its first failure."""
        score = plugin.score
        values: list[int] = []
        try:
            for info in nodes:
                value, status = score(state, pod, info)
                if status is not None and status.code != Code.SUCCESS:
                    inner = f'plugin "{plugin.name}" failed with: {status.message()}'
                    return [], as_status(SchedulingError(f"running Score plugins: {inner}"))
                values.append(value)
        except Exception as err:
            log.exception("Score plugin %s failed", plugin.name)
            inner = f'plugin "{plugin.name}" failed with: {err}'
            return [], as_status(SchedulingError(f"running Score plugins: {inner}"))
        return values, None

    def _node_local_scores(
        self, plugins: Sequence[Any], state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> dict[str, Sequence[int]]:
        """Raw scores of the node-local plugins, node by node, with one memo entry per node.

        A node's row comes from its equivalence-cache entry (collected by the
        Filter loop, which validated the entry), else from the memo, else from
        the plugins. Any failure returns nothing, so the caller recomputes
        plugin by plugin and reports the first failure exactly as without the
        memo.
        """
        signature = state.pod_signature
        local = [p for p in plugins if p.name in self.node_local] if signature is not None else []
        if not local:
            return {}
        assert signature is not None
        group = ",".join(p.name for p in local)
        plan: ClassPlan | None = state.get(_CLASS_PLAN_KEY)
        if plan is not None and plan.feasible[0] is nodes:
            # The Filter loop found these nodes and validated their entries.
            entries = plan.feasible[1]
            plan.table.use_score_group(group)  # rows of other plugins (a class scored otherwise before) go
            rows = [entry.row if entry is not None else None for entry in entries]
            if None in rows:
                for index, row in enumerate(rows):
                    if row is None:
                        values = self._local_row(local, group, state, pod, nodes[index])
                        if values is None:
                            return {}
                        rows[index] = values
                        entry = entries[index]
                        if entry is not None:
                            entry.row = values
            known: Sequence[tuple[int, ...] | None] = rows
        else:
            computed: list[tuple[int, ...] | None] = []
            for info in nodes:
                values = self._local_row(local, group, state, pod, info)
                if values is None:
                    return {}
                computed.append(values)
            known = computed
        columns = list(zip(*known, strict=True)) if known else [() for _ in local]
        return {plugin.name: column for plugin, column in zip(local, columns, strict=True)}

    def _local_row(
        self, local: Sequence[Any], group: str, state: CycleState, pod: Pod, info: NodeInfo
    ) -> tuple[int, ...] | None:
        """The node-local plugins' raw scores of one node, from the memo or computed; None on any failure."""
        signature = state.pod_signature
        assert signature is not None
        values = self.score_memo.get(group, signature, info)
        if values is not MISSING:
            return values
        computed: list[int] = []
        for plugin in local:
            try:
                value, status = plugin.score(state, pod, info)
            except Exception:
                return None
            if status is not None and status.code != Code.SUCCESS:
                return None
            computed.append(value)
        row = tuple(computed)
        self.score_memo.put(group, signature, info, row)
        return row

    # -- Reserve / Unreserve

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        for plugin in self.reserve_plugins:
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as err:
                log.exception("Reserve plugin %s failed", plugin.name)
                status = as_status(err)
            if status is None or status.is_success():
                continue
            if status.is_rejected():
                return status.with_plugin(plugin.name)
            return _error('running Reserve plugin "{plugin}": {err}', plugin.name, status)
        return None

    async def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in reversed(self.reserve_plugins):
            try:
                await plugin.unreserve(state, pod, node_name)
            except Exception:
                log.exception("Unreserve plugin %s failed", plugin.name)

    # -- binding

    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBind, with the binding chained after the last plugin's writes when it defers them (binding_chain)."""
        binder = self._chained_binder
        offer = binding_chain.BindingChain(binder.client) if binder is not None else None
        last = len(self.pre_bind_plugins) - 1
        for index, plugin in enumerate(self.pre_bind_plugins):
            if offer is not None and index == last:
                state.write(binding_chain.OFFER_KEY, offer)
            try:
                status = await plugin.pre_bind(state, pod, node_name)
            except Exception as err:
                log.exception("PreBind plugin %s failed", plugin.name)
                status = as_status(err)
            finally:
                state.delete(binding_chain.OFFER_KEY)
            if status is None or status.is_success():
                continue
            return _pre_bind_failure(plugin.name, status)
        if offer is None or offer.deferred is None:
            return None
        deferred = offer.deferred
        assert binder is not None  # there is an offer
        try:
            status = await binding_chain.send(state, deferred, offer.client, binder.binding_write(pod, node_name))
        except Exception as err:
            log.exception("PreBind plugin %s failed", deferred.plugin)
            status = as_status(err)
        if status is None or status.is_success():
            return None
        return _pre_bind_failure(deferred.plugin, status)

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        chained = binding_chain.take_binding(state)
        if chained is not None:  # PreBind sent the first Bind plugin's write, chained after its own
            if not isinstance(chained, StatusError):
                return None
            if not is_conflict(chained):
                return _bind_failure(self.bind_plugins[0].name, as_status(chained))
        status: Status | None = new_status(Code.SKIP)
        for plugin in self.bind_plugins:
            try:
                status = await plugin.bind(state, pod, node_name)
            except Exception as err:
                log.exception("Bind plugin %s failed", plugin.name)
                status = as_status(err)
            if status is not None and status.is_skip():
                continue
            if status is None or status.is_success():
                return None
            return _bind_failure(plugin.name, status)
        return status

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in self.post_bind_plugins:
            try:
                await plugin.post_bind(state, pod, node_name)
            except Exception:
                log.exception("PostBind plugin %s failed", plugin.name)


def default_plugins(*, binder: Any, dynamic_resources: Any | None = None) -> list[Any]:
    """kube 1.31's default profile, in its configuration order, with the plugins draplane has."""
    from services.scheduler.plugins.balanced_allocation import BalancedAllocation
    from services.scheduler.plugins.default_preemption import DefaultPreemption
    from services.scheduler.plugins.node_affinity import NodeAffinity
    from services.scheduler.plugins.node_name import NodeName
    from services.scheduler.plugins.node_resources_fit import NodeResourcesFit
    from services.scheduler.plugins.node_unschedulable import NodeUnschedulable
    from services.scheduler.plugins.scheduling_gates import SchedulingGates
    from services.scheduler.plugins.taint_toleration import TaintToleration

    plugins: list[Any] = [
        SchedulingGates(),
        NodeUnschedulable(),
        NodeName(),
        TaintToleration(),
        NodeAffinity(),
        NodeResourcesFit(dra_classes=_extended_resource_classes(dynamic_resources)),
    ]
    if dynamic_resources is not None:
        plugins.append(dynamic_resources)
    plugins += [DefaultPreemption(), BalancedAllocation(), binder]
    return plugins


def _extended_resource_classes(dynamic_resources: Any | None) -> Any:
    """DynamicResources' extended resource → DeviceClass mapping when DRAExtendedResource is on, else None."""
    if dynamic_resources is None or not getattr(dynamic_resources, "extended_resources", False):
        return None
    return dynamic_resources.extended_resource_classes
