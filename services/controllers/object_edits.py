"""Copy-on-write edits of wire-form objects that the controllers write back.

Why this module exists: informer objects are shared and must never be changed
in place; every write starts from a deep copy. These few edits (drop a
finalizer, replace the status, trim or unblock ownerReferences) are shared by
the resourceclaim controller and the garbage collector.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson


def clone(obj: Any) -> Any:
    """A deep copy of a wire-form (JSON) value; several times faster than `copy.deepcopy` for API objects."""
    return orjson.loads(orjson.dumps(obj))


def without_finalizer(obj: Mapping[str, Any], finalizer: str) -> dict[str, Any]:
    """A copy of ``obj`` without ``finalizer`` (``metadata.finalizers`` dropped when it empties)."""
    new = clone(obj)
    meta = new.setdefault("metadata", {})
    finalizers = [f for f in meta.get("finalizers") or () if f != finalizer]
    if finalizers:
        meta["finalizers"] = finalizers
    else:
        meta.pop("finalizers", None)
    return new


def with_status(obj: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` with ``status`` replaced."""
    new: dict[str, Any] = clone({k: v for k, v in obj.items() if k != "status"})
    new["status"] = clone(status)
    return new


def without_owner_references(obj: Mapping[str, Any], uids: frozenset[str]) -> dict[str, Any]:
    """A copy of ``obj`` without the ownerReferences to ``uids``."""
    new = clone(obj)
    meta = new.setdefault("metadata", {})
    refs = [ref for ref in meta.get("ownerReferences") or () if ref.get("uid") not in uids]
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)
    return new


def with_unblocked_owner_references(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` whose ownerReferences no longer block their owners' foreground deletion."""
    new = clone(obj)
    for ref in new.get("metadata", {}).get("ownerReferences") or ():
        if ref.get("blockOwnerDeletion"):
            ref["blockOwnerDeletion"] = False
    return new
