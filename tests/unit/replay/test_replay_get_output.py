"""`replay get` output: kubectl's table layout over the server's printers, names, JSON and YAML lists."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from services.api.types import registry
from services.replay import get_output


def resource(group: str, plural: str) -> registry.ResourceType:
    rt = registry.by_resource(group, plural)
    assert rt is not None
    return rt


PODS = resource("", "pods")
CLAIMS = resource("resource.k8s.io", "resourceclaims")
NODES = resource("", "nodes")
NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC).timestamp()


def pod(name: str, namespace: str = "gpu-test1", phase: str = "Running", node: str = "node-1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": "2026-11-29T11:55:00Z",
            "resourceVersion": "17",
            "managedFields": [{"manager": "kubectl"}],
        },
        "spec": {"nodeName": node, "containers": [{"name": "ctr0", "image": "busybox"}]},
        "status": {
            "phase": phase,
            "podIP": "10.244.0.7",
            "podIPs": [{"ip": "10.244.0.7"}],
            "containerStatuses": [
                {
                    "name": "ctr0",
                    "ready": phase == "Running",
                    "restartCount": 0,
                    "state": {"running": {}} if phase == "Running" else {"waiting": {"reason": "ContainerCreating"}},
                }
            ],
        },
    }


def claim(name: str, allocated: bool, reserved: bool) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if allocated:
        status["allocation"] = {"devices": {"results": []}}
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": "pod0", "uid": "u"}]
    return {
        "metadata": {"name": name, "namespace": "gpu-test1", "creationTimestamp": "2026-11-29T10:00:00Z"},
        "status": status,
    }


def test_tabwriter_is_kubectls() -> None:
    # minimum width 6, padding 3, the last column unpadded
    assert get_output.tabwrite([["NAME", "READY", "AGE"], ["web-0", "1/1", "5m"]]) == (
        "NAME    READY   AGE\nweb-0   1/1     5m\n"
    )
    assert get_output.tabwrite([["A", "B"], ["x", "y"]]) == "A     B\nx     y\n"


def test_pods_table_as_kubectl_get_prints_it() -> None:
    text = get_output.table(PODS, [pod("pod0"), pod("pod1", phase="Pending")], now=NOW)
    assert text == (
        "NAME   READY   STATUS              RESTARTS   AGE\n"
        "pod0   1/1     Running             0          5m\n"
        "pod1   0/1     ContainerCreating   0          5m\n"
    )


def test_wide_and_all_namespaces() -> None:
    text = get_output.table(PODS, [pod("pod0")], now=NOW, wide=True, namespace_column=True)
    lines = text.splitlines()
    assert lines[0].split() == [
        "NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
        "READINESS", "GATES",
    ]  # fmt: skip
    assert lines[1].split() == ["gpu-test1", "pod0", "1/1", "Running", "0", "5m", "10.244.0.7", "node-1",
                                "<none>", "<none>"]  # fmt: skip


def test_claims_show_their_state() -> None:
    text = get_output.table(
        CLAIMS, [claim("a", False, False), claim("b", True, False), claim("c", True, True)], now=NOW
    )
    assert text.splitlines() == [
        "NAME   STATE                AGE",
        "a      pending              120m",
        "b      allocated            120m",
        "c      allocated,reserved   120m",
    ]


@pytest.mark.parametrize(
    ("rt", "obj", "expected"),
    [
        (PODS, pod("pod0"), "pod/pod0\n"),
        (CLAIMS, claim("gpu", True, True), "resourceclaim.resource.k8s.io/gpu\n"),
    ],
)
def test_names(rt: registry.ResourceType, obj: dict[str, Any], expected: str) -> None:
    assert get_output.render(rt, [obj], fmt="name", now=NOW) == expected


def test_json_list_and_single_object() -> None:
    listed = json.loads(get_output.render(PODS, [pod("pod0"), pod("pod1")], fmt="json", now=NOW, resource_version="17"))
    assert listed["kind"] == "List" and listed["apiVersion"] == "v1"
    assert listed["metadata"] == {"resourceVersion": "17"}
    assert [p["metadata"]["name"] for p in listed["items"]] == ["pod0", "pod1"]
    single = json.loads(get_output.render(PODS, [pod("pod0")], fmt="json", now=NOW, single=True))
    assert single["kind"] == "Pod" and single["metadata"]["name"] == "pod0"
    text = get_output.render(PODS, [pod("pod0")], fmt="json", now=NOW, single=True)
    assert text.startswith('{\n    "apiVersion": "v1",')  # four spaces, sorted keys, as kubectl


def test_yaml_single_object() -> None:
    doc = yaml.safe_load(get_output.render(PODS, [pod("pod0")], fmt="yaml", now=NOW, single=True))
    assert doc["metadata"]["name"] == "pod0" and doc["status"]["phase"] == "Running"


def test_managed_fields_hidden_as_kubectl_does() -> None:
    original = pod("pod0")
    shown = get_output.without_managed_fields(original)
    assert "managedFields" not in shown["metadata"]
    assert shown["metadata"]["name"] == "pod0"
    assert "managedFields" in original["metadata"]  # the input is left alone


def test_messages() -> None:
    assert get_output.not_found(PODS, "x") == 'Error from server (NotFound): pods "x" not found'
    assert (
        get_output.not_found(CLAIMS, "x")
        == 'Error from server (NotFound): resourceclaims.resource.k8s.io "x" not found'
    )
    assert get_output.nothing_found(PODS, "default") == "No resources found in default namespace."
    assert get_output.nothing_found(PODS, None) == "No resources found"
    assert get_output.nothing_found(NODES, None) == "No resources found"
