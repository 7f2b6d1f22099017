"""Pod status as the node agent reports it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from services.nodeagent import pod_status as ps

T0 = datetime(2024, 8, 14, 12, 0, 0, tzinfo=UTC)


def pod(**annotations: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "pod-uid", "annotations": annotations},
        "spec": {
            "nodeName": "node-a",
            "containers": [{"name": "ctr0", "image": "busybox:1.36"}, {"name": "ctr1", "image": "busybox:1.36"}],
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2024-08-14T11:59:00Z"}],
        },
    }


def test_running_status() -> None:
    resources = {"ctr0": [{"name": "claim:gpu", "resources": [{"resourceID": "k/gpu=x", "health": "Healthy"}]}]}
    status = ps.running_status(pod(), host_ip="10.89.0.1", now=T0, resources=resources)
    assert status["phase"] == "Running"
    assert status["hostIP"] == "10.89.0.1" and status["hostIPs"] == [{"ip": "10.89.0.1"}]
    assert status["podIP"] == ps.pod_ip("pod-uid") and status["podIPs"] == [{"ip": status["podIP"]}]
    assert status["startTime"] == "2024-08-14T12:00:00Z"
    conditions = {c["type"]: c for c in status["conditions"]}
    assert set(conditions) == {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}
    assert all(c["status"] == "True" for c in conditions.values())
    # the scheduler's PodScheduled condition keeps its transition time
    assert conditions["PodScheduled"]["lastTransitionTime"] == "2024-08-14T11:59:00Z"
    ctr0, ctr1 = status["containerStatuses"]
    assert ctr0["state"] == {"running": {"startedAt": "2024-08-14T12:00:00Z"}}
    assert ctr0["ready"] is True and ctr0["started"] is True and ctr0["restartCount"] == 0
    assert ctr0["allocatedResourcesStatus"] == resources["ctr0"]
    assert "allocatedResourcesStatus" not in ctr1
    assert ctr0["containerID"] != ctr1["containerID"]


def test_init_containers_are_reported_completed() -> None:
    p = pod()
    p["spec"]["initContainers"] = [{"name": "init", "image": "busybox"}]
    (init,) = ps.running_status(p, host_ip="h", now=T0)["initContainerStatuses"]
    assert init["state"]["terminated"]["reason"] == "Completed" and init["state"]["terminated"]["exitCode"] == 0


def test_terminated_status_succeeds_with_exit_code_zero() -> None:
    running = {**pod(), "status": ps.running_status(pod(), host_ip="h", now=T0)}
    status = ps.terminated_status(running, now=T0 + timedelta(seconds=5))
    assert status["phase"] == "Succeeded"
    for ctr in status["containerStatuses"]:
        terminated = ctr["state"]["terminated"]
        assert terminated["exitCode"] == 0 and terminated["reason"] == "Completed"
        assert terminated["startedAt"] == "2024-08-14T12:00:00Z" and terminated["finishedAt"] == "2024-08-14T12:00:05Z"
        assert ctr["ready"] is False
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Ready"]["status"] == "False" and conditions["Ready"]["reason"] == "PodCompleted"
    assert conditions["PodScheduled"]["status"] == "True"


def test_a_non_zero_exit_code_fails_the_pod() -> None:
    assert ps.terminated_status(pod(), now=T0, exit_code=137, reason="Error")["phase"] == "Failed"


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [(None, None), ("5", 5.0), ("0.25", 0.25), ("0", 0.0), ("-1", None), ("soon", None), ("inf", None)],
)
def test_run_seconds(annotation: str | None, expected: float | None) -> None:
    p = pod(**({ps.RUN_SECONDS_ANNOTATION: annotation} if annotation is not None else {}))
    assert ps.run_seconds(p) == expected


def test_completion_delay() -> None:
    p = pod(**{ps.RUN_SECONDS_ANNOTATION: "5"})
    p["status"]["startTime"] = "2024-08-14T12:00:00Z"
    assert ps.completion_delay(p, now=T0 + timedelta(seconds=2)) == 3.0
    assert ps.completion_delay(p, now=T0 + timedelta(seconds=9)) == 0.0
    assert ps.completion_delay(p, now=T0, started=T0 + timedelta(seconds=1)) == 6.0
    assert ps.completion_delay(pod(), now=T0) is None
