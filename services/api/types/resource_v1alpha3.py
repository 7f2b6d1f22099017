"""resource.k8s.io/v1alpha3 types (k8s.io/api/resource/v1alpha3, Kubernetes 1.31).

Why this module exists: these are the DRA kinds — DeviceClass, ResourceClaim,
ResourceClaimTemplate, ResourceSlice and PodSchedulingContext — with every
field 1.31 has, including the "classic DRA" fields behind the
DRAControlPlaneController gate (``spec.controller``,
``status.allocation.controller``, ``status.deallocationRequested``, DeviceClass
``suitableNodes``) and PodSchedulingContext. This is also the storage version
of the group: the log holds objects in exactly this shape.
"""

from __future__ import annotations

import msgspec

from services.api.types.base import Int64, K8sStruct, Quantity, RawJSON
from services.api.types.core_v1 import NodeSelector
from services.api.types.meta import ObjectMeta

# --------------------------------------------------------------------------
# Shared pieces


class CELDeviceSelector(K8sStruct):
    expression: str | None = None


class DeviceSelector(K8sStruct):
    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(K8sStruct):
    driver: str | None = None
    # runtime.RawExtension: any JSON, defined by the driver.
    parameters: RawJSON = None


# --------------------------------------------------------------------------
# ResourceSlice


class DeviceAttribute(K8sStruct):
    """Exactly one of int, bool, string or version (a semver string)."""

    int_value: Int64 | None = msgspec.field(default=None, name="int")
    bool_value: bool | None = msgspec.field(default=None, name="bool")
    string_value: str | None = msgspec.field(default=None, name="string")
    version_value: str | None = msgspec.field(default=None, name="version")


class BasicDevice(K8sStruct):
    attributes: dict[str, DeviceAttribute] | None = None
    capacity: dict[str, Quantity] | None = None


class Device(K8sStruct):
    name: str | None = None
    basic: BasicDevice | None = None


class ResourcePool(K8sStruct):
    name: str | None = None
    generation: Int64 | None = None
    resource_slice_count: Int64 | None = None


class ResourceSliceSpec(K8sStruct):
    driver: str | None = None
    pool: ResourcePool | None = None
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    devices: list[Device] | None = None


class ResourceSlice(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: ResourceSliceSpec | None = None


# --------------------------------------------------------------------------
# ResourceClaim


class DeviceRequest(K8sStruct):
    name: str | None = None
    device_class_name: str | None = None
    selectors: list[DeviceSelector] | None = None
    allocation_mode: str | None = None
    count: Int64 | None = None
    admin_access: bool | None = None


class DeviceConstraint(K8sStruct):
    requests: list[str] | None = None
    match_attribute: str | None = None


class DeviceClaimConfiguration(K8sStruct):
    requests: list[str] | None = None
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(K8sStruct):
    requests: list[DeviceRequest] | None = None
    constraints: list[DeviceConstraint] | None = None
    config: list[DeviceClaimConfiguration] | None = None


class ResourceClaimSpec(K8sStruct):
    devices: DeviceClaim | None = None
    controller: str | None = None


class DeviceRequestAllocationResult(K8sStruct):
    request: str | None = None
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class DeviceAllocationConfiguration(K8sStruct):
    source: str | None = None
    requests: list[str] | None = None
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(K8sStruct):
    results: list[DeviceRequestAllocationResult] | None = None
    config: list[DeviceAllocationConfiguration] | None = None


class AllocationResult(K8sStruct):
    devices: DeviceAllocationResult | None = None
    node_selector: NodeSelector | None = None
    controller: str | None = None


class ResourceClaimConsumerReference(K8sStruct):
    api_group: str | None = None
    resource: str | None = None
    name: str | None = None
    uid: str | None = None


class ResourceClaimStatus(K8sStruct):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] | None = None
    deallocation_requested: bool | None = None


class ResourceClaim(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: ResourceClaimSpec | None = None
    status: ResourceClaimStatus | None = None


# --------------------------------------------------------------------------
# ResourceClaimTemplate


class ResourceClaimTemplateSpec(K8sStruct):
    metadata: ObjectMeta | None = None
    spec: ResourceClaimSpec | None = None


class ResourceClaimTemplate(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: ResourceClaimTemplateSpec | None = None


# --------------------------------------------------------------------------
# DeviceClass


class DeviceClassConfiguration(K8sStruct):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassSpec(K8sStruct):
    selectors: list[DeviceSelector] | None = None
    config: list[DeviceClassConfiguration] | None = None
    suitable_nodes: NodeSelector | None = None


class DeviceClass(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: DeviceClassSpec | None = None


# --------------------------------------------------------------------------
# PodSchedulingContext


class PodSchedulingContextSpec(K8sStruct):
    selected_node: str | None = None
    potential_nodes: list[str] | None = None


class ResourceClaimSchedulingStatus(K8sStruct):
    name: str | None = None
    unsuitable_nodes: list[str] | None = None


class PodSchedulingContextStatus(K8sStruct):
    resource_claims: list[ResourceClaimSchedulingStatus] | None = None


class PodSchedulingContext(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: PodSchedulingContextSpec | None = None
    status: PodSchedulingContextStatus | None = None
