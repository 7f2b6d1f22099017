"""The kinds draplane stores for upstream kube-scheduler's informers, through kubectl and the Python client.

kube-scheduler 1.31's informers list and watch PersistentVolumes,
PersistentVolumeClaims, Services, ReplicationControllers, ReplicaSets,
StatefulSets, PodDisruptionBudgets, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities; before they were served every LIST was a 404 and the
informers never synced (issue "Unmodified kube-scheduler"). Here each kind is
created with kubectl, printed with Kubernetes' columns, read back with
kube's defaults, and listed and watched (with bookmarks, as informers ask)
through the official client, on both backends.
"""

from __future__ import annotations

import asyncio
import copy
import json
import uuid
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import watch

from tests.e2e.conftest import Stack
from tests.support.stored_kinds import STORED_KINDS

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

# kubectl get's header line per resource (pkg/printers/internalversion/printers.go, 1.31; wide columns hidden).
HEADERS = {
    "persistentvolumes": "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS "
    "VOLUMEATTRIBUTESCLASS REASON AGE",
    "persistentvolumeclaims": "NAMESPACE NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS "
    "VOLUMEATTRIBUTESCLASS AGE",
    "services": "NAMESPACE NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE",
    "replicationcontrollers": "NAMESPACE NAME DESIRED CURRENT READY AGE",
    "replicasets.apps": "NAMESPACE NAME DESIRED CURRENT READY AGE",
    "statefulsets.apps": "NAMESPACE NAME READY AGE",
    "poddisruptionbudgets.policy": "NAMESPACE NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE",
    "storageclasses.storage.k8s.io": "NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE",
    "csinodes.storage.k8s.io": "NAME DRIVERS AGE",
    "csidrivers.storage.k8s.io": "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS "
    "REQUIRESREPUBLISH MODES AGE",
    "csistoragecapacities.storage.k8s.io": "NAMESPACE NAME STORAGECLASSNAME CAPACITY",
}


def manifest(ns: str) -> list[dict[str, Any]]:
    """Every stored kind as a user writes it: no server fields, no status, namespaced ones in ``ns``."""
    out = []
    for make in STORED_KINDS.values():
        obj = copy.deepcopy(make())
        obj.pop("status", None)
        meta = obj["metadata"]
        for key in ("uid", "resourceVersion", "creationTimestamp"):
            meta.pop(key, None)
        if "namespace" in meta:
            meta["namespace"] = ns
        else:
            meta["name"] = f"{ns}-{meta['name']}"
        out.append(obj)
    return out


async def test_kubectl_creates_prints_and_reads_back_every_stored_kind(stack: Stack) -> None:
    ns = f"kinds-{uuid.uuid4().hex[:8]}"
    await stack.kubectl("create", "namespace", ns)
    docs = manifest(ns)
    applied = await stack.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))
    assert applied.out.count(" created") == len(STORED_KINDS), applied.out
    for resource, header in HEADERS.items():
        got = await stack.kubectl("get", resource, "-A")
        lines = got.out.splitlines()
        assert " ".join(lines[0].split()) == header, resource
        assert any(ns in line for line in lines[1:]), (resource, got.out)
    # kube-apiserver's defaults, read back
    pv = json.loads((await stack.kubectl("get", "pv", f"{ns}-pv-1", "-o", "json")).out)
    assert pv["status"]["phase"] == "Pending" and pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    svc = json.loads((await stack.kubectl("get", "svc", "web", "-n", ns, "-o", "json")).out)
    assert svc["spec"]["sessionAffinity"] == "None" and svc["spec"]["ports"][0]["targetPort"] == 8080
    sts = json.loads((await stack.kubectl("get", "sts", "db", "-n", ns, "-o", "json")).out)
    assert sts["spec"]["revisionHistoryLimit"] == 10
    assert sts["spec"]["template"]["spec"]["schedulerName"] == "default-scheduler"
    driver = json.loads((await stack.kubectl("get", "csidriver", f"{ns}-hostpath.csi.k8s.io", "-o", "json")).out)
    assert driver["spec"]["fsGroupPolicy"] == "ReadWriteOnceWithFSType"
    sc = await stack.kubectl("get", "sc", f"{ns}-standard", "--no-headers")
    assert sc.out.split()[:2] == [f"{ns}-standard", "(default)"]
    # the status subresource: a PVC bound by the volume controller
    await stack.kubectl(
        "patch",
        "pvc",
        "data-0",
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"10Gi"}}}',
    )
    row = (await stack.kubectl("get", "pvc", "data-0", "-n", ns, "--no-headers")).out.split()
    assert row[:5] == ["data-0", "Bound", "pv-1", "10Gi", "RWO"]
    # Services have no deletecollection in Kubernetes; other stored kinds do
    refused = await stack.kubectl("delete", "--raw", f"/api/v1/namespaces/{ns}/services", ok=False)
    assert refused.code != 0 and "MethodNotAllowed" in refused.err, refused
    await stack.kubectl("delete", "--raw", f"/apis/apps/v1/namespaces/{ns}/replicasets")
    assert (await stack.kubectl("get", "rs", "-n", ns, "-o", "name")).out == ""


def informer_flow(stack: Stack, ns: str) -> dict[str, Any]:
    cfg = k8s.Configuration()
    cfg.host = stack.url
    cfg.ssl_ca_cert = str(stack.ca_cert)
    cfg.api_key = {"authorization": f"Bearer {stack.token}"}
    api = k8s.ApiClient(cfg)
    core, apps, policy, storage = k8s.CoreV1Api(api), k8s.AppsV1Api(api), k8s.PolicyV1Api(api), k8s.StorageV1Api(api)
    lists = {
        "persistentvolumes": core.list_persistent_volume,
        "persistentvolumeclaims": core.list_persistent_volume_claim_for_all_namespaces,
        "services": core.list_service_for_all_namespaces,
        "replicationcontrollers": core.list_replication_controller_for_all_namespaces,
        "replicasets": apps.list_replica_set_for_all_namespaces,
        "statefulsets": apps.list_stateful_set_for_all_namespaces,
        "poddisruptionbudgets": policy.list_pod_disruption_budget_for_all_namespaces,
        "storageclasses": storage.list_storage_class,
        "csinodes": storage.list_csi_node,
        "csidrivers": storage.list_csi_driver,
        "csistoragecapacities": storage.list_csi_storage_capacity_for_all_namespaces,
    }
    start = {name: fn(limit=500).metadata.resource_version for name, fn in lists.items()}
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    storage.create_storage_class(
        k8s.V1StorageClass(metadata=k8s.V1ObjectMeta(name=f"{ns}-fast"), provisioner="example.com/fast")
    )
    apps.create_namespaced_stateful_set(
        ns,
        k8s.V1StatefulSet(
            metadata=k8s.V1ObjectMeta(name="db"),
            spec=k8s.V1StatefulSetSpec(
                service_name="db",
                selector=k8s.V1LabelSelector(match_labels={"app": "db"}),
                template=k8s.V1PodTemplateSpec(
                    metadata=k8s.V1ObjectMeta(labels={"app": "db"}),
                    spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="busybox")]),
                ),
            ),
        ),
    )
    seen: dict[str, list[tuple[str, str]]] = {}
    for name in ("storageclasses", "statefulsets"):
        w = watch.Watch()
        for event in w.stream(
            lists[name], resource_version=start[name], allow_watch_bookmarks=True, timeout_seconds=10
        ):
            seen.setdefault(name, []).append((event["type"], event["object"].metadata.name))
            if event["type"] == "ADDED":
                w.stop()
    return {
        "typed": {name: type(fn(limit=1)).__name__ for name, fn in lists.items()},
        "seen": seen,
        "replicas": apps.read_namespaced_stateful_set("db", ns).spec.replicas,
    }


async def test_python_client_lists_and_watches_every_stored_kind(stack: Stack) -> None:
    ns = f"inf-{uuid.uuid4().hex[:8]}"
    result = await asyncio.to_thread(informer_flow, stack, ns)
    assert result["typed"]["csistoragecapacities"] == "V1CSIStorageCapacityList"
    assert len(result["typed"]) == len(STORED_KINDS)
    assert result["seen"]["storageclasses"][-1] == ("ADDED", f"{ns}-fast")
    assert result["seen"]["statefulsets"][-1] == ("ADDED", "db")
    assert result["replicas"] == 1  # defaulted
