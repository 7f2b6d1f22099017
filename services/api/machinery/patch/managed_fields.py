"""``metadata.managedFields``: who owns which fields, and how ordinary writes update it.

Every write through the API records its manager, as the kube-apiserver's
field manager (``k8s.io/apimachinery/pkg/util/managedfields``) does:

- `decode_managed_fields` / `encode_managed_fields` convert between the wire
  entries (``manager``, ``operation``, ``apiVersion``, ``time``,
  ``fieldsType: FieldsV1``, ``fieldsV1``, ``subresource``) and per-manager
  `FieldSet`\\ s. Managers are identified like Kubernetes does: by manager
  name, operation, subresource and, for ``Update`` only, API version. Entries
  are written sorted (``Apply`` before ``Update``, then oldest first).
- `track_update` is what a create, update or (non-apply) patch does: the
  fields it added or changed become owned by its ``Update`` manager and are
  taken from every other manager; fields it removed are removed from all.
  Metadata that identifies the object (name, uid, resourceVersion, ...) is
  never owned, and neither are the *reset fields* of the endpoint written
  through (``status`` through the main resource, ``spec`` through
  ``/status``). An update of an object that has no managed fields yet does not
  start tracking; a create always does. A request may replace the entries
  (an update that sends them) or clear them (``managedFields: []``). At most
  ten ``Update`` managers are kept: the oldest are folded into
  ``ancient-changes``.

Everything here is pure: the caller passes the time of the write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from services.api.machinery.patch.fieldpath import DeserializeError, FieldSet, dotted_path, make_path
from services.api.machinery.patch.gojson import json_string
from services.api.machinery.patch.patch_meta import KindSchema, SchemaNode, schema_for
from services.api.machinery.patch.typed import TypedError, compare, validate
from services.kube.times import parse_time, time_text

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"
BEFORE_FIRST_APPLY = "before-first-apply"
CURRENT_OPERATION = "current-operation"

# Fields never owned by anyone (stripMetaManager): exact paths, not subtrees.
STRIPPED = FieldSet(
    make_path(*p.split("."))
    for p in (
        "apiVersion",
        "kind",
        "metadata",
        "metadata.name",
        "metadata.namespace",
        "metadata.creationTimestamp",
        "metadata.selfLink",
        "metadata.uid",
        "metadata.clusterName",
        "metadata.generation",
        "metadata.managedFields",
        "metadata.resourceVersion",
    )
)


class ManagedFieldsError(ValueError):
    """``metadata.managedFields`` that do not decode."""


@dataclass(frozen=True, slots=True)
class VersionedSet:
    """A manager's owned fields, at the API version it wrote them with."""

    fields: FieldSet
    api_version: str
    applied: bool


@dataclass(slots=True)
class Managed:
    """Decoded managed fields: field sets and times, by manager identifier."""

    sets: dict[str, VersionedSet]
    times: dict[str, str | None]

    @classmethod
    def empty(cls) -> Managed:
        return cls({}, {})

    def copy(self) -> Managed:
        return Managed(dict(self.sets), dict(self.times))


def format_time(now: datetime | str) -> str:
    """``metav1.Time`` on the wire (`services.kube.times.time_text`); a string is taken as already written."""
    return now if isinstance(now, str) else time_text(now)


def _unix_seconds(value: str | None) -> int:
    parsed = parse_time(value)
    return 0 if parsed is None else int(parsed.timestamp())


def _normalize_time(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    parsed = parse_time(value)
    return value if parsed is None else time_text(parsed)


def manager_identifier(manager: str, operation: str, api_version: str = "", subresource: str = "") -> str:
    """The key Kubernetes groups ownership by (``BuildManagerIdentifier``): the entry minus fields and time.

    The API version is left out for ``Apply``, so an applier keeps one entry
    whatever version it applies with.
    """
    parts = []
    if manager:
        parts.append(f'"manager":{json_string(manager)}')
    if operation:
        parts.append(f'"operation":{json_string(operation)}')
    if api_version and operation != APPLY:
        parts.append(f'"apiVersion":{json_string(api_version)}')
    if subresource:
        parts.append(f'"subresource":{json_string(subresource)}')
    return "{" + ",".join(parts) + "}"


def parse_identifier(identifier: str) -> dict[str, str]:
    """Manager, operation, apiVersion and subresource from an identifier."""
    try:
        doc = orjson.loads(identifier)
    except orjson.JSONDecodeError:
        return {"manager": identifier}
    return {k: v for k, v in doc.items() if isinstance(v, str)} if isinstance(doc, dict) else {}


def decode_managed_fields(entries: Any) -> Managed:
    """Decode wire entries; raises `ManagedFieldsError` with Kubernetes' wording."""
    managed = Managed.empty()
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise ManagedFieldsError("managedFields must be a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ManagedFieldsError(f"managed fields entry {i} must be an object")
        operation = entry.get("operation")
        if operation not in (APPLY, UPDATE):
            raise ManagedFieldsError("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion")
        if not isinstance(api_version, str) or not api_version:
            raise ManagedFieldsError("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if fields_type != FIELDS_V1:
            if not fields_type:
                raise ManagedFieldsError(f"missing fieldsType in managed fields entry {i}")
            raise ManagedFieldsError(f'invalid fieldsType "{fields_type}" in managed fields entry {i}')
        manager = entry.get("manager") if isinstance(entry.get("manager"), str) else ""
        subresource = entry.get("subresource") if isinstance(entry.get("subresource"), str) else ""
        identifier = manager_identifier(manager or "", operation, api_version, subresource or "")
        try:
            fields = FieldSet.from_fields_v1(entry.get("fieldsV1") or {})
        except DeserializeError as exc:
            raise ManagedFieldsError(f"error decoding versioned set from {entry}: error decoding set: {exc}") from None
        managed.sets[identifier] = VersionedSet(fields, api_version, operation == APPLY)
        managed.times[identifier] = _normalize_time(entry.get("time"))
    return managed


def encode_managed_fields(managed: Managed) -> list[dict[str, Any]] | None:
    """Wire entries in Kubernetes' order, or None when nobody manages anything."""
    if not managed.sets:
        return None
    entries: list[dict[str, Any]] = []
    for identifier, vs in managed.sets.items():
        info = parse_identifier(identifier)
        entry: dict[str, Any] = {}
        if info.get("manager"):
            entry["manager"] = info["manager"]
        entry["operation"] = APPLY if vs.applied else info.get("operation", UPDATE)
        entry["apiVersion"] = vs.api_version
        when = managed.times.get(identifier)
        if when:
            entry["time"] = when
        entry["fieldsType"] = FIELDS_V1
        entry["fieldsV1"] = vs.fields.to_fields_v1()
        if info.get("subresource"):
            entry["subresource"] = info["subresource"]
        entries.append(entry)
    entries.sort(
        key=lambda e: (
            e["operation"],
            _unix_seconds(e.get("time")),
            e.get("manager", ""),
            e["apiVersion"],
            e.get("subresource", ""),
        )
    )
    return entries


def set_managed_fields(obj: dict[str, Any], managed: Managed) -> dict[str, Any]:
    """``obj`` with its ``metadata.managedFields`` replaced by ``managed`` (removed when empty)."""
    out = dict(obj)
    metadata = dict(out.get("metadata") or {})
    encoded = encode_managed_fields(managed)
    if encoded is None:
        metadata.pop("managedFields", None)
    else:
        metadata["managedFields"] = encoded
    out["metadata"] = metadata
    return out


def ignored_fields(schema: KindSchema | None, subresource: str) -> FieldSet:
    """The reset fields of an endpoint as a field set."""
    if schema is None:
        return FieldSet()
    return FieldSet(dotted_path(p) for p in schema.reset_fields(subresource))


def schema_of(obj: Mapping[str, Any]) -> KindSchema | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if isinstance(api_version, str) and isinstance(kind, str):
        return schema_for(api_version, kind)
    return None


_NO_SCHEMA = SchemaNode()


# ---------------------------------------------------------------- the Update operation


def _is_reset(entries: Any) -> bool:
    """``managedFields: []`` or ``[{}]`` in a request clears the managed fields."""
    if isinstance(entries, list):
        return len(entries) == 0 or (len(entries) == 1 and entries[0] == {})
    return False


def _decode_or_empty(entries: Any) -> Managed:
    try:
        return decode_managed_fields(entries)
    except ManagedFieldsError:
        return Managed.empty()


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def track_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    api_version: str,
    now: datetime | str,
    subresource: str = "",
) -> dict[str, Any]:
    """``new`` with ``metadata.managedFields`` updated for a create/update/patch by ``manager``.

    ``old`` is the stored object (None for a create); ``new`` is the object
    about to be stored, after the patch or the request body was applied.
    ``api_version`` is the group/version of the request; ``subresource`` the
    endpoint written through (``""`` or ``"status"``).
    """
    schema = schema_of(new) or (schema_of(old) if old is not None else None)
    live = old if old is not None else (schema.zero_object() if schema else {})
    if subresource:
        managed = _decode_or_empty(_metadata(live).get("managedFields"))
    elif _is_reset(_metadata(new).get("managedFields")):
        managed = Managed.empty()
    else:
        try:
            managed = decode_managed_fields(_metadata(new).get("managedFields"))
        except ManagedFieldsError:
            managed = Managed.empty()
        if not managed.sets:
            managed = _decode_or_empty(_metadata(live).get("managedFields"))
    obj = dict(new)
    obj["metadata"] = {k: v for k, v in _metadata(new).items() if k != "managedFields"}
    if not managed.sets and _metadata(live).get("uid"):
        # an existing object nobody tracks: Kubernetes does not start on update
        return obj
    try:
        managed = update_managed(
            live,
            obj,
            managed,
            manager=manager,
            api_version=api_version,
            now=format_time(now),
            subresource=subresource,
            schema=schema,
        )
    except TypedError:
        return obj  # UpdateNoErrors: never fail the write, drop the managed fields instead
    return set_managed_fields(obj, managed)


def update_managed(
    live: dict[str, Any],
    new: dict[str, Any],
    managed: Managed,
    *,
    manager: str,
    api_version: str,
    now: str,
    subresource: str,
    schema: KindSchema | None,
) -> Managed:
    """The ``Update`` chain below ``skipNonApplied``: identify, track, strip, cap."""
    managed = managed.copy()
    root = schema.root if schema else _NO_SCHEMA
    identifier = manager_identifier(manager or "unknown", UPDATE, api_version, subresource)
    sets = structured_update(
        live, new, root, api_version, managed.sets, CURRENT_OPERATION, ignored_fields(schema, subresource)
    )
    strip_meta(sets, CURRENT_OPERATION)
    current = sets.pop(CURRENT_OPERATION, None)
    if current is not None:
        previous = sets.get(identifier)
        fields = current.fields.union(previous.fields) if previous else current.fields
        sets[identifier] = VersionedSet(fields, current.api_version, current.applied)
        managed.times[identifier] = now
    managed.sets = sets
    cap_update_managers(managed)
    return managed


def strip_meta(sets: dict[str, VersionedSet], identifier: str) -> None:
    """Drop the fields nobody may own (identity metadata) from one manager's set."""
    vs = sets.get(identifier)
    if vs is None:
        return
    stripped = vs.fields.difference(STRIPPED)
    if stripped.empty():
        del sets[identifier]
    else:
        sets[identifier] = VersionedSet(stripped, vs.api_version, vs.applied)


class Conflicts(Exception):
    """Apply conflicts: (manager identifier, path) pairs."""

    def __init__(self, conflicts: dict[str, FieldSet]) -> None:
        super().__init__("apply conflicts")
        self.by_manager = conflicts


def update_sets(
    live: Any,
    new: Any,
    root: SchemaNode,
    sets: Mapping[str, VersionedSet],
    workflow: str,
    *,
    force: bool,
    ignored: FieldSet,
) -> tuple[dict[str, VersionedSet], tuple[FieldSet, FieldSet, FieldSet]]:
    """``merge.Updater.update``: take changed fields from the other managers, or report conflicts."""
    validate(live, root, allow_duplicates=True)
    validate(new, root, allow_duplicates=True)
    removed, modified, added = compare(live, new, root).sets()
    removed = removed.recursive_difference(ignored)
    modified = modified.recursive_difference(ignored)
    added = added.recursive_difference(ignored)
    changed = modified.union(added)
    out = dict(sets)
    conflicts: dict[str, FieldSet] = {}
    for identifier, vs in sets.items():
        if identifier == workflow:
            continue
        conflict = vs.fields.intersection(changed)
        if conflict:
            conflicts[identifier] = conflict
    if conflicts and not force:
        raise Conflicts(conflicts)
    for identifier, vs in sets.items():
        if identifier == workflow:
            continue
        fields = vs.fields.difference(conflicts.get(identifier, FieldSet())).difference(removed)
        out[identifier] = VersionedSet(fields, vs.api_version, vs.applied)
    for identifier in [i for i, vs in out.items() if vs.fields.empty()]:
        del out[identifier]
    return out, (removed, modified, added)


def structured_update(
    live: Any,
    new: Any,
    root: SchemaNode,
    api_version: str,
    sets: Mapping[str, VersionedSet],
    identifier: str,
    ignored: FieldSet,
) -> dict[str, VersionedSet]:
    """``merge.Updater.Update``: the writer owns what it added or changed."""
    out, (removed, modified, added) = update_sets(live, new, root, sets, identifier, force=True, ignored=ignored)
    previous = out.get(identifier)
    fields = previous.fields if previous else FieldSet()
    fields = fields.difference(removed).union(modified).union(added).recursive_difference(ignored)
    if fields.empty():
        out.pop(identifier, None)
    else:
        out[identifier] = VersionedSet(fields, api_version, False)
    return out


def cap_update_managers(managed: Managed, limit: int = MAX_UPDATE_MANAGERS) -> None:
    """Fold the oldest ``Update`` entries into ``ancient-changes`` until at most ``limit`` remain."""
    updaters = [i for i, vs in managed.sets.items() if not vs.applied]
    if len(updaters) <= limit:
        return
    updaters.sort(key=lambda i: (_unix_seconds(managed.times.get(i)), i))
    first_by_version: dict[str, str] = {}
    length = len(updaters)
    for identifier in updaters:
        if length <= limit:
            break
        vs = managed.sets[identifier]
        when = managed.times.get(identifier)
        bucket = manager_identifier(ANCIENT_CHANGES, UPDATE, vs.api_version)
        first = first_by_version.get(vs.api_version)
        if first is None:
            first_by_version[vs.api_version] = identifier
            continue
        if bucket not in managed.sets:
            managed.sets[bucket] = managed.sets.pop(first)
        merged = vs.fields.union(managed.sets[bucket].fields)
        managed.sets[bucket] = VersionedSet(merged, vs.api_version, vs.applied)
        del managed.sets[identifier]
        length -= 1
        managed.times[bucket] = when

