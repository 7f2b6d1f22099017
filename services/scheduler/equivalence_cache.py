"""Whole-chain Filter verdicts and Score rows per node, for pods that the plugins cannot tell apart.

Why: kube's adaptive rule has every cycle run the Filter chain on 230 of 500
nodes and score the feasible ones. ``node_local_memo`` and
``dra/allocation_memo`` already spare the plugins' own work for a repeated pod
spec, but each node still cost a chain of lookups — one memo key per plugin
group, the allocator's key, the per-plugin call frames — about 3 µs a node in
CPython, which made Filter and Score most of the scheduler's CPU on templated
pods. Between two such pods only one node usually changed (the one the
previous pod went to).

An *equivalence class* is the pod spec's signature (``CycleState.pod_signature``)
together with the Filter plugins skipped in PreFilter and the *equivalence
key* of the active Filter plugin that is not node-local, if there is one (a
cycle with two such plugins is not remembered). A plugin offers
one (``equivalence_key``) for a cycle only when its Filter verdict on a node
is then a function of that key, the node's ``NodeInfo`` and what it names as
the node's *dependency* (``node_dependency``; for DynamicResources, the usage
generations of the pools the node reaches). Per class this cache keeps, for
each node, the verdict of the whole Filter chain, what non-local plugins
recorded for the node in the cycle state (``keep``, and ``recall`` to look it
up again), and the raw
scores of the node-local Score plugins. An entry is used only while the
node's ``NodeInfo.generation`` (a cache-wide counter that moves on every node
or pod change), the node object and the dependency are the ones it was
computed for; anything else runs the plugins as usual.

Error statuses are never remembered. Normalization and weighting look at all
feasible nodes and always run.

What the non-local Filter plugin implements to take part (DynamicResources does):

- ``equivalence_key(state) -> Hashable | None``: this cycle's part of the class;
- ``node_dependency(state, node_info) -> Hashable``: what else its verdict on
  the node depends on now, or ``UNCACHEABLE``; it may learn and remember;
- ``node_dependencies(state) -> Mapping[str, Hashable]`` (optional): the same,
  ready per node name, for nodes whose object did not change since their
  entry was computed — one lookup instead of a call;
- ``keep(state, node_name)`` after its Filter passed a node, and
  ``recall(state, kept)``, which hands it a lookup (node name -> what it kept)
  for the nodes whose verdict the cycle reused.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from services.scheduler.framework import CycleState
from services.scheduler.node_info import NodeInfo
from services.scheduler.status import Status

DEFAULT_MAX_CLASSES = 64
MAX_VERDICTS = 1024  # distinct rejection verdicts kept for sharing; the table starts over past it

UNCACHEABLE: Any = object()
"""What ``node_dependency`` returns for a node whose verdict must not be remembered."""


class Entry:
    """One node's remembered results within one equivalence class."""

    __slots__ = ("dependency", "generation", "kept", "node", "row", "verdict")

    def __init__(
        self,
        generation: int,
        node: Mapping[str, Any] | None,
        dependency: Hashable,
        verdict: Status | None,
        kept: Any,
    ) -> None:
        self.generation = generation
        self.node = node
        self.dependency = dependency
        self.verdict = verdict  # the Filter chain's status (None: the node fits)
        self.kept = kept  # what the non-local plugin recorded for the node (only for a fit)
        self.row: tuple[int, ...] | None = None  # raw scores of the table's score group


class ClassTable(dict[str, Entry]):
    """One class's entries by node name, and which node-local Score plugins their rows hold."""

    __slots__ = ("score_group",)

    def __init__(self) -> None:
        super().__init__()
        self.score_group = ""

    def use_score_group(self, group: str) -> None:
        """Rows are for ``group`` from now on (forgetting rows of another group)."""
        if group != self.score_group:
            for entry in self.values():
                entry.row = None
            self.score_group = group


class ClassPlan:
    """How one cycle uses the cache: its class's table and the hooks of its non-local Filter plugin."""

    __slots__ = ("cache", "dependencies", "feasible", "plugin", "table")

    def __init__(self, cache: EquivalenceCache, table: ClassTable, plugin: Any | None, state: CycleState) -> None:
        self.cache = cache
        self.table = table
        self.plugin = plugin  # the one non-local Filter plugin taking part, if any
        # Per node, its dependency as ``dependency`` would compute it, for a node whose object has not
        # changed since its entry was computed; None: call ``dependency``.
        known = getattr(plugin, "node_dependencies", None)
        self.dependencies: Mapping[str, Hashable] | None = known(state) if known is not None else None
        # The feasible nodes the cycle found and their entries (None: not remembered), index by index.
        self.feasible: tuple[list[NodeInfo], list[Entry | None]] = ([], [])

    def dependency(self, state: CycleState, info: NodeInfo) -> Hashable:
        """What the non-local plugin's verdict on this node depends on, or ``UNCACHEABLE``."""
        return None if self.plugin is None else self.plugin.node_dependency(state, info)

    def prune(self, names: set[str]) -> None:
        """Drop the entries of nodes not in ``names``."""
        for name in [n for n in self.table if n not in names]:
            del self.table[name]

    def keep(self, state: CycleState, name: str) -> Any:
        return None if self.plugin is None else self.plugin.keep(state, name)

    def lend(self, state: CycleState) -> None:
        """Let the non-local plugin look up what it kept for a node whose verdict was reused.

        Called once per cycle: the plugin asks only for the node it reserves,
        not for every feasible node.
        """
        if self.plugin is None:
            return
        table = self.table

        def kept(name: str) -> Any:
            entry = table.get(name)
            return entry.kept if entry is not None else None

        self.plugin.recall(state, kept)


class EquivalenceCache:
    """A bounded, least-recently-used map from equivalence class to its per-node table."""

    def __init__(self, *, max_classes: int = DEFAULT_MAX_CLASSES) -> None:
        self.max_classes = max_classes
        self._tables: OrderedDict[Hashable, ClassTable] = OrderedDict()
        self.hits = 0  # verdicts reused (the cycle counts them)
        self.misses = 0  # verdicts the plugins computed
        self._verdicts: dict[tuple[int, tuple[str, ...], str], Status] = {}

    def shared(self, verdict: Status) -> Status:
        """One ``Status`` object for every equal rejection kept in the tables.

        Most nodes a cycle passes over share one verdict ("cannot allocate all
        claims" on every full node). Kept as one object, the cycle adds each
        plugin's rejection to the diagnosis once instead of once per node, and
        the decision record groups the nodes by that object at once. A status
        that carries an error is its own.
        """
        if verdict.error is not None:
            return verdict
        key = (verdict.code, verdict.reasons, verdict.plugin)
        found = self._verdicts.get(key)
        if found is None:
            if len(self._verdicts) >= MAX_VERDICTS:
                self._verdicts.clear()
            found = self._verdicts[key] = verdict
        return found

    def table(self, key: Hashable) -> ClassTable:
        table = self._tables.get(key)
        if table is None:
            table = ClassTable()
            self._tables[key] = table
            if len(self._tables) > self.max_classes:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(key)
        return table

    def __len__(self) -> int:
        return len(self._tables)


def class_plan(
    cache: EquivalenceCache,
    state: CycleState,
    filter_plugins: Sequence[Any],
    node_local: frozenset[str],
) -> ClassPlan | None:
    """This cycle's plan, or None when an active non-local Filter plugin cannot name an equivalence key."""
    signature = state.pod_signature
    if signature is None:
        return None
    skipped = state.skip_filter_plugins
    others = [p for p in filter_plugins if p.name not in skipped and p.name not in node_local]
    if len(others) > 1:
        return None  # one non-local plugin takes part at most (DynamicResources is the only one)
    plugin = others[0] if others else None
    key: Hashable = None
    if plugin is not None:
        equivalence_key = getattr(plugin, "equivalence_key", None)
        key = equivalence_key(state) if equivalence_key is not None else None
        if key is None:
            return None
    table = cache.table((signature, frozenset(skipped), plugin.name if plugin is not None else "", key))
    return ClassPlan(cache, table, plugin, state)
