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
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
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
        return hint_map

    def register(self, plugin_name: str, registration: ClusterEventWithHint) -> None:
        event = registration.event
        fn = registration.hint or default_queueing_hint
        key = event.key()
        if key not in self._index:
            self._index[key] = len(self._entries)
            self._entries.append((ClusterEvent(event.resource, event.action_type), []))
        self._entries[self._index[key]][1].append(QueueingHintFunction(plugin_name, fn))

    def entries(self) -> list[tuple[ClusterEvent, list[QueueingHintFunction]]]:
        return self._entries

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        if event.is_wildcard():
            return True
        return any(registered.matches(event) for registered, _ in self._entries)

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
    rejectors = set(unschedulable_plugins) | set(pending_plugins)
    if not rejectors:
        return QueueingStrategy.QUEUE_AFTER_BACKOFF
    if event.is_wildcard():
        return QueueingStrategy.QUEUE_AFTER_BACKOFF
    if hint_map is None:
        return QueueingStrategy.QUEUE_AFTER_BACKOFF

    strategy = QueueingStrategy.QUEUE_SKIP
    for registered, fns in hint_map.entries():
        if not registered.matches(event):
            continue
        for fn in fns:
            if fn.plugin_name not in rejectors:
                continue
            if run_hint(fn, pod, old, new, event) == QueueingHint.QUEUE_SKIP:
                continue
            if fn.plugin_name in pending_plugins:
                return QueueingStrategy.QUEUE_IMMEDIATELY
            if not pending_plugins:
                return QueueingStrategy.QUEUE_AFTER_BACKOFF
            strategy = QueueingStrategy.QUEUE_AFTER_BACKOFF
    return strategy
