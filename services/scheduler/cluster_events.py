"""Cluster events: which resource changed and how, derived from an object change.

Plugins register interest in ``ClusterEvent(resource, action_type)`` pairs; the
scheduling queue only re-examines an unschedulable pod when an incoming event
matches a registration of a plugin that rejected it. The derivation here
follows kube-scheduler 1.31 (``internal/queue/events.go`` and the informer
handlers in ``eventhandlers.go``): a node update is split into
UpdateNodeLabel/Taint/Allocatable/Condition/Annotation events, a pod update
into UpdatePodLabel/ScaleDown/Tolerations/SchedulingGatesEliminated/
GeneratedResourceClaim (or an "other" update), and resource.k8s.io objects
produce plain Add/Update/Delete events. Labels are the ones kube uses in logs
and in the ``event`` label of ``scheduler_queue_incoming_pods_total``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntFlag
from typing import Any

from services.scheduler.resources import pod_requests


class ActionType(IntFlag):
    """What happened to an object; update sub-kinds let plugins narrow their interest."""

    NONE = 0
    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATIONS = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
    UPDATE_POD_OTHER = 1 << 12  # an update no specific sub-kind describes (internal)
    ALL = (1 << 13) - 1
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATIONS
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
        | UPDATE_POD_OTHER
    )

    def label(self) -> str:
        return _ACTION_LABELS.get(self, "")


_ACTION_LABELS = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_TOLERATIONS: "UpdatePodTolerations",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.UPDATE_POD_OTHER: "UpdatePodOther",
    ActionType.ALL: "All",
    ActionType.UPDATE: "Update",
}


class Resource:
    """EventResource names (kube's GVK shorthands)."""

    POD = "Pod"
    NODE = "Node"
    POD_SCHEDULING_CONTEXT = "PodSchedulingContext"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    DEVICE_TAINT_RULE = "DeviceTaintRule"
    WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A resource plus an action; ``label`` names the concrete event for logs and metrics."""

    resource: str
    action_type: ActionType
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == Resource.WILDCARD and self.action_type == ActionType.ALL

    def matches(self, event: ClusterEvent) -> bool:
        """Whether this (registered) event covers the incoming ``event``."""
        if self.is_wildcard():
            return True
        return (self.resource in (Resource.WILDCARD, event.resource)) and bool(self.action_type & event.action_type)

    def key(self) -> tuple[str, int]:
        """Identity ignoring the label, for use as a registration key."""
        return (self.resource, int(self.action_type))

    def __str__(self) -> str:
        return self.label or f"{self.resource}{self.action_type.label()}"


def _event(resource: str, action: ActionType, label: str) -> ClusterEvent:
    return ClusterEvent(resource, action, label)


# The named events of kube-scheduler 1.31 (internal/queue/events.go).
ASSIGNED_POD_ADD = _event(Resource.POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE = _event(Resource.POD, ActionType.UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = _event(Resource.POD, ActionType.DELETE, "AssignedPodDelete")
UNSCHEDULED_POD_ADD = _event(Resource.POD, ActionType.UPDATE, "UnschedulablePodAdd")
UNSCHEDULED_POD_UPDATE = _event(Resource.POD, ActionType.UPDATE, "UnschedulablePodUpdate")
UNSCHEDULED_POD_DELETE = _event(Resource.POD, ActionType.UPDATE, "UnschedulablePodDelete")
ASSIGNED_POD_OTHER_UPDATE = _event(Resource.POD, ActionType.UPDATE_POD_OTHER, "AssignedPodUpdate")
POD_REQUEST_SCALED_DOWN = _event(Resource.POD, ActionType.UPDATE_POD_SCALE_DOWN, "PodRequestScaledDown")
POD_LABEL_CHANGE = _event(Resource.POD, ActionType.UPDATE_POD_LABEL, "PodLabelChange")
POD_TOLERATION_CHANGE = _event(Resource.POD, ActionType.UPDATE_POD_TOLERATIONS, "PodTolerationChange")
POD_SCHEDULING_GATE_ELIMINATED_CHANGE = _event(
    Resource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, "PodSchedulingGateChange"
)
POD_GENERATED_RESOURCE_CLAIM_CHANGE = _event(
    Resource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM, "PodGeneratedResourceClaimChange"
)
NODE_ADD = _event(Resource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = _event(Resource.NODE, ActionType.DELETE, "NodeDelete")
NODE_SPEC_UNSCHEDULABLE_CHANGE = _event(Resource.NODE, ActionType.UPDATE_NODE_TAINT, "NodeSpecUnschedulableChange")
NODE_ALLOCATABLE_CHANGE = _event(Resource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange")
NODE_LABEL_CHANGE = _event(Resource.NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
NODE_TAINT_CHANGE = _event(Resource.NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
NODE_CONDITION_CHANGE = _event(Resource.NODE, ActionType.UPDATE_NODE_CONDITION, "NodeConditionChange")
NODE_ANNOTATION_CHANGE = _event(Resource.NODE, ActionType.UPDATE_NODE_ANNOTATION, "NodeAnnotationChange")
WILDCARD_EVENT = _event(Resource.WILDCARD, ActionType.ALL, "WildCardEvent")
UNSCHEDULABLE_TIMEOUT = _event(Resource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")

# Special labels used by the queue for moves that are not cluster events.
POD_ADD = "PodAdd"
POD_UPDATE = "PodUpdate"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"  # SchedulerPopFromBackoffQ: popped from backoffQ, activeQ being empty
FORCE_ACTIVATE = "ForceActivate"

# Kinds (wire form) that map onto an EventResource, keyed by (group, kind).
RESOURCE_BY_KIND: Mapping[tuple[str, str], str] = {
    ("", "Pod"): Resource.POD,
    ("", "Node"): Resource.NODE,
    ("resource.k8s.io", "ResourceClaim"): Resource.RESOURCE_CLAIM,
    ("resource.k8s.io", "ResourceSlice"): Resource.RESOURCE_SLICE,
    ("resource.k8s.io", "DeviceClass"): Resource.DEVICE_CLASS,
    ("resource.k8s.io", "DeviceTaintRule"): Resource.DEVICE_TAINT_RULE,
    ("resource.k8s.io", "PodSchedulingContext"): Resource.POD_SCHEDULING_CONTEXT,
}


def resource_of(obj: Mapping[str, Any]) -> str | None:
    """The EventResource of a wire-form object, from apiVersion and kind."""
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return RESOURCE_BY_KIND.get((group, str(obj.get("kind", ""))))


# ------------------------------------------------------------------- nodes


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _conditions_by_type(node: Mapping[str, Any]) -> dict[str, Any]:
    return {c.get("type"): c.get("status") for c in _status(node).get("conditions") or ()}


def node_scheduling_properties_change(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[ClusterEvent]:
    """The UpdateNodeXYZ events of a node update (NodeSchedulingPropertiesChange)."""
    events: list[ClusterEvent] = []
    old_unschedulable = bool(_spec(old).get("unschedulable"))
    new_unschedulable = bool(_spec(new).get("unschedulable"))
    if old_unschedulable != new_unschedulable and not new_unschedulable:
        events.append(NODE_SPEC_UNSCHEDULABLE_CHANGE)
    if (_status(old).get("allocatable") or {}) != (_status(new).get("allocatable") or {}):
        events.append(NODE_ALLOCATABLE_CHANGE)
    if (_meta(old).get("labels") or {}) != (_meta(new).get("labels") or {}):
        events.append(NODE_LABEL_CHANGE)
    if (_spec(old).get("taints") or []) != (_spec(new).get("taints") or []):
        events.append(NODE_TAINT_CHANGE)
    if _conditions_by_type(old) != _conditions_by_type(new):
        events.append(NODE_CONDITION_CHANGE)
    if (_meta(old).get("annotations") or {}) != (_meta(new).get("annotations") or {}):
        events.append(NODE_ANNOTATION_CHANGE)
    return events


# -------------------------------------------------------------------- pods


def _pod_scaled_down(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    new_requests = pod_requests(new)
    for name, old_qty in pod_requests(old).items():
        if name not in new_requests or old_qty > new_requests[name]:
            return True
    return False


def pod_resource_claim_statuses_equal(a: Any, b: Any) -> bool:
    """``resourceclaim.PodStatusEqual``: same entries by name, same generated names."""
    a_list = list(a or ())
    b_list = list(b or ())
    if len(a_list) != len(b_list):
        return False
    return {e.get("name"): e.get("resourceClaimName") for e in a_list} == {
        e.get("name"): e.get("resourceClaimName") for e in b_list
    }


def pod_scheduling_properties_change(
    new: Mapping[str, Any], old: Mapping[str, Any], *, dra_enabled: bool = True
) -> list[ClusterEvent]:
    """The UpdatePodXYZ events of a pod update (PodSchedulingPropertiesChange)."""
    events: list[ClusterEvent] = []
    if (_meta(new).get("labels") or {}) != (_meta(old).get("labels") or {}):
        events.append(POD_LABEL_CHANGE)
    if _pod_scaled_down(new, old):
        events.append(POD_REQUEST_SCALED_DOWN)
    if not _spec(new).get("schedulingGates") and _spec(old).get("schedulingGates"):
        events.append(POD_SCHEDULING_GATE_ELIMINATED_CHANGE)
    if len(_spec(new).get("tolerations") or ()) != len(_spec(old).get("tolerations") or ()):
        events.append(POD_TOLERATION_CHANGE)
    if dra_enabled and not pod_resource_claim_statuses_equal(
        _status(new).get("resourceClaimStatuses"), _status(old).get("resourceClaimStatuses")
    ):
        events.append(POD_GENERATED_RESOURCE_CLAIM_CHANGE)
    if not events:
        events.append(ASSIGNED_POD_OTHER_UPDATE)
    return events


def is_assigned(pod: Mapping[str, Any] | None) -> bool:
    return bool(pod and _spec(pod).get("nodeName"))


# ---------------------------------------------------------------- generic


def events_for_change(
    resource: str,
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any] | None,
    *,
    dra_enabled: bool = True,
) -> list[ClusterEvent]:
    """The cluster events an object change produces (``old``/``new`` None for add/delete).

    Pods: only *assigned* pods produce cluster events; unscheduled pods are
    handled by the queue itself (added, updated, deleted). A pod that becomes
    assigned is an AssignedPodAdd. Node deletes produce no event, as in kube.
    """
    if old is None and new is None:
        return []
    if resource == Resource.NODE:
        if old is None:
            return [NODE_ADD]
        if new is None:
            return []
        return node_scheduling_properties_change(new, old)
    if resource == Resource.POD:
        if new is None:
            return [ASSIGNED_POD_DELETE] if is_assigned(old) else []
        if old is None or (not is_assigned(old) and is_assigned(new)):
            return [ASSIGNED_POD_ADD] if is_assigned(new) else []
        if not is_assigned(new):
            return []
        return pod_scheduling_properties_change(new, old, dra_enabled=dra_enabled)
    action = ActionType.ADD if old is None else ActionType.DELETE if new is None else ActionType.UPDATE
    return [_plain_event(resource, action)]


_PLAIN_EVENTS: dict[tuple[str, ActionType], ClusterEvent] = {}


def _plain_event(resource: str, action: ActionType) -> ClusterEvent:
    """``<Resource>Add``, ``…Update`` or ``…Delete``: made once per resource and action (events are immutable)."""
    event = _PLAIN_EVENTS.get((resource, action))
    if event is None:
        event = _PLAIN_EVENTS[(resource, action)] = _event(resource, action, f"{resource}{action.label()}")
    return event
