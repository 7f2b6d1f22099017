"""The plugin framework: cycle state, results and the extension-point protocols.

This mirrors kube-scheduler's ``framework/interface.go``. A plugin is any object
with a ``name`` that implements one or more extension points; the Profile
(``profile.py``) discovers which by the methods present. Everything up to and
including Reserve is synchronous and pure; the extension points that write
through the log (PostFilter, Unreserve, PreBind, Bind, PostBind) are
coroutines so the binding cycle can await the API without blocking the next
scheduling cycle.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol, runtime_checkable

from services.scheduler.client import APIClient, Write
from services.scheduler.cluster_events import ClusterEvent
from services.scheduler.node_info import NodeInfo
from services.scheduler.status import Code, Status

Pod = Mapping[str, Any]
Obj = Mapping[str, Any]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


class StateNotFoundError(KeyError):
    """A plugin read a cycle-state key nobody wrote (kube's ErrNotFound)."""


class CycleState:
    """Per-attempt scratch space shared by the plugins of one scheduling cycle."""

    __slots__ = ("_data", "pod_signature", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        # The pod spec's canonical encoding when node-local results may be remembered (node_local_memo).
        self.pod_signature: bytes | None = None

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise StateNotFoundError("not found") from None

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Node names a PreFilter plugin already knows are the only candidates (None = all)."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        assert self.node_names is not None and other.node_names is not None
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    nominated_node_name: str = ""


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


class QueueingHint(IntEnum):
    """A hint's verdict on whether an event may make a rejected pod schedulable."""

    QUEUE_SKIP = 0
    QUEUE = 1

    def __str__(self) -> str:
        return "QueueSkip" if self is QueueingHint.QUEUE_SKIP else "Queue"


QueueingHintFn = Callable[[Pod, Obj | None, Obj | None], QueueingHint]
"""``(pod, old_obj, new_obj) -> hint``; an exception counts as Queue."""


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None


# --------------------------------------------------------------- protocols


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class EnqueueExtensions(Protocol):
    name: str

    def events_to_register(self) -> list[ClusterEventWithHint]: ...


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    name: str

    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    name: str

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]: ...


@runtime_checkable
class FilterPlugin(Protocol):
    name: str

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


NodeToStatus = Mapping[str, Status]


@runtime_checkable
class PostFilterPlugin(Protocol):
    name: str

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus, num_all_nodes: int
    ) -> Awaitable[tuple[PostFilterResult | None, Status | None]]: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    name: str

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]: ...


@runtime_checkable
class NormalizeScorePlugin(Protocol):
    name: str

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None: ...


@runtime_checkable
class ReservePlugin(Protocol):
    name: str

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> Awaitable[None]: ...


@runtime_checkable
class PreBindPlugin(Protocol):
    name: str

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Awaitable[Status | None]: ...


@runtime_checkable
class BindPlugin(Protocol):
    name: str

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Awaitable[Status | None]: ...


@runtime_checkable
class ChainedBindPlugin(Protocol):
    """A Bind plugin that can say before PreBind ends what it will write, through which client.

    The framework then chains that write after PreBind's last ones
    (``services.scheduler.binding_chain``); ``bind`` still binds alone.
    """

    name: str
    client: APIClient

    def binding_write(self, pod: Pod, node_name: str) -> Write: ...


@runtime_checkable
class PostBindPlugin(Protocol):
    name: str

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> Awaitable[None]: ...


@dataclass(slots=True)
class Diagnosis:
    """Why no node fit: per-node statuses and which plugins rejected the pod."""

    node_to_status: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)


def default_normalized(max_priority: int, reverse: bool, values: Sequence[int]) -> list[int]:
    """Values scaled to [0, max_priority] by the highest one, in their order (helper.DefaultNormalizeScore).

    The Profile runs this on plain values for plugins that declare
    ``default_normalize_reverse``, instead of building a NodeScore per node.
    """
    max_count = max(values, default=0)
    if max_count == 0:
        return [max_priority] * len(values) if reverse else list(values)
    if reverse:
        return [max_priority - max_priority * v // max_count for v in values]
    return [max_priority * v // max_count for v in values]


def default_normalize_score(max_priority: int, reverse: bool, scores: Iterable[NodeScore]) -> None:
    """``default_normalized`` in place on NodeScores (what a plugin's normalize_score calls)."""
    scores = list(scores)
    for score, value in zip(scores, default_normalized(max_priority, reverse, [s.score for s in scores]), strict=True):
        score.score = value
