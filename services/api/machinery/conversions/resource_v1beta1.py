"""resource.k8s.io/v1beta1 ↔ the storage form.

Why this module exists: the storage form is 1.37's v1beta1 layout plus the
1.31-only classic DRA fields, so a v1beta1 object is already a stored object
and a stored one becomes v1beta1 by dropping those fields (projection onto the
v1beta1 models). DeviceTaintRule has no v1beta1 form.
"""

from __future__ import annotations

from typing import Any

from services.api.machinery.conversions.projection import project
from services.api.types import resource_v1beta1

__all__ = ["KINDS", "from_hub", "to_hub"]

KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")


def to_hub(obj: dict[str, Any], *, kind: str) -> dict[str, Any]:
    """A v1beta1 ``kind`` in the storage form: the object itself."""
    return obj


def from_hub(obj: dict[str, Any], *, kind: str) -> dict[str, Any]:
    """A stored ``kind`` as v1beta1: the classic fields dropped."""
    return dict(project(obj, getattr(resource_v1beta1, kind)))
