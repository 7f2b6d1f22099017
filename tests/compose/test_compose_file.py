"""docker-compose.yml and ops/Dockerfile, checked without a Docker engine.

Structure (one image, healthchecks, restart policies, conditions, the three
nodes) and, for every draplane service, its command parsed by `draplane`'s own
argparse with the service's environment — so a renamed flag or a missing
subcommand fails here, not in someone's `docker compose up`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from ops.compose.model import Service, load, read_dockerfile
from ops.compose.order import start_order
from services.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "ops" / "Dockerfile"
NODES = ("node-1", "node-2", "node-3")
BUS = "kafka://kafka:9092"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    document = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(document, dict)
    return document


@pytest.fixture(scope="module")
def services() -> dict[str, Service]:
    return dict(load(COMPOSE).services)


def draplane_services(services: dict[str, Service]) -> dict[str, Service]:
    return {name: s for name, s in services.items() if s.build is not None}


def flag(command: tuple[str, ...], name: str) -> str | None:
    for i, word in enumerate(command):
        if word == name and i + 1 < len(command):
            return command[i + 1]
        if word.startswith(name + "="):
            return word.partition("=")[2]
    return None


def test_the_services_of_the_stack(services: dict[str, Service]) -> None:
    expected = {"kafka", "topic-init", "apiserver", "scheduler", "controller-manager"}
    expected |= {f"{role}-{i}" for role in ("driver", "nodeagent") for i in (1, 2, 3)}
    assert set(services) == expected
    # The project's Kafka image (ops/docker/images): no registry serves apache/kafka here.
    assert services["kafka"].image == "draplane-kafka:local"
    assert services["kafka"].build is None


def test_every_draplane_service_runs_the_one_image_built_from_ops_dockerfile(services: dict[str, Service]) -> None:
    ours = draplane_services(services)
    assert len(ours) == 10
    assert {s.image for s in ours.values()} == {"draplane:local"}
    assert {s.build for s in ours.values() if s.build} == {services["apiserver"].build}
    build = services["apiserver"].build
    assert build is not None and build.context == REPO and build.dockerfile == DOCKERFILE


def test_the_dockerfile_installs_the_project_with_draplane_as_entrypoint() -> None:
    text = DOCKERFILE.read_text()
    # From the Debian base ops/docker/images makes with debootstrap; Debian's Python 3.11.
    assert re.search(r"^ARG BASE=draplane-base:local$", text, re.MULTILINE)
    assert re.search(r"^FROM \$\{BASE\} AS python$", text, re.MULTILINE)
    assert re.search(r"apt-get install -y --no-install-recommends python3 ", text)
    assert re.search(r"pip install --no-index .*-r /tmp/requirements.lock", text)
    assert re.search(r"pip install --no-index .* /tmp/src", text)
    image = read_dockerfile(DOCKERFILE)
    assert image.entrypoint == ("draplane",)
    assert image.workdir == "/var/lib/draplane"
    # Only what the image copies goes into the build context (BuildKit's <Dockerfile>.dockerignore).
    ignore = (REPO / "ops" / "Dockerfile.dockerignore").read_text().split()
    assert ignore[:1] == ["*"] or "*" in ignore
    for kept in ("!pyproject.toml", "!requirements.lock", "!README.md", "!services/", "!topics/"):
        assert kept in ignore
    for copied in re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.MULTILINE):
        for source in copied.split():
            # The wheels are downloaded by ops/docker/images (git-ignored, like .cache).
            assert source.startswith(".cache/docker/") or (REPO / source).exists(), f"COPY {source}: not here"
            assert {f"!{source}", f"!{source.rstrip('/')}/"} & set(ignore), f"COPY {source}: not in the context"


def test_every_long_running_draplane_service_has_a_healthcheck_and_restarts(services: dict[str, Service]) -> None:
    for name, service in draplane_services(services).items():
        if name == "topic-init":
            continue
        assert service.restart == "unless-stopped", name
        assert service.healthcheck is not None, name
        test = service.healthcheck.test
        assert test[:3] == ("CMD", "python", "-c"), name
        url = urlsplit(test[-1])
        # The apiserver is healthy once its view has caught up (/readyz), the others when they answer.
        assert url.path == ("/readyz" if name == "apiserver" else "/healthz") and url.hostname == "127.0.0.1", name
        # The probed port is the one the component serves /healthz on, and is declared.
        listen = flag(service.command or (), "--metrics-listen") or flag(service.command or (), "--listen")
        assert listen is not None, f"{name}: serves no /healthz"
        assert int(listen.rpartition(":")[2]) == url.port, name
        assert url.port in service.container_ports(), f"{name}: port {url.port} not in ports/expose"
    assert services["kafka"].healthcheck is not None
    assert services["kafka"].restart == "unless-stopped"


def test_topic_init_is_a_one_shot_that_everything_waits_for(services: dict[str, Service]) -> None:
    init = services["topic-init"]
    assert init.restart == "no" and init.healthcheck is None
    assert init.command == ("topics", "--bus", BUS)
    assert init.depends_on == {"kafka": "service_healthy"}
    assert services["apiserver"].depends_on == {"topic-init": "service_completed_successfully"}
    order = start_order({name: list(s.depends_on) for name, s in services.items()})
    assert order[:3] == ["kafka", "topic-init", "apiserver"]
    for name in order[3:]:
        assert services[name].depends_on.get("apiserver") == "service_healthy", name


def test_dependencies_carry_conditions(raw: dict[str, Any]) -> None:
    for name, spec in raw["services"].items():
        for dependency, options in (spec.get("depends_on") or {}).items():
            assert isinstance(options, dict) and "condition" in options, f"{name} -> {dependency}"


SUBCOMMANDS = {
    "topic-init": "topics",
    "apiserver": "apiserver",
    "scheduler": "scheduler",
    "controller-manager": "controller-manager",
    **{f"driver-{i}": "driver" for i in (1, 2, 3)},
    **{f"nodeagent-{i}": "nodeagent" for i in (1, 2, 3)},
}


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_the_command_parses_with_draplanes_own_argparse(
    services: dict[str, Service], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = services[name]
    for key, value in service.environment.items():
        monkeypatch.setenv(key, value)  # some defaults come from the environment (NODE_NAME)
    assert service.command is not None
    args = build_parser().parse_args(list(service.command))
    assert args.command == SUBCOMMANDS[name]
    assert args.bus == BUS
    assert callable(args.run)
    if SUBCOMMANDS[name] in ("driver", "nodeagent"):
        assert args.node == f"node-{name[-1]}", "NODE_NAME names the node"


def test_the_apiserver_is_published_on_the_host_with_anonymous_access(services: dict[str, Service]) -> None:
    api = services["apiserver"]
    assert api.command is not None
    assert "--anonymous" in api.command, "the demo's access, as ./ops/up"
    assert flag(api.command, "--listen") == "0.0.0.0:8080"
    (port,) = api.ports
    assert (port.target, port.published, port.host_ip) == (8080, 8080, "127.0.0.1")


def test_the_shipped_kubeconfig_reaches_the_published_apiserver(services: dict[str, Service]) -> None:
    config = yaml.safe_load((REPO / "ops" / "compose" / "kubeconfig").read_text())
    (cluster,) = config["clusters"]
    (port,) = services["apiserver"].ports
    assert cluster["cluster"]["server"] == f"http://{port.host_ip}:{port.published}"
    (user,) = config["users"]
    assert user["user"] == {}, "anonymous, as the apiserver's --anonymous"


def test_three_nodes_of_a_driver_and_a_node_agent_sharing_a_state_volume(services: dict[str, Service]) -> None:
    for i, node in enumerate(NODES, start=1):
        driver, agent = services[f"driver-{i}"], services[f"nodeagent-{i}"]
        assert driver.environment["NODE_NAME"] == agent.environment["NODE_NAME"] == node
        assert driver.volumes == agent.volumes and len(driver.volumes) == 1
        (mount,) = driver.volumes
        assert not mount.bind and mount.source == node
        state = flag(driver.command or (), "--state-dir")
        assert state is not None and state == flag(agent.command or (), "--state-dir")
        assert state.startswith(mount.target + "/"), "the plugin socket must live in the shared volume"
        assert "--no-nvidia-smi" in (driver.command or ()), "simulated GPUs, whatever the host has"
        assert agent.depends_on == {"apiserver": "service_healthy", f"driver-{i}": "service_healthy"}
    volumes = [m.source for s in services.values() for m in s.volumes]
    assert len(set(volumes)) == len(set(volumes) & set(load(COMPOSE).volumes))


def test_kafka_is_a_single_kraft_node_that_services_reach_as_kafka_9092(raw: dict[str, Any]) -> None:
    env = raw["services"]["kafka"]["environment"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == "1@kafka:9093"
    assert "PLAINTEXT://kafka:9092" in env["KAFKA_ADVERTISED_LISTENERS"].split(",")
    assert env["KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"] == 1, "the committer's transactions on one broker"
    assert env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    assert raw["services"]["kafka"]["hostname"] == "kafka"


def test_the_drivers_take_their_profile_from_the_shells_driver_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    """``DRIVER_PROFILE=gpu,partitions=4 docker compose up`` (or ops/compose/run-local): every driver publishes
    that profile (``--driver-profile``'s default); unset, the drivers keep their eight plain GPUs."""
    monkeypatch.setenv("DRIVER_PROFILE", "gpu,partitions=4")
    services = dict(load(COMPOSE).services)
    for i in (1, 2, 3):
        driver = services[f"driver-{i}"]
        assert driver.environment["DRIVER_PROFILE"] == "gpu,partitions=4"
        for key, value in driver.environment.items():
            monkeypatch.setenv(key, value)
        assert driver.command is not None
        assert build_parser().parse_args(list(driver.command)).driver_profile == "gpu,partitions=4"
        assert "DRIVER_PROFILE" not in services[f"nodeagent-{i}"].environment
    monkeypatch.delenv("DRIVER_PROFILE")
    services = dict(load(COMPOSE).services)
    assert all("DRIVER_PROFILE" not in services[f"driver-{i}"].environment for i in (1, 2, 3))
