"""The official `kubernetes` Python package against a running stack, on both backends.

Today's client (37.x, in the test venv) through its typed ``ResourceV1Api``,
and Kubernetes 1.31's (31.x, in the venv ``ops/client-venv`` keeps under
.cache/ from ``ops/kubernetes-31.lock``) through its typed
``ResourceV1alpha3Api``, in a subprocess (``kubernetes31_flow.py``).
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import uuid
from pathlib import Path
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


# --- kubernetes 37.x: the typed resource.k8s.io/v1 API --------------------------------------------

DRIVER = "gpu.example.com"


def gpu(index: int, memory: str) -> k8s.V1Device:
    """A v1 device: flat (no ``basic``), capacity as ``{value}``."""
    return k8s.V1Device(
        name=f"gpu-{index}",
        attributes={"index": k8s.V1DeviceAttribute(int=index), "model": k8s.V1DeviceAttribute(string="LATEST")},
        capacity={"memory": k8s.V1DeviceCapacity(value=memory)},
    )


def typed_v1_flow(stack: Stack, ns: str) -> dict[str, Any]:
    """Create, list, watch and patch classes, claims, templates and slices through ``ResourceV1Api``'s typed models.

    The 37.x models are pydantic models that forbid unknown fields, so every
    response also proves the server answered in v1's shape (a v1beta1
    ``basic`` or a flat request field would not deserialize).
    """
    api = api_client(stack)
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    res = k8s.ResourceV1Api(api)
    labels = {"flow": ns}
    cls_name = f"gpu-{ns}.example.com"
    start_rv = res.list_namespaced_resource_claim(ns).metadata.resource_version
    out: dict[str, Any] = {}
    out["class"] = res.create_device_class(
        k8s.V1DeviceClass(
            metadata=k8s.V1ObjectMeta(name=cls_name, labels=labels),
            spec=k8s.V1DeviceClassSpec(
                selectors=[k8s.V1DeviceSelector(cel=k8s.V1CELDeviceSelector(expression=f"device.driver == '{DRIVER}'"))]
            ),
        )
    )
    request = k8s.V1DeviceRequest(
        name="gpus",
        exactly=k8s.V1ExactDeviceRequest(
            device_class_name=cls_name,
            allocation_mode="ExactCount",
            count=2,
            selectors=[
                k8s.V1DeviceSelector(
                    cel=k8s.V1CELDeviceSelector(expression="device.attributes['gpu.example.com'].model == 'LATEST'")
                )
            ],
        ),
    )
    claim_spec = k8s.V1ResourceClaimSpec(devices=k8s.V1DeviceClaim(requests=[request]))
    out["template"] = res.create_namespaced_resource_claim_template(
        ns,
        k8s.V1ResourceClaimTemplate(
            metadata=k8s.V1ObjectMeta(name="two-gpus", labels=labels),
            spec=k8s.V1ResourceClaimTemplateSpec(spec=claim_spec),
        ),
    )
    out["claim"] = res.create_namespaced_resource_claim(
        ns, k8s.ResourceV1ResourceClaim(metadata=k8s.V1ObjectMeta(name="two-gpus", labels=labels), spec=claim_spec)
    )
    out["slice"] = res.create_resource_slice(
        k8s.V1ResourceSlice(
            metadata=k8s.V1ObjectMeta(name=f"{ns}-node-a", labels=labels),
            spec=k8s.V1ResourceSliceSpec(
                driver=DRIVER,
                node_name=f"{ns}-node",
                pool=k8s.V1ResourcePool(name=f"{ns}-node-a", generation=1, resource_slice_count=1),
                devices=[gpu(0, "80Gi"), gpu(1, "80Gi")],
            ),
        )
    )
    selector = f"flow={ns}"
    out["lists"] = {
        "classes": [c.metadata.name for c in res.list_device_class(label_selector=selector).items],
        "claims": [c.metadata.name for c in res.list_namespaced_resource_claim(ns).items],
        "all claims": [
            c.metadata.name for c in res.list_resource_claim_for_all_namespaces(label_selector=selector).items
        ],
        "templates": [t.metadata.name for t in res.list_namespaced_resource_claim_template(ns).items],
        "slices": [s.metadata.name for s in res.list_resource_slice(field_selector=f"spec.nodeName={ns}-node").items],
    }
    # 37.0.2's Watch names the item type by cutting "List" off the list's (V1ResourceClaim), but 37.x
    # calls resource.k8s.io/v1's claim ResourceV1ResourceClaim (core/v1 has a ResourceClaim too): given here.
    w = watch.Watch(return_type=k8s.ResourceV1ResourceClaim)
    for event in w.stream(res.list_namespaced_resource_claim, ns, resource_version=start_rv, timeout_seconds=10):
        out["watched"] = (event["type"], event["object"])
        w.stop()
    out["patched class"] = res.patch_device_class(  # the client's default: a JSON patch
        cls_name, [{"op": "add", "path": "/metadata/labels/patched", "value": "json"}]
    )
    out["patched claim"] = res.patch_namespaced_resource_claim(
        "two-gpus", ns, {"metadata": {"labels": {"patched": "merge"}}}, _content_type="application/merge-patch+json"
    )
    out["patched template"] = res.patch_namespaced_resource_claim_template(
        "two-gpus",
        ns,
        {"metadata": {"labels": {"patched": "strategic"}}},
        _content_type="application/strategic-merge-patch+json",
    )
    out["patched slice"] = res.patch_resource_slice(
        f"{ns}-node-a",
        {"spec": {"pool": {"generation": 2}, "devices": [gpu(0, "40Gi").to_dict()]}},
        _content_type="application/merge-patch+json",
    )
    results = [
        k8s.V1DeviceRequestAllocationResult(request="gpus", driver=DRIVER, pool=f"{ns}-node-a", device=f"gpu-{i}")
        for i in (0, 1)
    ]
    allocation = k8s.V1AllocationResult(devices=k8s.V1DeviceAllocationResult(results=results))
    out["allocated claim"] = res.patch_namespaced_resource_claim_status(
        "two-gpus",
        ns,
        {"status": {"allocation": api.sanitize_for_serialization(allocation)}},
        _content_type="application/merge-patch+json",
    )
    out["read claim"] = res.read_namespaced_resource_claim("two-gpus", ns)
    res.delete_namespaced_resource_claim("two-gpus", ns)
    res.delete_namespaced_resource_claim_template("two-gpus", ns)
    res.delete_resource_slice(f"{ns}-node-a")
    res.delete_device_class(cls_name)
    out["after delete"] = [c.metadata.name for c in res.list_namespaced_resource_claim(ns).items]
    return out


async def test_typed_resource_v1_api_creates_lists_watches_and_patches(stack: Stack) -> None:
    ns = f"v1-{uuid.uuid4().hex[:8]}"
    result = await asyncio.to_thread(typed_v1_flow, stack, ns)
    cls_name = f"gpu-{ns}.example.com"
    assert isinstance(result["class"], k8s.V1DeviceClass) and result["class"].api_version == "resource.k8s.io/v1"
    assert result["class"].spec.selectors[0].cel.expression == f"device.driver == '{DRIVER}'"
    template, claim = result["template"], result["claim"]
    assert isinstance(template, k8s.V1ResourceClaimTemplate) and isinstance(claim, k8s.ResourceV1ResourceClaim)
    for spec in (template.spec.spec, claim.spec):
        (request,) = spec.devices.requests
        assert request.name == "gpus" and request.first_available is None
        assert (request.exactly.device_class_name, request.exactly.allocation_mode, request.exactly.count) == (
            cls_name,
            "ExactCount",
            2,
        )
    assert claim.metadata.uid and claim.api_version == "resource.k8s.io/v1"
    slice_ = result["slice"]
    assert isinstance(slice_, k8s.V1ResourceSlice) and slice_.spec.node_name == f"{ns}-node"
    assert [(d.name, d.attributes["index"].int, d.capacity["memory"].value) for d in slice_.spec.devices] == [
        ("gpu-0", 0, "80Gi"),
        ("gpu-1", 1, "80Gi"),
    ]
    assert result["lists"] == {
        "classes": [cls_name],
        "claims": ["two-gpus"],
        "all claims": ["two-gpus"],
        "templates": ["two-gpus"],
        "slices": [f"{ns}-node-a"],
    }
    kind, watched = result["watched"]
    assert kind == "ADDED" and isinstance(watched, k8s.ResourceV1ResourceClaim)
    assert watched.metadata.name == "two-gpus" and watched.spec.devices.requests[0].exactly.count == 2
    assert result["patched class"].metadata.labels == {"flow": ns, "patched": "json"}
    assert result["patched claim"].metadata.labels == {"flow": ns, "patched": "merge"}
    assert result["patched template"].metadata.labels == {"flow": ns, "patched": "strategic"}
    patched_slice = result["patched slice"]
    assert patched_slice.spec.pool.generation == 2
    assert [(d.name, d.capacity["memory"].value) for d in patched_slice.spec.devices] == [("gpu-0", "40Gi")]
    assert int(patched_slice.metadata.resource_version) > int(slice_.metadata.resource_version)
    allocated = result["allocated claim"].status.allocation.devices.results
    assert [(r.request, r.driver, r.pool, r.device) for r in allocated] == [
        ("gpus", DRIVER, f"{ns}-node-a", "gpu-0"),
        ("gpus", DRIVER, f"{ns}-node-a", "gpu-1"),
    ]
    assert result["read claim"].status == result["allocated claim"].status
    assert result["read claim"].metadata.labels == {"flow": ns, "patched": "merge"}
    assert result["read claim"].spec == claim.spec
    assert result["after delete"] == []


# --- kubernetes 31.x: the typed resource.k8s.io/v1alpha3 API, in its own venv ----------------------

REPO = Path(__file__).resolve().parents[2]
FLOW_31 = Path(__file__).with_name("kubernetes31_flow.py")
UNAVAILABLE = 75  # ops/client-venv: the wheels could not be downloaded


def pypi_answers() -> bool:
    for host in ("pypi.org", "files.pythonhosted.org"):
        try:
            with socket.create_connection((host, 443), timeout=5):
                pass
        except OSError:
            return False
    return True


@pytest.fixture(scope="session")
def kubernetes31_python() -> str:
    """The python of the kubernetes 31.x venv (created once under .cache/; seconds when its wheels are cached)."""
    done = subprocess.run([REPO / "ops" / "client-venv"], capture_output=True, text=True, timeout=600, check=False)
    if done.returncode == UNAVAILABLE and not pypi_answers():
        pytest.skip(f"PyPI is unreachable, so kubernetes 31.x cannot be installed: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, f"ops/client-venv failed ({done.returncode}):\n{done.stderr}"
    return done.stdout.strip().splitlines()[-1]


async def test_kubernetes_31_typed_v1alpha3_api_keeps_working(stack: Stack, kubernetes31_python: str) -> None:
    ns = f"v1a3-{uuid.uuid4().hex[:8]}"
    args = [kubernetes31_python, str(FLOW_31), stack.url, str(stack.ca_cert), stack.token, ns]
    done = await asyncio.to_thread(subprocess.run, args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    cls_name = f"gpu-{ns}.example.com"
    assert result["client"].startswith("31.")
    assert result["types"] == {
        "class": "V1alpha3DeviceClass",
        "template": "V1alpha3ResourceClaimTemplate",
        "claim": "V1alpha3ResourceClaim",
        "slice": "V1alpha3ResourceSlice",
        "patched claim": "V1alpha3ResourceClaim",
        "patched slice": "V1alpha3ResourceSlice",
        "read claim": "V1alpha3ResourceClaim",
    }
    assert result["class"]["apiVersion"] == "resource.k8s.io/v1alpha3"
    expected_request = {"name": "gpus", "deviceClassName": cls_name, "allocationMode": "ExactCount", "count": 2}
    assert result["template"]["spec"]["spec"]["devices"]["requests"] == [expected_request]
    assert result["claim"]["spec"]["devices"]["requests"] == [expected_request]
    assert result["claim"]["apiVersion"] == "resource.k8s.io/v1alpha3"
    devices = result["slice"]["spec"]["devices"]
    assert [(d["name"], d["basic"]["capacity"]) for d in devices] == [
        ("gpu-0", {"memory": "80Gi"}),
        ("gpu-1", {"memory": "80Gi"}),
    ]
    assert result["lists"] == {
        "classes": [cls_name],
        "claims": ["two-gpus"],
        "templates": ["two-gpus"],
        "slices": [f"{ns}-node"],
    }
    assert result["watched type"] == "V1alpha3ResourceClaim"
    assert result["watched"]["type"] == "ADDED" and result["watched"]["object"]["metadata"]["name"] == "two-gpus"
    assert result["patched claim"]["metadata"]["labels"] == {"flow": ns, "patched": "yes"}
    patched_slice = result["patched slice"]
    assert patched_slice["spec"]["pool"]["generation"] == 2
    assert [(d["name"], d["basic"]["capacity"]) for d in patched_slice["spec"]["devices"]] == [
        ("gpu-0", {"memory": "40Gi"})
    ]
    assert result["read claim"]["spec"] == result["claim"]["spec"]
    assert result["after delete"] == []
