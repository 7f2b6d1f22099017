"""An integration test of a GPU workload, as you would write it for your own project (docs/testing.md).

draplane's pytest plugin (installed with the package) gives the test a running
cluster — apiserver, scheduler, controller-manager and two simulated GPU
nodes — and a namespace of its own. Run it from the repository's root with:

    ./ops/ensure-venv test                                   # once: pytest and the kubernetes client
    .venv/bin/pytest examples/test_my_gpu_workload.py        # embedded log
    KAFKA_BOOTSTRAP_SERVERS=localhost:9092 .venv/bin/pytest examples/test_my_gpu_workload.py
    .venv/bin/pytest examples/test_my_gpu_workload.py --draplane-backend testcontainers
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from services.testing.cluster import DraplaneCluster

DEMO = Path(__file__).with_name("gpu-test1.yaml")  # two pods, each with a claim for one GPU


def demo_in(namespace: str) -> list[dict[str, Any]]:
    """The demo's claim template and pods, moved into the test's namespace."""
    docs = [doc for doc in yaml.safe_load_all(DEMO.read_text()) if doc and doc["kind"] != "Namespace"]
    for doc in docs:
        doc["metadata"]["namespace"] = namespace
    return docs


def allocated(claims: list[dict[str, Any]]) -> bool:
    return len(claims) == 2 and all((c.get("status") or {}).get("allocation") for c in claims)


def test_each_pod_runs_with_a_gpu_of_its_own(draplane_cluster: DraplaneCluster, draplane_namespace: str) -> None:
    draplane_cluster.apply(demo_in(draplane_namespace))

    for name in ("pod0", "pod1"):
        draplane_cluster.wait_for_pod_phase(name, namespace=draplane_namespace, phase="Running", timeout=60)

    # The official client works against the cluster as against any other.
    core = client.CoreV1Api(draplane_cluster.api_client())
    pods = core.list_namespaced_pod(draplane_namespace).items
    assert {p.metadata.name for p in pods if p.metadata} == {"pod0", "pod1"}
    for pod in pods:
        assert pod.spec is not None and pod.spec.node_name in draplane_cluster.nodes

    # Each pod got a claim generated from the template, allocated a different GPU.
    claims = draplane_cluster.wait_for_list("resourceclaims", allocated, namespace=draplane_namespace)
    devices = {
        (result["pool"], result["device"])
        for claim in claims
        for result in claim["status"]["allocation"]["devices"]["results"]
    }
    assert len(devices) == 2

    # The same claims through the client's typed resource.k8s.io/v1 API, as the demo wrote them.
    resource = client.ResourceV1Api(draplane_cluster.api_client())
    for claim in resource.list_namespaced_resource_claim(draplane_namespace).items:
        (request,) = claim.spec.devices.requests
        assert request.exactly is not None and request.exactly.device_class_name == "gpu.example.com"
        assert claim.status is not None and claim.status.allocation is not None
