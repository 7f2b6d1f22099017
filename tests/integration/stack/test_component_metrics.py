"""Every component serves ``/metrics`` in Prometheus text format, with its own metrics.

Each standalone command runs as its own process, as in the compose stack, on
one embedded log, with ``--metrics-listen``; the apiserver also serves
``/metrics`` on its API port. A pod with a GPU claim is run through them
first, so each component has done its part and its counters must show it.
``draplane up`` serves one ``/metrics`` for the whole process (on the API
port, and on ``--metrics-listen``), the drivers of its nodes told apart by a
``node`` label.
"""

from __future__ import annotations

import signal
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from services.apiserver.kubeconfig import write_kubeconfig
from services.testing.cluster import ClusterClient
from services.testing.ports import free_port
from tests.integration.stack.processes import Command

NS = "metrics"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
MANIFEST = f"""
apiVersion: v1
kind: Namespace
metadata: {{name: {NS}}}
---
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaimTemplate
metadata: {{name: single-gpu, namespace: {NS}}}
spec:
  spec:
    devices:
      requests: [{{name: gpu, deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: pod0, namespace: {NS}}}
spec:
  containers: [{{name: ctr0, image: busybox, resources: {{claims: [{{name: gpu}}]}}}}]
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: single-gpu}}]
"""


def scrape(url: str) -> tuple[str, Samples]:
    """The text of ``url`` (checked to be Prometheus text format) and its samples."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        content_type = resp.headers["Content-Type"]
        text = resp.read().decode()
    # prometheus_client's CONTENT_TYPE_LATEST: version 0.0.4, or 1.0.0 in newer releases
    assert content_type.startswith(("text/plain; version=0.0.4", "text/plain; version=1.0.0")), content_type
    families = list(text_string_to_metric_families(text))
    twice = [name for name, n in Counter(f.name for f in families).items() if n > 1]
    assert not twice, f"metric families exposed twice (Prometheus rejects that): {twice}"
    samples: Samples = {}
    for family in families:
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return text, samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum over the samples of ``name`` whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


def healthz(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as resp:
        code: int = resp.status
        return code


@pytest.fixture
def commands() -> Iterator[list[Command]]:
    started: list[Command] = []
    try:
        yield started
    finally:
        for cmd in reversed(started):
            cmd.stop(signal.SIGTERM)


def test_each_standalone_component_serves_its_metrics(tmp_path: Path, commands: list[Command]) -> None:
    data = tmp_path / "d"
    bus = f"sqlite:///{data / 'bus.db'}"
    common = ("--bus", bus, "--data", str(data), "--plain-logs")
    api_port = free_port()
    ports = {name: free_port() for name in ("apiserver", "scheduler", "controller-manager", "driver", "nodeagent")}

    def start(name: str, ready: str, *args: str) -> None:
        cmd = Command(name, *common, "--metrics-listen", f"127.0.0.1:{ports[name]}", *args)
        commands.append(cmd)
        cmd.wait_for_line(ready)

    start("apiserver", "apiserver ready on", "--listen", f"127.0.0.1:{api_port}", "--anonymous")
    start("controller-manager", "controller-manager ready")
    start("scheduler", "scheduler ready")
    start("driver", "driver ready", "--node", "node-1", "--no-nvidia-smi")
    start("nodeagent", "node agent ready", "--node", "node-1")

    url = f"http://127.0.0.1:{api_port}"
    cluster = ClusterClient(url=url, kubeconfig=write_kubeconfig(tmp_path / "kubeconfig", url))
    cluster.apply(
        {
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    )
    cluster.apply(MANIFEST)
    cluster.wait_for_pod_phase("pod0", namespace=NS, phase="Running")
    cluster.close_clients()

    for name, port in ports.items():
        assert healthz(port) == 200, name
    scraped = {name: scrape(f"http://127.0.0.1:{port}/metrics") for name, port in ports.items()}

    # The apiserver commits every write: on --metrics-listen and on its API port alike.
    _, api = scraped["apiserver"]
    assert value(api, "draplane_committer_requests_total", op="create", code="201") >= 4
    assert value(api, "draplane_committer_batch_size_count") >= 1
    _, on_api_port = scrape(f"{url}/metrics")
    assert value(on_api_port, "draplane_committer_requests_total", op="create", code="201") >= 4

    _, sched = scraped["scheduler"]
    assert value(sched, "scheduler_schedule_attempts_total", result="scheduled", profile="default-scheduler") == 1
    assert ("scheduler_pending_pods", frozenset({("queue", "active")})) in sched

    _, cm = scraped["controller-manager"]
    assert value(cm, "resourceclaim_controller_create_attempts_total") == 1
    assert value(cm, "resourceclaim_controller_create_failures_total") == 0

    _, driver = scraped["driver"]
    assert value(driver, "draplane_driver_prepare_total", driver="gpu.example.com", outcome="prepared") == 1
    assert value(driver, "draplane_driver_resourceslice_writes_total", op="create") >= 1

    # The node agent has no metrics of its own yet: the runtime's, for its writes (node, pod status).
    text, agent = scraped["nodeagent"]
    assert value(agent, "draplane_client_request_duration_seconds_count") >= 2
    assert "process_cpu_seconds_total" in text or "python_info" in text


def test_up_serves_one_metrics_for_the_whole_process(tmp_path: Path, commands: list[Command]) -> None:
    data = tmp_path / "d"
    metrics_port = free_port()
    up = Command(
        "up", "--data", str(data), "--listen", "127.0.0.1:0", "--nodes", "2", "--plain-logs",
        "--metrics-listen", f"127.0.0.1:{metrics_port}",
    )  # fmt: skip
    commands.append(up)
    url = up.wait_for_line(r"draplane is ready: (\S+)").group(1)
    cluster = ClusterClient.from_kubeconfig(data / "kubeconfig")
    cluster.apply(MANIFEST)
    cluster.wait_for_pod_phase("pod0", namespace=NS, phase="Running")
    node = (cluster.get("pods", "pod0", namespace=NS) or {})["spec"]["nodeName"]
    cluster.close_clients()

    for where in (f"{url}/metrics", f"http://127.0.0.1:{metrics_port}/metrics"):
        _, samples = scrape(where)
        assert value(samples, "draplane_committer_requests_total", op="create", code="201") >= 3, where
        assert value(samples, "scheduler_schedule_attempts_total", result="scheduled") == 1, where
        assert value(samples, "resourceclaim_controller_create_attempts_total") == 1, where
        # one driver per node, told apart by the node label
        assert value(samples, "draplane_driver_prepare_total", node=node, outcome="prepared") == 1, where
        other = "node-2" if node == "node-1" else "node-1"
        assert value(samples, "draplane_driver_prepare_total", node=other) == 0, where
        assert value(samples, "draplane_driver_resourceslice_writes_total", node=other, op="create") >= 1, where
    assert healthz(metrics_port) == 200
