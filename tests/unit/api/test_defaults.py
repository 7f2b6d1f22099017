"""Kubernetes 1.31 defaulting, kind by kind."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.api.admission.defaults import apply_defaults, image_tag
from services.api.machinery.codec import decode_object
from services.api.types import registry
from tests.support import samples


def registry_kind(group: str, kind: str) -> registry.ResourceType:
    rt = registry.by_kind(group, kind)
    assert rt is not None
    return rt


POD = registry_kind("", "Pod")
CLAIM = registry_kind("resource.k8s.io", "ResourceClaim")
TEMPLATE = registry_kind("resource.k8s.io", "ResourceClaimTemplate")
NAMESPACE = registry_kind("", "Namespace")
NODE = registry_kind("", "Node")


def defaulted(rt: registry.ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    apply_defaults(rt, out)
    return out


# --------------------------------------------------------------------------
# resource.k8s.io


@pytest.mark.parametrize(
    ("request_in", "request_out"),
    [
        (
            {"name": "a", "deviceClassName": "c"},
            {"name": "a", "deviceClassName": "c", "allocationMode": "ExactCount", "count": 1},
        ),
        (
            {"name": "a", "allocationMode": "ExactCount", "count": 3},
            {"name": "a", "allocationMode": "ExactCount", "count": 3},
        ),
        ({"name": "a", "count": 0}, {"name": "a", "count": 1, "allocationMode": "ExactCount"}),
        ({"name": "a", "count": 5}, {"name": "a", "count": 5, "allocationMode": "ExactCount"}),
        ({"name": "a", "allocationMode": "All"}, {"name": "a", "allocationMode": "All"}),
        ({"name": "a", "allocationMode": ""}, {"name": "a", "allocationMode": "ExactCount", "count": 1}),
        # An unknown mode is left for validation to reject.
        ({"name": "a", "allocationMode": "Some"}, {"name": "a", "allocationMode": "Some"}),
    ],
)
def test_device_request_defaults(request_in: dict[str, Any], request_out: dict[str, Any]) -> None:
    claim = {"spec": {"devices": {"requests": [request_in]}}}
    assert defaulted(CLAIM, claim)["spec"]["devices"]["requests"] == [request_out]
    template = {"spec": {"spec": {"devices": {"requests": [request_in]}}}}
    assert defaulted(TEMPLATE, template)["spec"]["spec"]["devices"]["requests"] == [request_out]


def test_claim_without_requests_is_untouched() -> None:
    claims: list[dict[str, Any]] = [{}, {"spec": {}}, {"spec": {"devices": {}}}, {"spec": None}]
    for claim in claims:
        assert defaulted(CLAIM, claim) == claim


def test_other_resource_kinds_have_no_defaults() -> None:
    for rt, make in [
        (registry.by_kind("resource.k8s.io", "ResourceSlice"), samples.resource_slice),
        (registry.by_kind("resource.k8s.io", "DeviceClass"), samples.device_class),
        (registry.by_kind("resource.k8s.io", "PodSchedulingContext"), samples.pod_scheduling_context),
        (registry.by_kind("", "Event"), samples.event),
    ]:
        assert rt is not None
        assert defaulted(rt, make()) == make()


# --------------------------------------------------------------------------
# Pod


def test_minimal_pod_gets_kubernetes_defaults() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert defaulted(POD, pod) == {
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx",
                    "imagePullPolicy": "Always",
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
            "enableServiceLinks": True,
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "securityContext": {},
            "terminationGracePeriodSeconds": 30,
            "schedulerName": "default-scheduler",
        },
    }


def test_pod_defaults_keep_what_was_set() -> None:
    pod = {
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx:1.25",
                    "imagePullPolicy": "Never",
                    "terminationMessagePath": "/tmp/t",
                    "terminationMessagePolicy": "FallbackToLogsOnError",
                }
            ],
            "enableServiceLinks": False,
            "dnsPolicy": "Default",
            "restartPolicy": "Never",
            "securityContext": {"runAsUser": 1000},
            "terminationGracePeriodSeconds": 0,
            "schedulerName": "draplane",
        }
    }
    assert defaulted(POD, pod) == pod


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry.example.com:5000/team/app", "Always"),
        ("registry.example.com:5000/team/app:v2", "IfNotPresent"),
        ("busybox@sha256:" + "a" * 64, "IfNotPresent"),
        ("busybox:latest@sha256:" + "a" * 64, "Always"),
        ("", "IfNotPresent"),
        ("Not/A/Valid:Image", "IfNotPresent"),
    ],
)
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    pod = {"spec": {"containers": [{"name": "c", "image": image}], "initContainers": [{"name": "i", "image": image}]}}
    out = defaulted(POD, pod)
    assert out["spec"]["containers"][0]["imagePullPolicy"] == policy
    assert out["spec"]["initContainers"][0]["imagePullPolicy"] == policy


def test_image_tag_parsing() -> None:
    assert image_tag("localhost/app") == "latest"
    assert image_tag("a" * 64) == ""
    assert image_tag("app:1.0") == "1.0"


def test_requests_default_to_limits_for_containers_and_init_containers_only() -> None:
    pod = {
        "spec": {
            "containers": [
                {"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}}
            ],
            "initContainers": [{"name": "i", "resources": {"limits": {"example.com/gpu": 1}}}],
            "ephemeralContainers": [{"name": "e", "resources": {"limits": {"cpu": "1"}}}],
        }
    }
    out = defaulted(POD, pod)["spec"]
    assert out["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert out["initContainers"][0]["resources"]["requests"] == {"example.com/gpu": 1}
    assert "requests" not in out["ephemeralContainers"][0]["resources"]


def test_container_ports_env_and_probes() -> None:
    container = {
        "name": "c",
        "image": "app:1",
        "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
        "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "livenessProbe": {"httpGet": {"port": 80}},
        "readinessProbe": {"grpc": {"port": 9000}, "timeoutSeconds": 5, "periodSeconds": 0},
        "startupProbe": {"exec": {"command": ["true"]}},
        "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/stop"}}, "postStart": {"sleep": {"seconds": 1}}},
    }
    out = defaulted(POD, {"spec": {"containers": [container]}})["spec"]["containers"][0]
    assert out["ports"] == [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}]
    assert out["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "metadata.name", "apiVersion": "v1"}
    timings = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert out["livenessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, **timings}
    assert out["readinessProbe"] == {"grpc": {"port": 9000, "service": ""}, **timings, "timeoutSeconds": 5}
    assert out["startupProbe"] == {"exec": {"command": ["true"]}, **timings}
    assert out["lifecycle"]["preStop"]["httpGet"] == {"port": 80, "path": "/stop", "scheme": "HTTP"}
    assert out["lifecycle"]["postStart"] == {"sleep": {"seconds": 1}}


def test_host_network_defaults_host_ports() -> None:
    pod = {
        "spec": {
            "hostNetwork": True,
            "containers": [{"name": "c", "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 8081}]}],
        }
    }
    ports = defaulted(POD, pod)["spec"]["containers"][0]["ports"]
    assert [(p["containerPort"], p["hostPort"]) for p in ports] == [(80, 80), (81, 8081)]
    ports = defaulted(POD, {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}})["spec"][
        "containers"
    ][0]["ports"]
    assert "hostPort" not in ports[0]


def test_volume_defaults() -> None:
    volumes = [
        {"name": "empty"},
        {"name": "host", "hostPath": {"path": "/var"}},
        {"name": "secret", "secret": {"secretName": "s"}},
        {"name": "cm", "configMap": {"name": "c", "defaultMode": 0o400}},
        {"name": "down", "downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
        {
            "name": "proj",
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"path": "token"}},
                    {"downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                ]
            },
        },
        {"name": "iscsi", "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0}},
        {"name": "rbd", "rbd": {"monitors": ["m"], "image": "i"}},
        {"name": "azure", "azureDisk": {"diskName": "d", "diskURI": "u"}},
        {"name": "scale", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}}},
        {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
    ]
    out = {v["name"]: v for v in defaulted(POD, {"spec": {"volumes": volumes}})["spec"]["volumes"]}
    assert out["empty"] == {"name": "empty", "emptyDir": {}}
    assert out["host"]["hostPath"] == {"path": "/var", "type": ""}
    assert out["secret"]["secret"]["defaultMode"] == 420
    assert out["cm"]["configMap"]["defaultMode"] == 0o400
    assert out["down"]["downwardAPI"] == {
        "items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}],
        "defaultMode": 420,
    }
    projected = out["proj"]["projected"]
    assert projected["defaultMode"] == 420
    assert projected["sources"][0]["serviceAccountToken"] == {"path": "token", "expirationSeconds": 3600}
    assert projected["sources"][1]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"] == "v1"
    assert out["iscsi"]["iscsi"]["iscsiInterface"] == "default"
    assert {k: out["rbd"]["rbd"][k] for k in ("pool", "user", "keyring")} == {
        "pool": "rbd",
        "user": "admin",
        "keyring": "/etc/ceph/keyring",
    }
    azure = out["azure"]["azureDisk"]
    assert (azure["cachingMode"], azure["fsType"], azure["readOnly"], azure["kind"]) == (
        "ReadWrite",
        "ext4",
        False,
        "Shared",
    )
    assert (out["scale"]["scaleIO"]["storageMode"], out["scale"]["scaleIO"]["fsType"]) == ("ThinProvisioned", "xfs")
    assert out["eph"]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] == "Filesystem"


def test_pod_without_spec_gets_a_defaulted_spec() -> None:
    assert defaulted(POD, {"metadata": {"name": "p"}})["spec"]["schedulerName"] == "default-scheduler"


def test_defaults_are_idempotent_and_decode_cleanly() -> None:
    once = defaulted(POD, samples.pod())
    assert defaulted(POD, once) == once
    decoded, warnings = decode_object(POD, once)
    assert warnings == []
    assert decoded["spec"] == once["spec"]


# --------------------------------------------------------------------------
# Namespace and Node


def test_namespace_defaults() -> None:
    assert defaulted(NAMESPACE, {"metadata": {"name": "ml"}}) == {
        "metadata": {"name": "ml", "labels": {"kubernetes.io/metadata.name": "ml"}},
        "status": {"phase": "Active"},
    }
    ns = {
        "metadata": {"name": "ml", "labels": {"kubernetes.io/metadata.name": "other", "a": "b"}},
        "status": {"phase": "Terminating"},
    }
    out = defaulted(NAMESPACE, ns)
    assert out["metadata"]["labels"] == {"kubernetes.io/metadata.name": "ml", "a": "b"}
    assert out["status"]["phase"] == "Terminating"
    # A generateName-only namespace gets no label yet (its name is not known).
    assert "labels" not in defaulted(NAMESPACE, {"metadata": {"generateName": "ml-"}})["metadata"]


def test_node_allocatable_defaults_to_capacity() -> None:
    node = {"status": {"capacity": {"cpu": "4", "memory": "8Gi"}}}
    out = defaulted(NODE, node)
    assert out["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi"}
    out["status"]["allocatable"]["cpu"] = "3"
    assert out["status"]["capacity"]["cpu"] == "4", "allocatable must be a copy"
    kept = {"status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"}}}
    assert defaulted(NODE, kept) == kept
    assert defaulted(NODE, {"spec": {}}) == {"spec": {}}
