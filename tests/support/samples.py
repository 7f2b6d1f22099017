"""Realistic example objects of every kind, and fully-populated ones built from the schema.

Why this module exists: benchmarks (``ops/bench``) and tests need the same
representative objects — a DRA pod, a ResourceClaim with every 1.31 field
set, a ResourceSlice with 128 devices — and a way to reach every field of
every kind. Keeping them next to the models keeps them in step with the
models. Every function returns a fresh dict (callers may mutate it).
"""

from __future__ import annotations

from typing import Any

from services.api.types import K8sStruct
from services.api.types.schema import ListNode, MapNode, Node, ScalarNode, StructNode, struct_node

__all__ = [
    "binding",
    "device_class",
    "event",
    "exemplar",
    "lease",
    "namespace",
    "node",
    "pod",
    "pod_scheduling_context",
    "resource_claim",
    "resource_claim_template",
    "resource_slice",
]

Obj = dict[str, Any]

_NODE_SELECTOR: Obj = {
    "nodeSelectorTerms": [
        {
            "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["worker-1"]}],
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker-1"]}],
        }
    ]
}


def _meta(name: str, namespace: str | None = "default", **extra: Any) -> Obj:
    meta: Obj = {
        "name": name,
        "uid": "9a3c2f4e-1b7d-4c55-8e0a-2d6f1c3b5a79",
        "resourceVersion": "1042",
        "creationTimestamp": "2024-08-13T09:21:07Z",
        "labels": {"app.kubernetes.io/name": "inference", "team": "ml"},
        "annotations": {"example.com/owner": "ml-platform"},
    }
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update(extra)
    return meta


def device_class() -> Obj:
    """A GPU DeviceClass with a CEL selector, opaque config and (classic DRA) suitableNodes."""
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceClass",
        "metadata": _meta("gpu.example.com", None, generation=1),
        "spec": {
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
            "config": [
                {
                    "opaque": {
                        "driver": "gpu.example.com",
                        "parameters": {
                            "apiVersion": "gpu.resource.example.com/v1alpha1",
                            "kind": "GpuConfig",
                            "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}},
                        },
                    }
                }
            ],
            "suitableNodes": _NODE_SELECTOR,
        },
    }


def _claim_spec() -> Obj:
    return {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "deviceClassName": "gpu.example.com",
                    "selectors": [
                        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "LATEST-GPU-MODEL"'}},
                        {
                            "cel": {
                                "expression": (
                                    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
                                )
                            }
                        },
                    ],
                    "allocationMode": "ExactCount",
                    "count": 2,
                    "adminAccess": False,
                },
                {"name": "nic", "deviceClassName": "nic.example.com", "allocationMode": "All", "adminAccess": True},
            ],
            "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "example.com/numaNode"}],
            "config": [
                {
                    "requests": ["gpu"],
                    "opaque": {"driver": "gpu.example.com", "parameters": {"kind": "GpuConfig", "partitions": 2}},
                }
            ],
        },
        "controller": "gpu.example.com",
    }


def resource_claim() -> Obj:
    """A ResourceClaim with every field 1.31 has, allocated and reserved for a pod."""
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": _meta(
            "inference-gpu",
            finalizers=["resource.kubernetes.io/delete-protection"],
            ownerReferences=[
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": "inference-0",
                    "uid": "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            generation=1,
        ),
        "spec": _claim_spec(),
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"},
                        {"request": "gpu", "driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-1"},
                    ],
                    "config": [
                        {
                            "source": "FromClass",
                            "opaque": {
                                "driver": "gpu.example.com",
                                "parameters": {"sharing": {"strategy": "TimeSlicing"}},
                            },
                        },
                        {
                            "source": "FromClaim",
                            "requests": ["gpu"],
                            "opaque": {"driver": "gpu.example.com", "parameters": {"partitions": 2}},
                        },
                    ],
                },
                "nodeSelector": _NODE_SELECTOR,
                "controller": "gpu.example.com",
            },
            "reservedFor": [{"apiGroup": "", "resource": "pods", "name": "inference-0", "uid": "0f1e2d3c-4b5a-6978"}],
            "deallocationRequested": True,
        },
    }


def resource_claim_template() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": _meta("inference-gpu-template", generation=1),
        "spec": {
            "metadata": {"labels": {"claim-from": "template"}, "annotations": {"example.com/purpose": "inference"}},
            "spec": _claim_spec(),
        },
    }


def resource_slice(*, devices: int = 128, node_name: str = "worker-1") -> Obj:
    """A node-local ResourceSlice publishing ``devices`` GPUs with attributes and capacity."""
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceSlice",
        "metadata": {
            "name": f"{node_name}-gpu.example.com-7xk2p",
            "generateName": f"{node_name}-gpu.example.com-",
            "uid": "5d0c7f4a-2b8e-4d1f-9c3a-7e6b5a4d3c2b",
            "resourceVersion": "2048",
            "creationTimestamp": "2024-08-13T09:20:00Z",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": "4c3b2a19-0f8e-7d6c-5b4a-39281706f5e4"}
            ],
        },
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node_name,
            "devices": [_gpu(i) for i in range(devices)],
        },
    }


def _gpu(index: int) -> Obj:
    return {
        "name": f"gpu-{index}",
        "basic": {
            "attributes": {
                "index": {"int": index},
                "uuid": {"string": f"gpu-18db0e85-99e9-c746-8531-ffeb86328b{index:02x}"},
                "model": {"string": "LATEST-GPU-MODEL"},
                "driverVersion": {"version": "1.0.0"},
                "example.com/numaNode": {"int": index % 2},
                "migCapable": {"bool": index % 4 == 0},
            },
            "capacity": {"memory": "80Gi", "example.com/cores": 132},
        },
    }


def pod_scheduling_context() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "PodSchedulingContext",
        "metadata": _meta("inference-0", generation=3),
        "spec": {"selectedNode": "worker-1", "potentialNodes": ["worker-1", "worker-2", "worker-3"]},
        "status": {"resourceClaims": [{"name": "gpu", "unsuitableNodes": ["worker-3"]}]},
    }


def pod() -> Obj:
    """A DRA pod as kubectl would send it, plus a realistic status: claims, affinity, probes, volumes."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta("inference-0", generateName="inference-"),
        "spec": {
            "resourceClaims": [
                {"name": "gpu", "resourceClaimTemplateName": "inference-gpu-template"},
                {"name": "shared", "resourceClaimName": "shared-nic"},
            ],
            "initContainers": [
                {"name": "fetch-model", "image": "registry.example.com/fetch:1.2", "args": ["--model", "llama"]}
            ],
            "containers": [
                {
                    "name": "server",
                    "image": "registry.example.com/inference:2.4.1",
                    "command": ["/bin/server"],
                    "args": ["--port=8080", "--gpus=2"],
                    "env": [
                        {"name": "MODEL", "value": "llama"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    ],
                    "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                    "resources": {
                        "requests": {"cpu": "2", "memory": "8Gi"},
                        "limits": {"cpu": 4, "memory": "16Gi"},
                        "claims": [{"name": "gpu", "request": "gpu"}, {"name": "shared"}],
                    },
                    "volumeMounts": [{"name": "models", "mountPath": "/models", "readOnly": True}],
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
                    "livenessProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 10},
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                }
            ],
            "volumes": [{"name": "models", "emptyDir": {"sizeLimit": "20Gi"}}],
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "example.com/gpu", "operator": "Exists"}]}]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 50,
                            "preference": {
                                "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]
                            },
                        }
                    ],
                }
            },
            "tolerations": [
                {"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "schedulerName": "default-scheduler",
            "priority": 1000,
            "priorityClassName": "high",
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "serviceAccountName": "inference",
            "nodeName": "worker-1",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2024-08-13T09:21:08Z",
                },
                {"type": "Ready", "status": "True", "lastTransitionTime": "2024-08-13T09:21:30Z"},
            ],
            "hostIP": "10.0.0.11",
            "hostIPs": [{"ip": "10.0.0.11"}],
            "podIP": "10.244.1.17",
            "podIPs": [{"ip": "10.244.1.17"}, {"ip": "fd00::17"}],
            "startTime": "2024-08-13T09:21:08Z",
            "containerStatuses": [
                {
                    "name": "server",
                    "state": {"running": {"startedAt": "2024-08-13T09:21:20Z"}},
                    "lastState": {},
                    "ready": True,
                    "restartCount": 0,
                    "image": "registry.example.com/inference:2.4.1",
                    "imageID": "registry.example.com/inference@sha256:" + "ab" * 32,
                    "containerID": "containerd://" + "cd" * 32,
                    "started": True,
                }
            ],
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "inference-0-gpu-x7k2p"}],
            "nominatedNodeName": "worker-1",
            "qosClass": "Burstable",
            "reason": "",
            "message": "",
        },
    }


def node() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta("worker-1", None),
        "spec": {
            "podCIDR": "10.244.1.0/24",
            "podCIDRs": ["10.244.1.0/24", "fd00:1::/64"],
            "providerID": "kind://docker/kind/worker-1",
            "unschedulable": False,
            "taints": [
                {"key": "example.com/gpu", "value": "true", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2024-08-13T09:00:00Z"},
            ],
        },
        "status": {
            "capacity": {"cpu": "16", "memory": "65843220Ki", "pods": "110", "ephemeral-storage": "102350Mi"},
            "allocatable": {"cpu": "15500m", "memory": "64819220Ki", "pods": "110"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": "2024-08-13T09:25:00Z",
                    "lastTransitionTime": "2024-08-13T08:00:00Z",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.11"}, {"type": "Hostname", "address": "worker-1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": "1f0e2d3c4b5a69788796a5b4c3d2e1f0",
                "systemUUID": "4c4c4544-0031-3510-8052-b3c04f4e3332",
                "bootID": "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
                "kernelVersion": "6.5.0-1017-gcp",
                "osImage": "Ubuntu 22.04.4 LTS",
                "containerRuntimeVersion": "containerd://1.7.18",
                "kubeletVersion": "v1.31.0",
                "kubeProxyVersion": "v1.31.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": [{"names": ["registry.example.com/inference:2.4.1"], "sizeBytes": 4123456789}],
            "volumesInUse": ["kubernetes.io/csi/ebs.csi.aws.com^vol-1"],
            "volumesAttached": [{"name": "kubernetes.io/csi/ebs.csi.aws.com^vol-1", "devicePath": "/dev/xvdba"}],
            "runtimeHandlers": [
                {"name": "runc", "features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}}
            ],
            "features": {"supplementalGroupsPolicy": True},
        },
    }


def namespace() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": _meta("ml", None),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {
            "phase": "Terminating",
            "conditions": [
                {
                    "type": "NamespaceDeletionContentFailure",
                    "status": "False",
                    "lastTransitionTime": "2024-08-13T10:00:00Z",
                    "reason": "ContentDeleted",
                    "message": "All content successfully deleted",
                }
            ],
        },
    }


def lease() -> Obj:
    """A node's heartbeat Lease in kube-node-lease, owned by its Node, with every coordination.k8s.io/v1 field."""
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": _meta(
            "worker-1",
            "kube-node-lease",
            ownerReferences=[
                {"apiVersion": "v1", "kind": "Node", "name": "worker-1", "uid": "4b1e0f6a-2c3d-4e5f-8a9b-0c1d2e3f4a5b"}
            ],
        ),
        "spec": {
            "holderIdentity": "worker-1",
            "leaseDurationSeconds": 40,
            "acquireTime": "2024-08-13T09:21:07.000000Z",
            "renewTime": "2024-08-13T09:31:17.123456Z",
            "leaseTransitions": 0,
        },
    }


def event() -> Obj:
    """A FailedScheduling event with every core/v1 Event field."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": _meta("inference-0.17eb1c2d3e4f5a6b"),
        "involvedObject": {
            "kind": "Pod",
            "namespace": "default",
            "name": "inference-0",
            "uid": "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
            "apiVersion": "v1",
            "resourceVersion": "1042",
            "fieldPath": "spec.containers{server}",
        },
        "reason": "FailedScheduling",
        "message": "0/3 nodes are available: 3 cannot allocate all claims.",
        "source": {"component": "default-scheduler", "host": "control-plane"},
        "firstTimestamp": "2024-08-13T09:21:07Z",
        "lastTimestamp": "2024-08-13T09:22:07Z",
        "count": 4,
        "type": "Warning",
        "eventTime": "2024-08-13T09:21:07.123456Z",
        "series": {"count": 3, "lastObservedTime": "2024-08-13T09:22:07.654321Z"},
        "action": "Scheduling",
        "related": {
            "kind": "ResourceClaim",
            "namespace": "default",
            "name": "inference-gpu",
            "apiVersion": "resource.k8s.io/v1alpha3",
        },
        "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler-control-plane",
    }


def binding() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "inference-0", "namespace": "default", "uid": "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "worker-1"},
    }


# --------------------------------------------------------------------------
# Every field set


def exemplar(cls: type[K8sStruct]) -> Obj:
    """A wire dict of ``cls`` with *every* field of every nested struct set to a valid, non-empty value.

    Maps get one entry and lists one item, so each field path of the schema
    occurs. Values are deterministic and derived from the field path.
    """
    out = _exemplar(struct_node(cls), "")
    assert isinstance(out, dict)
    return out


def _exemplar(node: Node, path: str) -> Any:
    if isinstance(node, StructNode):
        return {
            spec.wire: _exemplar(spec.node, f"{path}.{spec.wire}" if path else spec.wire)
            for spec in node.fields.values()
        }
    if isinstance(node, ListNode):
        return [_exemplar(node.item, path + "[0]")]
    if isinstance(node, MapNode):
        return {"example.com/key": _exemplar(node.value, path + ".key")}
    return _scalar(node, path)


def _scalar(node: ScalarNode, path: str) -> Any:
    seed = sum(map(ord, path)) % 997 + 1
    kind = node.kind
    if kind == "string":
        return f"v-{path}"
    if kind == "bool":
        return seed % 2 == 0
    if kind in ("int32", "int64"):
        return seed
    if kind == "float":
        return seed + 0.5
    if kind == "quantity":
        return f"{seed}Mi"
    if kind == "time":
        return f"2024-08-{seed % 28 + 1:02d}T09:21:07Z"
    if kind == "microtime":
        return f"2024-08-{seed % 28 + 1:02d}T09:21:07.{seed:06d}Z"
    if kind == "intorstring":
        return seed if seed % 2 else f"port-{seed}"
    return {"raw": path, "n": seed, "list": [1, "two", None, {"x": True}]}
