"""resource.k8s.io/v1beta2 ↔ the storage form.

Why this module exists: v1beta2's structs are v1's (Kubernetes 1.37 converts
both with the same generated code), so its conversions are v1's
(`resource_v1`), projected onto the v1beta2 models on the way out.
"""

from __future__ import annotations

from typing import Any

from services.api.machinery.conversions import resource_v1
from services.api.types import resource_v1beta2

__all__ = ["KINDS", "from_hub", "to_hub"]

KINDS = resource_v1.KINDS


def to_hub(obj: dict[str, Any], *, kind: str) -> dict[str, Any]:
    """A v1beta2 ``kind`` in the storage form."""
    return resource_v1.to_hub(obj, kind=kind)


def from_hub(obj: dict[str, Any], *, kind: str) -> dict[str, Any]:
    """A stored ``kind`` as v1beta2."""
    return resource_v1.from_hub(obj, kind=kind, models=resource_v1beta2)
