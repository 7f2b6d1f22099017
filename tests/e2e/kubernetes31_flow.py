"""A typed ``ResourceV1alpha3Api`` flow, run by Kubernetes 1.31's official Python client (kubernetes 31.x).

Not a test module: ``test_python_client.py`` runs it in the venv of
``ops/client-venv`` (the test venv's kubernetes 37.x has no v1alpha3 claim
API), as ``python kubernetes31_flow.py HOST CA_FILE TOKEN NAMESPACE``. It
creates, lists, watches and patches a DeviceClass, a ResourceClaimTemplate, a
ResourceClaim and a ResourceSlice with the 31.x models (1.31's shapes: flat
requests, ``basic`` devices, bare capacity quantities), then prints what it
got back as one JSON object, each object as the client deserialized it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from kubernetes import client as k8s
from kubernetes import watch

DRIVER = "gpu.example.com"


def device(index: int, memory: str) -> Any:
    return k8s.V1alpha3Device(
        name=f"gpu-{index}",
        basic=k8s.V1alpha3BasicDevice(
            attributes={"index": k8s.V1alpha3DeviceAttribute(int=index)}, capacity={"memory": memory}
        ),
    )


def flow(host: str, ca_file: str, token: str, ns: str) -> dict[str, Any]:
    cfg = k8s.Configuration()
    cfg.host = host
    cfg.ssl_ca_cert = ca_file
    cfg.api_key = {"authorization": f"Bearer {token}"}
    api = k8s.ApiClient(cfg)
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    res = k8s.ResourceV1alpha3Api(api)
    labels = {"flow": ns}
    cls_name = f"gpu-{ns}.example.com"
    node = f"{ns}-node"
    start_rv = res.list_namespaced_resource_claim(ns).metadata.resource_version
    out: dict[str, Any] = {}
    out["class"] = res.create_device_class(
        k8s.V1alpha3DeviceClass(
            metadata=k8s.V1ObjectMeta(name=cls_name, labels=labels),
            spec=k8s.V1alpha3DeviceClassSpec(
                selectors=[
                    k8s.V1alpha3DeviceSelector(
                        cel=k8s.V1alpha3CELDeviceSelector(expression=f"device.driver == '{DRIVER}'")
                    )
                ]
            ),
        )
    )
    request = k8s.V1alpha3DeviceRequest(name="gpus", device_class_name=cls_name, allocation_mode="ExactCount", count=2)
    claim_spec = k8s.V1alpha3ResourceClaimSpec(devices=k8s.V1alpha3DeviceClaim(requests=[request]))
    out["template"] = res.create_namespaced_resource_claim_template(
        ns,
        k8s.V1alpha3ResourceClaimTemplate(
            metadata=k8s.V1ObjectMeta(name="two-gpus", labels=labels),
            spec=k8s.V1alpha3ResourceClaimTemplateSpec(spec=claim_spec),
        ),
    )
    out["claim"] = res.create_namespaced_resource_claim(
        ns, k8s.V1alpha3ResourceClaim(metadata=k8s.V1ObjectMeta(name="two-gpus", labels=labels), spec=claim_spec)
    )
    out["slice"] = res.create_resource_slice(
        k8s.V1alpha3ResourceSlice(
            metadata=k8s.V1ObjectMeta(name=node, labels=labels),
            spec=k8s.V1alpha3ResourceSliceSpec(
                driver=DRIVER,
                node_name=node,
                pool=k8s.V1alpha3ResourcePool(name=node, generation=1, resource_slice_count=1),
                devices=[device(0, "80Gi"), device(1, "80Gi")],
            ),
        )
    )
    out["lists"] = {
        "classes": [c.metadata.name for c in res.list_device_class(label_selector=f"flow={ns}").items],
        "claims": [c.metadata.name for c in res.list_namespaced_resource_claim(ns).items],
        "templates": [t.metadata.name for t in res.list_namespaced_resource_claim_template(ns).items],
        "slices": [s.metadata.name for s in res.list_resource_slice(field_selector=f"spec.nodeName={node}").items],
    }
    w = watch.Watch()
    for event in w.stream(res.list_namespaced_resource_claim, ns, resource_version=start_rv, timeout_seconds=10):
        out["watched"] = {"type": event["type"], "object": event["object"]}
        w.stop()
    out["patched claim"] = res.patch_namespaced_resource_claim(
        "two-gpus", ns, {"metadata": {"labels": {"patched": "yes"}}}
    )
    out["patched slice"] = res.patch_resource_slice(
        node, {"spec": {"pool": {"generation": 2}, "devices": [api.sanitize_for_serialization(device(0, "40Gi"))]}}
    )
    out["read claim"] = res.read_namespaced_resource_claim("two-gpus", ns)
    res.delete_namespaced_resource_claim("two-gpus", ns)
    res.delete_namespaced_resource_claim_template("two-gpus", ns)
    res.delete_resource_slice(node)
    res.delete_device_class(cls_name)
    out["after delete"] = [c.metadata.name for c in res.list_namespaced_resource_claim(ns).items]
    out["types"] = {key: type(value).__name__ for key, value in out.items() if hasattr(value, "openapi_types")}
    out["watched type"] = type(out["watched"]["object"]).__name__
    out["client"] = __import__("kubernetes").__version__
    return api.sanitize_for_serialization(out)


if __name__ == "__main__":
    host, ca_file, token, namespace = sys.argv[1:5]
    print(json.dumps(flow(host, ca_file, token, namespace)))
