"""docker-compose.3brokers.yml, merged into docker-compose.yml by docker-compose 1.29 itself.

No Docker engine is needed: ``docker-compose -f docker-compose.yml -f
docker-compose.3brokers.yml config`` merges and validates the files as
``up`` would, and prints the result. The merged services must make one KRaft
quorum of three combined nodes with replicated internal topics, and every
draplane service must name all three brokers in its ``--bus`` (parsed by
`draplane`'s own argparse, as tests/compose/test_compose_file.py does for
the single-broker file). Skips when ``docker-compose`` is not installed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.bus.urls import KafkaTarget, parse_bus_url
from services.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
BROKERS = ("kafka", "kafka-2", "kafka-3")
BUS = "kafka://kafka:9092,kafka-2:9092,kafka-3:9092"


@pytest.fixture(scope="module")
def merged() -> dict[str, Any]:
    if shutil.which("docker-compose") is None:
        pytest.skip("docker-compose (1.29) is not installed")
    done = subprocess.run(
        ["docker-compose", "-f", "docker-compose.yml", "-f", "docker-compose.3brokers.yml", "config"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    document = yaml.safe_load(done.stdout)
    assert isinstance(document, dict)
    services: dict[str, Any] = document["services"]
    return services


def test_three_combined_nodes_form_one_quorum(merged: dict[str, Any]) -> None:
    envs = [merged[name]["environment"] for name in BROKERS]
    assert [int(env["KAFKA_NODE_ID"]) for env in envs] == [1, 2, 3]
    assert {env["KAFKA_CONTROLLER_QUORUM_VOTERS"] for env in envs} == {"1@kafka:9093,2@kafka-2:9093,3@kafka-3:9093"}
    assert {env["CLUSTER_ID"] for env in envs} == {merged["kafka"]["environment"]["CLUSTER_ID"]}
    assert all(env["KAFKA_PROCESS_ROLES"] == "broker,controller" for env in envs)
    for env, name in zip(envs, BROKERS, strict=True):
        assert env["KAFKA_ADVERTISED_LISTENERS"].startswith(f"PLAINTEXT://{name}:9092,")
    volumes = [tuple(merged[name]["volumes"]) for name in BROKERS]
    assert len(set(volumes)) == 3, "each node keeps its own log"


def test_every_topic_is_replicated_three_ways_with_two_in_sync(merged: dict[str, Any]) -> None:
    for name in BROKERS:
        env = merged[name]["environment"]
        for key in (
            "KAFKA_DEFAULT_REPLICATION_FACTOR",
            "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR",
            "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
            "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR",
        ):
            assert int(env[key]) == 3, (name, key)
        for key in ("KAFKA_MIN_INSYNC_REPLICAS", "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"):
            assert int(env[key]) == 2, (name, key)


def test_every_draplane_service_names_the_three_brokers(
    merged: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    draplane = {name: s for name, s in merged.items() if s.get("image") == "draplane:local"}
    assert {"topic-init", "apiserver", "scheduler", "controller-manager", "driver-3", "nodeagent-3"} <= draplane.keys()
    for name, service in draplane.items():
        for key, value in (service.get("environment") or {}).items():
            monkeypatch.setenv(key, str(value))  # NODE_NAME and the like
        args = build_parser().parse_args([str(word) for word in service["command"]])
        assert args.bus == BUS, name
        target = parse_bus_url(args.bus)
        assert isinstance(target, KafkaTarget)
        assert target.bootstrap_servers == ("kafka:9092", "kafka-2:9092", "kafka-3:9092")
    assert set(merged["topic-init"]["depends_on"]) == set(BROKERS)
    assert all(merged["topic-init"]["depends_on"][b]["condition"] == "service_healthy" for b in BROKERS)
