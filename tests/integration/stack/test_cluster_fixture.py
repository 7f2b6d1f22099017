"""The ``draplane_cluster`` pytest fixture, used as a user uses it: pytest run in a project of its own.

Each run is a child ``python -m pytest`` in an empty directory holding the
example test (``examples/test_my_gpu_workload.py``) and a test of the
fixture's API, with the plugin found through its ``pytest11`` entry point
(nothing in those files loads it). The backends: the embedded log, the broker
in ``KAFKA_BOOTSTRAP_SERVERS``, and testcontainers: the project's Kafka image
(``ops/docker/images``) started by testcontainers-python, the components in the
test process; skipped, with the reason, when no Docker engine answers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from services.testing import backends
from services.testing.backends import BackendUnavailable, choose, docker_problem
from tests.support.docker_engine import require_docker

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "test_my_gpu_workload.py"

API_TEST = """
import os

import pytest
from kubernetes import client

from services.testing.cluster import DraplaneCluster, WaitTimeout

SEEN = {}


def ready(node):
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"].get("conditions") or [])


def test_backend_nodes_and_clients(draplane_cluster: DraplaneCluster) -> None:
    assert draplane_cluster.backend == os.environ["EXPECT_BACKEND"], draplane_cluster.backend_reason
    assert draplane_cluster.bus_url.startswith(os.environ["EXPECT_BUS"])
    assert draplane_cluster.nodes == tuple(f"node-{i}" for i in range(1, int(os.environ["EXPECT_NODES"]) + 1))
    nodes = draplane_cluster.wait_for_list("nodes", lambda ns: len(ns) == len(draplane_cluster.nodes) and all(map(ready, ns)))
    assert sorted(n["metadata"]["name"] for n in nodes) == list(draplane_cluster.nodes)
    draplane_cluster.wait_for_list("resourceslices", lambda s: len(s) == len(draplane_cluster.nodes))
    assert draplane_cluster.get("deviceclasses", "gpu.example.com") is not None
    version = client.VersionApi(draplane_cluster.api_client()).get_code()
    assert version.major == "1"
    assert "draplane_committer_requests_total" in draplane_cluster.metrics()


def test_a_namespace_of_its_own(draplane_cluster: DraplaneCluster, draplane_namespace: str) -> None:
    SEEN["namespace"] = draplane_namespace
    assert draplane_cluster.get("namespaces", draplane_namespace) is not None
    draplane_cluster.apply(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "gpu"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
        },
        namespace=draplane_namespace,
    )
    draplane_cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {
                "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}],
            },
        },
        namespace=draplane_namespace,
    )
    pod = draplane_cluster.wait_for_pod_phase("p", namespace=draplane_namespace, phase="Running")
    assert pod["spec"]["nodeName"] in draplane_cluster.nodes


def test_the_namespace_is_gone_with_what_it_held(draplane_cluster: DraplaneCluster) -> None:
    namespace = SEEN["namespace"]
    draplane_cluster.wait_for_deleted("namespaces", namespace, timeout=30)
    assert draplane_cluster.wait_for_list("pods", lambda items: True, namespace=namespace) == []
    assert draplane_cluster.wait_for_list("resourceclaims", lambda items: True, namespace=namespace) == []


def test_a_wait_that_times_out_says_what_it_saw(draplane_cluster: DraplaneCluster, draplane_namespace: str) -> None:
    draplane_cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "nowhere"},
            "spec": {"nodeSelector": {"no": "such-node"}, "containers": [{"name": "c", "image": "busybox"}]},
        },
        namespace=draplane_namespace,
    )
    with pytest.raises(WaitTimeout, match=r"pods .*/nowhere: waited 2s for phase Running; last seen: .*Pending"):
        draplane_cluster.wait_for_pod_phase("nowhere", namespace=draplane_namespace, timeout=2)
"""


def run_pytest(
    where: Path, *args: str, env: dict[str, str] | None = None, drop: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest`` in ``where`` (a project of its own: no conftest, no ini of ours)."""
    environ = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PYTEST_")}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args],
        cwd=where,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
    )


def outcome(result: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """{"passed": n, "skipped": n, ...} from pytest's summary line."""
    last = [line for line in result.stdout.splitlines() if line.strip()][-1:]
    return {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|skipped|errors?)", "".join(last))}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project: the example test, the demo it applies, and a test of the fixture's API."""
    where = tmp_path / "project"
    where.mkdir()
    shutil.copy(EXAMPLE, where / EXAMPLE.name)
    shutil.copy(ROOT / "examples" / "gpu-test1.yaml", where / "gpu-test1.yaml")
    (where / "test_fixture_api.py").write_text(API_TEST)
    return where


def test_embedded_log_with_options_from_the_ini_file(project: Path) -> None:
    (project / "pytest.ini").write_text("[pytest]\ndraplane_nodes = 3\n")
    result = run_pytest(
        project,
        "--draplane-backend=embedded",
        env={"EXPECT_BACKEND": "embedded", "EXPECT_BUS": "sqlite:///", "EXPECT_NODES": "3"},
        drop=(backends.KAFKA_ENV,),
    )
    assert outcome(result) == {"passed": 5}, result.stdout + result.stderr


@pytest.mark.kafka
def test_kafka_from_the_environment(project: Path, kafka_bootstrap: str) -> None:
    # auto picks KAFKA_BOOTSTRAP_SERVERS when no Docker engine answers (testcontainers comes first)
    backend = "auto" if docker_problem() is not None else "kafka"
    result = run_pytest(
        project,
        f"--draplane-backend={backend}",
        "--draplane-nodes=2",
        env={
            backends.KAFKA_ENV: kafka_bootstrap,
            "EXPECT_BACKEND": "kafka",
            "EXPECT_BUS": f"kafka://{kafka_bootstrap}?prefix=draplane-",
            "EXPECT_NODES": "2",
        },
    )
    assert outcome(result) == {"passed": 5}, result.stdout + result.stderr


def test_testcontainers_is_skipped_with_its_reason_without_docker(project: Path) -> None:
    # No engine answers at this DOCKER_HOST, whether or not one runs here.
    nowhere = f"unix://{project / 'no-docker.sock'}"
    result = run_pytest(project, "--draplane-backend=testcontainers", EXAMPLE.name, env={"DOCKER_HOST": nowhere})
    assert outcome(result) == {"skipped": 1}, result.stdout + result.stderr
    assert "draplane: backend 'testcontainers' needs a Docker engine: no Docker engine answers" in result.stdout


def test_testcontainers_runs_the_cluster_on_a_kafka_container(project: Path) -> None:
    require_docker()
    result = run_pytest(
        project,
        "--draplane-backend=testcontainers",
        "--draplane-nodes=2",
        env={"EXPECT_BACKEND": "testcontainers", "EXPECT_BUS": "kafka://127.0.0.1:", "EXPECT_NODES": "2"},
        drop=(backends.KAFKA_ENV,),
    )
    assert outcome(result) == {"passed": 5}, result.stdout + result.stderr
    # The container is gone with the session: none of the backend's is left running.
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={backends.CONTAINER_LABEL}"], capture_output=True, text=True
    )
    assert left.stdout.split() == [], "the Kafka container outlived the session"


def test_bad_options_are_usage_errors(project: Path) -> None:
    result = run_pytest(project, "--draplane-backend=nope")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "--draplane-backend: 'nope' is not one of auto, embedded, kafka, testcontainers" in result.stderr
    result = run_pytest(project, "--draplane-feature-gates=NoSuchGate=true")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "--draplane-feature-gates:" in result.stderr and "NoSuchGate" in result.stderr


def test_the_plugin_is_registered_and_off_with_no_draplane(project: Path) -> None:
    listed = run_pytest(project, "--fixtures", EXAMPLE.name)
    assert "draplane_cluster [session scope]" in listed.stdout
    off = run_pytest(project, "-p", "no:draplane", EXAMPLE.name)
    assert "fixture 'draplane_cluster' not found" in off.stdout


# Choosing the backend, without starting a cluster.


def test_auto_falls_back_to_the_embedded_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(backends.KAFKA_ENV, raising=False)
    monkeypatch.setattr(backends, "docker_problem", lambda: "no Docker engine answers (test)")
    chosen = choose("auto")
    assert chosen.kind == "embedded"
    assert chosen.reason == "no Docker engine and no KAFKA_BOOTSTRAP_SERVERS: no Docker engine answers (test)"


def test_auto_does_not_pull_a_missing_kafka_image(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(backends.KAFKA_ENV, raising=False)
    monkeypatch.setattr(backends, "docker_problem", lambda: None)
    monkeypatch.setattr(backends, "image_problem", lambda image: f"the image {image} is not on the Docker engine")
    chosen = choose("auto")
    assert chosen.kind == "embedded"
    assert "the image draplane-kafka:local is not on the Docker engine" in chosen.reason
    with pytest.raises(BackendUnavailable, match="backend 'testcontainers': the image draplane-kafka:local is not"):
        choose("testcontainers")


class _UnstartableContainer:
    """A Kafka container that does not start, as when docker cannot run it or the broker exits."""

    started: list[int] = []
    stopped: list[int] = []
    logs: tuple[bytes, bytes] | None = None  # None: there is no container to read

    def __init__(self, image: str, port: int) -> None:
        self.image, self.port = image, port

    def start(self) -> None:
        _UnstartableContainer.started.append(self.port)
        raise RuntimeError(f"cannot start {self.image}")

    def get_logs(self) -> tuple[bytes, bytes]:
        if self.logs is None:
            raise RuntimeError("Container should be started before getting logs")
        return self.logs

    def stop(self) -> None:
        _UnstartableContainer.stopped.append(self.port)


@pytest.fixture
def unstartable(monkeypatch: pytest.MonkeyPatch) -> type[_UnstartableContainer]:
    monkeypatch.delenv(backends.KAFKA_ENV, raising=False)
    monkeypatch.setattr(backends, "docker_problem", lambda: None)
    monkeypatch.setattr(backends, "image_problem", lambda image: None)
    monkeypatch.setattr(backends, "kafka_container", lambda image, port, **_: _UnstartableContainer(image, port))
    _UnstartableContainer.started, _UnstartableContainer.stopped, _UnstartableContainer.logs = [], [], None
    return _UnstartableContainer


def test_auto_falls_back_to_the_embedded_log_when_the_container_does_not_start(
    unstartable: type[_UnstartableContainer],
) -> None:
    """A Docker engine that answers but cannot run the container must not fail every test."""
    chosen = choose("auto")
    assert chosen.kind == "embedded"
    image = backends.DEFAULT_KAFKA_IMAGE
    assert chosen.reason == (
        f"no Kafka container and no KAFKA_BOOTSTRAP_SERVERS: backend 'testcontainers': the {image} container did not "
        f"start in 2 attempts: attempt 1: (RuntimeError: cannot start {image}); "
        f"attempt 2: (RuntimeError: cannot start {image})"
    )
    # Each attempt is a container of its own, on a port of its own, and each is removed.
    assert len(set(unstartable.started)) == 2 and unstartable.stopped == unstartable.started
    with pytest.raises(BackendUnavailable, match="container did not start in 2 attempts"):
        choose("testcontainers")


def test_a_container_that_exits_says_what_it_wrote(unstartable: type[_UnstartableContainer]) -> None:
    out = "\n".join(f"line {i}" for i in range(1, 31)).encode()
    unstartable.logs = (out, b"Error: the JVM could not reserve its heap\n")
    with pytest.raises(BackendUnavailable) as raised:
        choose("testcontainers")
    message = str(raised.value)
    tail = "last stdout lines:\n" + "\n".join(f"line {i}" for i in range(11, 31))
    assert message.count(tail + "\nlast stderr lines:\nError: the JVM could not reserve its heap") == 2, message
    assert "line 10\n" not in message


def test_a_second_attempt_that_starts_is_used_and_names_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    class FlakyContainer(_UnstartableContainer):
        def start(self) -> None:
            if not _UnstartableContainer.started:
                super().start()
            _UnstartableContainer.started.append(self.port)

        def get_exposed_port(self, port: int) -> int:
            return self.port

    monkeypatch.setattr(backends, "docker_problem", lambda: None)
    monkeypatch.setattr(backends, "image_problem", lambda image: None)
    monkeypatch.setattr(backends, "kafka_container", lambda image, port, **_: FlakyContainer(image, port))
    _UnstartableContainer.started, _UnstartableContainer.stopped, _UnstartableContainer.logs = [], [], None
    chosen = choose("testcontainers")
    first, second = _UnstartableContainer.started
    assert (chosen.kind, chosen.bootstrap) == ("testcontainers", f"127.0.0.1:{second}")
    assert _UnstartableContainer.stopped == [first]
    assert chosen.reason.endswith(
        f"from testcontainers (after attempt 1: (RuntimeError: cannot start {backends.DEFAULT_KAFKA_IMAGE}))"
    )


def test_log_tail_keeps_the_last_lines_of_each_stream() -> None:
    assert backends.log_tail(b"", b"") == ""
    assert backends.log_tail(b"a\nb\nc\n", b"", lines=2) == "last stdout lines:\nb\nc"
    assert backends.log_tail(b"", b"\xff oops\n") == "last stderr lines:\n\ufffd oops"


def test_auto_takes_kafka_from_the_environment(monkeypatch: pytest.MonkeyPatch, kafka_bootstrap: str) -> None:
    monkeypatch.setenv(backends.KAFKA_ENV, kafka_bootstrap)
    monkeypatch.setattr(backends, "docker_problem", lambda: "no Docker engine answers (test)")
    chosen = choose("auto")
    assert (chosen.kind, chosen.bootstrap) == ("kafka", kafka_bootstrap)
    assert chosen.bus_url(Path("/unused")).startswith(f"kafka://{kafka_bootstrap}?prefix=draplane-")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (None, "backend 'kafka' needs KAFKA_BOOTSTRAP_SERVERS, and it is not set"),
        ("127.0.0.1:1", "backend 'kafka': no Kafka broker answers at KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:1"),
    ],
)
def test_kafka_without_a_broker_is_unavailable(monkeypatch: pytest.MonkeyPatch, env: str | None, message: str) -> None:
    if env is None:
        monkeypatch.delenv(backends.KAFKA_ENV, raising=False)
    else:
        monkeypatch.setenv(backends.KAFKA_ENV, env)
    with pytest.raises(BackendUnavailable, match=re.escape(message)):
        choose("kafka")
