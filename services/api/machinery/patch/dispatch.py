"""One entry point for the committer: decode a patch body, apply it, track managers.

The REST layer names the patch type from the request's Content-Type
(``json``, ``merge``, ``strategic``, ``apply``); the committer, holding the
latest committed object, calls `patch_object`. It mirrors the order of the
kube-apiserver's patch handler: the patch applies to the current object, and
a non-apply patch then records its ``Update`` manager (`track_update`), while
an apply records its ``Apply`` manager itself. Bodies may be passed raw
(``bytes``/``str``, decoded here with Kubernetes' 400s) or already decoded.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from services.api.machinery.patch.apply import parse_apply_patch, server_side_apply
from services.api.machinery.patch.json_patch import json_patch_object, parse_json_patch, validate_json_patch
from services.api.machinery.patch.managed_fields import track_update
from services.api.machinery.patch.merge_patch import merge_patch_object, parse_merge_patch
from services.api.machinery.patch.strategic_merge import (
    parse_strategic_merge_patch,
    strategic_merge_patch,
    validate_strategic_merge_patch,
)

JSON = "json"
MERGE = "merge"
STRATEGIC = "strategic"
APPLY = "apply"

CONTENT_TYPES: dict[str, str] = {
    "application/json-patch+json": JSON,
    "application/merge-patch+json": MERGE,
    "application/strategic-merge-patch+json": STRATEGIC,
    "application/apply-patch+yaml": APPLY,
}


def decode_patch(body: bytes | str, patch_type: str) -> Any:
    """Decode a raw patch body of the given type; raises the 400/413 `StatusError` Kubernetes gives."""
    if patch_type == JSON:
        return parse_json_patch(body)
    if patch_type == MERGE:
        return parse_merge_patch(body)
    if patch_type == STRATEGIC:
        return parse_strategic_merge_patch(body)
    if patch_type == APPLY:
        return parse_apply_patch(body)
    raise ValueError(f"unknown patch type {patch_type!r}")


def patch_object(
    current: dict[str, Any] | None,
    patch: Any,
    *,
    patch_type: str,
    manager: str,
    api_version: str,
    kind: str,
    now: datetime | str,
    force: bool = False,
    subresource: str = "",
    track: bool = True,
) -> dict[str, Any]:
    """The object to store after ``patch`` (raw or decoded) is applied to ``current``.

    ``current`` may be None only for ``apply``, which then creates the object;
    for the other types the caller answers 404 first, as Kubernetes does.
    ``api_version``/``kind`` are the endpoint's. With ``track=False`` the
    ``Update`` manager is not recorded for json/merge/strategic patches, so a
    caller that decodes and defaults the result first can call
    `track_update` itself (Kubernetes records defaulted fields as owned by the
    patching manager).
    """
    raw = isinstance(patch, bytes | str)
    if patch_type == APPLY:
        applied = parse_apply_patch(patch) if raw else patch
        if not isinstance(applied, dict):
            applied = parse_apply_patch(b"null" if applied is None else b"[]")
        return server_side_apply(
            current,
            applied,
            manager=manager,
            force=force,
            api_version=api_version,
            kind=kind,
            now=now,
            subresource=subresource,
        )
    if current is None:
        raise ValueError(f"a {patch_type} patch needs the current object")
    if patch_type == JSON:
        ops = parse_json_patch(patch) if raw else validate_json_patch(patch)
        new = json_patch_object(current, ops)
    elif patch_type == MERGE:
        new = merge_patch_object(current, parse_merge_patch(patch) if raw else patch)
    elif patch_type == STRATEGIC:
        doc = parse_strategic_merge_patch(patch) if raw else validate_strategic_merge_patch(patch)
        new = strategic_merge_patch(
            current,
            doc,
            api_version=str(current.get("apiVersion") or api_version),
            kind=str(current.get("kind") or kind),
        )
    else:
        raise ValueError(f"unknown patch type {patch_type!r}")
    if not track or not isinstance(new.get("metadata"), dict):
        return new  # metadata patched into a non-object: the caller's decoding refuses it, untouched
    return track_update(current, new, manager=manager, api_version=api_version, now=now, subresource=subresource)
