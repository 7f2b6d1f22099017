"""Server-side apply (``application/apply-patch+yaml``).

An apply sends the fields a manager wants to own, with the values it wants
them to have. The kube-apiserver (``managedfields`` over
``structured-merge-diff``) then:

1. merges the configuration into the live object (map lists by key, sets by
   value, atomic lists and structs replaced);
2. records the configuration's fields as the manager's ``Apply`` set;
3. removes fields the manager applied last time and no longer applies, unless
   another manager owns them;
4. refuses, with a 409 listing every field, to change a field another
   manager owns, unless ``force`` is set, in which case it takes the field
   from that manager.

Compatibility paths kept from Kubernetes:

- an object with no managed fields first gets its existing fields recorded
  as ``before-first-apply`` (an ``Update`` entry);
- for the manager ``kubectl`` (``kubectl apply --server-side``), conflicts
  with fields whose live value still matches the client-side
  ``last-applied-configuration`` annotation are forced, so switching from
  client-side to server-side apply does not conflict; and when that
  annotation exists it is rewritten from the applied configuration.

A missing object is created from the configuration (``live=None``). The
result is the object to store, with its ``metadata.managedFields``; the
caller still validates it, resets the fields the endpoint cannot change and
fills in server-set metadata.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

import orjson
import yaml

from services.api.machinery.patch import errors
from services.api.machinery.patch.fieldpath import FieldSet, path_string
from services.api.machinery.patch.gojson import go_quote, json_dumps, json_kind
from services.api.machinery.patch.managed_fields import (
    APPLY,
    BEFORE_FIRST_APPLY,
    Conflicts,
    Managed,
    ManagedFieldsError,
    VersionedSet,
    decode_managed_fields,
    format_time,
    ignored_fields,
    manager_identifier,
    parse_identifier,
    set_managed_fields,
    strip_meta,
    update_managed,
    update_sets,
)
from services.api.machinery.patch.patch_meta import KindSchema, SchemaNode, schema_for
from services.api.machinery.patch.typed import (
    TypedError,
    compare,
    drop_nulls,
    merge,
    remove_items,
    to_field_set,
    validate,
    values_equal,
)
from services.api.machinery.status import StatusError, make_status
from services.kube.schema import parse_group_version

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
KUBECTL_MANAGER = "kubectl"


# ---------------------------------------------------------------- the body


class _GoYAMLLoader(yaml.SafeLoader):
    """YAML as sigs.k8s.io/yaml reads it: timestamps stay strings."""


_GoYAMLLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _stringify_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_key(k): _stringify_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stringify_keys(v) for v in value]
    return value


def _key(k: Any) -> str:
    if isinstance(k, bool):
        return "true" if k else "false"
    return k if isinstance(k, str) else str(k)


def parse_apply_patch(body: bytes | str) -> dict[str, Any]:
    """Decode an apply body (YAML or JSON) into an object; a 400 ``error decoding YAML`` otherwise."""
    raw = body.encode() if isinstance(body, str) else body
    doc: Any
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            doc = _stringify_keys(yaml.load(raw.decode("utf-8"), Loader=_GoYAMLLoader))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise errors.bad_request(f"error decoding YAML: {_yaml_message(exc)}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise errors.bad_request(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: "
            f"json: cannot unmarshal {json_kind(doc)} into Go value of type map[string]interface {{}}"
        )
    return doc


def _yaml_message(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"error converting YAML to JSON: yaml: line {mark.line + 1}: {problem}"
    return f"error converting YAML to JSON: yaml: {problem}"


# ---------------------------------------------------------------- messages


def gvk_string(api_version: Any, kind: Any) -> str:
    """``schema.GroupVersionKind.String()``: ``/v1, Kind=Pod``, ``resource.k8s.io/v1alpha3, Kind=X``."""
    group, version = parse_group_version(api_version if isinstance(api_version, str) else "") or ("", "")
    return f"{group}/{version}, Kind={kind if isinstance(kind, str) else ''}"


def _object_gvknn(obj: dict[str, Any], api_version: str, kind: str) -> str:
    meta = _metadata(obj)
    return f"{meta.get('namespace', '') or ''}/{meta.get('name', '') or ''}; {gvk_string(api_version, kind)}"


def print_manager(identifier: str) -> str:
    """How a manager is named in conflicts: ``"kubectl"`` or ``"kube-controller" using v1``."""
    info = parse_identifier(identifier)
    text = go_quote(info.get("manager", ""))
    if info.get("subresource"):
        text = f"{text} with subresource {go_quote(info['subresource'])}"
    if info.get("operation") == "Update":
        return f"{text} using {info.get('apiVersion', '')}"
    return text


def conflict_error(conflicts: Conflicts) -> StatusError:
    """The 409 of a conflicting apply, with a ``FieldManagerConflict`` cause per field."""
    pairs = [(mid, path) for mid in sorted(conflicts.by_manager) for path in conflicts.by_manager[mid]]
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {print_manager(mid)}", "field": path_string(p)}
        for mid, p in pairs
    ]
    if len(pairs) == 1:
        mid, path = pairs[0]
        message = f"Apply failed with 1 conflict: conflict with {print_manager(mid)}: {path_string(path)}"
    else:
        lines: list[str] = []
        for mid in sorted(conflicts.by_manager):
            lines.append(f"conflicts with {print_manager(mid)}:")
            lines.extend(f"- {path_string(p)}" for p in conflicts.by_manager[mid])
        message = f"Apply failed with {len(pairs)} conflicts: " + "\n".join(lines)
    return StatusError(make_status(409, "Conflict", message, {"causes": causes}))


# ---------------------------------------------------------------- apply


def server_side_apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    api_version: str,
    kind: str,
    now: datetime | str,
    subresource: str = "",
) -> dict[str, Any]:
    """Apply ``applied`` for ``manager`` to ``live`` (None: create) and return the object to store.

    ``api_version``/``kind`` are those of the endpoint. Raises `StatusError`:
    409 on conflicts, 400 for a configuration of another kind, one that
    sets ``managedFields`` or one that is structurally invalid (duplicate or
    missing map-list keys; Kubernetes answers 500 for that last one), 500 when
    the live object itself is.
    """
    schema = schema_for(api_version, kind)
    live_obj = copy.deepcopy(live) if live is not None else (schema.zero_object() if schema else {})
    try:
        managed = decode_managed_fields(_metadata(live_obj).get("managedFields"))
    except ManagedFieldsError as exc:
        raise errors.unknown_error(f"failed to decode managed fields: {exc}") from None
    applied_gvk = gvk_string(applied.get("apiVersion"), applied.get("kind"))
    if applied_gvk != gvk_string(api_version, kind):
        raise errors.bad_request(f"invalid object type: {applied_gvk}")
    if applied.get("metadata") is not None and not isinstance(applied["metadata"], dict):
        # The typed conversion refuses it in Kubernetes; here nothing else would before managed fields.
        where = _object_gvknn(applied, api_version, kind)
        got = json_kind(applied["metadata"])
        raise errors.bad_request(f"failed to create typed patch object ({where}): .metadata: expected map, got {got}")
    run = _Apply(schema, api_version, kind, manager, format_time(now), subresource)
    try:
        result, managed = run.with_last_applied(live_obj, applied, managed, force)
    except Conflicts as exc:
        raise conflict_error(exc) from None
    if manager == KUBECTL_MANAGER and _has_last_applied(result):
        result = _set_last_applied(result, build_last_applied(applied))
    return _type_meta_first(drop_nulls(set_managed_fields(result, managed)))


def _type_meta_first(obj: dict[str, Any]) -> dict[str, Any]:
    """``apiVersion``, ``kind``, ``metadata`` first, as Kubernetes serializes objects."""
    head: dict[str, Any] = {k: obj[k] for k in ("apiVersion", "kind", "metadata") if k in obj}
    head.update((k, v) for k, v in obj.items() if k not in head)
    return head


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


class _Apply:
    """One apply request; the layers of Kubernetes' apply chain as methods."""

    def __init__(
        self, schema: KindSchema | None, api_version: str, kind: str, manager: str, now: str, subresource: str
    ) -> None:
        self.schema = schema
        self.root = schema.root if schema else SchemaNode()
        self.api_version = api_version
        self.kind = kind
        self.manager = manager
        self.now = now
        self.subresource = subresource
        self.ignored = ignored_fields(schema, subresource)

    def with_last_applied(
        self, live: dict[str, Any], applied: dict[str, Any], managed: Managed, force: bool
    ) -> tuple[dict[str, Any], Managed]:
        """``lastAppliedManager``: conflicts kubectl's client-side apply explains are not conflicts."""
        try:
            return self.apply(live, applied, managed, force)
        except Conflicts as exc:
            if self.manager != KUBECTL_MANAGER:
                raise
            allowed = self._allowed_from_last_applied(live)
            if allowed is None:
                raise
            remaining = {
                mid: FieldSet(p for p in fields.paths if not allowed.has(p))
                for mid, fields in exc.by_manager.items()
            }
            remaining = {mid: fields for mid, fields in remaining.items() if fields}
            if remaining:
                raise Conflicts(remaining) from None
            return self.apply(live, applied, managed, True)

    def _allowed_from_last_applied(self, live: dict[str, Any]) -> FieldSet | None:
        annotations = _metadata(live).get("annotations")
        text = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
        if not isinstance(text, str) or not text:
            return None
        try:
            last = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(last, dict) or last.get("apiVersion") != self.api_version:
            return None
        try:
            validate(live, self.root, allow_duplicates=False)
            validate(last, self.root, allow_duplicates=False)
        except TypedError:
            return None
        removed, modified, added = compare(last, live, self.root).sets()
        return to_field_set(last, self.root).difference(modified).difference(added).difference(removed)

    def apply(
        self, live: dict[str, Any], applied: dict[str, Any], managed: Managed, force: bool
    ) -> tuple[dict[str, Any], Managed]:
        """``skipNonApplied`` down to ``structuredMerge``."""
        managed = managed.copy()
        if not managed.sets:
            zero = self.schema.zero_object() if self.schema else {}
            managed = update_managed(
                zero,
                live,
                managed,
                manager=BEFORE_FIRST_APPLY,
                api_version=self.api_version,
                now=self.now,
                subresource=self.subresource,
                schema=self.schema,
            )
        identifier = manager_identifier(self.manager, APPLY, subresource=self.subresource)
        if _metadata(applied).get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        try:
            validate(applied, self.root, allow_duplicates=False)
        except TypedError as exc:
            where = _object_gvknn(applied, str(applied.get("apiVersion", "")), str(applied.get("kind", "")))
            # 500 in Kubernetes 1.31 (kubernetes/kubernetes#139253); the configuration is
            # the client's error, so 400 with the same message.
            raise errors.bad_request(f"failed to create typed patch object ({where}): {exc}") from None
        try:
            validate(live, self.root, allow_duplicates=True)
        except TypedError as exc:
            where = _object_gvknn(live, self.api_version, self.kind)
            raise errors.unknown_error(f"failed to create typed live object ({where}): {exc}") from None
        merged = merge(live, applied, self.root)
        last = managed.sets.get(identifier)
        sets = dict(managed.sets)
        sets[identifier] = VersionedSet(
            to_field_set(applied, self.root).recursive_difference(self.ignored), self.api_version, True
        )
        merged = self._prune(merged, sets, last)
        try:
            sets, _ = update_sets(live, merged, self.root, sets, identifier, force=force, ignored=self.ignored)
        except TypedError as exc:
            raise errors.unknown_error(f"failed to update ManagedFields: {exc}") from None
        strip_meta(sets, identifier)
        managed.sets = sets
        if values_equal(live, merged):
            result = {**live, "metadata": {k: v for k, v in _metadata(live).items() if k != "managedFields"}}
            return result, managed
        managed.times[identifier] = self.now
        return merged, managed

    def _prune(
        self, merged: dict[str, Any], sets: dict[str, VersionedSet], last: VersionedSet | None
    ) -> dict[str, Any]:
        """Remove what the applier dropped from its configuration and nobody else owns."""
        if last is None or last.fields.empty():
            return merged
        root = self.root
        last_set = last.fields.ensure_named_fields_are_members()
        pruned = remove_items(merged, last_set, root)
        owned = FieldSet()
        for vs in sets.values():
            owned = owned.union(vs.fields)
        merged_set = to_field_set(merged, root).ensure_named_fields_are_members()
        pruned_set = to_field_set(pruned, root).ensure_named_fields_are_members()
        unowned = merged_set.difference(pruned_set.union(owned.ensure_named_fields_are_members()))
        pruned = remove_items(merged, unowned, root)
        pruned_set = to_field_set(pruned, root).ensure_named_fields_are_members()
        return remove_items(merged, merged_set.difference(pruned_set).intersection(last_set), root)


# ---------------------------------------------------------------- last-applied annotation


def build_last_applied(applied: dict[str, Any]) -> str:
    """The annotation value for an applied configuration: Go's JSON of it, without the annotation itself."""
    obj = copy.deepcopy(applied)
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "annotations" in meta:
        annotations = meta["annotations"]
        if isinstance(annotations, dict):
            annotations.pop(LAST_APPLIED, None)
        else:
            del meta["annotations"]
    return json_dumps(obj) + "\n"


def _has_last_applied(obj: dict[str, Any]) -> bool:
    annotations = _metadata(obj).get("annotations")
    return isinstance(annotations, dict) and bool(annotations.get(LAST_APPLIED))


def _set_last_applied(obj: dict[str, Any], value: str) -> dict[str, Any]:
    out = dict(obj)
    meta = dict(_metadata(obj))
    annotations = dict(meta.get("annotations") or {})
    annotations[LAST_APPLIED] = value
    total = sum(len(k.encode()) + len(str(v).encode()) for k, v in annotations.items())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        del annotations[LAST_APPLIED]
    meta["annotations"] = annotations
    out["metadata"] = meta
    return out


__all__ = [
    "LAST_APPLIED",
    "build_last_applied",
    "conflict_error",
    "gvk_string",
    "parse_apply_patch",
    "print_manager",
    "server_side_apply",
]
