"""The mutation cache: a controller's own writes are visible before its informer has them."""

from __future__ import annotations

from typing import Any

from services.controllers.mutation_cache import MutationCache
from services.kube.resourceclaim import claim_pod_owner_uids
from services.runtime.informer import Store

INDEX = "owner"


def claim(name: str, rv: int, *, owner: str = "pod-uid", uid: str | None = None) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": uid or f"uid-{name}",
            "resourceVersion": str(rv),
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner, "controller": True}],
        }
    }


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make(ttl: float = 60.0) -> tuple[Store, MutationCache, Clock]:
    store = Store()
    store.add_index(INDEX, claim_pod_owner_uids)
    clock = Clock()
    return store, MutationCache(store, indexers={INDEX: claim_pod_owner_uids}, ttl=ttl, clock=clock), clock


def names(objs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in objs)


def test_a_created_object_is_found_before_the_informer_has_it() -> None:
    _store, cache, _ = make()
    assert cache.by_index(INDEX, "pod-uid") == []
    cache.mutation(claim("a", 10))
    assert names(cache.by_index(INDEX, "pod-uid")) == [("a", "10")]
    assert cache.get("ns", "a") is not None
    assert cache.by_index(INDEX, "other-pod") == []


def test_the_informer_catching_up_supersedes_the_cached_object() -> None:
    store, cache, _ = make()
    cache.mutation(claim("a", 10))
    store._put(("ns", "a"), claim("a", 10))
    assert names(cache.by_index(INDEX, "pod-uid")) == [("a", "10")]
    assert len(cache) == 0, "same resourceVersion in the store: the cached copy is dropped"


def test_a_newer_cached_object_replaces_an_older_stored_one() -> None:
    store, cache, _ = make()
    store._put(("ns", "a"), claim("a", 5))
    cache.mutation(claim("a", 9))
    assert names(cache.by_index(INDEX, "pod-uid")) == [("a", "9")]
    assert cache.get("ns", "a")["metadata"]["resourceVersion"] == "9"  # type: ignore[index]
    store._put(("ns", "a"), claim("a", 12))
    assert cache.get("ns", "a")["metadata"]["resourceVersion"] == "12"  # type: ignore[index]


def test_stored_objects_come_through() -> None:
    store, cache, _ = make()
    store._put(("ns", "a"), claim("a", 5))
    cache.mutation(claim("b", 7))
    assert names(cache.by_index(INDEX, "pod-uid")) == [("a", "5"), ("b", "7")]


def test_entries_expire() -> None:
    _, cache, clock = make(ttl=30)
    cache.mutation(claim("a", 10))
    clock.now = 29.9
    assert cache.get("ns", "a") is not None
    clock.now = 30.0
    assert cache.get("ns", "a") is None
    assert cache.by_index(INDEX, "pod-uid") == []


def test_a_deletion_seen_by_the_informer_evicts_the_same_object_only() -> None:
    _, cache, _ = make()
    cache.mutation(claim("a", 10, uid="first"))
    cache.deleted(claim("a", 11, uid="someone-else"))
    assert cache.get("ns", "a") is not None
    cache.deleted(claim("a", 11, uid="first"))
    assert cache.get("ns", "a") is None


def test_informer_events_prune_the_cache() -> None:
    _, cache, _ = make()
    cache.mutation(claim("a", 10))
    cache.observed(claim("a", 9))
    assert len(cache) == 1, "an older object does not replace what this process wrote"
    cache.observed(claim("a", 10))
    assert len(cache) == 0
