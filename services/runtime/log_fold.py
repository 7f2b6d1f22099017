"""The fold of ``objects`` records into state: one record read, one change applied.

Why this module exists: everything that rebuilds objects from the log — the
informers, ``draplane replay``'s point-in-time state and its scheduler replay —
must read a record the same way, or a replayed state differs from what the
live components saw. The rules, once:

- a tombstone (no value) changes nothing: the DELETED record before it did the work;
- the key names group, resource, namespace and name (`topics.envelope.split_key`);
- ADDED and MODIFIED put the object under its key, DELETED removes it (the
  record carries the last state);
- ``metadata.resourceVersion`` is stamped from the record's offset, never
  trusted from the payload;
- a resource.k8s.io object a pre-hub log holds (stamped v1alpha3) is read as
  today's storage form (`conversion.upgrade_stored`: its slices' capacity
  wrapped), so old logs load unchanged in everything else;
- a malformed record raises `MalformedRecord`; the caller logs, counts and
  skips it (each caller reports in its own way).

`read_change` is the pure read; `fold` applies a change to plain dicts (the
informer's indexed stores do the same put/pop with their indexes).
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any, NamedTuple

from services.api.machinery.conversion import upgrade_stored
from services.bus.port import Record
from topics.envelope import MalformedRecord, decode_event, split_key

Obj = dict[str, Any]
GroupResource = tuple[str, str]
Tables = dict[GroupResource, dict[tuple[str, str], Obj]]

__all__ = ["GroupResource", "MalformedRecord", "ObjectChange", "Tables", "fold", "read_change"]


class ObjectChange(NamedTuple):
    """One ``objects`` record, read: what happened to which object, with resourceVersion stamped."""

    type: str  # ADDED, MODIFIED or DELETED
    key: str  # the log key: group/resource/namespace/name
    group: str
    resource: str
    namespace: str
    name: str
    obj: Obj
    request_id: str | None

    @property
    def deleted(self) -> bool:
        return self.type == "DELETED"


def read_change(record: Record, *, kinds: Container[GroupResource] | None = None) -> ObjectChange | None:
    """The change a record makes; None for a tombstone or a resource not in ``kinds`` (not decoded then).

    Raises `MalformedRecord` for a key or value that cannot be read.
    """
    value = record.value
    if value is None:
        return None
    try:
        key = (record.key or b"").decode()
    except UnicodeDecodeError as exc:
        raise MalformedRecord(str(exc)) from exc
    group, resource, namespace, name = split_key(key)
    if kinds is not None and (group, resource) not in kinds:
        return None
    type_, obj, request_id = decode_event(value)
    if group:
        obj = upgrade_stored(obj)
    obj["metadata"]["resourceVersion"] = str(record.offset)
    return ObjectChange(type_, key, group, resource, namespace, name, obj, request_id)


def fold(tables: Tables, change: ObjectChange) -> Obj | None:
    """Apply ``change`` to per-resource tables of objects by (namespace, name); the object it replaced or removed."""
    table = tables.setdefault((change.group, change.resource), {})
    key = (change.namespace, change.name)
    if change.deleted:
        return table.pop(key, None)
    old = table.get(key)
    table[key] = change.obj
    return old
