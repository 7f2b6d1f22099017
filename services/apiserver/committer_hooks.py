"""The API machinery the committer core needs, bound to its protocols.

The core stays independent of how patches are applied, objects decoded or
managed fields tracked; these adapters plug in `services.api.machinery.patch` and
`services.api.machinery.codec`.
"""

from __future__ import annotations

from typing import Any

from services.api.machinery.codec import decode_object
from services.api.machinery.patch import patch_object, track_update
from services.api.types.registry import ResourceType
from services.runtime.committer_core import CommitterCore

Obj = dict[str, Any]


def apply_patch(
    *,
    rt: ResourceType,
    current: Obj | None,
    patch: Any,
    patch_type: str,
    manager: str,
    force: bool,
    now: str,
    subresource: str = "",
    version: str = "",
) -> Obj:
    return patch_object(
        current,
        patch,
        patch_type=patch_type,
        manager=manager,
        api_version=rt.api_version_of(version or rt.version),
        kind=rt.kind,
        now=now,
        force=force,
        subresource=subresource,
    )


def decode(rt: ResourceType, obj: Obj, *, field_validation: str, version: str = "") -> tuple[Obj, list[str]]:
    return decode_object(rt, obj, field_validation=field_validation, version=version or None)


def track(*, old: Obj | None, new: Obj, manager: str, api_version: str, subresource: str, now: str) -> None:
    tracked = track_update(old, new, manager=manager, api_version=api_version, now=now, subresource=subresource)
    new["metadata"] = tracked["metadata"]


def wired_core(**kwargs: Any) -> CommitterCore:
    """A committer core with patches, decoding and managed fields wired in."""
    return CommitterCore(patcher=apply_patch, decoder=decode, tracker=track, **kwargs)
