"""Queueing hints: deciding whether a cluster event may make a rejected pod schedulable.

Each plugin registers the cluster events that could undo its rejection, each
with an optional hint function. When an event arrives, only the hints of the
plugins that rejected (or parked as Pending) a given pod run, and their verdicts
combine exactly as in kube-scheduler 1.31's ``isPodWorthRequeuing``:

* no rejector plugins (the attempt failed with an error) → retry after backoff;
* a wildcard event (the 5-minute unschedulable timeout) → retry after backoff;
* a Pending plugin saying Queue → retry immediately (skipping backoff);
* an Unschedulable plugin saying Queue → retry after backoff;
* every relevant hint saying QueueSkip, or no matching registration → stay.

A hint that raises counts as Queue, so a buggy hint cannot strand a pod.

Event narrowing: an event is offered to every unschedulable pod, which costs
one hint call per pod. A plugin that can tell, from the event alone, the only
pods for which its hints could answer Queue implements
``narrow_event(event, old, new) -> keys | None`` (``None``: cannot tell). When
every plugin registered for an event narrows it, the queue asks only those
pods; every other pod would have been answered QueueSkip, so the outcome is
the same.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from services.scheduler.cluster_events import ClusterEvent
from services.scheduler.framework import (
    ClusterEventWithHint,
    EnqueueExtensions,
    Obj,
    Pod,
    QueueingHint,
    QueueingHintFn,
)

log = logging.getLogger(__name__)


class QueueingStrategy(IntEnum):
    """Where a pod goes after an event: stay, backoff-then-active, or active right away."""

    QUEUE_SKIP = 0
    QUEUE_AFTER_BACKOFF = 1
    QUEUE_IMMEDIATELY = 2


@dataclass(frozen=True, slots=True)
class QueueingHintFunction:
    plugin_name: str
    hint: QueueingHintFn


def default_queueing_hint(pod: Pod, old: Obj | None, new: Obj | None) -> QueueingHint:
    """Used when a plugin registers an event without a hint: always Queue."""
    return QueueingHint.QUEUE


class QueueingHintMap:
    """Registered events of one profile, each with the hint functions of its plugins."""

    def __init__(self) -> None:
        self._entries: list[tuple[ClusterEvent, list[QueueingHintFunction]]] = []
        self._index: dict[tuple[str, int], int] = {}
        # event key -> the hint functions of every matching registration, in registration order.
        # Events are offered to every unschedulable pod, so matching once per event kind matters.
        self._matching: dict[tuple[str, int], tuple[QueueingHintFunction, ...]] = {}
        # plugin name -> its ``narrow_event`` (see EventNarrowing)
        self._narrowers: dict[str, Callable[[ClusterEvent, Obj | None, Obj | None], Collection[str] | None]] = {}

    @classmethod
    def from_plugins(cls, plugins: Iterable[Any]) -> QueueingHintMap:
        """Collect ``events_to_register`` of every plugin that has it.

        Plugins without EnqueueExtensions are simply not registered here; a pod
        they reject is only moved by wildcard events (as with kube's plugins that
        return no events).
        """
        hint_map = cls()
        for plugin in plugins:
            if isinstance(plugin, EnqueueExtensions):
                for registration in plugin.events_to_register():
                    hint_map.register(plugin.name, registration)
                narrow = getattr(plugin, "narrow_event", None)
                if callable(narrow):
                    hint_map._narrowers[plugin.name] = narrow
        return hint_map

    def register(self, plugin_name: str, registration: ClusterEventWithHint) -> None:
        event = registration.event
        fn = registration.hint or default_queueing_hint
        key = event.key()
        if key not in self._index:
            self._index[key] = len(self._entries)
            self._entries.append((ClusterEvent(event.resource, event.action_type), []))
        self._entries[self._index[key]][1].append(QueueingHintFunction(plugin_name, fn))
        self._matching.clear()

    def matching(self, event: ClusterEvent) -> tuple[QueueingHintFunction, ...]:
        """The hint functions of all registrations matching ``event`` (remembered per event kind)."""
        key = (event.resource, int(event.action_type))
        found = self._matching.get(key)
        if found is None:
            found = tuple(fn for registered, fns in self._entries if registered.matches(event) for fn in fns)
            self._matching[key] = found
        return found

    def entries(self) -> list[tuple[ClusterEvent, list[QueueingHintFunction]]]:
        return self._entries

    def narrow(self, event: ClusterEvent, old: Obj | None, new: Obj | None) -> set[str] | None:
        """Keys (``namespace/name``) of the only pods whose hints could say Queue for this event, or None.

        Only when every plugin registered for the event can narrow it (see
        ``EventNarrowing``); otherwise every unschedulable pod must be asked.
        """
        if event.is_wildcard():
            return None
        fns = self.matching(event)
        keys: set[str] = set()
        for plugin in {fn.plugin_name for fn in fns}:
            narrow = self._narrowers.get(plugin)
            if narrow is None:
                return None
            found = narrow(event, old, new)
            if found is None:
                return None
            keys.update(found)
        return keys

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        if event.is_wildcard():
            return True
        return bool(self.matching(event))

    def plugins_for(self, event: ClusterEvent) -> set[str]:
        """Names of plugins with a registration matching ``event`` (for tests and explain)."""
        return {fn.plugin_name for registered, fns in self._entries if registered.matches(event) for fn in fns}


def run_hint(fn: QueueingHintFunction, pod: Pod, old: Obj | None, new: Obj | None, event: ClusterEvent) -> QueueingHint:
    try:
        return QueueingHint(fn.hint(pod, old, new))
    except Exception:  # a failing hint must not strand the pod
        log.exception("QueueingHintFn returns error: event=%s plugin=%s", event, fn.plugin_name)
        return QueueingHint.QUEUE


def is_pod_worth_requeuing(
    hint_map: QueueingHintMap | None,
    *,
    pod: Pod,
    unschedulable_plugins: Mapping[str, Any] | set[str] | frozenset[str],
    pending_plugins: Mapping[str, Any] | set[str] | frozenset[str],
    event: ClusterEvent,
    old: Obj | None,
    new: Obj | None,
) -> QueueingStrategy:
    """kube-scheduler 1.31's isPodWorthRequeuing, as a pure function."""
    if not unschedulable_plugins and not pending_plugins:
        return QueueingStrategy.QUEUE_AFTER_BACKOFF
    if event.is_wildcard():
        return QueueingStrategy.QUEUE_AFTER_BACKOFF
    if hint_map is None:
        return QueueingStrategy.QUEUE_AFTER_BACKOFF

    strategy = QueueingStrategy.QUEUE_SKIP
    for fn in hint_map.matching(event):
        if fn.plugin_name not in unschedulable_plugins and fn.plugin_name not in pending_plugins:
            continue
        if run_hint(fn, pod, old, new, event) == QueueingHint.QUEUE_SKIP:
            continue
        if fn.plugin_name in pending_plugins:
            return QueueingStrategy.QUEUE_IMMEDIATELY
        if not pending_plugins:
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        strategy = QueueingStrategy.QUEUE_AFTER_BACKOFF
    return strategy
