"""Realistic objects of the kinds draplane only stores (for upstream kube-scheduler's informers).

Each is what kube-apiserver 1.31 would hold after defaulting, shaped as the
upstream components and kubectl create them; tests of validation, tables and
the API use them.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
UID = "0b3a6f9e-6a0e-4d5e-9c1e-4f2d3c1b2a10"


def _meta(name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name, "uid": UID, "resourceVersion": "1", "creationTimestamp": "2026-12-02T04:00:00Z"}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _template(app: str) -> Obj:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]},
    }


def persistent_volume() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": _meta("pv-1"),
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "standard",
            "volumeMode": "Filesystem",
            "hostPath": {"path": "/data/pv-1"},
            "claimRef": {"namespace": "default", "name": "data-0"},
        },
        "status": {"phase": "Bound"},
    }


def persistent_volume_claim() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": _meta("data-0", "default"),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "10Gi"}},
            "storageClassName": "standard",
            "volumeMode": "Filesystem",
            "volumeName": "pv-1",
        },
        "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}},
    }


def service() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta("web", "default"),
        "spec": {
            "type": "ClusterIP",
            "clusterIP": "10.96.0.10",
            "clusterIPs": ["10.96.0.10"],
            "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}],
            "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster",
        },
        "status": {"loadBalancer": {}},
    }


def replication_controller() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": _meta("legacy", "default"),
        "spec": {"replicas": 2, "selector": {"app": "legacy"}, "template": _template("legacy")},
        "status": {"replicas": 2, "readyReplicas": 1},
    }


def replica_set() -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": _meta("web-5d4f8b", "default"),
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": _template("web")},
        "status": {"replicas": 3, "readyReplicas": 3},
    }


def stateful_set() -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _meta("db", "default"),
        "spec": {
            "replicas": 1,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": _template("db"),
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        },
        "status": {"replicas": 1, "readyReplicas": 1},
    }


def pod_disruption_budget() -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _meta("web", "default"),
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3},
    }


def storage_class() -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {**_meta("standard"), "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "hostpath.csi.k8s.io",
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def csi_node() -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": _meta("node-1"),
        "spec": {"drivers": [{"name": "hostpath.csi.k8s.io", "nodeID": "node-1", "topologyKeys": ["zone"]}]},
    }


def csi_driver() -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": _meta("hostpath.csi.k8s.io"),
        "spec": {"attachRequired": False, "podInfoOnMount": True, "volumeLifecycleModes": ["Persistent", "Ephemeral"]},
    }


def csi_storage_capacity() -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": _meta("csisc-abcde", "kube-system"),
        "storageClassName": "standard",
        "capacity": "100Gi",
        "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": "node-1"}},
    }


STORED_KINDS = {
    "PersistentVolume": persistent_volume,
    "PersistentVolumeClaim": persistent_volume_claim,
    "Service": service,
    "ReplicationController": replication_controller,
    "ReplicaSet": replica_set,
    "StatefulSet": stateful_set,
    "PodDisruptionBudget": pod_disruption_budget,
    "StorageClass": storage_class,
    "CSINode": csi_node,
    "CSIDriver": csi_driver,
    "CSIStorageCapacity": csi_storage_capacity,
}
