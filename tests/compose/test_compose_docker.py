"""docker-compose.yml run by Docker itself: up, the gpu-test1 demo, down, and up again on the same volumes.

The repository's compose file, with its published host ports moved to free
ones (so a stack already running here does not matter), under a project name of
this test, with ``docker compose`` (v2) or Debian's ``docker-compose`` (1.29),
whichever is installed. As a user following the README: ``up -d``, the
DeviceClass and gpu-test1 applied, both pods Running with their claims
allocated; ``down`` leaves no container and no network of the project, only
its volumes; ``up -d`` again finds the same pods (same uid) Running and the same
allocations, and a new pod is scheduled. ``down -v`` at the end leaves nothing.

Needs a Docker engine and the images from ``ops/docker/images``
(tests/support/docker_engine.py skips, or fails under ./ops/test, without them).
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.apiserver.kubeconfig import write_kubeconfig
from services.testing.cluster import ClusterClient
from services.testing.ports import free_port
from tests.support.docker_engine import require_docker

pytestmark = [pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
NAMESPACE = "gpu-test1"
UP_TIMEOUT = 420
READY_TIMEOUT = 240


class Stack:
    """One compose project of the repository's file, driven through the compose CLI."""

    def __init__(self, compose: list[str], workdir: Path) -> None:
        self.project = f"draplane-e2e-{uuid.uuid4().hex[:8]}"
        self.api_port = free_port()
        self.file = workdir / "docker-compose.yml"
        self.file.write_text(yaml.safe_dump(self.localized(), sort_keys=False))
        self.base = [*compose, "--project-name", self.project, "--file", str(self.file)]
        self.kubeconfig = write_kubeconfig(workdir / "kubeconfig", f"http://127.0.0.1:{self.api_port}")

    def localized(self) -> dict[str, Any]:
        """The repository's compose file with free host ports and the build context where the repository is."""
        doc: dict[str, Any] = yaml.safe_load((REPO / "docker-compose.yml").read_text())
        doc = {k: v for k, v in doc.items() if not k.startswith("x-")}
        for name, service in doc["services"].items():
            if "build" in service:
                service["build"]["context"] = str(REPO)
            ports = []
            for spec in service.get("ports", []):
                host, _, target = str(spec).rpartition(":")
                address = host.rpartition(":")[0]
                port = self.api_port if name == "apiserver" else free_port()
                ports.append(f"{address}:{port}:{target}")
            if ports:
                service["ports"] = ports
        return doc

    def run(self, *args: str, timeout: float = UP_TIMEOUT) -> str:
        result = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=timeout, check=False)
        assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}\n{self.logs()}"
        return result.stdout

    def logs(self) -> str:
        result = subprocess.run([*self.base, "logs", "--no-color", "--tail", "15"], capture_output=True, text=True,
                                timeout=60, check=False)
        return result.stdout[-6000:]

    def docker_objects(self, kind: str) -> list[str]:
        """The project's containers, networks or volumes, by the label compose puts on them."""
        command = {"container": ["ps", "-a"], "network": ["network", "ls"], "volume": ["volume", "ls"]}[kind]
        label = f"label=com.docker.compose.project={self.project}"
        result = subprocess.run(["docker", *command, "-q", "--filter", label], capture_output=True, text=True,
                                check=True)
        return result.stdout.split()

    def client(self) -> ClusterClient:
        return ClusterClient.from_kubeconfig(self.kubeconfig)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    compose = require_docker(compose=True)
    stack = Stack(compose, tmp_path)
    try:
        yield stack
    finally:
        subprocess.run([*stack.base, "down", "--volumes", "--timeout", "10"], capture_output=True, timeout=180,
                       check=False)


def allocations(client: ClusterClient) -> dict[str, Any]:
    """Each claim's name -> its allocated devices, for the namespace's claims."""
    claims = client.resource("resourceclaims").get(namespace=NAMESPACE).to_dict()["items"]
    return {c["metadata"]["name"]: c["status"]["allocation"]["devices"]["results"] for c in claims}


def running_pods(client: ClusterClient) -> dict[str, dict[str, Any]]:
    """pod0 and pod1 once both are Running: name -> the pod."""
    for name in ("pod0", "pod1"):
        client.wait_for_pod_phase(name, namespace=NAMESPACE, phase="Running", timeout=READY_TIMEOUT)
    pods = client.resource("pods").get(namespace=NAMESPACE).to_dict()["items"]
    return {p["metadata"]["name"]: p for p in pods}


def test_the_stack_comes_up_runs_the_demo_goes_down_and_resumes_from_its_volumes(stack: Stack) -> None:
    stack.run("up", "--detach")
    client = stack.client()
    try:
        client.wait_for("nodes", "node-3", timeout=READY_TIMEOUT)
        client.apply(EXAMPLES / "deviceclass.yaml")
        client.apply(EXAMPLES / "gpu-test1.yaml")
        before = running_pods(client)
        allocated = allocations(client)
        assert len(allocated) == 2 and all(allocated.values()), allocated
        devices = [(r["pool"], r["device"]) for results in allocated.values() for r in results]
        assert len(set(devices)) == len(devices), f"two claims share a GPU: {allocated}"
    finally:
        client.close_clients()

    stack.run("down", "--timeout", "20")
    assert stack.docker_objects("container") == [], "down left containers"
    assert stack.docker_objects("network") == [], "down left networks"
    assert stack.docker_objects("volume"), "down removed the volumes (only down --volumes should)"

    stack.run("up", "--detach")
    client = stack.client()
    try:
        after = running_pods(client)
        assert {n: p["metadata"]["uid"] for n, p in after.items()} == {
            n: p["metadata"]["uid"] for n, p in before.items()
        }, "up again did not find the same pods"
        assert allocations(client) == allocated
        # The resumed cluster still schedules: a second run of the demo's pods in a namespace of its own.
        manifest = [d for d in yaml.safe_load_all((EXAMPLES / "gpu-test1.yaml").read_text()) if d]
        for document in manifest:
            if document["kind"] == "Namespace":
                document["metadata"]["name"] = "gpu-test1-again"
            else:
                document["metadata"]["namespace"] = "gpu-test1-again"
        client.apply(manifest)
        client.wait_for_pod_phase("pod0", namespace="gpu-test1-again", phase="Running", timeout=READY_TIMEOUT)
    finally:
        client.close_clients()

    stack.run("down", "--volumes", "--timeout", "20")
    for kind in ("container", "network", "volume"):
        assert stack.docker_objects(kind) == [], f"down --volumes left {kind}s"


def test_the_compose_file_is_valid_for_the_installed_compose() -> None:
    compose = require_docker(compose=True)
    result = subprocess.run([*compose, "--file", str(REPO / "docker-compose.yml"), "config"], capture_output=True,
                            text=True, check=False, cwd=REPO)
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    assert config["services"]["kafka"]["image"] == "draplane-kafka:local"
    assert {s["image"] for n, s in config["services"].items() if n != "kafka"} == {"draplane:local"}
