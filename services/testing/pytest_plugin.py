"""The ``draplane`` pytest plugin: a running draplane cluster for your own integration tests.

Installed with the package (entry point ``pytest11: draplane``), so a test
only asks for the fixture::

    def test_gpu_pod(draplane_cluster, draplane_namespace):
        draplane_cluster.apply(MANIFEST, namespace=draplane_namespace)
        draplane_cluster.wait_for_pod_phase("pod0", namespace=draplane_namespace, phase="Running")

Fixtures:

- ``draplane_cluster`` (session): a `services.testing.cluster.DraplaneCluster`
  — ``url``, ``kubeconfig``, ``bus_url``, ``backend``, ``nodes``,
  ``api_client()``, ``dynamic_client()``, ``apply()``, ``get()``,
  ``delete()``, event-driven ``wait_for()``, ``wait_for_list()``,
  ``wait_for_pod_phase()``, ``wait_for_deleted()``, ``metrics()``.
- ``draplane_namespace`` (function): a fresh namespace; afterwards its pods,
  claims and the namespace itself are deleted.
- ``draplane_cluster_options`` (session): the `ClusterOptions` used; override
  it in a conftest.py to choose them in code.
- ``draplane_backend`` (session): the log the cluster runs on, chosen once.

Options (command line, or the ini key in brackets):
``--draplane-backend auto|embedded|kafka|testcontainers`` [draplane_backend],
``--draplane-nodes N`` [draplane_nodes], ``--draplane-feature-gates G=true,...``
[draplane_feature_gates], ``--draplane-emulated-version 1.31`` [draplane_emulated_version],
``--draplane-data DIR`` [draplane_data] (kept after
the run, for ``draplane replay --data DIR``), ``--draplane-kafka-image IMAGE``
[draplane_kafka_image].

Importing this module is cheap and has no side effects: pytest loads it in
every run of every project that has draplane installed, so everything heavy is
imported only when a fixture is used. ``pytest -p no:draplane`` turns it off.
docs/testing.md has the whole story, with ``examples/test_my_gpu_workload.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from services.testing.backends import Backend
    from services.testing.cluster import ClusterOptions, DraplaneCluster

# (name, metavar, ini default, help)
_OPTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("backend", "BACKEND", "auto", "the log: auto (testcontainers, else $KAFKA_BOOTSTRAP_SERVERS, else embedded), "
     "embedded, kafka or testcontainers"),
    ("nodes", "N", "2", "simulated GPU nodes node-1 ... node-N"),
    ("feature_gates", "GATES", "", "feature gates in kube's syntax, e.g. DRAConsumableCapacity=false"),
    ("emulated_version", "VERSION", "", "the Kubernetes release to emulate: 1.37 (default) or 1.31 (the seeds')"),
    ("data", "DIR", "", "directory for the cluster's data, kept afterwards (default: a temporary one, removed)"),
    ("kafka_image", "IMAGE", "", "the testcontainers backend's Kafka image (default draplane-kafka:local)"),
)  # fmt: skip


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("draplane", "a draplane cluster for integration tests (draplane_cluster fixture)")
    for name, metavar, default, help_text in _OPTIONS:
        flag = "--draplane-" + name.replace("_", "-")
        group.addoption(
            flag, dest=f"draplane_{name}", metavar=metavar, default=None, help=f"{help_text} [ini: draplane_{name}]"
        )
        parser.addini(f"draplane_{name}", help_text, default=default)


def pytest_configure(config: pytest.Config) -> None:
    """Refuse bad draplane options up front (a usage error), but only when some were given: importing is cheap."""
    given = [name for name, _, default, _ in _OPTIONS if option(config, name) != default]
    if given:
        options_from(config)


def option(config: pytest.Config, name: str) -> str:
    """An option's value: the command line first, then the ini file, then the default."""
    value = config.getoption(f"draplane_{name}")
    if value is None:
        value = config.getini(f"draplane_{name}")
    return str(value).strip()


def options_from(config: pytest.Config) -> ClusterOptions:
    from services.kube.emulated_version import EmulatedVersionError, parse_emulated_version
    from services.kube.feature_gates import FeatureGateError, FeatureGates
    from services.testing.backends import BACKENDS, DEFAULT_KAFKA_IMAGE
    from services.testing.cluster import ClusterOptions

    backend = option(config, "backend") or "auto"
    if backend not in BACKENDS:
        raise pytest.UsageError(f"--draplane-backend: {backend!r} is not one of {', '.join(BACKENDS)}")
    nodes_text = option(config, "nodes") or "2"
    if not nodes_text.isdigit():
        raise pytest.UsageError(f"--draplane-nodes: expected a number of nodes, got {nodes_text!r}")
    gates = option(config, "feature_gates")
    emulated = option(config, "emulated_version")
    try:
        release = parse_emulated_version(emulated)
    except EmulatedVersionError as exc:
        raise pytest.UsageError(f"--draplane-emulated-version: {exc}") from None
    try:
        FeatureGates.parse(gates, release=release)
    except FeatureGateError as exc:
        raise pytest.UsageError(f"--draplane-feature-gates: {exc}") from None
    data = option(config, "data")
    return ClusterOptions(
        nodes=int(nodes_text),
        feature_gates=gates,
        emulated_version=emulated,
        backend=backend,
        data_dir=Path(data).resolve() if data else None,
        kafka_image=option(config, "kafka_image") or DEFAULT_KAFKA_IMAGE,
    )


@pytest.fixture(scope="session")
def draplane_cluster_options(pytestconfig: pytest.Config) -> ClusterOptions:
    """The options of ``draplane_cluster`` (override this fixture to set them in code)."""
    return options_from(pytestconfig)


@pytest.fixture(scope="session")
def draplane_backend(draplane_cluster_options: ClusterOptions) -> Iterator[Backend]:
    """The log the session's clusters run on; skips with the reason when the asked-for one cannot run."""
    from services.testing.backends import BackendUnavailable, choose

    try:
        backend = choose(draplane_cluster_options.backend, kafka_image=draplane_cluster_options.kafka_image)
    except BackendUnavailable as exc:
        pytest.skip(f"draplane: {exc}")
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture(scope="session")
def draplane_cluster(draplane_cluster_options: ClusterOptions, draplane_backend: Backend) -> Iterator[DraplaneCluster]:
    """A running draplane cluster, shared by the session (use ``draplane_namespace`` to keep tests apart)."""
    from services.testing.cluster import running_cluster

    with running_cluster(draplane_cluster_options, backend=draplane_backend) as cluster:
        yield cluster


@pytest.fixture
def draplane_namespace(draplane_cluster: DraplaneCluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of its own for one test; afterwards its pods, claims and the namespace are deleted."""
    from services.testing.cluster import unique_name

    prefix = "".join(c if c.isalnum() else "-" for c in request.node.name.lower())[:40].strip("-") or "test"
    name = unique_name(prefix)
    draplane_cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        draplane_cluster.delete_namespace(name)
