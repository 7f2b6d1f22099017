"""Realistic valid objects and Kubernetes' messages shared by the validation tests.

The message constants are copied from Kubernetes' own validation tests
(pkg/apis/resource/validation/*_test.go, apimachinery validation_test.go)
rather than imported from the code under test, so a wording drift fails.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from services.api.machinery.field_errors import FieldError
from services.api.types.registry import ResourceType, by_kind

Obj = dict[str, Any]

BAD_NAME = "!@#$%^"
GOOD = "foo"
UID = "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
    "validation is '[A-Za-z_][A-Za-z0-9_]*')"
)


def _rt(group: str, kind: str) -> ResourceType:
    rt = by_kind(group, kind)
    assert rt is not None, kind
    return rt


POD = _rt("", "Pod")
NODE = _rt("", "Node")
NAMESPACE = _rt("", "Namespace")
EVENT = _rt("", "Event")
CLAIM = _rt("resource.k8s.io", "ResourceClaim")
TEMPLATE = _rt("resource.k8s.io", "ResourceClaimTemplate")
CLASS = _rt("resource.k8s.io", "DeviceClass")
SLICE = _rt("resource.k8s.io", "ResourceSlice")
PSC = _rt("resource.k8s.io", "PodSchedulingContext")


def render(errs: list[FieldError]) -> list[str]:
    return [str(e) for e in errs]


def mutated(obj: Obj, change: Callable[[Obj], Any]) -> Obj:
    """A deep copy of ``obj`` with ``change`` applied to it."""
    out = copy.deepcopy(obj)
    change(out)
    return out


def claim_spec() -> Obj:
    return {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "deviceClassName": "gpu.example.com",
                    "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
                    "allocationMode": "ExactCount",
                    "count": 1,
                }
            ],
            "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/numa"}],
            "config": [
                {
                    "requests": ["gpu"],
                    "opaque": {
                        "driver": "gpu.example.com",
                        "parameters": {"kind": "GpuConfig", "sharing": "TimeSlicing"},
                    },
                }
            ],
        }
    }


def claim() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {
            "name": "gpu-claim",
            "namespace": "default",
            "uid": UID,
            "resourceVersion": "12",
            "creationTimestamp": "2024-08-13T10:00:00Z",
            "labels": {"app.kubernetes.io/name": "trainer"},
            "annotations": {"example.com/owner": "team-a"},
            "finalizers": ["resource.kubernetes.io/delete-protection"],
        },
        "spec": claim_spec(),
        "status": {},
    }


def allocation() -> Obj:
    return {
        "devices": {
            "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"}],
            "config": [
                {
                    "source": "FromClaim",
                    "requests": ["gpu"],
                    "opaque": {"driver": "gpu.example.com", "parameters": {"kind": "GpuConfig"}},
                }
            ],
        },
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker-1"]}]}]
        },
    }


def allocated_claim() -> Obj:
    obj = claim()
    obj["status"] = {"allocation": allocation()}
    return obj


def consumer(i: int = 0) -> Obj:
    return {"resource": "pods", "name": f"pod-{i}", "uid": f"uid-{i}"}


def template() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu-template", "namespace": "default", "uid": UID, "resourceVersion": "3"},
        "spec": {"metadata": {"labels": {"app": "trainer"}, "annotations": {"a": "b"}}, "spec": claim_spec()},
    }


def device_class() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com", "uid": UID, "resourceVersion": "5"},
        "spec": {
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
            "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"kind": "GpuConfig"}}}],
        },
    }


def device(i: int) -> Obj:
    return {
        "name": f"gpu-{i}",
        "basic": {
            "attributes": {
                "index": {"int": i},
                "uuid": {"string": f"gpu-1a2b3c-{i}"},
                "driverVersion": {"version": "1.2.3"},
                "gpu.example.com/healthy": {"bool": True},
            },
            "capacity": {"memory": "80Gi", "gpu.example.com/cores": 128},
        },
    }


def resource_slice(devices: int = 2) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceSlice",
        "metadata": {"name": "worker-1-gpu.example.com-x7k2p", "uid": UID, "resourceVersion": "9"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "worker-1", "generation": 0, "resourceSliceCount": 1},
            "nodeName": "worker-1",
            "devices": [device(i) for i in range(devices)],
        },
    }


def scheduling_context() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "PodSchedulingContext",
        "metadata": {"name": "trainer-0", "namespace": "default", "uid": UID, "resourceVersion": "4"},
        "spec": {"selectedNode": "worker-1", "potentialNodes": ["worker-1", "worker-2"]},
        "status": {"resourceClaims": [{"name": "gpu", "unsuitableNodes": ["worker-2"]}]},
    }


def pod() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "trainer-0",
            "namespace": "default",
            "uid": UID,
            "resourceVersion": "7",
            "creationTimestamp": "2024-08-13T10:00:00Z",
            "labels": {"app": "trainer"},
        },
        "spec": {
            "resourceClaims": [
                {"name": "gpu", "resourceClaimTemplateName": "gpu-template"},
                {"name": "shared", "resourceClaimName": "shared-claim"},
            ],
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example.com/trainer:1.0",
                    "imagePullPolicy": "IfNotPresent",
                    "terminationMessagePolicy": "File",
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "1Gi"},
                        "limits": {"cpu": "1", "memory": "1Gi"},
                        "claims": [{"name": "gpu"}, {"name": "shared", "request": "gpu"}],
                    },
                }
            ],
            "initContainers": [{"name": "setup", "image": "busybox:1.36"}],
            "restartPolicy": "Never",
            "dnsPolicy": "ClusterFirst",
            "terminationGracePeriodSeconds": 30,
            "schedulerName": "default-scheduler",
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        },
        "status": {"phase": "Pending"},
    }


def node() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "worker-1",
            "uid": UID,
            "resourceVersion": "2",
            "labels": {"kubernetes.io/hostname": "worker-1"},
        },
        "spec": {"taints": [{"key": "example.com/gpu", "value": "true", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "allocatable": {"cpu": "7500m", "memory": "31Gi", "pods": "110"},
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "worker-1"}],
        },
    }


def namespace() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a", "uid": UID, "resourceVersion": "1"},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def lease() -> Obj:
    """A node's heartbeat Lease, as the node agent (and kubelet) writes it."""
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": "node-1",
            "namespace": "kube-node-lease",
            "uid": UID,
            "resourceVersion": "1",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": UID}],
        },
        "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40, "renewTime": "2026-12-02T04:01:09.739820Z"},
    }


def event() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "trainer-0.17e8b1c2d3e4f5a6", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "trainer-0", "uid": UID},
        "reason": "FailedScheduling",
        "message": "0/3 nodes are available: 3 cannot allocate all claims.",
        "type": "Warning",
        "source": {"component": "default-scheduler"},
        "count": 1,
        "firstTimestamp": "2024-08-13T10:00:00Z",
        "lastTimestamp": "2024-08-13T10:00:00Z",
    }
