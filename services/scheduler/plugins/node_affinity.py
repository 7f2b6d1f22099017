"""NodeAffinity: ``spec.nodeSelector`` and node affinity, required (filter) and preferred (score).

PreFilter narrows the candidates when every required term pins
``metadata.name`` via matchFields; Filter rejects nodes that do not match with
kube's exact reason; Score sums the weights of matching preferred terms. The
hint requeues on a node add that matches, or an update that turns a
non-matching node into a matching one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.kube.node_selectors import (
    OBJECT_NAME_FIELD,
    NodeSelector,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
)
from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import (
    MAX_NODE_SCORE,
    ClusterEventWithHint,
    CycleState,
    NodeScore,
    Obj,
    Pod,
    PreFilterResult,
    QueueingHint,
    StateNotFoundError,
    default_normalize_score,
)
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins import names
from services.scheduler.plugins._objects import expect_kind, spec
from services.scheduler.status import Code, Status, as_status, new_status

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_PRE_FILTER_KEY = "PreFilter" + names.NODE_AFFINITY
_PRE_SCORE_KEY = "PreScore" + names.NODE_AFFINITY


def _required_terms(pod: Pod) -> Mapping[str, Any] | None:
    node_affinity = (spec(pod).get("affinity") or {}).get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    return required if required is not None else None


def _preferred_terms(pod: Pod) -> PreferredSchedulingTerms | None:
    node_affinity = (spec(pod).get("affinity") or {}).get("nodeAffinity") or {}
    preferred = node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
    if preferred is None:
        return None
    return PreferredSchedulingTerms.parse(preferred)


class NodeAffinity:
    name = names.NODE_AFFINITY
    node_local = True  # Filter/Score depend only on the pod spec and the NodeInfo (node_local_memo)
    default_normalize_reverse = False  # normalize_score is default_normalize_score(MAX_NODE_SCORE, False, ...)

    def __init__(self, *, added_affinity: Mapping[str, Any] | None = None) -> None:
        self._added_selector: NodeSelector | None = None
        self._added_preferred: PreferredSchedulingTerms | None = None
        if added_affinity:
            required = added_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
            if required is not None:
                self._added_selector = NodeSelector.parse(required)
            preferred = added_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
            if preferred:
                self._added_preferred = PreferredSchedulingTerms.parse(preferred)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
        expect_kind(old, "Node")
        expect_kind(new, "Node")
        if new is None:
            return QueueingHint.QUEUE_SKIP
        if self._added_selector is not None and not self._added_selector.matches(new):
            return QueueingHint.QUEUE_SKIP
        required = RequiredNodeAffinity.of_pod(pod)
        if not required.matches(new):
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        if required.matches(old):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        required = _required_terms(pod)
        if required is None and self._added_selector is None and spec(pod).get("nodeSelector") is None:
            return None, new_status(Code.SKIP)
        state.write(_PRE_FILTER_KEY, RequiredNodeAffinity.of_pod(pod))
        terms = (required or {}).get("nodeSelectorTerms") or ()
        if required is None or not terms:
            return None, None
        node_names: set[str] | None = None
        for term in terms:
            term_names: set[str] | None = None
            for field in term.get("matchFields") or ():
                if field.get("key") == OBJECT_NAME_FIELD and field.get("operator") == "In":
                    values = {str(v) for v in field.get("values") or ()}
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(frozenset(node_names)), None
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        assert node is not None
        if self._added_selector is not None and not self._added_selector.matches(node):
            return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        try:
            required = state.read(_PRE_FILTER_KEY)
        except StateNotFoundError:
            required = RequiredNodeAffinity.of_pod(pod)
        if not required.matches(node):
            return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            preferred = _preferred_terms(pod)
        except ValueError as err:
            return as_status(err)
        if preferred is None and self._added_preferred is None:
            return new_status(Code.SKIP)
        state.write(_PRE_SCORE_KEY, preferred)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node
        assert node is not None
        count = 0
        if self._added_preferred is not None:
            count += self._added_preferred.score(node)
        try:
            preferred = state.read(_PRE_SCORE_KEY)
        except StateNotFoundError:
            try:
                preferred = _preferred_terms(pod)
            except ValueError as err:
                return 0, as_status(err)
        if preferred is not None:
            count += preferred.score(node)
        return count, None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None
