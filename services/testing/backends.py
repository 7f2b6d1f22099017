"""Which log a test cluster runs on: Kafka from testcontainers, a given Kafka broker, or the embedded log.

``auto`` (the default) picks, in order: a Kafka container from testcontainers
when a Docker engine answers and the container starts; the broker in
``KAFKA_BOOTSTRAP_SERVERS`` when it is set; the embedded SQLite log otherwise
(a Docker engine that cannot pull the images, as behind a closed network,
must not fail every test). Naming a backend asks for that one only; when it
cannot run, `BackendUnavailable` says why (the pytest plugin turns that into
a skip with that reason).

Nothing here is imported by the plugin until a cluster is asked for, and the
docker and testcontainers packages are imported only to probe or start a
container.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.testing.ports import kafka_answers

KAFKA_ENV = "KAFKA_BOOTSTRAP_SERVERS"
BACKENDS = ("auto", "embedded", "kafka", "testcontainers")
# Confluent's image: testcontainers' KafkaContainer drives its start script (KRaft from 7.0 on).
DEFAULT_KAFKA_IMAGE = "confluentinc/cp-kafka:7.6.0"
# A one-broker cluster: the internal topics must live with one replica, or transactions never start.
SINGLE_BROKER_ENV = {
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS": "1",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_LOG_CLEANER_BACKOFF_MS": "200",
}


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


def _testcontainers(image: str) -> Backend:
    problem = docker_problem()
    if problem is not None:
        raise BackendUnavailable(f"backend 'testcontainers' needs a Docker engine: {problem}")
    from testcontainers.community.kafka import KafkaContainer

    container: Any = KafkaContainer(image).with_kraft()
    for key, value in SINGLE_BROKER_ENV.items():
        container.with_env(key, value)
    try:
        container.start(timeout=120)
    except Exception as exc:  # docker's and testcontainers' errors have no common base
        with contextlib.suppress(Exception):
            container.stop()
        raise BackendUnavailable(
            f"backend 'testcontainers': the {image} container did not start ({type(exc).__name__}: {exc})"
        ) from None
    return Backend(
        "testcontainers",
        f"a {image} container from testcontainers",
        bootstrap=container.get_bootstrap_server(),
        _close=container.stop,
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
