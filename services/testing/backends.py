"""Which log a test cluster runs on: Kafka from testcontainers, a given Kafka broker, or the embedded log.

``auto`` (the default) picks, in order: a Kafka container from testcontainers
when a Docker engine answers, has the Kafka image (``draplane-kafka:local``,
built by ``ops/docker/images``: no registry is asked for it) and the container
starts; the broker in ``KAFKA_BOOTSTRAP_SERVERS`` when it is set; the embedded
SQLite log otherwise (a Docker engine without the image, or one whose
container does not start, must not fail every test). Naming a backend asks
for that one only; when it cannot run, `BackendUnavailable` says why (the
pytest plugin turns that into a skip with that reason).

Nothing here is imported by the plugin until a cluster is asked for, and the
docker and testcontainers packages are imported only to probe or start a
container.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.testing.ports import free_port, kafka_answers

KAFKA_ENV = "KAFKA_BOOTSTRAP_SERVERS"
BACKENDS = ("auto", "embedded", "kafka", "testcontainers")
# The project's own Kafka image: no registry serves one here, so ops/docker/images
# builds it (Debian's JRE and the jars ops/kafka/fetch resolves), as docker-compose.yml uses it.
DEFAULT_KAFKA_IMAGE = "draplane-kafka:local"
# Every container this backend starts carries it; ./ops/test removes any left behind.
CONTAINER_LABEL = "org.draplane.backend"
# One KRaft node for tests, as the image reads them (KAFKA_NODE_ID -> node.id). Clients reach
# PLAINTEXT on a published port; the broker reaches itself (transaction markers) on INTERNAL.
KRAFT_ENV = {
    "KAFKA_NODE_ID": "1",
    "KAFKA_PROCESS_ROLES": "broker,controller",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
    "KAFKA_LISTENERS": "PLAINTEXT://:9092,INTERNAL://:19092,CONTROLLER://:9093",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "KAFKA_INTER_BROKER_LISTENER_NAME": "INTERNAL",
    "KAFKA_LOG_DIRS": "/var/lib/kafka/data",
    "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false",
}
# A one-broker cluster: the internal topics must live with one replica, or transactions never start.
SINGLE_BROKER_ENV = {
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS": "1",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS": "500",
    "KAFKA_LOG_CLEANER_BACKOFF_MS": "200",
}
# The broker's last startup line (KafkaRaftServer), on the container's stdout.
STARTED = r"Kafka Server started"


class BackendUnavailable(Exception):
    """The requested backend cannot run here; the message says why."""


@dataclass
class Backend:
    """A chosen log: its kind, the bus URL for a cluster, and how it was chosen."""

    kind: str  # embedded | kafka | testcontainers
    reason: str
    bootstrap: str = ""  # Kafka's bootstrap servers (empty for the embedded log)
    _close: Callable[[], None] | None = field(default=None, repr=False)

    def bus_url(self, data_dir: Path) -> str:
        """The log of the cluster whose data lives in ``data_dir``: a file there, or topics of its own on the broker.

        The topic prefix comes from the directory, so a cluster started again
        on the same data finds its log (and its components' snapshots match
        it), as ``draplane up --data`` does; another directory never meets it.
        """
        where = data_dir.resolve()
        if self.kind == "embedded":
            return f"sqlite:///{where / 'bus.db'}"
        digest = hashlib.sha256(f"{socket.gethostname()}:{where}".encode()).hexdigest()[:12]
        return f"kafka://{self.bootstrap}?prefix=draplane-{digest}-"

    def close(self) -> None:
        if self._close is not None:
            close, self._close = self._close, None
            close()


def docker_problem() -> str | None:
    """None when a Docker engine answers; otherwise why none does."""
    where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        import docker
    except ImportError:
        return "the docker package is not installed (pip install testcontainers)"
    try:
        client = docker.from_env(timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return f"no Docker engine answers at {where} ({type(exc).__name__}: {exc})"
    return None


def _from_env() -> Backend:
    servers = os.environ.get(KAFKA_ENV, "").strip()
    if not servers:
        raise BackendUnavailable(f"backend 'kafka' needs {KAFKA_ENV}, and it is not set")
    if not kafka_answers(servers):
        raise BackendUnavailable(f"backend 'kafka': no Kafka broker answers at {KAFKA_ENV}={servers}")
    return Backend("kafka", f"{KAFKA_ENV}={servers}", bootstrap=servers)


def image_problem(image: str) -> str | None:
    """None when ``image`` is on the engine (nothing is pulled: no registry serves it); otherwise why not."""
    import docker

    client = docker.from_env(timeout=10)
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        hint = " (ops/docker/images builds it)" if image == DEFAULT_KAFKA_IMAGE else ""
        return f"the image {image} is not on the Docker engine{hint}"
    finally:
        client.close()
    return None


def kafka_container(image: str, *, host: str, port: int) -> Any:
    """A testcontainers container of the project's Kafka image, its clients' listener published on ``port``."""
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    container: Any = (
        DockerContainer(image)
        .with_envs(**KRAFT_ENV, **SINGLE_BROKER_ENV)
        .with_env("CLUSTER_ID", cluster_id)
        .with_env("KAFKA_ADVERTISED_LISTENERS", f"PLAINTEXT://{host}:{port},INTERNAL://localhost:19092")
        .with_bind_ports(9092, port)
        .with_kwargs(labels={CONTAINER_LABEL: "testcontainers"})
        .waiting_for(LogMessageWaitStrategy(STARTED).with_startup_timeout(120))
    )
    return container


# Testcontainers' "startup attempts": a broker that exits during start-up gets one more container.
STARTUP_ATTEMPTS = 2
# How much of a failed container's output its error message carries.
LOG_TAIL_LINES = 20


def log_tail(stdout: bytes, stderr: bytes, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of a container's stdout, then of its stderr, one text ("" when both are empty)."""
    parts = []
    for name, data in (("stdout", stdout), ("stderr", stderr)):
        text = data.decode(errors="replace").rstrip().splitlines()[-lines:]
        if text:
            parts.append(f"last {name} lines:\n" + "\n".join(text))
    return "\n".join(parts)


def start_failure(container: Any, exc: Exception) -> str:
    """Why ``container`` did not start: the error, then what the container wrote before it gave up."""
    why = f"({type(exc).__name__}: {exc})"
    logs = ""
    with contextlib.suppress(Exception):  # no container to read, or the engine's error: the error alone
        logs = log_tail(*container.get_logs())
    return f"{why}\n{logs}" if logs else why


def _testcontainers(image: str) -> Backend:
    problem = docker_problem()
    if problem is not None:
        raise BackendUnavailable(f"backend 'testcontainers' needs a Docker engine: {problem}")
    problem = image_problem(image)
    if problem is not None:
        raise BackendUnavailable(f"backend 'testcontainers': {problem}")
    from testcontainers.core.config import testcontainers_config

    # The reaper (Ryuk) is an image from a registry; the Backend stops its container instead.
    testcontainers_config.ryuk_disabled = True
    host = "127.0.0.1"
    failures: list[str] = []
    for attempt in range(1, STARTUP_ATTEMPTS + 1):
        container = kafka_container(image, host=host, port=free_port())
        try:
            container.start()
        except Exception as exc:  # docker's and testcontainers' errors have no common base
            failures.append(f"attempt {attempt}: {start_failure(container, exc)}")
            with contextlib.suppress(Exception):
                container.stop()
            continue
        bootstrap = f"{host}:{container.get_exposed_port(9092)}"
        earlier = f" (after {'; '.join(failures)})" if failures else ""
        return Backend(
            "testcontainers",
            f"a {image} container from testcontainers{earlier}",
            bootstrap=bootstrap,
            _close=container.stop,
        )
    raise BackendUnavailable(
        f"backend 'testcontainers': the {image} container did not start in {STARTUP_ATTEMPTS} attempts: "
        + "; ".join(failures)
    )


def choose(name: str, *, kafka_image: str = DEFAULT_KAFKA_IMAGE) -> Backend:
    """Start or find the backend ``name`` (one of `BACKENDS`); raise `BackendUnavailable` with the reason."""
    if name not in BACKENDS:
        raise ValueError(f"unknown draplane backend {name!r}: use one of {', '.join(BACKENDS)}")
    if name == "embedded":
        return Backend("embedded", "asked for the embedded log")
    if name == "kafka":
        return _from_env()
    if name == "testcontainers":
        return _testcontainers(kafka_image)
    problem = docker_problem()
    missing = "no Docker engine"
    if problem is None:
        try:
            return _testcontainers(kafka_image)
        except BackendUnavailable as exc:
            problem, missing = str(exc), "no Kafka container"
    if os.environ.get(KAFKA_ENV, "").strip():
        backend = _from_env()
        backend.reason += f" (no testcontainers: {problem})"
        return backend
    return Backend("embedded", f"{missing} and no {KAFKA_ENV}: {problem}")
