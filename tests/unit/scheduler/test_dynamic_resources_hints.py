"""DynamicResources queueing hints and registrations (kube's Test_isSchedulableAfter* tables)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import QueueingHint
from services.scheduler.queueing_hints import QueueingHintFunction, run_hint

from .builders import make_pod
from .dra_fixtures import (
    ALLOCATED_CLAIM,
    NODE_NAME,
    OTHER_ALLOCATED_CLAIM,
    PENDING_CLAIM,
    POD_UID,
    POD_WITH_CLAIM_NAME,
    POD_WITH_CLAIM_TEMPLATE,
    POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
    SCHEDULING,
    SCHEDULING_INFO,
    Harness,
    with_allocation,
)

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
CLAIM_EVENT = ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.UPDATE)


def wrong_owner(claim: dict[str, Any]) -> dict[str, Any]:
    claim = copy.deepcopy(claim)
    claim["metadata"]["ownerReferences"][0]["uid"] += "123"
    return claim


def renamed(claim: dict[str, Any]) -> dict[str, Any]:
    claim = copy.deepcopy(claim)
    claim["metadata"]["name"] += "-foo"
    claim["metadata"]["uid"] += "123"
    return claim


def with_finalizer(claim: dict[str, Any]) -> dict[str, Any]:
    claim = copy.deepcopy(claim)
    claim["metadata"]["finalizers"] = [*claim["metadata"].get("finalizers", []), "foo"]
    return claim


def deallocated(claim: dict[str, Any]) -> dict[str, Any]:
    return with_allocation(claim, None)


@pytest.mark.parametrize(
    ("pod", "claims", "old", "new", "want"),
    [
        pytest.param(POD_WITH_CLAIM_TEMPLATE, [], ALLOCATED_CLAIM, None, SKIP, id="skip-deletes"),
        pytest.param(POD_WITH_CLAIM_TEMPLATE, [], None, {"kind": "Pod"}, Q, id="backoff-wrong-new-object"),
        pytest.param(POD_WITH_CLAIM_TEMPLATE, [], None, wrong_owner(ALLOCATED_CLAIM), SKIP, id="skip-wrong-claim"),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            [ALLOCATED_CLAIM],
            None,
            renamed(ALLOCATED_CLAIM),
            SKIP,
            id="skip-unrelated-claim",
        ),
        pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], None, PENDING_CLAIM, Q, id="queue-on-add"),
        pytest.param(
            POD_WITH_CLAIM_NAME, [PENDING_CLAIM], {"kind": "Pod"}, PENDING_CLAIM, Q, id="backoff-wrong-old-object"
        ),
        pytest.param(
            POD_WITH_CLAIM_NAME,
            [PENDING_CLAIM],
            PENDING_CLAIM,
            with_finalizer(PENDING_CLAIM),
            SKIP,
            id="skip-adding-finalizer",
        ),
        pytest.param(
            POD_WITH_CLAIM_NAME,
            [PENDING_CLAIM],
            PENDING_CLAIM,
            with_allocation(PENDING_CLAIM),
            Q,
            id="queue-on-status-change",
        ),
        pytest.param(
            POD_WITH_CLAIM_NAME,
            [PENDING_CLAIM, OTHER_ALLOCATED_CLAIM],
            OTHER_ALLOCATED_CLAIM,
            deallocated(OTHER_ALLOCATED_CLAIM),
            Q,
            id="structured-claim-deallocate",
        ),
        pytest.param(
            POD_WITH_CLAIM_NAME,
            [PENDING_CLAIM],
            with_allocation(renamed(PENDING_CLAIM), {"controller": "some-driver"}),
            renamed(PENDING_CLAIM),
            SKIP,
            id="classic-claim-deallocate-of-unrelated-claim",
        ),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE,
            [OTHER_ALLOCATED_CLAIM],
            OTHER_ALLOCATED_CLAIM,
            deallocated(OTHER_ALLOCATED_CLAIM),
            SKIP,
            id="deallocation-does-not-help-pod-without-claim",
        ),
    ],
)
def test_is_schedulable_after_claim_change(pod: Any, claims: list[Any], old: Any, new: Any, want: QueueingHint) -> None:
    h = Harness(claims=claims)
    if new is not None and new.get("kind") == "ResourceClaim":
        h.cache.on_update(new)  # the event handler updates the assume cache before the hint runs
    fn = QueueingHintFunction("DynamicResources", h.plugin.is_schedulable_after_claim_change)
    assert run_hint(fn, pod, old, new, CLAIM_EVENT) == want


def scheduling_with(
    *, selected: str = "", unsuitable_extra: str = "", finalizer: bool = False, base: dict[str, Any] = SCHEDULING_INFO
) -> dict[str, Any]:
    ctx = copy.deepcopy(base)
    if selected:
        ctx["spec"]["selectedNode"] = selected
    if unsuitable_extra:
        ctx["status"]["resourceClaims"][0]["unsuitableNodes"] = [unsuitable_extra]
    if finalizer:
        ctx["metadata"]["finalizers"] = ["foo"]
    return ctx


def renamed_ctx(ctx: dict[str, Any]) -> dict[str, Any]:
    ctx = copy.deepcopy(ctx)
    ctx["metadata"]["name"] += "-foo"
    return ctx


@pytest.mark.parametrize(
    ("pod", "claims", "old", "new", "want"),
    [
        pytest.param(POD_WITH_CLAIM_TEMPLATE, [], SCHEDULING, None, SKIP, id="skip-deleted"),
        pytest.param(POD_WITH_CLAIM_TEMPLATE, [], {"kind": "Pod"}, SCHEDULING, Q, id="backoff-wrong-old-object"),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE, [PENDING_CLAIM], None, renamed_ctx(SCHEDULING), SKIP, id="skip-unrelated-object"
        ),
        pytest.param(POD_WITH_CLAIM_TEMPLATE, [], SCHEDULING, {"kind": "Pod"}, Q, id="backoff-wrong-new-object"),
        pytest.param(POD_WITH_CLAIM_TEMPLATE, [], SCHEDULING, SCHEDULING_INFO, SKIP, id="skip-missing-claim"),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE_IN_STATUS, [PENDING_CLAIM], SCHEDULING, SCHEDULING, SKIP, id="skip-missing-infos"
        ),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE_IN_STATUS, [PENDING_CLAIM], SCHEDULING, SCHEDULING_INFO, Q, id="queue-new-infos"
        ),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            [PENDING_CLAIM],
            None,
            SCHEDULING_INFO,
            Q,
            id="queue-on-create-with-infos",
        ),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            [PENDING_CLAIM],
            scheduling_with(selected=NODE_NAME),
            scheduling_with(selected=NODE_NAME, unsuitable_extra=NODE_NAME),
            Q,
            id="queue-bad-selected-node",
        ),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            [PENDING_CLAIM],
            SCHEDULING_INFO,
            scheduling_with(selected=NODE_NAME),
            SKIP,
            id="skip-spec-changes",
        ),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            [PENDING_CLAIM],
            SCHEDULING_INFO,
            scheduling_with(finalizer=True),
            Q,
            id="backoff-other-changes",
        ),
    ],
)
def test_is_schedulable_after_pod_scheduling_context_change(
    pod: Any, claims: list[Any], old: Any, new: Any, want: QueueingHint
) -> None:
    h = Harness(claims=claims, gate=True)
    fn = QueueingHintFunction("DynamicResources", h.plugin.is_schedulable_after_pod_scheduling_context_change)
    assert run_hint(fn, pod, old, new, CLAIM_EVENT) == want


@pytest.mark.parametrize(
    ("pod", "claims", "new", "want"),
    [
        pytest.param(POD_WITH_CLAIM_TEMPLATE, [], {"kind": "Node"}, Q, id="backoff-wrong-new-object"),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE, [PENDING_CLAIM], make_pod("other", uid="other"), SKIP, id="skip-other-pod"
        ),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE, [], POD_WITH_CLAIM_TEMPLATE_IN_STATUS, SKIP, id="skip-claim-still-missing"
        ),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE,
            [PENDING_CLAIM],
            POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            Q,
            id="queue-once-claim-name-is-known",
        ),
        pytest.param(
            POD_WITH_CLAIM_TEMPLATE,
            [wrong_owner(PENDING_CLAIM)],
            POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            SKIP,
            id="skip-claim-of-another-owner",
        ),
    ],
)
def test_is_schedulable_after_pod_change(pod: Any, claims: list[Any], new: Any, want: QueueingHint) -> None:
    h = Harness(claims=claims)
    fn = QueueingHintFunction("DynamicResources", h.plugin.is_schedulable_after_pod_change)
    assert run_hint(fn, pod, pod, new, CLAIM_EVENT) == want


def registrations(h: Harness) -> dict[str, tuple[int, bool]]:
    return {r.event.resource: (int(r.event.action_type), r.hint is not None) for r in h.plugin.events_to_register()}


def test_events_to_register_with_gate_off() -> None:
    add_update = int(ActionType.ADD | ActionType.UPDATE)
    assert registrations(Harness()) == {
        "ResourceClaim": (add_update, True),
        "Pod": (int(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM), True),
        "Node": (int(ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT), False),
        "DeviceClass": (add_update, False),
        "ResourceSlice": (add_update, False),
    }


def test_events_to_register_with_gate_on() -> None:
    assert registrations(Harness(gate=True))["PodSchedulingContext"] == (int(ActionType.ADD | ActionType.UPDATE), True)


def test_pod_uid_fixture() -> None:
    assert POD_WITH_CLAIM_NAME["metadata"]["uid"] == POD_UID
