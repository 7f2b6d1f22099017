"""The models hold exactly Kubernetes 1.31's fields, with Kubernetes' wire names and scalar types.

The models are generated from Kubernetes' schemas (`ops.gen_models`); the field lists here are
an independent hand check of a few structs, in Go's declaration order, against that generator.
"""

from __future__ import annotations

import msgspec
import pytest

from services.api.types import MODELS, K8sStruct, core_v1, meta, model_for, registry, resource_v1alpha3
from services.api.types.schema import ListNode, MapNode, ScalarNode, StructNode, node_for, struct_node, walk_fields


def wire_names(cls: type[K8sStruct]) -> list[str]:
    return [f.encode_name for f in msgspec.structs.fields(cls)]


# Field lists of k8s.io/api/resource/v1alpha3 (1.31), in Go declaration order (TypeMeta first).
RESOURCE_V1ALPHA3 = {
    "ResourceSlice": "apiVersion kind metadata spec",
    "ResourceSliceSpec": "driver pool nodeName nodeSelector allNodes devices",
    "ResourcePool": "name generation resourceSliceCount",
    "Device": "name basic",
    "BasicDevice": "attributes capacity",
    "DeviceAttribute": "int bool string version",
    "ResourceClaim": "apiVersion kind metadata spec status",
    "ResourceClaimSpec": "devices controller",
    "DeviceClaim": "requests constraints config",
    "DeviceRequest": "name deviceClassName selectors allocationMode count adminAccess",
    "DeviceSelector": "cel",
    "CELDeviceSelector": "expression",
    "DeviceConstraint": "requests matchAttribute",
    "DeviceClaimConfiguration": "requests opaque",
    "OpaqueDeviceConfiguration": "driver parameters",
    "ResourceClaimStatus": "allocation reservedFor deallocationRequested",
    "ResourceClaimConsumerReference": "apiGroup resource name uid",
    "AllocationResult": "devices nodeSelector controller",
    "DeviceAllocationResult": "results config",
    "DeviceRequestAllocationResult": "request driver pool device",
    "DeviceAllocationConfiguration": "source requests opaque",
    "PodSchedulingContext": "apiVersion kind metadata spec status",
    "PodSchedulingContextSpec": "selectedNode potentialNodes",
    "PodSchedulingContextStatus": "resourceClaims",
    "ResourceClaimSchedulingStatus": "name unsuitableNodes",
    "DeviceClass": "apiVersion kind metadata spec",
    "DeviceClassSpec": "selectors config suitableNodes",
    "DeviceClassConfiguration": "opaque",
    "ResourceClaimTemplate": "apiVersion kind metadata spec",
    "ResourceClaimTemplateSpec": "metadata spec",
}

# The core/v1 and meta/v1 structs draplane reads, and the big ones real manifests fill.
CORE_V1 = {
    "PodSpec": (
        "volumes initContainers containers ephemeralContainers restartPolicy terminationGracePeriodSeconds"
        " activeDeadlineSeconds dnsPolicy nodeSelector serviceAccountName serviceAccount"
        " automountServiceAccountToken nodeName hostNetwork hostPID hostIPC shareProcessNamespace securityContext"
        " imagePullSecrets hostname subdomain affinity schedulerName tolerations hostAliases priorityClassName"
        " priority dnsConfig readinessGates runtimeClassName enableServiceLinks preemptionPolicy overhead"
        " topologySpreadConstraints setHostnameAsFQDN os hostUsers schedulingGates resourceClaims"
    ),
    "Container": (
        "name image command args workingDir ports envFrom env resources resizePolicy restartPolicy volumeMounts"
        " volumeDevices livenessProbe readinessProbe startupProbe lifecycle terminationMessagePath"
        " terminationMessagePolicy imagePullPolicy securityContext stdin stdinOnce tty"
    ),
    "ResourceRequirements": "limits requests claims",
    "ResourceClaim": "name request",
    "PodResourceClaim": "name resourceClaimName resourceClaimTemplateName",
    "PodStatus": (
        "phase conditions message reason nominatedNodeName hostIP hostIPs podIP podIPs startTime"
        " initContainerStatuses containerStatuses qosClass ephemeralContainerStatuses resize resourceClaimStatuses"
        " extendedResourceClaimStatus"  # 1.37, backported (ops/gen_models.py ModuleSpec.backports)
    ),
    "PodResourceClaimStatus": "name resourceClaimName",
    "ContainerStatus": (
        "name state lastState ready restartCount image imageID containerID started allocatedResources resources"
        " volumeMounts user allocatedResourcesStatus"
    ),
    "NodeSpec": "podCIDR podCIDRs providerID unschedulable taints configSource externalID",
    "NodeStatus": (
        "capacity allocatable phase conditions addresses daemonEndpoints nodeInfo images volumesInUse"
        " volumesAttached config runtimeHandlers features"
    ),
    "NodeSystemInfo": (
        "machineID systemUUID bootID kernelVersion osImage containerRuntimeVersion kubeletVersion"
        " kubeProxyVersion operatingSystem architecture"
    ),
    "DaemonEndpoint": "Port",
    "Taint": "key value effect timeAdded",
    "Toleration": "key operator value effect tolerationSeconds",
    "NodeAffinity": "requiredDuringSchedulingIgnoredDuringExecution preferredDuringSchedulingIgnoredDuringExecution",
    "NodeSelectorRequirement": "key operator values",
    "Event": (
        "apiVersion kind metadata involvedObject reason message source firstTimestamp lastTimestamp count type"
        " eventTime series action related reportingComponent reportingInstance"
    ),
    "EventSeries": "count lastObservedTime",
    "ObjectReference": "kind namespace name uid apiVersion resourceVersion fieldPath",
    "Binding": "apiVersion kind metadata target",
    "Namespace": "apiVersion kind metadata spec status",
    "NamespaceStatus": "phase conditions",
}

META_V1 = {
    "ObjectMeta": (
        "name generateName namespace selfLink uid resourceVersion generation creationTimestamp deletionTimestamp"
        " deletionGracePeriodSeconds labels annotations ownerReferences finalizers managedFields"
    ),
    "ListMeta": "selfLink resourceVersion continue remainingItemCount",
    "OwnerReference": "apiVersion kind name uid controller blockOwnerDeletion",
    "Status": "apiVersion kind metadata status message reason details code",
    "StatusDetails": "name group kind uid causes retryAfterSeconds",
    "DeleteOptions": "apiVersion kind gracePeriodSeconds preconditions orphanDependents propagationPolicy dryRun",
    "Preconditions": "uid resourceVersion",
}


@pytest.mark.parametrize(
    ("module", "name", "fields"),
    [(resource_v1alpha3, n, f) for n, f in RESOURCE_V1ALPHA3.items()]
    + [(core_v1, n, f) for n, f in CORE_V1.items()]
    + [(meta, n, f) for n, f in META_V1.items()],
)
def test_struct_has_exactly_the_kubernetes_fields(module: object, name: str, fields: str) -> None:
    # The generated models list fields in the schemas' (alphabetical) order; Go declares them in this one.
    assert sorted(wire_names(getattr(module, name))) == sorted(fields.split())


def test_every_resource_v1alpha3_struct_is_checked() -> None:
    defined = {
        name
        for name, value in vars(resource_v1alpha3).items()
        if isinstance(value, type) and issubclass(value, K8sStruct) and value.__module__ == resource_v1alpha3.__name__
    }
    assert defined == set(RESOURCE_V1ALPHA3)


def test_every_served_kind_has_a_model_in_its_storage_version() -> None:
    for rt in registry.RESOURCES:
        cls = model_for(rt.group, rt.version, rt.kind)
        assert cls is not None, rt.kind
        assert cls.__name__ == rt.kind
        assert {"apiVersion", "kind", "metadata"} <= set(wire_names(cls))
    assert model_for("", "v1", "Binding") is core_v1.Binding
    assert model_for("resource.k8s.io", "v1beta2", "PodSchedulingContext") is None


@pytest.mark.parametrize(
    ("cls", "path", "kind"),
    [
        (resource_v1alpha3.ResourceSlice, "spec.devices[].basic.capacity.*", "quantity"),
        (resource_v1alpha3.ResourceSlice, "spec.devices[].basic.attributes.*.int", "int64"),
        (resource_v1alpha3.ResourceSlice, "spec.pool.generation", "int64"),
        (resource_v1alpha3.ResourceClaim, "spec.devices.requests[].count", "int64"),
        (resource_v1alpha3.ResourceClaim, "spec.devices.config[].opaque.parameters", "any"),
        (resource_v1alpha3.ResourceClaim, "metadata.creationTimestamp", "time"),
        (resource_v1alpha3.ResourceClaim, "metadata.managedFields[].fieldsV1", "any"),
        (core_v1.Pod, "spec.containers[].ports[].containerPort", "int32"),
        (core_v1.Pod, "spec.containers[].resources.limits.*", "quantity"),
        (core_v1.Pod, "spec.containers[].livenessProbe.httpGet.port", "intorstring"),
        (core_v1.Pod, "spec.terminationGracePeriodSeconds", "int64"),
        (core_v1.Pod, "spec.priority", "int32"),
        (core_v1.Pod, "status.startTime", "time"),
        (core_v1.Event, "eventTime", "microtime"),
        (core_v1.Event, "series.lastObservedTime", "microtime"),
        (core_v1.Node, "status.capacity.*", "quantity"),
    ],
)
def test_scalar_types_match_kubernetes(cls: type[K8sStruct], path: str, kind: str) -> None:
    nodes = dict(walk_fields(cls))
    node = nodes[path]
    assert isinstance(node, ScalarNode)
    assert node.kind == kind


def test_go_type_names_are_used_for_error_messages() -> None:
    assert struct_node(resource_v1alpha3.DeviceRequest).go_type == "v1alpha3.DeviceRequest"
    assert struct_node(core_v1.ContainerPort).go_type == "v1.ContainerPort"
    assert struct_node(meta.ObjectMeta).go_type == "v1.ObjectMeta"
    spec = struct_node(core_v1.PodSpec).fields
    assert spec["containers"].node.go_type == "[]v1.Container"
    assert spec["nodeSelector"].node.go_type == "map[string]string"
    assert spec["overhead"].node.go_type == "map[string]resource.Quantity"


def test_schema_nodes_are_cached_and_shaped() -> None:
    assert struct_node(core_v1.Pod) is struct_node(core_v1.Pod)
    claims = struct_node(core_v1.PodSpec).fields["resourceClaims"].node
    assert isinstance(claims, ListNode) and isinstance(claims.item, StructNode)
    attributes = struct_node(resource_v1alpha3.BasicDevice).fields["attributes"].node
    assert isinstance(attributes, MapNode) and attributes.value is node_for(resource_v1alpha3.DeviceAttribute)


def test_every_model_is_reachable_from_a_registered_kind() -> None:
    reachable: set[type] = set()
    for cls in set(MODELS.values()):
        reachable.add(cls)
        for _, node in walk_fields(cls):
            if isinstance(node, StructNode):
                reachable.add(node.cls)
    for module in (core_v1, resource_v1alpha3):
        for name, value in vars(module).items():
            if isinstance(value, type) and issubclass(value, K8sStruct) and value.__module__ == module.__name__:
                assert value in reachable, name
