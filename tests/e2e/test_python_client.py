"""The official `kubernetes` Python package against a running stack, on both backends."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import dynamic, watch

from tests.e2e.conftest import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def api_client(stack: Stack) -> k8s.ApiClient:
    cfg = k8s.Configuration()
    cfg.host = stack.url
    cfg.ssl_ca_cert = str(stack.ca_cert)
    cfg.api_key = {"authorization": f"Bearer {stack.token}"}
    return k8s.ApiClient(cfg)


def core_v1_flow(stack: Stack, ns: str) -> dict[str, Any]:
    api = k8s.CoreV1Api(api_client(stack))
    api.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    listed = api.list_namespaced_pod(ns)
    start_rv = listed.metadata.resource_version
    pod = k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name="py", labels={"app": "py"}),
        spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="busybox")]),
    )
    created = api.create_namespaced_pod(ns, pod)
    names = [p.metadata.name for p in api.list_namespaced_pod(ns, label_selector="app=py").items]
    seen = []
    w = watch.Watch()
    for event in w.stream(api.list_namespaced_pod, ns, resource_version=start_rv, timeout_seconds=10):
        seen.append((event["type"], event["object"].metadata.name))
        w.stop()
    return {"created": created, "names": names, "seen": seen}


async def test_core_v1_creates_lists_and_watches_pods(stack: Stack) -> None:
    ns = f"py-{uuid.uuid4().hex[:8]}"
    result = await asyncio.to_thread(core_v1_flow, stack, ns)
    assert result["created"].metadata.uid
    assert result["created"].status.phase == "Pending"
    assert result["names"] == ["py"]
    assert result["seen"] == [("ADDED", "py")]


def dynamic_flow(stack: Stack, ns: str) -> dict[str, Any]:
    dyn = dynamic.DynamicClient(api_client(stack))
    k8s.CoreV1Api(dyn.client).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    classes = dyn.resources.get(api_version="resource.k8s.io/v1alpha3", kind="DeviceClass")
    claims = dyn.resources.get(api_version="resource.k8s.io/v1alpha3", kind="ResourceClaim")
    cls_name = f"gpu-{ns}.example.com"
    classes.create(
        body={
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "DeviceClass",
            "metadata": {"name": cls_name},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    )
    claim = claims.create(
        namespace=ns,
        body={
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "ResourceClaim",
            "metadata": {"name": "c"},
            "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": cls_name}]}},
        },
    )
    patched = claims.patch(
        namespace=ns,
        name="c",
        body={"metadata": {"labels": {"patched": "yes"}}},
        content_type="application/merge-patch+json",
    )
    claims.delete(namespace=ns, name="c")
    remaining = claims.get(namespace=ns).items
    classes.delete(name=cls_name)
    return {"claim": claim, "patched": patched, "remaining": remaining}


async def test_dynamic_client_creates_patches_and_deletes_dra_objects(stack: Stack) -> None:
    ns = f"dyn-{uuid.uuid4().hex[:8]}"
    result = await asyncio.to_thread(dynamic_flow, stack, ns)
    assert result["claim"].spec.devices.requests[0].allocationMode == "ExactCount"
    assert result["patched"].metadata.labels.to_dict() == {"patched": "yes"}
    assert int(result["patched"].metadata.resourceVersion) > int(result["claim"].metadata.resourceVersion)
    assert result["remaining"] == []
