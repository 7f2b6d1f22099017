"""Point-in-time state: the objects of the log as they were at an offset, as a pure fold.

``draplane replay --at OFFSET|TIME get ...`` answers "what did ``kubectl get``
show then?". The log is the history, so the answer is a left fold of its
records from the beginning up to that point, the same fold an informer does
(`services.runtime.log_fold`): ADDED and MODIFIED put the object under its
key, DELETED removes it (the record carries the last state), a tombstone
changes nothing. resourceVersion is stamped from the record's offset.

This module holds the fold and nothing that waits or reads: `ObjectState`
takes `services.bus.port.Record` values one by one, so it is tested with
hand-made records; `services.replay.rebuild` feeds it through the bus port.

Where the point falls is decided here too (`Stop`): an offset is inclusive
(the state *after* the record at that offset, i.e. as a read at that
resourceVersion would see it), and so is a time (every record appended at or
before it).
"""

from __future__ import annotations

import builtins
from collections.abc import Container, Iterable
from dataclasses import dataclass

from services.bus.port import Record
from services.runtime.log_fold import GroupResource, MalformedRecord, Obj, Tables, fold, read_change


@dataclass(frozen=True, slots=True)
class Stop:
    """Where a fold stops: after the record at ``offset``, or after the last record at or before ``time_ms``.

    Both None: at the end of the log.
    """

    offset: int | None = None
    time_ms: int | None = None

    def before(self, record: Record) -> bool:
        """Whether ``record`` belongs to the state at this point."""
        if self.offset is not None and record.offset > self.offset:
            return False
        return self.time_ms is None or record.timestamp_ms <= self.time_ms


@dataclass(frozen=True, slots=True)
class Skipped:
    """A record the fold could not read (logged and counted by the caller)."""

    offset: int
    error: str


class ObjectState:
    """The latest object per key up to some point: a fold over ``objects`` (or ``events``) records.

    ``kinds`` limits what is kept to some (group, plural) pairs, so a fold for
    ``get pods`` neither decodes nor holds anything else; None keeps everything.
    """

    def __init__(self, *, kinds: Container[GroupResource] | None = None) -> None:
        self._kinds = kinds
        self._objects: Tables = {}
        self.last_offset: int | None = None  # the last record folded in (any key): the state's resourceVersion
        self.last_timestamp_ms: int | None = None
        self.records = 0  # records folded in, tombstones and skipped ones included
        self.skipped: list[Skipped] = []

    def apply(self, record: Record) -> None:
        """Fold one record in; records must come in log order."""
        self.records += 1
        self.last_offset = record.offset
        self.last_timestamp_ms = record.timestamp_ms
        try:
            change = read_change(record, kinds=self._kinds)
        except MalformedRecord as exc:
            self.skipped.append(Skipped(record.offset, str(exc)))
            return
        if change is not None:
            fold(self._objects, change)

    def fold(self, records: Iterable[Record], stop: Stop | None = None) -> bool:
        """Apply records until one lies past ``stop``; False once one did (the fold is complete)."""
        for record in records:
            if stop is not None and not stop.before(record):
                return False
            self.apply(record)
        return True

    def get(self, group: str, resource: str, namespace: str, name: str) -> Obj | None:
        return self._objects.get((group, resource), {}).get((namespace, name))

    def list(self, group: str, resource: str, namespace: str | None = None) -> builtins.list[Obj]:
        """Objects of one resource (of one namespace when given), sorted as kubectl lists them."""
        items = self._objects.get((group, resource), {})
        keys = sorted(k for k in items if namespace is None or k[0] == namespace)
        return [items[k] for k in keys]

    def kinds(self) -> builtins.list[GroupResource]:
        return sorted(k for k, items in self._objects.items() if items)
