"""PreBind's claim writes and the binding as one chain: one trip through the log, kube's outcomes otherwise."""

from __future__ import annotations

import copy
from typing import Any

from services.kube.resourceclaim import FINALIZER
from services.scheduler import binding_chain
from services.scheduler.client import PODS, RESOURCE_CLAIMS
from services.scheduler.dra.stores import ObjectStore
from services.scheduler.framework import CycleState, Pod
from services.scheduler.plugins.default_binder import DefaultBinder
from services.scheduler.plugins.dynamic_resources import DynamicResources
from services.scheduler.profile import Profile, default_plugins
from services.scheduler.scheduler import SchedulerCore
from services.scheduler.status import Status

from .dra_fixtures import CLAIM_NAME, PENDING_CLAIM, POD_NAME, POD_UID, POD_WITH_CLAIM_NAME, no_sleep
from .fake_client import FakeClient
from .test_dra_scheduling import World

CHAIN = ["update resourceclaims", "update resourceclaims/status", "create pods/binding"]
RESERVED_BY_POD = [{"resource": "pods", "name": POD_NAME, "uid": POD_UID}]


async def scheduled(w: World, claim: dict[str, Any] = PENDING_CLAIM) -> Any:
    w.with_one_device()
    w.create_claim(claim)
    w.create_pod(POD_WITH_CLAIM_NAME)
    attempt = await w.core.schedule_one()
    assert attempt is not None and attempt.succeeded
    return attempt


def stored_claim(w: World) -> dict[str, Any]:
    claim = w.client.stored(RESOURCE_CLAIMS, CLAIM_NAME, "default")
    assert claim is not None
    return claim


def node_of_pod(w: World) -> str | None:
    return ((w.client.stored(PODS, POD_NAME, "default") or {}).get("spec") or {}).get("nodeName")


async def test_finalizer_allocation_reservation_and_binding_are_one_trip() -> None:
    w = World()
    attempt = await scheduled(w)
    outcome = await w.core.bind(attempt)
    assert outcome.succeeded
    assert w.client.trips == [CHAIN]
    assert node_of_pod(w) == "worker"
    claim = stored_claim(w)
    assert claim["metadata"]["finalizers"] == [FINALIZER]
    assert claim["status"]["reservedFor"] == RESERVED_BY_POD and claim["status"]["allocation"]
    assert w.dra.claims.in_flight_count() == 0
    assert w.dra.claims.get("default", CLAIM_NAME) == claim  # assumed until the informer catches up


async def test_a_claim_with_its_finalizer_needs_only_its_status_before_the_binding() -> None:
    w = World()
    claim = copy.deepcopy(PENDING_CLAIM)
    claim["metadata"]["finalizers"] = [FINALIZER]
    outcome = await w.core.bind(await scheduled(w, claim))
    assert outcome.succeeded
    assert w.client.trips == [["update resourceclaims/status", "create pods/binding"]]


async def test_a_conflict_is_retried_as_before_and_the_binding_then_sent_alone() -> None:
    w = World()
    attempt = await scheduled(w)
    bumped: list[str] = []

    def concurrent_writer(verb: str, what: str, obj: object) -> None:
        if what == "resourceclaims" and not bumped:  # the first finalizer write finds a newer claim
            bumped.append(what)
            w.client.put(RESOURCE_CLAIMS, stored_claim(w))

    w.client.reactors.append(concurrent_writer)
    outcome = await w.core.bind(attempt)
    assert outcome.succeeded
    assert w.client.trips == [
        CHAIN,  # the finalizer's write refused: its status write and the binding not applied
        ["get resourceclaims"],
        ["update resourceclaims", "update resourceclaims/status"],
        ["create pods/binding"],
    ]
    assert node_of_pod(w) == "worker"
    assert stored_claim(w)["status"]["reservedFor"] == RESERVED_BY_POD


async def test_a_failed_claim_write_never_binds_and_reports_as_prebind() -> None:
    w = World()
    attempt = await scheduled(w)

    def delete_claim(verb: str, what: str, obj: object) -> None:
        if what == "resourceclaims/status":  # gone between the finalizer's write and the status write
            w.client.objects.pop(("resource.k8s.io", "resourceclaims", "default", CLAIM_NAME), None)

    w.client.reactors.append(delete_claim)
    outcome = await w.core.bind(attempt)
    assert not outcome.succeeded
    assert outcome.message() == (
        'running PreBind plugin "DynamicResources": add allocation and reservation to claim '
        'default/my-pod-my-resource: resourceclaims.resource.k8s.io "my-pod-my-resource" not found'
    )
    assert w.client.trips == [CHAIN]
    assert node_of_pod(w) is None
    assert "create pods/binding" not in w.client.verbs()  # refused by its chain, never applied
    assert w.dra.claims.in_flight_count() == 0


async def test_conflicts_to_the_end_report_the_finalizer_write_and_never_bind() -> None:
    w = World()
    attempt = await scheduled(w)

    def always_newer(verb: str, what: str, obj: object) -> None:
        if what == "resourceclaims":
            w.client.put(RESOURCE_CLAIMS, stored_claim(w))

    w.client.reactors.append(always_newer)
    outcome = await w.core.bind(attempt)
    assert not outcome.succeeded
    assert outcome.message().startswith(
        'running PreBind plugin "DynamicResources": add finalizer to claim default/my-pod-my-resource: '
        'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "my-pod-my-resource": '
        "the object has been modified"
    )
    assert w.client.verbs().count("update resourceclaims") == 5
    assert "create pods/binding" not in w.client.verbs() and node_of_pod(w) is None


async def test_a_refused_binding_is_the_binders_failure_and_unreserve_runs() -> None:
    w = World()
    attempt = await scheduled(w)
    w.client.objects.pop(("", "pods", "default", POD_NAME))  # the pod is gone: the binding's 404
    outcome = await w.core.bind(attempt)
    assert not outcome.succeeded
    assert outcome.message() == 'running Bind plugin "DefaultBinder": pods "my-pod" not found'
    assert w.client.trips == [CHAIN, ["update resourceclaims/status"]]  # Unreserve drops the reservation
    assert stored_claim(w)["status"].get("reservedFor") == []


async def test_a_binding_refused_409_is_sent_again_alone() -> None:
    """A 409 may be the chain's (the committer forgot it): the binder then binds as if nothing was chained."""
    w = World()
    attempt = await scheduled(w)
    pod = w.client.stored(PODS, POD_NAME, "default")
    assert pod is not None
    pod["spec"]["nodeName"] = "elsewhere"
    w.client.put(PODS, pod)
    outcome = await w.core.bind(attempt)
    assert not outcome.succeeded
    assert outcome.message() == (
        'running Bind plugin "DefaultBinder": Operation cannot be fulfilled on pods "my-pod": '
        "pod is already assigned to a node"
    )
    assert w.client.trips == [CHAIN, ["create pods/binding"], ["update resourceclaims/status"]]


async def test_without_a_binder_that_can_chain_prebind_writes_alone() -> None:
    class Binder:
        name = "OtherBinder"

        def __init__(self) -> None:
            self.bound: list[str] = []

        async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            self.bound.append(node_name)
            return None

    w = World()
    binder = Binder()
    dra = DynamicResources(
        client=w.client,
        classes=ObjectStore(),
        slices=ObjectStore(),
        conflict_retry_delays=(0.0,) * 4,
        sleep=no_sleep,
    )
    w.dra = dra
    w.core = SchedulerCore(profiles=[Profile(default_plugins(binder=binder, dynamic_resources=dra))], clock=w.clock)
    outcome = await w.core.bind(await scheduled(w))
    assert outcome.succeeded and binder.bound == ["worker"]
    assert w.client.trips == [["update resourceclaims", "update resourceclaims/status"]]


async def test_only_the_last_prebind_plugin_writing_through_the_binders_client_is_offered_the_chain() -> None:
    client, other = FakeClient(), FakeClient()
    seen: list[tuple[str, bool, bool]] = []

    class PreBind:
        def __init__(self, name: str) -> None:
            self.name = name

        async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            offer = binding_chain.offered(state, client)
            seen.append((self.name, offer is not None, binding_chain.offered(state, other) is not None))
            return None

    profile = Profile([PreBind("A"), PreBind("B"), DefaultBinder(client)])
    state = CycleState()
    assert await profile.run_pre_bind(state, POD_WITH_CLAIM_NAME, "worker") is None
    assert seen == [("A", False, False), ("B", True, False)]
    assert binding_chain.offered(state, client) is None  # only while that plugin runs
    assert client.trips == []  # nothing deferred: nothing sent, Bind binds as always
