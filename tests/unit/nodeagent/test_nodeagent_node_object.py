"""The Node the agent registers, and its heartbeat."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.nodeagent import node_object as no

T0 = datetime(2024, 8, 14, 12, 0, 0, tzinfo=UTC)


def test_new_node_has_kubelets_labels() -> None:
    node = no.new_node("node-a", arch="arm64", labels={"example.com/gpu": "true"})
    assert node["metadata"] == {
        "name": "node-a",
        "labels": {
            "kubernetes.io/hostname": "node-a",
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "arm64",
            "example.com/gpu": "true",
        },
    }


def test_status_has_capacity_addresses_and_a_ready_condition() -> None:
    status = no.node_status("node-a", capacity=no.DEFAULT_CAPACITY, address="10.0.0.5", arch="amd64", now=T0)
    assert status["capacity"] == status["allocatable"] == {"cpu": "8", "memory": "32Gi", "pods": "110"}
    assert status["addresses"] == [
        {"type": "InternalIP", "address": "10.0.0.5"},
        {"type": "Hostname", "address": "node-a"},
    ]
    ready = {c["type"]: c for c in status["conditions"]}["Ready"]
    assert ready == {
        "type": "Ready",
        "status": "True",
        "lastHeartbeatTime": "2024-08-14T12:00:00Z",
        "lastTransitionTime": "2024-08-14T12:00:00Z",
        "reason": "KubeletReady",
        "message": "kubelet is posting ready status",
    }
    assert {c["type"] for c in status["conditions"]} == {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}
    assert status["nodeInfo"]["architecture"] == "amd64" and status["nodeInfo"]["kubeletVersion"] == "v1.31.0"


def test_heartbeat_moves_heartbeat_time_but_keeps_transition_time() -> None:
    node = {
        "metadata": {"name": "n"},
        "status": no.node_status("n", capacity=no.DEFAULT_CAPACITY, address="10.0.0.5", arch="amd64", now=T0),
    }
    later = no.heartbeat(node, now=T0 + timedelta(seconds=40))
    ready = {c["type"]: c for c in later["status"]["conditions"]}["Ready"]
    assert ready["lastHeartbeatTime"] == "2024-08-14T12:00:40Z"
    assert ready["lastTransitionTime"] == "2024-08-14T12:00:00Z"
    assert later["status"]["capacity"] == node["status"]["capacity"]


def test_a_node_that_was_not_ready_transitions_now() -> None:
    node = {
        "status": {"conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}
    }
    ready = {c["type"]: c for c in no.heartbeat(node, now=T0)["status"]["conditions"]}["Ready"]
    assert ready["status"] == "True" and ready["lastTransitionTime"] == "2024-08-14T12:00:00Z"


def test_missing_labels() -> None:
    wanted = {"kubernetes.io/hostname": "n", "kubernetes.io/os": "linux"}
    assert no.missing_labels({"metadata": {"labels": {**wanted, "x": "y"}}}, wanted) is None
    assert no.missing_labels({"metadata": {"labels": {"x": "y"}}}, wanted) == {**wanted, "x": "y"}


@pytest.mark.parametrize(("machine", "arch"), [("x86_64", "amd64"), ("aarch64", "arm64"), ("s390x", "s390x")])
def test_go_arch(machine: str, arch: str) -> None:
    assert no.go_arch(machine) == arch


def test_node_address_is_stable_and_private() -> None:
    assert no.node_address("node-a") == no.node_address("node-a")
    assert no.node_address("node-a") != no.node_address("node-b")
    assert no.node_address("node-a").startswith("10.89.")
