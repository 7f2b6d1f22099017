"""Cluster-event derivation from object changes (mirrors internal/queue/events_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from services.scheduler import cluster_events as ce
from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource, events_for_change

from .builders import make_node, make_pod, taint


def labels_of(events: list[ClusterEvent]) -> list[str]:
    return [e.label for e in events]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(make_node(), make_node(), [], id="no change"),
        pytest.param(make_node(labels={"a": "1"}), make_node(labels={"a": "2"}), ["NodeLabelChange"], id="label"),
        pytest.param(make_node(), make_node(taints=[taint("k", "v")]), ["NodeTaintChange"], id="taint"),
        pytest.param(
            make_node(allocatable={"cpu": "1"}),
            make_node(allocatable={"cpu": "2"}),
            ["NodeAllocatableChange"],
            id="allocatable",
        ),
        pytest.param(
            make_node(unschedulable=True),
            make_node(unschedulable=False),
            ["NodeSpecUnschedulableChange"],
            id="uncordon",
        ),
        pytest.param(make_node(unschedulable=False), make_node(unschedulable=True), [], id="cordon is no event"),
        pytest.param(make_node(annotations={"a": "b"}), make_node(), ["NodeAnnotationChange"], id="annotation"),
        pytest.param(
            make_node(conditions=[{"type": "Ready", "status": "False", "lastHeartbeatTime": "t1"}]),
            make_node(conditions=[{"type": "Ready", "status": "True", "lastHeartbeatTime": "t2"}]),
            ["NodeConditionChange"],
            id="condition status",
        ),
        pytest.param(
            make_node(conditions=[{"type": "Ready", "status": "True", "lastHeartbeatTime": "t1"}]),
            make_node(conditions=[{"type": "Ready", "status": "True", "lastHeartbeatTime": "t2"}]),
            [],
            id="heartbeat only",
        ),
        pytest.param(
            make_node(labels={"a": "1"}, taints=[taint("x")]),
            make_node(labels={"a": "2"}),
            ["NodeLabelChange", "NodeTaintChange"],
            id="several",
        ),
    ],
)
def test_node_update_events(old: Any, new: Any, want: list[str]) -> None:
    assert labels_of(events_for_change(Resource.NODE, old, new)) == want


def test_node_update_action_types() -> None:
    events = events_for_change(Resource.NODE, make_node(labels={"a": "1"}), make_node(allocatable={"cpu": "9"}))
    assert [e.action_type for e in events] == [ActionType.UPDATE_NODE_ALLOCATABLE, ActionType.UPDATE_NODE_LABEL]


def test_node_add_and_delete() -> None:
    assert events_for_change(Resource.NODE, None, make_node()) == [ce.NODE_ADD]
    assert events_for_change(Resource.NODE, make_node(), None) == []


CLAIM_STATUS = [{"name": "gpu", "resourceClaimName": "pod-gpu-abc12"}]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            make_pod(node_name="n", labels={"a": "1"}),
            make_pod(node_name="n", labels={"a": "2"}),
            ["PodLabelChange"],
            id="label",
        ),
        pytest.param(
            make_pod(node_name="n", requests={"cpu": "2"}),
            make_pod(node_name="n", requests={"cpu": "1"}),
            ["PodRequestScaledDown"],
            id="scale down",
        ),
        pytest.param(
            make_pod(node_name="n", requests={"cpu": "1"}),
            make_pod(node_name="n", requests={"cpu": "2"}),
            ["AssignedPodUpdate"],
            id="scale up is other",
        ),
        pytest.param(
            make_pod(node_name="n"),
            make_pod(node_name="n", tolerations=[{"operator": "Exists"}]),
            ["PodTolerationChange"],
            id="toleration",
        ),
        pytest.param(
            make_pod(node_name="n", scheduling_gates=["g"]),
            make_pod(node_name="n"),
            ["PodSchedulingGateChange"],
            id="gates eliminated",
        ),
        pytest.param(
            make_pod(node_name="n"),
            make_pod(node_name="n", resource_claim_statuses=CLAIM_STATUS),
            ["PodGeneratedResourceClaimChange"],
            id="generated claim",
        ),
        pytest.param(
            make_pod(node_name="n", resource_claim_statuses=CLAIM_STATUS),
            make_pod(node_name="n", resource_claim_statuses=list(CLAIM_STATUS)),
            ["AssignedPodUpdate"],
            id="same claim statuses",
        ),
        pytest.param(
            make_pod(node_name="n", resource_claim_statuses=[{"name": "gpu"}]),
            make_pod(node_name="n", resource_claim_statuses=CLAIM_STATUS),
            ["PodGeneratedResourceClaimChange"],
            id="claim name filled in",
        ),
    ],
)
def test_assigned_pod_update_events(old: Any, new: Any, want: list[str]) -> None:
    assert labels_of(events_for_change(Resource.POD, old, new)) == want


def test_generated_claim_change_needs_dra() -> None:
    old, new = make_pod(node_name="n"), make_pod(node_name="n", resource_claim_statuses=CLAIM_STATUS)
    assert labels_of(events_for_change(Resource.POD, old, new, dra_enabled=False)) == ["AssignedPodUpdate"]
    [event] = events_for_change(Resource.POD, old, new)
    assert event.action_type == ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM


def test_pod_lifecycle_events() -> None:
    assert events_for_change(Resource.POD, None, make_pod(node_name="n")) == [ce.ASSIGNED_POD_ADD]
    assert events_for_change(Resource.POD, None, make_pod()) == []
    assert events_for_change(Resource.POD, make_pod(), make_pod(node_name="n")) == [ce.ASSIGNED_POD_ADD]
    assert events_for_change(Resource.POD, make_pod(node_name="n"), None) == [ce.ASSIGNED_POD_DELETE]
    assert events_for_change(Resource.POD, make_pod(), None) == []
    assert events_for_change(Resource.POD, make_pod(labels={"a": "b"}), make_pod()) == []


@pytest.mark.parametrize(
    "resource",
    [Resource.RESOURCE_CLAIM, Resource.RESOURCE_SLICE, Resource.DEVICE_CLASS, Resource.POD_SCHEDULING_CONTEXT],
)
def test_dra_resources(resource: str) -> None:
    obj = {"metadata": {"name": "x"}}
    assert events_for_change(resource, None, obj) == [ClusterEvent(resource, ActionType.ADD, f"{resource}Add")]
    assert events_for_change(resource, obj, obj) == [ClusterEvent(resource, ActionType.UPDATE, f"{resource}Update")]
    assert events_for_change(resource, obj, None) == [ClusterEvent(resource, ActionType.DELETE, f"{resource}Delete")]


@pytest.mark.parametrize(
    ("registered", "incoming", "want"),
    [
        (ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), ce.NODE_LABEL_CHANGE, True),
        (ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), ce.NODE_TAINT_CHANGE, False),
        (ClusterEvent(Resource.NODE, ActionType.UPDATE), ce.NODE_ALLOCATABLE_CHANGE, True),
        (ClusterEvent(Resource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM), ce.UNSCHEDULED_POD_UPDATE, True),
        (ClusterEvent(Resource.POD, ActionType.UPDATE_POD_LABEL), ce.ASSIGNED_POD_OTHER_UPDATE, False),
        (ClusterEvent(Resource.POD, ActionType.UPDATE), ce.ASSIGNED_POD_OTHER_UPDATE, True),
        (ClusterEvent(Resource.WILDCARD, ActionType.ADD), ce.NODE_ADD, True),
        (ClusterEvent(Resource.POD, ActionType.ADD), ce.NODE_ADD, False),
        (ClusterEvent(Resource.WILDCARD, ActionType.ALL), ce.NODE_LABEL_CHANGE, True),
    ],
)
def test_match(registered: ClusterEvent, incoming: ClusterEvent, want: bool) -> None:
    assert registered.matches(incoming) is want


def test_resource_of_wire_objects() -> None:
    assert ce.resource_of({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim"}) == "ResourceClaim"
    assert ce.resource_of({"apiVersion": "v1", "kind": "Node"}) == "Node"
    assert ce.resource_of({"apiVersion": "v1", "kind": "Event"}) is None


def test_labels_and_action_names() -> None:
    assert str(ClusterEvent(Resource.NODE, ActionType.ADD)) == "NodeAdd"
    assert ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM.label() == "UpdatePodGeneratedResourceClaim"
    assert ce.UNSCHEDULABLE_TIMEOUT.is_wildcard()
