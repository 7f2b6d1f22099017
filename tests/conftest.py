"""Where the tests' buses live: a temporary SQLite file, or a real Kafka broker.

- ``kafka_bootstrap``: the broker in ``KAFKA_BOOTSTRAP_SERVERS`` (``ops/test``
  starts one). When it is unset or does not answer, Kafka tests are skipped —
  or fail, when ``DRAPLANE_REQUIRE_KAFKA=1`` says a broker must be there.
- ``bus_url``: parametrized ``[embedded]`` / ``[kafka]``; call it (with
  optional bus options) for the URL of a bus private to the test: a fresh file,
  or a unique topic/group/transactional-id prefix on the shared broker. Every
  call within one test returns the same log.
"""

from __future__ import annotations

import gc
import os
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.bus.urls import with_query

KAFKA_ENV = "KAFKA_BOOTSTRAP_SERVERS"
REQUIRE_ENV = "DRAPLANE_REQUIRE_KAFKA"


@pytest.fixture(autouse=True)
def _collect_garbage_between_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Free aiokafka's reference cycles after each Kafka test, not at a random later point.

    Left to the cyclic GC, their finalizers may run inside a later ``ast.parse``
    (pytest rewriting a module it imports late), and CPython 3.11.7 then fails
    with "SystemError: AST constructor recursion depth mismatch". Only tests
    that touched Kafka leave such cycles, so only they pay for a collection.
    """
    yield
    if request.node.get_closest_marker("kafka") is not None or "kafka" in request.node.name:
        gc.collect()


def _answers(servers: str) -> bool:
    for server in servers.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=2):
                return True
        except (OSError, ValueError):
            continue
    return False


@pytest.fixture(scope="session")
def kafka_bootstrap() -> str:
    servers = os.environ.get(KAFKA_ENV, "").strip()
    if not servers:
        problem = f"{KAFKA_ENV} is not set (./ops/test starts a broker and sets it)"
    elif not _answers(servers):
        problem = f"no Kafka broker answers at {KAFKA_ENV}={servers}"
    else:
        return servers
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {problem}")
    pytest.skip(problem)


@dataclass(frozen=True)
class BusUrl:
    """A test's private bus: call it for the URL, with extra bus options."""

    backend: str
    base: str

    def __call__(self, **options: object) -> str:
        return with_query(self.base, **options)


@pytest.fixture(params=["embedded", pytest.param("kafka", marks=pytest.mark.kafka)])
def bus_url(request: pytest.FixtureRequest, tmp_path: Path) -> BusUrl:
    if request.param == "kafka":
        servers = request.getfixturevalue("kafka_bootstrap")
        return BusUrl("kafka", f"kafka://{servers}?prefix=t{uuid.uuid4().hex[:12]}-")
    return BusUrl("embedded", f"sqlite://{tmp_path / 'bus.db'}")
