"""The table of resource.k8s.io conversion functions, to and from the storage form.

Why this module exists: `services.api.machinery.conversion` looks conversions
up by ``(group, kind, from_version, to_version)``; this module fills that
table for every kind each version has, one row each way between the version
and `INTERNAL`, the name of the storage (hub) form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from types import MappingProxyType
from typing import Any

from services.api.machinery.conversions import resource_v1, resource_v1alpha3, resource_v1beta1, resource_v1beta2
from services.api.types.registry import INTERNAL

__all__ = ["GROUP", "INTERNAL", "RESOURCE_CONVERSIONS", "VERSIONS_OF"]

GROUP = "resource.k8s.io"

_MODULES = {
    "v1": resource_v1,
    "v1beta2": resource_v1beta2,
    "v1beta1": resource_v1beta1,
    "v1alpha3": resource_v1alpha3,
}

# kind → the versions that have it, newest first.
VERSIONS_OF: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        kind: tuple(v for v, m in _MODULES.items() if kind in m.KINDS)
        for kind in (
            "DeviceClass",
            "ResourceClaim",
            "ResourceClaimTemplate",
            "ResourceSlice",
            "DeviceTaintRule",
            "PodSchedulingContext",
        )
    }
)


def _rows() -> dict[tuple[str, str, str, str], Callable[[dict[str, Any]], dict[str, Any]]]:
    rows: dict[tuple[str, str, str, str], Callable[[dict[str, Any]], dict[str, Any]]] = {}
    for version, module in _MODULES.items():
        for kind in module.KINDS:
            rows[(GROUP, kind, version, INTERNAL)] = partial(module.to_hub, kind=kind)
            rows[(GROUP, kind, INTERNAL, version)] = partial(module.from_hub, kind=kind)
    return rows


RESOURCE_CONVERSIONS: Mapping[tuple[str, str, str, str], Callable[[dict[str, Any]], dict[str, Any]]] = MappingProxyType(
    _rows()
)
