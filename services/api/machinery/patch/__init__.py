"""Patches and field ownership, as the kube-apiserver does them. Pure functions on wire-form dicts.

- `json_patch`: RFC 6902 JSON patch (``application/json-patch+json``).
- `merge_patch`: RFC 7386 JSON merge patch (``application/merge-patch+json``).
- `strategic_merge`: strategic merge patch (``application/strategic-merge-patch+json``),
  driven by the per-field metadata in `patch_meta`.
- `apply`: server-side apply (``application/apply-patch+yaml``) with conflicts.
- `managed_fields`: ``metadata.managedFields`` encoding and `track_update`
  for ordinary writes; `fieldpath` and `typed` are their building blocks.
- `dispatch`: `patch_object`, the single entry point for the committer.
"""

from services.api.machinery.patch.apply import parse_apply_patch, server_side_apply
from services.api.machinery.patch.dispatch import CONTENT_TYPES, decode_patch, patch_object
from services.api.machinery.patch.json_patch import apply_json_patch, json_patch_object, parse_json_patch
from services.api.machinery.patch.managed_fields import decode_managed_fields, encode_managed_fields, track_update
from services.api.machinery.patch.merge_patch import apply_merge_patch, merge_patch_object, parse_merge_patch
from services.api.machinery.patch.strategic_merge import parse_strategic_merge_patch, strategic_merge_patch

__all__ = [
    "CONTENT_TYPES",
    "apply_json_patch",
    "apply_merge_patch",
    "decode_managed_fields",
    "decode_patch",
    "encode_managed_fields",
    "json_patch_object",
    "merge_patch_object",
    "parse_apply_patch",
    "parse_json_patch",
    "parse_merge_patch",
    "parse_strategic_merge_patch",
    "patch_object",
    "server_side_apply",
    "strategic_merge_patch",
    "track_update",
]
