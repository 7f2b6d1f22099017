"""The storage (hub) form of resource.k8s.io: 1.37's v1beta1 layout plus the 1.31-only classic DRA fields.

Why this module exists: the log holds every resource.k8s.io object in one form,
whatever version a client wrote it with (docs/decisions/api-versions.md), and
the conversion functions (`services.api.machinery.conversions`) convert each
served version to and from it. This module names that form as typed models so
a stored object can be checked against it strictly.

It is the generated v1beta1 models (`resource_v1beta1`, Kubernetes 1.37) with
the four fields only Kubernetes 1.31 has (`resource_v1alpha3`, under
DRAControlPlaneController): ``spec.controller``,
``status.deallocationRequested`` and ``status.allocation.controller`` of a
ResourceClaim, and ``spec.suitableNodes`` of a DeviceClass. Only the structs on
the path to those fields are extended; every other type is v1beta1's own.
DeviceTaintRule (no v1beta1 form) is stored in v1's shape and
PodSchedulingContext (only in v1alpha3) in 1.31's.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from services.api.types import resource_v1, resource_v1alpha3, resource_v1beta1
from services.api.types.base import K8sStruct
from services.api.types.core_v1 import NodeSelector

__all__ = [
    "HUB_MODELS",
    "AllocationResult",
    "DeviceClass",
    "DeviceClassSpec",
    "DeviceTaintRule",
    "PodSchedulingContext",
    "ResourceClaim",
    "ResourceClaimSpec",
    "ResourceClaimStatus",
    "ResourceClaimTemplate",
    "ResourceClaimTemplateSpec",
    "ResourceSlice",
]


class DeviceClassSpec(resource_v1beta1.DeviceClassSpec):
    suitable_nodes: NodeSelector | None = None  # 1.31 only


class DeviceClass(resource_v1beta1.DeviceClass):
    spec: DeviceClassSpec | None = None


class AllocationResult(resource_v1beta1.AllocationResult):
    controller: str | None = None  # 1.31 only


class ResourceClaimSpec(resource_v1beta1.ResourceClaimSpec):
    controller: str | None = None  # 1.31 only


class ResourceClaimStatus(resource_v1beta1.ResourceClaimStatus):
    allocation: AllocationResult | None = None
    deallocation_requested: bool | None = None  # 1.31 only


class ResourceClaim(resource_v1beta1.ResourceClaim):
    spec: ResourceClaimSpec | None = None
    status: ResourceClaimStatus | None = None


class ResourceClaimTemplateSpec(resource_v1beta1.ResourceClaimTemplateSpec):
    spec: ResourceClaimSpec | None = None


class ResourceClaimTemplate(resource_v1beta1.ResourceClaimTemplate):
    spec: ResourceClaimTemplateSpec | None = None


ResourceSlice = resource_v1beta1.ResourceSlice
DeviceTaintRule = resource_v1.DeviceTaintRule
PodSchedulingContext = resource_v1alpha3.PodSchedulingContext

# kind → the hub model of that kind.
HUB_MODELS: Mapping[str, type[K8sStruct]] = MappingProxyType(
    {
        "DeviceClass": DeviceClass,
        "ResourceClaim": ResourceClaim,
        "ResourceClaimTemplate": ResourceClaimTemplate,
        "ResourceSlice": ResourceSlice,
        "DeviceTaintRule": DeviceTaintRule,
        "PodSchedulingContext": PodSchedulingContext,
    }
)
