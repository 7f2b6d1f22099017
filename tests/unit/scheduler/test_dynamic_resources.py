"""DynamicResources: the TestPlugin cases of kube's dynamicresources_test.go (1.31), structured and classic."""

from __future__ import annotations

import copy

import pytest

from services.kube.resourceclaim import FINALIZER
from services.scheduler.client import RESOURCE_CLAIMS
from services.scheduler.framework import CycleState
from services.scheduler.node_info import NodeInfo
from services.scheduler.status import Code, new_status

from .builders import make_node, make_pod
from .dra_fixtures import (
    ALLOCATED_CLAIM,
    ALLOCATED_CLAIM_WITH_GOOD_TOPOLOGY,
    ALLOCATED_CLAIM_WITH_WRONG_TOPOLOGY,
    ALLOCATION_RESULT,
    CLAIM_NAME,
    CLASS_NAME,
    CLASSIC_ALLOCATED_CLAIM,
    CLASSIC_CLAIM,
    CLASSIC_CLAIM2,
    DEVICE_CLASS,
    IN_USE_CLAIM,
    NODE_NAME,
    OTHER_ALLOCATED_CLAIM,
    OTHER_CLAIM,
    PENDING_CLAIM,
    POD_NAME,
    POD_UID,
    POD_WITH_CLAIM_NAME,
    POD_WITH_CLAIM_TEMPLATE,
    POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
    POD_WITH_TWO_CLAIM_NAMES,
    SCHEDULING_INFO,
    WORKER_NODE,
    WORKER_NODE2,
    WORKER_NODE_SLICE,
    Harness,
    make_claim,
    owned,
    reserved,
    run_plugin,
    scheduling_context,
    with_allocation,
)


def uaur(reason: str) -> object:
    return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def unsched(reason: str) -> object:
    return new_status(Code.UNSCHEDULABLE, reason)


RESERVED_BY_POD = [{"resource": "pods", "name": POD_NAME, "uid": POD_UID}]


# ------------------------------------------------------------- structured


async def test_empty() -> None:
    h = Harness()
    run = await run_plugin(h, make_pod("foo"))
    assert run.prefilter == new_status(Code.SKIP)
    _, status = await h.plugin.post_filter(h.state, make_pod("foo"), {}, 1)
    assert status == unsched("no new claims to deallocate")


@pytest.mark.parametrize(
    "pod", [POD_WITH_CLAIM_NAME, POD_WITH_CLAIM_TEMPLATE_IN_STATUS], ids=["claim-reference", "claim-template"]
)
async def test_allocated_claim_gets_reserved(pod: dict[str, object]) -> None:
    h = Harness(claims=[ALLOCATED_CLAIM, OTHER_CLAIM])
    run = await run_plugin(h, pod)
    assert run.prebind is None and "postbind" in run.reached
    assert h.stored_claim()["status"]["reservedFor"] == RESERVED_BY_POD  # type: ignore[index]
    assert "status" not in h.stored_claim("not-my-claim")  # type: ignore[operator]
    assert h.client.verbs() == ["update resourceclaims/status"]


async def test_missing_claim() -> None:
    run = await run_plugin(Harness(claims=[ALLOCATED_CLAIM, OTHER_CLAIM]), POD_WITH_CLAIM_TEMPLATE)
    assert run.preenqueue == uaur('pod "default/my-pod": ResourceClaim not created yet')


async def test_claim_not_in_cache() -> None:
    run = await run_plugin(Harness(), POD_WITH_CLAIM_NAME)
    assert run.preenqueue == uaur('could not find ResourceClaim "default/my-pod-my-resource"')


async def test_deleted_claim() -> None:
    claim = copy.deepcopy(ALLOCATED_CLAIM)
    claim["metadata"]["deletionTimestamp"] = "2024-08-13T00:00:00Z"
    run = await run_plugin(Harness(claims=[claim]), POD_WITH_CLAIM_TEMPLATE_IN_STATUS)
    assert run.preenqueue == uaur('resourceclaim "my-pod-my-resource" is being deleted')


async def test_wrong_claim() -> None:
    claim = copy.deepcopy(ALLOCATED_CLAIM)
    claim["metadata"]["ownerReferences"][0]["uid"] += "123"
    run = await run_plugin(Harness(claims=[claim]), POD_WITH_CLAIM_TEMPLATE_IN_STATUS)
    assert run.preenqueue == uaur(
        "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)"
    )


async def test_no_claim_needed_is_skipped() -> None:
    pod = make_pod(
        POD_NAME,
        uid=POD_UID,
        resource_claims=[{"name": "x", "resourceClaimTemplateName": "t"}],
        resource_claim_statuses=[{"name": "x"}],
    )
    run = await run_plugin(Harness(), pod)
    assert run.preenqueue is None and run.prefilter == new_status(Code.SKIP)


async def test_no_resources() -> None:
    h = Harness(claims=[PENDING_CLAIM], classes=[DEVICE_CLASS])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.filter == {NODE_NAME: uaur("cannot allocate all claims")}
    assert run.postfilter == unsched("still not schedulable")


async def test_with_resources() -> None:
    h = Harness(claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])
    pod = POD_WITH_CLAIM_NAME
    _, status = h.plugin.pre_filter(h.state, pod, [])
    assert status is None
    assert h.plugin.filter(h.state, pod, NodeInfo(WORKER_NODE)) is None
    assert h.plugin.reserve(h.state, pod, NODE_NAME) is None
    assert h.in_flight() == [CLAIM_NAME]
    in_flight = h.cache._in_flight[PENDING_CLAIM["metadata"]["uid"]]
    assert in_flight["status"]["allocation"] == ALLOCATION_RESULT
    assert in_flight["metadata"]["finalizers"] == [FINALIZER]
    assert h.state.get("decision/DynamicResources") == {
        "node": NODE_NAME,
        "allocations": {"default/my-pod-my-resource": ALLOCATION_RESULT},
    }
    assert await h.plugin.pre_bind(h.state, pod, NODE_NAME) is None
    stored = h.stored_claim()
    assert stored is not None
    assert stored["metadata"]["finalizers"] == [FINALIZER]
    assert stored["status"] == {"allocation": ALLOCATION_RESULT, "reservedFor": RESERVED_BY_POD}
    assert h.client.verbs() == ["update resourceclaims", "update resourceclaims/status"]
    assert h.in_flight() == [] and h.assumed() == [CLAIM_NAME]
    await h.plugin.post_bind(h.state, pod, NODE_NAME)
    assert h.client.verbs() == ["update resourceclaims", "update resourceclaims/status"]  # gate off: no PSC delete


async def test_with_resources_has_finalizer() -> None:
    claim = copy.deepcopy(PENDING_CLAIM)
    claim["metadata"]["finalizers"] = [FINALIZER]
    h = Harness(claims=[claim], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prebind is None
    assert h.client.verbs() == ["update resourceclaims/status"]
    assert h.stored_claim()["status"]["reservedFor"] == RESERVED_BY_POD  # type: ignore[index]


async def test_with_resources_finalizer_gets_removed() -> None:
    """The finalizer vanishes before PreBind: a conflict, a re-read, the finalizer is added again."""
    claim = copy.deepcopy(PENDING_CLAIM)
    claim["metadata"]["finalizers"] = [FINALIZER]
    h = Harness(claims=[claim], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])

    def remove_finalizer(h: Harness) -> None:
        stored = h.stored_claim()
        assert stored is not None
        stored["metadata"]["finalizers"] = []
        h.client.put(RESOURCE_CLAIMS, stored)

    run = await run_plugin(h, POD_WITH_CLAIM_NAME, before_prebind=remove_finalizer)
    assert run.prebind is None
    assert h.client.verbs() == [
        "update resourceclaims/status",
        "get resourceclaims",
        "update resourceclaims",
        "update resourceclaims/status",
    ]
    stored = h.stored_claim()
    assert stored is not None and stored["metadata"]["finalizers"] == [FINALIZER]
    assert stored["status"] == {"allocation": ALLOCATION_RESULT, "reservedFor": RESERVED_BY_POD}
    assert h.assumed() == [CLAIM_NAME] and h.in_flight() == []


async def test_with_resources_finalizer_gets_added() -> None:
    h = Harness(claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])

    def add_finalizer(h: Harness) -> None:
        stored = h.stored_claim()
        assert stored is not None
        stored["metadata"]["finalizers"] = [FINALIZER]
        h.client.put(RESOURCE_CLAIMS, stored)

    run = await run_plugin(h, POD_WITH_CLAIM_NAME, before_prebind=add_finalizer)
    assert run.prebind is None
    assert h.client.verbs() == ["update resourceclaims", "get resourceclaims", "update resourceclaims/status"]
    assert h.stored_claim()["status"]["reservedFor"] == RESERVED_BY_POD  # type: ignore[index]


async def test_allocated_elsewhere_in_the_meantime() -> None:
    h = Harness(claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])

    def allocate_elsewhere(h: Harness) -> None:
        h.client.put(RESOURCE_CLAIMS, with_allocation(PENDING_CLAIM))

    run = await run_plugin(h, POD_WITH_CLAIM_NAME, before_prebind=allocate_elsewhere)
    assert run.prebind is not None and run.prebind.code == Code.ERROR
    assert run.prebind.message() == "claim default/my-pod-my-resource got allocated elsewhere in the meantime"
    assert h.in_flight() == [] and h.assumed() == []


async def test_conflicts_are_retried_five_times() -> None:
    h = Harness(claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])

    def bump(verb: str, what: str, obj: object) -> None:
        if verb == "update" and what == "resourceclaims":
            stored = h.stored_claim()
            assert stored is not None
            h.client.put(RESOURCE_CLAIMS, stored)  # a concurrent writer: new resourceVersion

    h.client.reactors.append(bump)
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prebind is not None and run.prebind.code == Code.ERROR
    assert run.prebind.message().startswith(
        "add finalizer to claim default/my-pod-my-resource: Operation cannot be fulfilled on "
        'resourceclaims.resource.k8s.io "my-pod-my-resource": the object has been modified'
    )
    assert h.client.verbs().count("update resourceclaims") == 5


async def test_skip_bind() -> None:
    h = Harness(claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME, unreserve_before_prebind=True)
    assert run.reached[-1] == "unreserve"
    assert h.in_flight() == [] and h.assumed() == [] and h.client.verbs() == []


async def test_exhausted_resources() -> None:
    h = Harness(claims=[PENDING_CLAIM, OTHER_ALLOCATED_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.filter == {NODE_NAME: uaur("cannot allocate all claims")}
    assert run.postfilter == unsched("still not schedulable")


async def test_claim_cel_runtime_error() -> None:
    claim = owned(make_claim(selectors=['device.attributes["some-driver"].healthy']))
    h = Harness(claims=[claim], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    status = run.filter[NODE_NAME]
    assert status is not None and status.code == Code.ERROR
    assert status.message().startswith("claim default/my-pod-my-resource: selector #0: CEL runtime error")


async def test_class_cel_runtime_error() -> None:
    broken = copy.deepcopy(DEVICE_CLASS)
    broken["spec"] = {"selectors": [{"cel": {"expression": 'device.attributes["some-driver"].healthy'}}]}
    h = Harness(claims=[PENDING_CLAIM], classes=[broken], slices=[WORKER_NODE_SLICE])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    status = run.filter[NODE_NAME]
    assert status is not None and status.code == Code.ERROR
    assert status.message().startswith(f"class {CLASS_NAME}: selector #0: CEL runtime error")


async def test_missing_class() -> None:
    h = Harness(claims=[PENDING_CLAIM])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prefilter == uaur(f"request req-1: device class {CLASS_NAME} does not exist")
    assert run.postfilter == unsched("no new claims to deallocate")


async def test_request_without_class_is_an_error() -> None:
    claim = copy.deepcopy(PENDING_CLAIM)
    claim["spec"]["devices"]["requests"][0]["deviceClassName"] = ""
    run = await run_plugin(Harness(claims=[claim]), POD_WITH_CLAIM_NAME)
    assert run.prefilter is not None and run.prefilter.code == Code.ERROR
    assert run.prefilter.message() == "request req-1: unsupported request type"


async def test_wrong_topology_deallocates_structured_claim() -> None:
    h = Harness(claims=[ALLOCATED_CLAIM_WITH_WRONG_TOPOLOGY])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.filter == {NODE_NAME: uaur("resourceclaim not available on the node")}
    assert run.postfilter == unsched("deallocation of ResourceClaim completed")
    stored = h.stored_claim()
    assert stored is not None and "allocation" not in stored["status"] and "reservedFor" not in stored["status"]


async def test_good_topology() -> None:
    h = Harness(claims=[ALLOCATED_CLAIM_WITH_GOOD_TOPOLOGY])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prebind is None
    assert h.stored_claim()["status"]["reservedFor"] == RESERVED_BY_POD  # type: ignore[index]


async def test_bind_failure_unreserve_removes_reservation() -> None:
    h = Harness(claims=[ALLOCATED_CLAIM_WITH_GOOD_TOPOLOGY])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME, unreserve_after_prebind=True)
    assert run.prebind is None and run.reached[-1] == "unreserve"
    assert h.stored_claim()["status"]["reservedFor"] == []  # type: ignore[index]


async def test_reserved_okay() -> None:
    h = Harness(claims=[IN_USE_CLAIM])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prebind is None and h.client.verbs() == []


async def test_disabled() -> None:
    run = await run_plugin(Harness(claims=[IN_USE_CLAIM], enabled=False), POD_WITH_CLAIM_NAME)
    assert run.prefilter == new_status(Code.SKIP)
    assert Harness(enabled=False).plugin.events_to_register() == []


async def test_claim_in_use_by_others() -> None:
    claim = reserved(ALLOCATED_CLAIM, *((f"p{i}", f"u{i}") for i in range(32)))
    run = await run_plugin(Harness(claims=[claim]), POD_WITH_CLAIM_NAME)
    assert run.prefilter == uaur("resourceclaim in use")


async def test_shared_claim_in_flight_waits() -> None:
    """A second pod sharing a claim whose allocation is in flight waits (inFlightAllocations)."""
    shared = make_claim("shared")
    h = Harness(claims=[shared], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])
    first = make_pod("a", uid="a", resource_claims=[{"name": "r", "resourceClaimName": "shared"}])
    second = make_pod("b", uid="b", resource_claims=[{"name": "r", "resourceClaimName": "shared"}])
    _, status = h.plugin.pre_filter(h.state, first, [])
    assert status is None and h.plugin.filter(h.state, first, NodeInfo(WORKER_NODE)) is None
    assert h.plugin.reserve(h.state, first, NODE_NAME) is None
    _, status = h.plugin.pre_filter(CycleState(), second, [])
    assert status == uaur("resource claim default/shared is in the process of being allocated")


async def test_no_device_is_allocated_twice() -> None:
    """Two pods race for the last device: the in-flight, then assumed, allocation blocks the second."""
    h = Harness(claims=[PENDING_CLAIM, make_claim("other")], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])
    other_pod = make_pod("other-pod", uid="op", resource_claims=[{"name": "r", "resourceClaimName": "other"}])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME, unreserve_before_prebind=False)
    assert run.prebind is None and h.assumed() == [CLAIM_NAME]
    state = CycleState()
    _, status = h.plugin.pre_filter(state, other_pod, [])
    assert status is None
    assert h.plugin.filter(state, other_pod, NodeInfo(WORKER_NODE)) == uaur("cannot allocate all claims")
    # The first claim is deallocated (pod deleted): the device is free again.
    freed = h.stored_claim()
    assert freed is not None
    freed["status"] = {}
    h.cache.on_update(h.client.put(RESOURCE_CLAIMS, freed))
    state = CycleState()
    h.plugin.pre_filter(state, other_pod, [])
    assert h.plugin.filter(state, other_pod, NodeInfo(WORKER_NODE)) is None


async def test_filter_per_node_and_allocation_node_selector() -> None:
    h = Harness(claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME, nodes=[WORKER_NODE2, WORKER_NODE])
    assert run.filter == {"worker-2": uaur("cannot allocate all claims"), NODE_NAME: None}


# ----------------------------------------------------------------- classic


async def test_classic_claim_with_gate_off() -> None:
    h = Harness(claims=[CLASSIC_CLAIM], classes=[DEVICE_CLASS])
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prefilter == uaur("resourceclaim depends on disabled DRAControlPlaneController feature")
    assert run.postfilter == unsched("no new claims to deallocate")
    assert not any(e.event.resource == "PodSchedulingContext" for e in h.plugin.events_to_register())


async def test_waiting_for_deallocation() -> None:
    claim = with_allocation(CLASSIC_CLAIM, {"controller": "some-driver"})
    claim["status"]["deallocationRequested"] = True
    run = await run_plugin(Harness(claims=[claim], gate=True), POD_WITH_CLAIM_NAME)
    assert run.prefilter == uaur("resourceclaim must be reallocated")


async def test_scheduling_select_immediately() -> None:
    """One classic claim: create the PodSchedulingContext with potential and selected node, in one call."""
    h = Harness(claims=[CLASSIC_CLAIM], classes=[DEVICE_CLASS], gate=True)
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.reserve is None
    assert run.prebind == new_status(Code.PENDING, "waiting for resource driver")
    assert h.client.verbs() == ["create podschedulingcontexts"]
    ctx = h.stored_scheduling()
    assert ctx is not None and ctx["spec"] == {"selectedNode": NODE_NAME, "potentialNodes": [NODE_NAME]}
    assert ctx["metadata"]["ownerReferences"][0]["uid"] == POD_UID


async def test_scheduling_ask() -> None:
    """Two classic claims without driver information: ask (potential nodes) but do not select."""
    h = Harness(claims=[CLASSIC_CLAIM, CLASSIC_CLAIM2], classes=[DEVICE_CLASS], gate=True)
    run = await run_plugin(h, POD_WITH_TWO_CLAIM_NAMES)
    assert run.reserve is None
    assert run.prebind == new_status(Code.PENDING, "waiting for resource driver")
    ctx = h.stored_scheduling()
    assert ctx is not None and ctx["spec"] == {"potentialNodes": [NODE_NAME]}


async def test_scheduling_finish_patches_once() -> None:
    h = Harness(claims=[CLASSIC_CLAIM], classes=[DEVICE_CLASS], schedulings=[SCHEDULING_INFO], gate=True)
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prebind == new_status(Code.PENDING, "waiting for resource driver")
    assert h.client.verbs() == ["patch podschedulingcontexts"]
    ctx = h.stored_scheduling()
    assert ctx is not None and ctx["spec"] == {"potentialNodes": [NODE_NAME], "selectedNode": NODE_NAME}


async def test_scheduling_waits_without_selection() -> None:
    """Two classic claims, potential nodes already known, no info yet: Reserve says Pending, nothing is written."""
    ctx = scheduling_context(potential=[NODE_NAME])
    h = Harness(claims=[CLASSIC_CLAIM, CLASSIC_CLAIM2], classes=[DEVICE_CLASS], schedulings=[ctx], gate=True)
    run = await run_plugin(h, POD_WITH_TWO_CLAIM_NAMES)
    assert run.reserve == new_status(Code.PENDING, "waiting for resource driver to provide information")
    assert h.client.verbs() == []


async def test_scheduling_completed_deletes_context() -> None:
    h = Harness(claims=[CLASSIC_ALLOCATED_CLAIM], classes=[DEVICE_CLASS], schedulings=[SCHEDULING_INFO], gate=True)
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prebind is None and "postbind" in run.reached
    assert h.stored_claim()["status"]["reservedFor"] == RESERVED_BY_POD  # type: ignore[index]
    assert h.stored_scheduling() is None
    assert h.client.verbs() == ["update resourceclaims/status", "delete podschedulingcontexts"]


async def test_wrong_topology_requests_deallocation_of_classic_claim() -> None:
    claim = with_allocation(
        CLASSIC_CLAIM, {**ALLOCATED_CLAIM_WITH_WRONG_TOPOLOGY["status"]["allocation"], "controller": "some-driver"}
    )
    h = Harness(claims=[claim], gate=True)
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.filter == {NODE_NAME: uaur("resourceclaim not available on the node")}
    assert run.postfilter == unsched("deallocation of ResourceClaim completed")
    stored = h.stored_claim()
    assert stored is not None and stored["status"]["deallocationRequested"] is True
    assert "allocation" in stored["status"]


async def test_classic_post_filter_clears_selected_node_first() -> None:
    claim = with_allocation(
        CLASSIC_CLAIM, {**ALLOCATED_CLAIM_WITH_WRONG_TOPOLOGY["status"]["allocation"], "controller": "some-driver"}
    )
    ctx = scheduling_context(potential=[NODE_NAME], selected=NODE_NAME)
    h = Harness(claims=[claim], schedulings=[ctx], gate=True)
    await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert h.client.verbs() == ["patch podschedulingcontexts", "update resourceclaims/status"]
    assert h.stored_scheduling()["spec"]["selectedNode"] == ""  # type: ignore[index]


async def test_class_suitable_nodes_filter_classic_claims() -> None:
    cls = copy.deepcopy(DEVICE_CLASS)
    cls["spec"] = {
        "suitableNodes": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["worker-2"]}]}
            ]
        }
    }
    h = Harness(claims=[CLASSIC_CLAIM], classes=[cls], gate=True)
    run = await run_plugin(h, POD_WITH_CLAIM_NAME, nodes=[WORKER_NODE, WORKER_NODE2])
    assert run.filter == {NODE_NAME: uaur("excluded by device class node filter"), "worker-2": None}


async def test_unsuitable_nodes_from_driver() -> None:
    ctx = scheduling_context(potential=[NODE_NAME], infos=[{"name": "my-resource", "unsuitableNodes": [NODE_NAME]}])
    h = Harness(claims=[CLASSIC_CLAIM], classes=[DEVICE_CLASS], schedulings=[ctx], gate=True)
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.filter == {NODE_NAME: uaur("resourceclaim cannot be allocated for the node (unsuitable)")}


async def test_scheduling_context_of_another_pod_is_an_error() -> None:
    ctx = scheduling_context(owner_uid="other")
    h = Harness(claims=[CLASSIC_CLAIM], classes=[DEVICE_CLASS], schedulings=[ctx], gate=True)
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prefilter is not None and run.prefilter.code == Code.ERROR
    assert run.prefilter.message() == "PodSchedulingContext object with UID psc-uid is not owned by Pod default/my-pod"


async def test_potential_nodes_are_capped_at_128() -> None:
    h = Harness(claims=[CLASSIC_CLAIM], classes=[DEVICE_CLASS], gate=True)
    pod = POD_WITH_CLAIM_NAME
    _, status = h.plugin.pre_filter(h.state, pod, [])
    assert status is None
    nodes = [NodeInfo(make_node(f"n{i:03d}")) for i in range(200)]
    status = h.plugin.pre_score(h.state, pod, nodes)
    assert status is not None and status.code == Code.SKIP  # a classic claim gives Score nothing to rank
    potential = h.plugin._state(h.state).scheduling.potential_nodes
    assert potential is not None and len(potential) == 128 and potential == sorted(potential)


async def test_pod_scheduling_context_is_only_read_with_the_gate_on() -> None:
    h = Harness(claims=[ALLOCATED_CLAIM], schedulings=[scheduling_context(owner_uid="other")], gate=False)
    run = await run_plugin(h, POD_WITH_CLAIM_NAME)
    assert run.prefilter is None and run.prebind is None  # the foreign context is never looked at
    assert h.client.verbs() == ["update resourceclaims/status"]
