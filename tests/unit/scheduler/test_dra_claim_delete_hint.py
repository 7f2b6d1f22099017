"""1.37 registers ResourceClaim deletes with DynamicResources (isSchedulableAfterClaimChange's delete branch).

A claim deleted with its allocation still in place (unusual: the claim controller
deallocates first) frees devices, so any waiting pod is queued; one deleted
without an allocation frees nothing. 1.31 registers no deletes.
"""

from __future__ import annotations

import pytest

from services.kube.feature_gates import FeatureGates
from services.kube.structured import Features
from services.scheduler.cluster_events import ActionType, Resource
from services.scheduler.dra.stores import ObjectStore
from services.scheduler.framework import QueueingHint
from services.scheduler.plugins.dynamic_resources import DynamicResources

from .dra_fixtures import ALLOCATION_RESULT, POD_WITH_CLAIM_NAME, make_claim, with_allocation
from .fake_client import FakeClient

AT_1_37 = Features.from_gates(FeatureGates(release="1.37"))


def plugin(features: Features) -> DynamicResources:
    return DynamicResources(client=FakeClient(), classes=ObjectStore(), slices=ObjectStore(), features=features)


def claim_actions(dra: DynamicResources) -> ActionType:
    [registration] = [r for r in dra.events_to_register() if r.event.resource == Resource.RESOURCE_CLAIM]
    return registration.event.action_type


def test_1_37_registers_claim_deletes_and_1_31_does_not() -> None:
    assert claim_actions(plugin(AT_1_37)) == ActionType.ADD | ActionType.UPDATE | ActionType.DELETE
    assert claim_actions(plugin(Features())) == ActionType.ADD | ActionType.UPDATE


@pytest.mark.parametrize(
    ("features", "allocated", "want"),
    [
        (AT_1_37, True, QueueingHint.QUEUE),
        (AT_1_37, False, QueueingHint.QUEUE_SKIP),
        (Features(), True, QueueingHint.QUEUE_SKIP),
    ],
    ids=["1.37-deleted-with-allocation", "1.37-deleted-without-allocation", "1.31"],
)
def test_claim_delete_hint(features: Features, allocated: bool, want: QueueingHint) -> None:
    claim = make_claim("someone-elses")
    old = with_allocation(claim, ALLOCATION_RESULT) if allocated else claim
    assert plugin(features).is_schedulable_after_claim_change(POD_WITH_CLAIM_NAME, old, None) == want
