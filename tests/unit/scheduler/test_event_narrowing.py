"""Event narrowing and the per-node memos give the outcome the plain path gives, with less work.

* A claim event is offered only to the pods that name the claim — except a
  deallocation, which may free devices for any pod.
* The allocation memo reuses an allocator outcome only while the node's pools
  are used exactly as before; the node-local memo only for the same node version.
"""

from __future__ import annotations

import copy
from typing import Any

from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.queue import ACTIVE_Q, BACKOFF_Q, GATED, UNSCHEDULABLE_PODS

from .builders import make_node, make_pod
from .dra_fixtures import DEVICE_CLASS, make_claim, owned, resource_slice
from .test_dra_scheduling import World


def template_pod(name: str, uid: str) -> dict[str, Any]:
    return make_pod(name, uid=uid, resource_claims=[{"name": "gpu", "resourceClaimTemplateName": "tmpl"}])


def with_status(pod: dict[str, Any], claim: str) -> dict[str, Any]:
    updated = copy.deepcopy(pod)
    updated.setdefault("status", {})["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": claim}]
    return updated


def counting_hint(world: World) -> list[str]:
    """Record the pods the claim hint is asked about."""
    asked: list[str] = []
    original = world.dra.is_schedulable_after_claim_change
    hint_map = world.core.profiles["default-scheduler"].hint_map
    for fn in hint_map.matching(ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.UPDATE)):

        def wrapped(pod: Any, old: Any, new: Any) -> Any:
            asked.append(pod["metadata"]["name"])
            return original(pod, old, new)

        object.__setattr__(fn, "hint", wrapped)
    return asked


def test_a_new_claim_is_offered_only_to_the_pod_that_names_it() -> None:
    w = World()
    w.apply(Resource.NODE, None, make_node("n1"))
    w.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
    pods = [w.create_pod(template_pod(f"p{i}", f"uid-{i}")) for i in range(50)]
    assert all(w.core.queue.where(p) == GATED for p in pods)
    asked = counting_hint(w)

    # The claim controller's two steps for p7: the claim, then the pod status naming it.
    w.create_claim(owned(make_claim("p7-gpu"), "uid-7"))
    assert asked == []  # nobody names the claim yet: a plain path would have asked all 50 and heard QueueSkip
    w.apply(Resource.POD, pods[7], w.client.put(("", "pods"), with_status(pods[7], "p7-gpu")))
    assert w.core.queue.where(pods[7]) == ACTIVE_Q
    assert all(w.core.queue.where(p) == GATED for i, p in enumerate(pods) if i != 7)

    w.create_claim(owned(make_claim("p8-gpu"), "uid-8"))
    assert asked == []
    claim = w.client.stored(("resource.k8s.io", "resourceclaims"), "p8-gpu", "default")
    assert claim is not None
    named = w.client.put(("", "pods"), with_status(pods[8], "p8-gpu"))
    w.apply(Resource.POD, pods[8], named)
    # An update of that claim is now offered to p8 alone.
    asked.clear()
    updated = copy.deepcopy(claim)
    updated["metadata"]["annotations"] = {"x": "y"}
    w.apply(Resource.RESOURCE_CLAIM, claim, updated)
    assert set(asked) <= {"p8"}
    assert w.core.queue.where(pods[9]) == GATED


async def test_a_deallocation_is_offered_to_every_pod_waiting_for_devices() -> None:
    w = World()
    w.apply(Resource.NODE, None, make_node("n1"))
    w.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
    w.apply(Resource.RESOURCE_SLICE, None, resource_slice("n1", "dev-0"))
    holder = w.create_claim(make_claim("held"))
    first = w.create_pod(make_pod("first", uid="u1", resource_claims=[{"name": "gpu", "resourceClaimName": "held"}]))
    attempt = await w.core.schedule_one()
    assert attempt is not None and attempt.succeeded
    assert (await w.core.bind(attempt)).succeeded
    allocated = w.sync_claim("held", holder)
    waiting = []
    for i in range(3):
        w.create_claim(make_claim(f"c{i}"))
        waiting.append(
            w.create_pod(
                make_pod(f"w{i}", uid=f"w{i}", resource_claims=[{"name": "gpu", "resourceClaimName": f"c{i}"}])
            )
        )
        attempt = await w.core.schedule_one()
        assert attempt is not None and not attempt.succeeded
    assert all(w.core.queue.where(p) == UNSCHEDULABLE_PODS for p in waiting)
    asked = counting_hint(w)
    released = copy.deepcopy(allocated)
    released["status"] = {}
    w.apply(Resource.RESOURCE_CLAIM, allocated, released)
    assert sorted(asked) == ["w0", "w1", "w2"]
    assert all(w.core.queue.where(p) in (ACTIVE_Q, BACKOFF_Q) for p in waiting)
    assert w.core.queue.where(first) is None


async def test_the_allocation_memo_follows_device_usage() -> None:
    w = World()
    for node in ("n1", "n2"):
        w.apply(Resource.NODE, None, make_node(node))
        w.apply(Resource.RESOURCE_SLICE, None, resource_slice(node, "dev-0", name=f"{node}-slice"))
    w.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)
    nodes = []
    for i in range(4):
        w.create_claim(make_claim(f"c{i}"))
        w.create_pod(make_pod(f"p{i}", uid=f"u{i}", resource_claims=[{"name": "gpu", "resourceClaimName": f"c{i}"}]))
        attempt = await w.core.schedule_one()
        assert attempt is not None
        if attempt.succeeded:
            nodes.append(attempt.outcome.node)
            assert (await w.core.bind(attempt)).succeeded
        else:
            assert "cannot allocate all claims" in attempt.message
    # Two devices, two pods placed on different nodes; the memo never handed out a used device.
    assert sorted(nodes) == ["n1", "n2"]
    assert w.dra.memo.hits > 0


async def test_node_local_memo_sees_the_resources_of_the_pod_placed_before() -> None:
    w = World()
    profile = w.core.profiles["default-scheduler"]
    assert profile.node_local >= {
        "NodeResourcesFit",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
    }
    assert "DynamicResources" not in profile.node_local
    for node in ("n1", "n2"):
        w.apply(Resource.NODE, None, make_node(node, allocatable={"cpu": "1", "memory": "1Gi", "pods": "9"}))
    placed = []
    for i in range(3):
        w.create_pod(make_pod(f"p{i}", uid=f"u{i}", requests={"cpu": "1"}))
        attempt = await w.core.schedule_one()
        assert attempt is not None
        placed.append(attempt.outcome.node if attempt.succeeded else None)
        if attempt.succeeded:
            assert (await w.core.bind(attempt)).succeeded
        else:
            assert attempt.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    # Same spec three times: remembered verdicts answered for unchanged nodes, never for the node just filled.
    assert sorted(str(n) for n in placed[:2]) == ["n1", "n2"] and placed[2] is None
    assert profile.equivalence.hits > 0
