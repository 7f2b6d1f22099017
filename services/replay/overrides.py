"""What-if replays: objects that replace the recorded versions of the same object (``--override FILE``).

Pure. ``draplane replay --scheduler --override class.yaml`` asks "would the
scheduler have decided otherwise, had this DeviceClass (node, slice …) looked
like this?". Every recorded version of an overridden object reaches the
replayed scheduler with the override's content: its top-level fields (spec,
status …) and its labels and annotations replace the recorded ones, while
identity and bookkeeping (name, namespace, uid, resourceVersion, timestamps)
stay as recorded. Deletions still delete, and an object the log never held is
not created.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from services.api.types import registry

Obj = dict[str, Any]
Rewrite = Callable[[str, str, Obj], Obj]  # (group, plural, recorded object) -> the object the replay sees
Key = tuple[str, str, str, str]  # group, plural, namespace, name
REPLACED_METADATA = ("labels", "annotations")


class OverrideError(ValueError):
    """An override is not an object draplane knows."""


def override_key(obj: Mapping[str, Any]) -> Key:
    api_version = str(obj.get("apiVersion") or "")
    kind = str(obj.get("kind") or "")
    rt = registry.by_api_version_kind(api_version, kind)
    if rt is None:
        raise OverrideError(f'no resource for apiVersion "{api_version}", kind "{kind}"')
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    if not name:
        raise OverrideError(f"{kind} override without metadata.name")
    namespace = str(meta.get("namespace") or ("default" if rt.namespaced else ""))
    return rt.group, rt.plural, namespace, name


def apply_override(recorded: Obj, override: Mapping[str, Any]) -> Obj:
    """``recorded`` with the override's content and the recorded identity."""
    out: Obj = {**recorded, **{k: v for k, v in override.items() if k not in ("metadata", "apiVersion", "kind")}}
    meta = dict(recorded.get("metadata") or {})
    given = override.get("metadata") or {}
    for field in REPLACED_METADATA:
        if field in given:
            meta[field] = given[field]
    out["metadata"] = meta
    return out


def rewrite_with(overrides: Iterable[Mapping[str, Any]]) -> Rewrite:
    """A rewrite that applies ``overrides`` (raises OverrideError for an unknown kind or a nameless object)."""
    by_key = {override_key(obj): obj for obj in overrides}

    def rewrite(group: str, plural: str, obj: Obj) -> Obj:
        meta = obj.get("metadata") or {}
        override = by_key.get((group, plural, str(meta.get("namespace") or ""), str(meta.get("name") or "")))
        return obj if override is None else apply_override(obj, override)

    return rewrite
