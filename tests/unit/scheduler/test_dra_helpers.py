"""The claim assume cache and PodSchedulingContext publishing (claim lookup: tests/unit/kube)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.scheduler.client import POD_SCHEDULING_CONTEXTS
from services.scheduler.dra.assume_cache import ClaimAssumeCache, allocated_device_ids
from services.scheduler.dra.scheduling_context import PodSchedulingState, SchedulingContextError
from services.scheduler.dra.stores import ObjectStore

from .dra_fixtures import (
    ALLOCATED_CLAIM,
    DRIVER,
    NODE_NAME,
    PENDING_CLAIM,
    POD_WITH_CLAIM_NAME,
    scheduling_context,
    with_allocation,
)
from .fake_client import FakeClient


def versioned(claim: dict[str, Any], rv: str) -> dict[str, Any]:
    claim = copy.deepcopy(claim)
    claim["metadata"]["resourceVersion"] = rv
    return claim


DEVICE = (DRIVER, NODE_NAME, "instance-1")


def test_assume_cache_layers_and_device_index() -> None:
    cache = ClaimAssumeCache()
    cache.on_add(versioned(PENDING_CLAIM, "5"))
    devices = cache.allocated_devices()
    assert DEVICE not in devices
    cache.add_in_flight(versioned(ALLOCATED_CLAIM, "5"))
    assert DEVICE in devices  # in flight counts immediately
    cache.assume(versioned(ALLOCATED_CLAIM, "6"))
    cache.remove_in_flight(ALLOCATED_CLAIM["metadata"]["uid"])
    assert DEVICE in devices and cache.is_assumed("default", "my-pod-my-resource")
    cache.on_update(versioned(PENDING_CLAIM, "5"))  # an older informer event does not undo the assumption
    assert DEVICE in devices
    cache.on_update(versioned(ALLOCATED_CLAIM, "6"))  # the informer caught up
    assert not cache.is_assumed("default", "my-pod-my-resource") and DEVICE in devices
    cache.on_update(versioned(PENDING_CLAIM, "7"))  # deallocated
    assert DEVICE not in devices and len(devices) == 0


def test_assume_cache_restore_and_delete() -> None:
    cache = ClaimAssumeCache()
    cache.on_add(versioned(PENDING_CLAIM, "5"))
    cache.assume(versioned(ALLOCATED_CLAIM, "6"))
    cache.restore("default", "my-pod-my-resource")
    assert cache.get("default", "my-pod-my-resource")["metadata"]["resourceVersion"] == "5"  # type: ignore[index]
    assert DEVICE not in cache.allocated_devices()
    cache.on_add(versioned(ALLOCATED_CLAIM, "8"))
    cache.on_delete(versioned(ALLOCATED_CLAIM, "8"))
    assert cache.get("default", "my-pod-my-resource") is None and DEVICE not in cache.allocated_devices()


def test_a_claim_deleted_before_its_write_is_assumed_holds_no_device() -> None:
    """The write's reply comes after the informer saw the claim allocated, released and deleted (issue 21)."""
    cache = ClaimAssumeCache()
    cache.on_add(versioned(PENDING_CLAIM, "5"))
    cache.add_in_flight(versioned(ALLOCATED_CLAIM, "5"))
    cache.on_update(versioned(ALLOCATED_CLAIM, "6"))
    cache.on_update(versioned(PENDING_CLAIM, "7"))
    cache.on_delete(versioned(PENDING_CLAIM, "7"))
    cache.assume(versioned(ALLOCATED_CLAIM, "6"))  # as kube's Assume: not found, not stored
    cache.remove_in_flight(ALLOCATED_CLAIM["metadata"]["uid"])
    assert not cache.is_assumed("default", "my-pod-my-resource")
    assert DEVICE not in cache.allocated_devices() and cache.get("default", "my-pod-my-resource") is None


def test_a_claim_the_scheduler_created_is_assumed_before_the_informer_has_it() -> None:
    cache = ClaimAssumeCache()
    cache.assume(versioned(ALLOCATED_CLAIM, "6"), created=True)  # a pod's extended resource claim
    assert cache.is_assumed("default", "my-pod-my-resource") and DEVICE in cache.allocated_devices()


def test_admin_access_devices_are_not_taken() -> None:
    claim = with_allocation(
        PENDING_CLAIM,
        {
            "devices": {
                "results": [
                    {
                        "request": "req-1",
                        "driver": DRIVER,
                        "pool": NODE_NAME,
                        "device": "instance-1",
                        "adminAccess": True,
                    }
                ]
            }
        },
    )
    assert allocated_device_ids(claim) == frozenset()


async def test_publish_creates_once_then_patches_once() -> None:
    client = FakeClient()
    pod = POD_WITH_CLAIM_NAME
    state = PodSchedulingState()
    state.init(pod, ObjectStore())
    await state.publish(pod, client)
    assert client.calls == []  # nothing recorded, nothing written
    state.potential_nodes = ["a", "b"]
    state.selected_node = "a"
    await state.publish(pod, client)
    assert client.verbs() == ["create podschedulingcontexts"]
    assert not state.is_dirty()
    state.selected_node = "b"
    await state.publish(pod, client)
    assert client.verbs() == ["create podschedulingcontexts", "patch podschedulingcontexts"]
    stored = client.stored(POD_SCHEDULING_CONTEXTS, "my-pod", "default")
    assert stored is not None and stored["spec"] == {"potentialNodes": ["a", "b"], "selectedNode": "b"}


def test_init_rejects_foreign_context() -> None:
    state = PodSchedulingState()
    with pytest.raises(SchedulingContextError, match="is not owned by Pod default/my-pod"):
        state.init(POD_WITH_CLAIM_NAME, ObjectStore([scheduling_context(owner_uid="x")]))
    state.init(POD_WITH_CLAIM_NAME, None)  # gate off: no lister, nothing read
    assert state.scheduling_ctx is None


def test_an_update_that_keeps_the_allocation_keeps_the_pool_generation() -> None:
    """A claim update with an equal allocation (a new object from the log) changes no device count and no pool."""
    cache = ClaimAssumeCache()
    cache.on_add(versioned(ALLOCATED_CLAIM, "5"))
    generation = cache.pool_generation(DRIVER, NODE_NAME)
    reserved = versioned(ALLOCATED_CLAIM, "6")
    reserved["status"]["reservedFor"] = [{"resource": "pods", "name": "my-pod", "uid": "1234"}]
    cache.on_update(reserved)  # a copy: equal allocation, another object
    assert cache.pool_generation(DRIVER, NODE_NAME) == generation
    assert DEVICE in cache.allocated_devices() and len(cache.allocated_devices()) == 1
    moved = versioned(ALLOCATED_CLAIM, "7")
    moved["status"]["allocation"]["devices"]["results"][0]["device"] = "instance-2"
    cache.on_update(moved)  # another device: the index follows
    assert cache.pool_generation(DRIVER, NODE_NAME) == generation + 1
    assert DEVICE not in cache.allocated_devices() and (DRIVER, NODE_NAME, "instance-2") in cache.allocated_devices()
    cache.on_update(versioned(PENDING_CLAIM, "8"))  # deallocated
    assert len(cache.allocated_devices()) == 0 and cache.pool_generation(DRIVER, NODE_NAME) == generation + 2
    cache.on_update(versioned(ALLOCATED_CLAIM, "9"))  # allocated again with the allocation it had before
    assert DEVICE in cache.allocated_devices() and cache.pool_generation(DRIVER, NODE_NAME) == generation + 3
