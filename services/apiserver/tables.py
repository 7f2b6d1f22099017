"""Server-side printing: ``meta.k8s.io/v1 Table`` with Kubernetes' columns.

``kubectl get`` asks for ``as=Table`` and prints what the server sends, so the
columns and cell values here are what users see. They follow the printers in
``pkg/printers/internalversion/printers.go`` (Kubernetes 1.31): the server
always fills the wide columns (priority 1) and kubectl hides them unless
``-o wide``. Rows carry the object as PartialObjectMetadata by default,
the whole object with ``includeObject=Object`` and nothing with ``None``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from services.api.machinery.conversions.events_v1 import events_v1_to_core
from services.api.types.registry import ResourceType
from services.apiserver.table_cells import AGE, NAME, NAME_DESC, Printer, Row, human_duration, parse_time, since
from services.apiserver.table_cells import age as _age
from services.apiserver.table_cells import col as _col
from services.apiserver.table_cells import meta_of as _meta
from services.apiserver.table_cells import name as _name
from services.apiserver.tables_stored import STORED_PRINTERS

# ------------------------------------------------------------------ pods

POD_COLUMNS = [
    NAME,
    _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    _col("Status", "The aggregate status of the containers in this pod."),
    _col(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the last "
        "container in this pod has restarted.",
    ),
    AGE,
    _col(
        "IP",
        "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
        priority=1,
    ),
    _col(
        "Node",
        "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate "
        "for scheduling by the scheduler defined in schedulerName.",
        priority=1,
    ),
    _col(
        "Nominated Node",
        "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot "
        "be scheduled right away as preemption victims receive their graceful termination periods.",
        priority=1,
    ),
    _col("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness.", priority=1),
]


def _restartable(container: dict[str, Any] | None) -> bool:
    return bool(container) and (container or {}).get("restartPolicy") == "Always"


def print_pod(pod: dict[str, Any], now: float) -> Row:
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    meta = _meta(pod)
    containers = spec.get("containers") or []
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(containers)
    if init_specs:
        total += sum(1 for c in init_specs.values() if _restartable(c))
    ready = 0
    restarts = 0
    restartable_restarts = 0
    last_restart: float | None = None
    last_restartable_restart: float | None = None
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    conditions = status.get("conditions") or []
    for cond in conditions:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    def finished(cs: dict[str, Any]) -> float | None:
        term = ((cs.get("lastState") or {}).get("terminated")) or None
        return parse_time(term.get("finishedAt")) if term else None

    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, cs in enumerate(init_statuses):
        restarts += int(cs.get("restartCount") or 0)
        fin = finished(cs)
        if fin is not None and (last_restart is None or fin > last_restart):
            last_restart = fin
        spec_c = init_specs.get(cs.get("name"))
        if _restartable(spec_c):
            restartable_restarts += int(cs.get("restartCount") or 0)
            if fin is not None and (last_restartable_restart is None or fin > last_restartable_restart):
                last_restartable_restart = fin
        state = cs.get("state") or {}
        term = state.get("terminated")
        waiting = state.get("waiting")
        if term is not None and int(term.get("exitCode") or 0) == 0:
            continue
        if _restartable(spec_c) and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if term is not None:
            if not term.get("reason"):
                sig = int(term.get("signal") or 0)
                reason = f"Init:Signal:{sig}" if sig else f"Init:ExitCode:{int(term.get('exitCode') or 0)}"
            else:
                reason = "Init:" + str(term["reason"])
        elif waiting is not None and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + str(waiting["reason"])
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    initialized = any(c.get("type") == "Initialized" and c.get("status") == "True" for c in conditions)
    if not initializing or initialized:
        restarts = restartable_restarts
        last_restart = last_restartable_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount") or 0)
            fin = finished(cs)
            if fin is not None and (last_restart is None or fin > last_restart):
                last_restart = fin
            state = cs.get("state") or {}
            waiting, term = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif term is not None and term.get("reason"):
                reason = str(term["reason"])
            elif term is not None:
                sig = int(term.get("signal") or 0)
                reason = f"Signal:{sig}" if sig else f"ExitCode:{int(term.get('exitCode') or 0)}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
            reason = "Running" if pod_ready else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_s = str(restarts)
    if restarts and last_restart is not None:
        restarts_s = f"{restarts} ({human_duration(now - last_restart)} ago)"

    ips = status.get("podIPs") or []
    ip = (ips[0].get("ip") if ips and isinstance(ips[0], dict) else "") or "<none>"
    gates = spec.get("readinessGates") or []
    gates_s = "<none>"
    if gates:
        by_type: dict[Any, dict[str, Any]] = {}
        for c in conditions:
            by_type.setdefault(c.get("type"), c)
        true = sum(1 for g in gates if (by_type.get(g.get("conditionType")) or {}).get("status") == "True")
        gates_s = f"{true}/{len(gates)}"
    return [
        _name(pod),
        f"{ready}/{total}",
        reason,
        restarts_s,
        _age(pod, now),
        ip,
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_s,
    ]


def pod_conditions(pod: dict[str, Any]) -> list[dict[str, Any]] | None:
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


# ------------------------------------------------------------------ nodes, namespaces, events

NODE_COLUMNS = [
    NAME,
    _col("Status", "The status of the node"),
    _col("Roles", "The roles of the node"),
    AGE,
    _col("Version", "Kubelet Version reported by the node."),
    _col(
        "Internal-IP",
        "List of addresses reachable to the node. Queried from cloud provider, if available. More "
        "info: https://kubernetes.io/docs/reference/node/node-status/#addresses",
        priority=1,
    ),
    _col(
        "External-IP",
        "List of addresses reachable to the node. Queried from cloud provider, if available. More "
        "info: https://kubernetes.io/docs/reference/node/node-status/#addresses",
        priority=1,
    ),
    _col(
        "OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", priority=1
    ),
    _col(
        "Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", priority=1
    ),
    _col(
        "Container-Runtime",
        "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
        priority=1,
    ),
]


def _node_roles(labels: dict[str, str]) -> str:
    roles: set[str] = set()
    for k, v in labels.items():
        if k.startswith("node-role.kubernetes.io/"):
            role = k[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif k == "kubernetes.io/role" and v:
            roles.add(v)
    return ",".join(sorted(roles)) or "<none>"


def _node_address(status: dict[str, Any], kind: str) -> str:
    for a in status.get("addresses") or []:
        if a.get("type") == kind:
            return str(a.get("address", ""))
    return "<none>"


def print_node(node: dict[str, Any], now: float) -> Row:
    status = node.get("status") or {}
    states: list[str] = []
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Ready":
            states = ["Ready" if cond.get("status") == "True" else "NotReady"]
    if not states:
        states = ["Unknown"]
    if (node.get("spec") or {}).get("unschedulable"):
        states.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    return [
        _name(node),
        ",".join(states),
        _node_roles(_meta(node).get("labels") or {}),
        _age(node, now),
        info.get("kubeletVersion", ""),
        _node_address(status, "InternalIP"),
        _node_address(status, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


NAMESPACE_COLUMNS = [NAME, _col("Status", "The status of the namespace"), AGE]


def print_namespace(ns: dict[str, Any], now: float) -> Row:
    return [_name(ns), (ns.get("status") or {}).get("phase", ""), _age(ns, now)]


EVENT_COLUMNS = [
    _col("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
    _col("Type", "Type of this event (Normal, Warning), new types could be added in the future."),
    _col(
        "Reason",
        "This should be a short, machine understandable string that gives the reason for the "
        "transition into the object's current status.",
    ),
    _col("Object", "The object that this event is about."),
    _col("Subobject", "The subobject (field path) that this event is about.", priority=1),
    _col("Source", "The component reporting this event. Should be a short machine understandable string.", priority=1),
    _col("Message", "A human-readable description of the status of this operation."),
    _col(
        "First Seen",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        priority=1,
    ),
    _col("Count", "The number of times this event has occurred.", priority=1),
    _col("Name", NAME_DESC, priority=1, fmt="name"),
]


def print_event(ev: dict[str, Any], now: float) -> Row:
    first = since(ev.get("firstTimestamp"), now)
    if parse_time(ev.get("firstTimestamp")) is None:
        first = since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now) if parse_time(ev.get("lastTimestamp")) is not None else first
    count = int(ev.get("count") or 0)
    series = ev.get("series")
    if series:
        last = since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1
    inv = ev.get("involvedObject") or {}
    kind = str(inv.get("kind", "")).lower()
    target = f"{kind}/{inv['name']}" if inv.get("name") else kind
    source = ev.get("source") or {}
    component = source.get("component") or ev.get("reportingComponent") or ""
    instance = source.get("host") or ev.get("reportingInstance") or ""
    src = "" if not component else (component if not instance else f"{component}, {instance}")
    return [
        last,
        ev.get("type", ""),
        ev.get("reason", ""),
        target,
        inv.get("fieldPath", ""),
        src,
        str(ev.get("message", "")).strip(),
        first,
        count,
        _name(ev),
    ]


# ------------------------------------------------------------------ resource.k8s.io


def claim_state(claim: dict[str, Any]) -> str:
    """The 1.31 printer's STATE: deleted, pending, allocated, reserved, deallocating."""
    deleted = bool(_meta(claim).get("deletionTimestamp"))
    status = claim.get("status") or {}
    states = ["deleted"] if deleted else []
    if not status.get("allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
        elif deleted or status.get("deallocationRequested"):
            states.append("deallocating")
    return ",".join(states)


CLAIM_COLUMNS = [NAME, _col("State", "A summary of the current state (allocated, pending, reserved, etc.)."), AGE]
SLICE_COLUMNS = [
    NAME,
    _col(
        "Node",
        "NodeName identifies the node which provides the resources in this pool. A field selector "
        "can be used to list only ResourceSlice objects belonging to a certain node.",
    ),
    _col(
        "Driver",
        "Driver identifies the DRA driver providing the capacity information. A field selector can "
        "be used to list only ResourceSlice objects with a certain driver name.",
    ),
    _col("Pool", "Pool describes the pool that this ResourceSlice belongs to."),
    AGE,
]
SCHEDULING_COLUMNS = [
    NAME,
    _col(
        "SelectedNode",
        "SelectedNode is the node for which allocation of ResourceClaims that are referenced by the "
        'Pod and that use "WaitForFirstConsumer" allocation is to be attempted.',
    ),
    AGE,
]

LEASE_COLUMNS = [
    NAME,
    _col(
        "Holder",
        "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election "
        "is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
    ),
    AGE,
]


# pkg/printers/internalversion's deviceTaintColumnDefinitions: the selector is not printed, the taint is.
DEVICE_TAINT_RULE_COLUMNS = [
    NAME,
    _col("Key", "The taint key to be applied to a device. Must be a label name."),
    _col("Value", "The taint value corresponding to the taint key. Must be a label value."),
    _col(
        "Effect",
        "The effect of the taint on claims that do not tolerate the taint and through such claims on the pods "
        "using them.\n\nValid effects are None, NoSchedule and NoExecute. PreferNoSchedule as used for nodes is not "
        "valid here. More effects may get added in the future. Consumers must treat unknown effects like None.",
    ),
    _col(
        "TimeAdded",
        "TimeAdded represents the time at which the taint was added or (only in a DeviceTaintRule) the effect was "
        "modified. Added automatically during create or update if not set.",
    ),
    AGE,
]


def print_claim(claim: dict[str, Any], now: float) -> Row:
    return [_name(claim), claim_state(claim), _age(claim, now)]


def print_slice(sl: dict[str, Any], now: float) -> Row:
    spec = sl.get("spec") or {}
    return [
        _name(sl),
        spec.get("nodeName", ""),
        spec.get("driver", ""),
        (spec.get("pool") or {}).get("name", ""),
        _age(sl, now),
    ]


def print_scheduling(ctx: dict[str, Any], now: float) -> Row:
    return [_name(ctx), (ctx.get("spec") or {}).get("selectedNode", ""), _age(ctx, now)]


def print_lease(lease: dict[str, Any], now: float) -> Row:
    return [_name(lease), (lease.get("spec") or {}).get("holderIdentity") or "", _age(lease, now)]


def print_device_taint_rule(rule: dict[str, Any], now: float) -> Row:
    taint = (rule.get("spec") or {}).get("taint") or {}
    added = taint.get("timeAdded")
    return [
        _name(rule),
        taint.get("key") or "",
        taint.get("value") or "",
        taint.get("effect") or "",
        since(added, now) if added else "",
        _age(rule, now),
    ]


def print_event_v1(ev: dict[str, Any], now: float) -> Row:
    """An events.k8s.io/v1 Event: Kubernetes prints both groups' Events with one printer (of the internal type)."""
    return print_event(events_v1_to_core(ev), now)


def print_name_age(obj: dict[str, Any], now: float) -> Row:
    return [_name(obj), _age(obj, now)]


_PRINTERS: dict[tuple[str, str], tuple[list[dict[str, Any]], Printer]] = {
    ("", "pods"): (POD_COLUMNS, print_pod),
    ("", "nodes"): (NODE_COLUMNS, print_node),
    ("", "namespaces"): (NAMESPACE_COLUMNS, print_namespace),
    ("", "events"): (EVENT_COLUMNS, print_event),
    ("events.k8s.io", "events"): (EVENT_COLUMNS, print_event_v1),
    ("resource.k8s.io", "resourceclaims"): (CLAIM_COLUMNS, print_claim),
    ("resource.k8s.io", "resourceslices"): (SLICE_COLUMNS, print_slice),
    ("resource.k8s.io", "podschedulingcontexts"): (SCHEDULING_COLUMNS, print_scheduling),
    ("resource.k8s.io", "devicetaintrules"): (DEVICE_TAINT_RULE_COLUMNS, print_device_taint_rule),
    ("coordination.k8s.io", "leases"): (LEASE_COLUMNS, print_lease),
    **STORED_PRINTERS,
}
_DEFAULT = ([NAME, AGE], print_name_age)


def printer(rt: ResourceType) -> tuple[list[dict[str, Any]], Printer]:
    return _PRINTERS.get((rt.group, rt.plural), _DEFAULT)


def partial_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": _meta(obj)}


def rows(
    rt: ResourceType, objects: Iterable[dict[str, Any]], *, include_object: str = "Metadata", now: float | None = None
) -> list[dict[str, Any]]:
    _, print_row = printer(rt)
    now = time.time() if now is None else now
    out: list[dict[str, Any]] = []
    for obj in objects:
        row: dict[str, Any] = {"cells": print_row(obj, now)}
        if rt.plural == "pods" and not rt.group:
            conds = pod_conditions(obj)
            if conds:
                row["conditions"] = conds
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "None":
            # TableRow.Object is a RawExtension, a struct: omitempty does not drop it and an empty one is null.
            row["object"] = None
        else:
            row["object"] = partial_metadata(obj)
        out.append(row)
    return out


def table(
    rt: ResourceType,
    objects: Iterable[dict[str, Any]],
    *,
    resource_version: str = "",
    continue_token: str | None = None,
    remaining: int | None = None,
    include_object: str = "Metadata",
    headers: bool = True,
    now: float | None = None,
) -> dict[str, Any]:
    """A ``meta.k8s.io/v1 Table`` of ``objects``."""
    meta: dict[str, Any] = {}
    if resource_version:
        meta["resourceVersion"] = resource_version
    if continue_token:
        meta["continue"] = continue_token
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    columns, _ = printer(rt)
    doc: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    if headers:
        doc["columnDefinitions"] = columns
    doc["rows"] = rows(rt, objects, include_object=include_object or "Metadata", now=now)
    return doc
