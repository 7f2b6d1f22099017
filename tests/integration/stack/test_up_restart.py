"""After a restart with the same ``--data``, every object is still there and scheduling continues.

`draplane up` runs as a user runs it: a child process on the embedded log in
its data directory, one node (so two pods must get two different GPUs of the
same node). The test creates a namespace, a claim template and a pod whose
claim is generated from it, waits for the pod to run, stops the process —
cleanly with Ctrl-C, or by SIGKILL as a crash — and starts it again on the
same directory. Every object must come back with the same uid and
resourceVersion, and a new pod must be scheduled, get a GPU no one holds, and
run.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from services.testing.cluster import ClusterClient
from tests.integration.stack.processes import Command

NS = "restart"
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "single-gpu", "namespace": NS},
    "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}},
}


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "containers": [{"name": "ctr0", "image": "busybox:1.36", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
        },
    }


def up(data: Path) -> tuple[Command, ClusterClient]:
    cmd = Command("up", "--data", str(data), "--listen", "127.0.0.1:0", "--nodes", "1", "--plain-logs")
    cmd.wait_for_line(r"draplane is ready: (\S+)")
    return cmd, ClusterClient.from_kubeconfig(data / "kubeconfig")


def identity(obj: dict[str, Any] | None) -> tuple[str, str]:
    assert obj is not None
    return obj["metadata"]["uid"], obj["metadata"]["resourceVersion"]


def claim_of(cluster: ClusterClient, pod_name: str) -> dict[str, Any]:
    """The pod's generated claim, once it is allocated."""
    running = cluster.get("pods", pod_name, namespace=NS)
    assert running is not None
    statuses = running["status"].get("resourceClaimStatuses") or []
    assert len(statuses) == 1, statuses
    claim = cluster.get("resourceclaims", statuses[0]["resourceClaimName"], namespace=NS)
    assert claim is not None and claim["status"].get("allocation"), claim
    return claim


def devices(claim: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(r["driver"], r["pool"], r["device"]) for r in claim["status"]["allocation"]["devices"]["results"]}


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "crash"])
def test_objects_survive_a_restart_and_scheduling_continues(tmp_path: Path, stop: signal.Signals) -> None:
    data = tmp_path / "d"  # short: the drivers' unix sockets live under it
    first, cluster = up(data)
    try:
        cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        cluster.apply(TEMPLATE)
        cluster.apply(pod("before"))
        cluster.wait_for_pod_phase("before", namespace=NS, phase="Running")
        claim = claim_of(cluster, "before")
        kept = {
            ("namespaces", "", NS): identity(cluster.get("namespaces", NS)),
            ("resourceclaimtemplates", NS, "single-gpu"): identity(
                cluster.get("resourceclaimtemplates", "single-gpu", namespace=NS)
            ),
            ("pods", NS, "before"): identity(cluster.get("pods", "before", namespace=NS)),
            ("resourceclaims", NS, claim["metadata"]["name"]): identity(claim),
            ("deviceclasses", "", "gpu.example.com"): identity(cluster.get("deviceclasses", "gpu.example.com")),
        }
        cluster.close_clients()
    finally:
        code = first.stop(stop)
    assert code == (0 if stop == signal.SIGINT else -signal.SIGKILL), first.output()

    second, cluster = up(data)
    try:
        assert "starting on sqlite:///" in second.output() and str(data) in second.output()
        for (kind, namespace, name), expected in kept.items():
            assert identity(cluster.get(kind, name, namespace=namespace or None)) == expected, (kind, name)
        assert devices(claim_of(cluster, "before")) == devices(claim)

        # Scheduling continues: a new pod is bound and runs, with a GPU the first pod does not hold.
        cluster.apply(pod("after"))
        after = cluster.wait_for_pod_phase("after", namespace=NS, phase="Running")
        assert after["spec"]["nodeName"] == "node-1"
        assert devices(claim_of(cluster, "after")).isdisjoint(devices(claim))
        cluster.close_clients()
    finally:
        assert second.stop(signal.SIGINT) == 0, second.output()
