"""Pod status as kubelet reports it: Running with its containers, then terminated.

Why this module exists: ``kubectl get pods``, the claim controller (which
releases claims of terminated pods) and the demos all read what the node
agent writes into ``pod.status``. Running means phase ``Running``, the
conditions kubelet sets (PodReadyToStartContainers, Initialized,
ContainersReady, Ready, PodScheduled), container statuses in the running
state, host and pod IPs and a start time; each container's
``allocatedResourcesStatus`` lists the CDI devices it got per claim
(``claim:<pod claim>`` or ``claim:<pod claim>/<request>``, one entry per CDI
device id, as kubelet 1.31's ResourceHealthStatus feature names them).
Terminated means every container terminated with an exit code and the phase
Succeeded (all zero) or Failed. Everything here is pure.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from services.kube.times import parse_time, time_text

Obj = dict[str, Any]

RUN_SECONDS_ANNOTATION = "draplane.io/run-seconds"
RUNNING = "Running"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
PENDING = "Pending"
TERMINAL = (SUCCEEDED, FAILED)


def run_seconds(pod: Mapping[str, Any]) -> float | None:
    """The run time a pod asks for (``draplane.io/run-seconds``), or None to run until deleted."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(RUN_SECONDS_ANNOTATION)
    if raw is None:
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def pod_ip(uid: str) -> str:
    """A stable pod IP in 10.244.0.0/16 derived from the pod's UID."""
    digest = hashlib.sha256(uid.encode()).digest()
    return f"10.244.{digest[0]}.{1 + digest[1] % 254}"


def _container_id(pod_uid: str, name: str) -> str:
    return "draplane://" + hashlib.sha256(f"{pod_uid}/{name}".encode()).hexdigest()


def _image_id(image: str) -> str:
    return f"{image}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


_CONDITION_ORDER = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")


def _conditions(status: Mapping[str, Any], wanted: Mapping[str, tuple[str, str]], now: str) -> list[Obj]:
    """Set the wanted condition types to (status, reason) and keep the others; unchanged ones keep their times."""
    old = {c.get("type"): c for c in status.get("conditions") or ()}
    result: list[Obj] = []
    for type_ in [*_CONDITION_ORDER, *(t for t in old if t not in _CONDITION_ORDER)]:
        if type_ in wanted:
            value, reason = wanted[type_]
            previous = old.get(type_) or {}
            unchanged = previous.get("status") == value and previous.get("lastTransitionTime")
            condition: Obj = {
                "type": type_,
                "status": value,
                "lastProbeTime": None,
                "lastTransitionTime": previous["lastTransitionTime"] if unchanged else now,
            }
            if reason:
                condition["reason"] = reason
            result.append(condition)
        elif type_ in old:
            result.append(dict(old[type_]))
    return result


def running_status(
    pod: Mapping[str, Any],
    *,
    host_ip: str,
    now: datetime,
    resources: Mapping[str, Sequence[Obj]] | None = None,
) -> Obj:
    """The status of a pod whose containers all started (``resources``: allocatedResourcesStatus per container)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    uid = str(meta.get("uid", ""))
    stamp = time_text(now)
    status: Obj = dict(pod.get("status") or {})
    ip = pod_ip(uid)
    started_at = status.get("startTime") or stamp
    status.update(
        {
            "phase": RUNNING,
            "conditions": _conditions(
                status,
                {
                    "PodReadyToStartContainers": ("True", ""),
                    "Initialized": ("True", ""),
                    "Ready": ("True", ""),
                    "ContainersReady": ("True", ""),
                    "PodScheduled": ("True", ""),
                },
                stamp,
            ),
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": started_at,
        }
    )
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [
            _container_status(uid, c, {"terminated": _terminated(0, "Completed", started_at, stamp)}, ready=True)
            for c in spec["initContainers"]
        ]
    status["containerStatuses"] = [
        _container_status(
            uid,
            c,
            {"running": {"startedAt": stamp}},
            ready=True,
            started=True,
            resources=(resources or {}).get(str(c.get("name", ""))),
        )
        for c in spec.get("containers") or ()
    ]
    return status


def _terminated(exit_code: int, reason: str, started: str, finished: str) -> Obj:
    return {"exitCode": exit_code, "reason": reason, "startedAt": started, "finishedAt": finished}


def _container_status(
    pod_uid: str,
    container: Mapping[str, Any],
    state: Obj,
    *,
    ready: bool,
    started: bool = False,
    resources: Sequence[Obj] | None = None,
) -> Obj:
    name = str(container.get("name", ""))
    image = str(container.get("image", ""))
    entry: Obj = {
        "name": name,
        "state": state,
        "lastState": {},
        "ready": ready,
        "restartCount": 0,
        "image": image,
        "imageID": _image_id(image),
        "containerID": _container_id(pod_uid, name),
        "started": started,
    }
    if resources:
        entry["allocatedResourcesStatus"] = [dict(r) for r in resources]
    return entry


def terminated_status(pod: Mapping[str, Any], *, now: datetime, exit_code: int = 0, reason: str = "Completed") -> Obj:
    """The status once every container has exited with ``exit_code`` (Succeeded for 0, else Failed)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    uid = str(meta.get("uid", ""))
    stamp = time_text(now)
    status: Obj = dict(pod.get("status") or {})
    started = status.get("startTime") or stamp
    previous = {c.get("name"): c for c in status.get("containerStatuses") or ()}
    statuses = []
    for container in spec.get("containers") or ():
        old = previous.get(container.get("name")) or {}
        started_at = ((old.get("state") or {}).get("running") or {}).get("startedAt") or started
        terminated = _terminated(exit_code, reason, started_at, stamp)
        terminated["containerID"] = _container_id(uid, str(container.get("name", "")))
        entry = _container_status(
            uid, container, {"terminated": terminated}, ready=False, resources=old.get("allocatedResourcesStatus")
        )
        statuses.append(entry)
    not_ready = "PodCompleted" if exit_code == 0 else "PodFailed"
    status.update(
        {
            "phase": SUCCEEDED if exit_code == 0 else FAILED,
            "conditions": _conditions(
                status,
                {
                    "PodReadyToStartContainers": ("False", ""),
                    "Initialized": ("True", not_ready if not spec.get("initContainers") else ""),
                    "Ready": ("False", not_ready),
                    "ContainersReady": ("False", not_ready),
                },
                stamp,
            ),
            "containerStatuses": statuses,
            "startTime": started,
        }
    )
    return status


def completion_delay(pod: Mapping[str, Any], *, now: datetime, started: datetime | None = None) -> float | None:
    """Seconds until a running pod with a run time completes (0 when due), or None without one."""
    seconds = run_seconds(pod)
    if seconds is None:
        return None
    start = started or parse_time((pod.get("status") or {}).get("startTime")) or now
    return max(0.0, (start - now).total_seconds() + seconds)
