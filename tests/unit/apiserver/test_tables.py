"""Server-side printing: Kubernetes' columns and cell values."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from services.api.types.registry import by_resource
from services.apiserver import table_cells, tables

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC).timestamp()
T0 = "2024-06-01T11:55:00Z"  # five minutes before NOW

TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (600, "10m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60, "3h1m"),
        (9 * 3600, "9h"),
        (50 * 3600, "2d2h"),
        (8 * 86400, "8d"),
        (800 * 86400, "2y70d"),
        (3000 * 86400, "8y"),
    ],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert table_cells.human_duration(seconds) == text


def _pod(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "creationTimestamp": T0},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
        "status": status,
    }


def _running(name: str, ready: bool = True, restarts: int = 0, **extra: Any) -> dict[str, Any]:
    return {"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {}}, **extra}


@pytest.mark.parametrize(
    ("pod", "ready", "status", "restarts"),
    [
        (_pod(phase="Pending"), "0/2", "Pending", "0"),
        (_pod(phase="Running", containerStatuses=[_running("a"), _running("b")]), "2/2", "Running", "0"),
        (
            _pod(
                phase="Running",
                containerStatuses=[
                    _running("a"),
                    {
                        "name": "b",
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                        "restartCount": 3,
                        "lastState": {"terminated": {"finishedAt": "2024-06-01T11:59:00Z"}},
                    },
                ],
            ),
            "1/2",
            "CrashLoopBackOff",
            "3 (60s ago)",
        ),
        (
            _pod(
                phase="Succeeded",
                containerStatuses=[{"name": "a", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}],
            ),
            "0/2",
            "Completed",
            "0",
        ),
        (
            _pod(phase="Failed", containerStatuses=[{"name": "a", "state": {"terminated": {"exitCode": 2}}}]),
            "0/2",
            "ExitCode:2",
            "0",
        ),
        (
            _pod(
                phase="Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
            ),
            "0/2",
            "SchedulingGated",
            "0",
        ),
        (_pod(phase="Pending", reason="Evicted"), "0/2", "Evicted", "0"),
    ],
)
def test_pod_rows(pod: dict[str, Any], ready: str, status: str, restarts: str) -> None:
    cells = tables.print_pod(pod, NOW)
    assert cells[:5] == ["p", ready, status, restarts, "5m"]
    assert cells[5:] == ["<none>", "n1", "<none>", "<none>"]


def test_pod_init_containers_and_terminating() -> None:
    pod = _pod(
        phase="Pending", initContainerStatuses=[{"name": "init", "state": {"waiting": {"reason": "PodInitializing"}}}]
    )
    pod["spec"]["initContainers"] = [{"name": "init"}]
    assert tables.print_pod(pod, NOW)[2] == "Init:0/1"
    pod = _pod(phase="Running", containerStatuses=[_running("a"), _running("b")], podIPs=[{"ip": "10.0.0.7"}])
    pod["metadata"]["deletionTimestamp"] = T0
    cells = tables.print_pod(pod, NOW)
    assert cells[2] == "Terminating" and cells[5] == "10.0.0.7"


def test_pod_readiness_gates_and_completed_conditions() -> None:
    pod = _pod(phase="Succeeded", conditions=[{"type": "x.io/ready", "status": "True"}])
    pod["spec"]["readinessGates"] = [{"conditionType": "x.io/ready"}, {"conditionType": "y.io/ready"}]
    assert tables.print_pod(pod, NOW)[8] == "1/2"
    rt = by_resource("", "pods")
    assert rt is not None
    (row,) = tables.rows(rt, [pod], now=NOW)
    assert row["conditions"][0]["reason"] == "Succeeded"


@pytest.mark.parametrize(
    ("meta", "status", "state"),
    [
        ({}, {}, "pending"),
        ({}, {"allocation": {"devices": {}}}, "allocated"),
        ({}, {"allocation": {"devices": {}}, "reservedFor": [{"uid": "u"}]}, "allocated,reserved"),
        ({"deletionTimestamp": T0}, {}, "deleted"),
        ({"deletionTimestamp": T0}, {"allocation": {"devices": {}}}, "deleted,allocated,deallocating"),
        ({}, {"allocation": {"devices": {}}, "deallocationRequested": True}, "allocated,deallocating"),
    ],
)
def test_claim_state(meta: dict[str, Any], status: dict[str, Any], state: str) -> None:
    claim = {"metadata": {"name": "c", "creationTimestamp": T0, **meta}, "status": status}
    assert tables.print_claim(claim, NOW) == ["c", state, "5m"]


def test_node_row() -> None:
    node = {
        "metadata": {
            "name": "n1",
            "creationTimestamp": T0,
            "labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": ""},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "nodeInfo": {"kubeletVersion": "v1.31.0", "osImage": "Debian"},
        },
    }
    assert tables.print_node(node, NOW) == [
        "n1",
        "Ready,SchedulingDisabled",
        "control-plane,worker",
        "5m",
        "v1.31.0",
        "10.0.0.1",
        "<none>",
        "Debian",
        "<unknown>",
        "<unknown>",
    ]
    assert tables.print_node({"metadata": {"name": "n2"}}, NOW)[1:3] == ["Unknown", "<none>"]


def test_slice_event_namespace_scheduling_rows() -> None:
    sl = {
        "metadata": {"name": "s", "creationTimestamp": T0},
        "spec": {"nodeName": "n1", "driver": "gpu.example.com", "pool": {"name": "n1"}},
    }
    assert tables.print_slice(sl, NOW) == ["s", "n1", "gpu.example.com", "n1", "5m"]
    ev = {
        "metadata": {"name": "e1"},
        "type": "Warning",
        "reason": "FailedScheduling",
        "message": " no nodes ",
        "involvedObject": {"kind": "Pod", "name": "p"},
        "firstTimestamp": T0,
        "lastTimestamp": T0,
        "count": 3,
        "source": {"component": "default-scheduler"},
    }
    assert tables.print_event(ev, NOW) == [
        "5m",
        "Warning",
        "FailedScheduling",
        "pod/p",
        "",
        "default-scheduler",
        "no nodes",
        "5m",
        3,
        "e1",
    ]
    ns = {"metadata": {"name": "default", "creationTimestamp": T0}, "status": {"phase": "Active"}}
    assert tables.print_namespace(ns, NOW) == ["default", "Active", "5m"]
    ctx = {"metadata": {"name": "p", "creationTimestamp": T0}, "spec": {"selectedNode": "n2"}}
    assert tables.print_scheduling(ctx, NOW) == ["p", "n2", "5m"]


def test_column_definitions() -> None:
    for plural, group, names in [
        ("pods", "", ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]),
        ("resourceclaims", "resource.k8s.io", ["Name", "State", "Age"]),
        ("resourceclaimtemplates", "resource.k8s.io", ["Name", "Age"]),
        ("deviceclasses", "resource.k8s.io", ["Name", "Age"]),
        ("resourceslices", "resource.k8s.io", ["Name", "Node", "Driver", "Pool", "Age"]),
        ("podschedulingcontexts", "resource.k8s.io", ["Name", "SelectedNode", "Age"]),
        ("namespaces", "", ["Name", "Status", "Age"]),
    ]:
        rt = by_resource(group, plural)
        assert rt is not None
        columns, _ = tables.printer(rt)
        assert [c["name"] for c in columns] == names
    rt = by_resource("", "pods")
    assert rt is not None
    assert [c["priority"] for c in tables.printer(rt)[0]] == [0, 0, 0, 0, 0, 1, 1, 1, 1]


async def test_table_over_http(client: Any, backend: Any) -> None:
    rt = by_resource("resource.k8s.io", "resourceclaims")
    backend.seed(
        rt, {"metadata": {"name": "c1", "namespace": "ns"}, "status": {"allocation": {}, "reservedFor": [{"uid": "u"}]}}
    )
    backend.seed(
        rt,
        {
            "metadata": {"name": "c2", "namespace": "ns"},
            "status": {"allocation": {"devices": {}}, "reservedFor": [{"uid": "u"}]},
        },
    )
    r = await client.get(
        "/apis/resource.k8s.io/v1alpha3/namespaces/ns/resourceclaims?limit=500", headers={"Accept": TABLE_ACCEPT}
    )
    doc = await r.json()
    assert doc["kind"] == "Table" and doc["apiVersion"] == "meta.k8s.io/v1"
    assert [row["cells"][:2] for row in doc["rows"]] == [["c1", "pending"], ["c2", "allocated,reserved"]]
    assert doc["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert doc["rows"][0]["object"]["metadata"]["name"] == "c1"
    assert doc["metadata"]["resourceVersion"] == str(backend.rv)
    r = await client.get(
        "/apis/resource.k8s.io/v1alpha3/namespaces/ns/resourceclaims/c2?includeObject=Object",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    )
    doc = await r.json()
    assert len(doc["rows"]) == 1 and doc["rows"][0]["object"]["status"]["reservedFor"] == [{"uid": "u"}]
    r = await client.get(
        "/apis/resource.k8s.io/v1alpha3/namespaces/ns/resourceclaims?includeObject=None",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    )
    # kube-apiserver 1.31.14 writes "object": null (the oracle suite's table-json-include-object).
    assert (await r.json())["rows"][0]["object"] is None


def test_lease_rows() -> None:
    """kubectl get leases: NAME, HOLDER, AGE (pkg/printers/internalversion's printLease)."""
    rt = by_resource("coordination.k8s.io", "leases")
    assert rt is not None
    columns, _ = tables.printer(rt)
    assert [c["name"] for c in columns] == ["Name", "Holder", "Age"]
    held = {"metadata": {"name": "node-1", "creationTimestamp": T0}, "spec": {"holderIdentity": "node-1"}}
    free = {"metadata": {"name": "election", "creationTimestamp": T0}, "spec": {}}
    assert [r["cells"] for r in tables.rows(rt, [held, free], now=NOW)] == [
        ["node-1", "node-1", "5m"],
        ["election", "", "5m"],
    ]


def test_device_taint_rule_rows() -> None:
    """kubectl get devicetaintrules: NAME, KEY, VALUE, EFFECT, TIMEADDED, AGE — 1.37's deviceTaintColumnDefinitions
    (pkg/printers/internalversion/printers.go): the selector is not printed, an unset timeAdded is an empty cell."""
    rt = by_resource("resource.k8s.io", "devicetaintrules")
    assert rt is not None
    columns, _ = tables.printer(rt)
    assert [c["name"] for c in columns] == ["Name", "Key", "Value", "Effect", "TimeAdded", "Age"]
    added = {
        "metadata": {"name": "maintenance", "creationTimestamp": T0},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1"},
            "taint": {"key": "example.com/maintenance", "value": "true", "effect": "NoSchedule", "timeAdded": T0},
        },
    }
    bare = {"metadata": {"name": "bare", "creationTimestamp": T0}, "spec": {"taint": {"key": "k", "effect": "None"}}}
    assert [r["cells"] for r in tables.rows(rt, [added, bare], now=NOW)] == [
        ["maintenance", "example.com/maintenance", "true", "NoSchedule", "5m", "5m"],
        ["bare", "k", "", "None", "", "5m"],
    ]
