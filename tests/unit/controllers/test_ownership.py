"""Garbage-collection decisions: owner classification and the plan for one object."""

from __future__ import annotations

from typing import Any

import pytest

from services.api.types.registry import ResourceType
from services.controllers.object_edits import (
    with_unblocked_owner_references,
    without_finalizer,
    without_owner_references,
)
from services.controllers.ownership import (
    BACKGROUND,
    FOREGROUND,
    FOREGROUND_FINALIZER,
    ORPHAN_FINALIZER,
    Delete,
    Enqueue,
    OrphanDependents,
    OwnerState,
    RemoveFinalizer,
    TrimOwnerReferences,
    UnblockOwnerReferences,
    check_owner,
    check_owners,
    plan,
)

NOW = "2026-11-29T09:00:00Z"


def ref(name: str, uid: str, *, kind: str = "Pod", api_version: str = "v1", block: bool = False) -> dict[str, Any]:
    r: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if block:
        r["blockOwnerDeletion"] = True
    return r


def obj(
    name: str,
    uid: str,
    *,
    namespace: str = "ns",
    refs: list[dict[str, Any]] | None = None,
    finalizers: list[str] | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": uid}
    if namespace:
        meta["namespace"] = namespace
    if refs:
        meta["ownerReferences"] = refs
    if finalizers:
        meta["finalizers"] = finalizers
    if deleting:
        meta["deletionTimestamp"] = NOW
    return {"metadata": meta}


POD = obj("p", "pod-uid")
FG_POD = obj("fg", "fg-uid", finalizers=[FOREGROUND_FINALIZER], deleting=True)
NODE = obj("n1", "node-uid", namespace="")
WORLD = {
    ("pods", "ns", "p"): POD,
    ("pods", "ns", "fg"): FG_POD,
    ("nodes", "", "n1"): NODE,
}


def lookup(rt: ResourceType, namespace: str, name: str) -> dict[str, Any] | None:
    return WORLD.get((rt.plural, namespace, name))


CLASSIFY = [
    ("owner exists", ref("p", "pod-uid"), "ns", OwnerState.SOLID),
    ("owner absent", ref("gone", "x"), "ns", OwnerState.DANGLING),
    ("same name, other uid (replaced)", ref("p", "old-uid"), "ns", OwnerState.DANGLING),
    ("owner in another namespace counts as absent", ref("p", "pod-uid"), "other-ns", OwnerState.DANGLING),
    ("owner deleting dependents in the foreground", ref("fg", "fg-uid"), "ns", OwnerState.WAITING),
    ("cluster-scoped owner of a namespaced object", ref("n1", "node-uid", kind="Node"), "ns", OwnerState.SOLID),
    (
        "kind draplane does not serve",
        ref("web", "deploy-uid", kind="Deployment", api_version="apps/v1"),
        "ns",
        OwnerState.UNRESOLVED,
    ),
    ("namespaced owner of a cluster-scoped object", ref("p", "pod-uid"), "", OwnerState.UNRESOLVED),
]


@pytest.mark.parametrize(("case", "the_ref", "namespace", "state"), CLASSIFY, ids=[c[0] for c in CLASSIFY])
def test_check_owner(case: str, the_ref: dict[str, Any], namespace: str, state: OwnerState) -> None:
    assert check_owner(the_ref, dependent_namespace=namespace, lookup=lookup).state is state


def decide(item: dict[str, Any], dependents: list[dict[str, Any]] | None = None) -> list[Any]:
    return plan(item, owners=check_owners(item, lookup), dependents=dependents or [])


def test_no_owners_nothing_to_do() -> None:
    assert decide(obj("c", "c-uid")) == []


def test_solid_owner_keeps_the_dependent() -> None:
    assert decide(obj("c", "c-uid", refs=[ref("p", "pod-uid")])) == []


def test_all_owners_gone_background_delete() -> None:
    assert decide(obj("c", "c-uid", refs=[ref("gone", "x")])) == [Delete(BACKGROUND)]
    assert decide(obj("c", "c-uid", refs=[ref("gone", "x"), ref("p", "old")])) == [Delete(BACKGROUND)]


def test_one_solid_owner_trims_the_dangling_ones() -> None:
    item = obj("c", "c-uid", refs=[ref("p", "pod-uid"), ref("gone", "x"), ref("fg", "fg-uid", block=True)])
    assert decide(item) == [TrimOwnerReferences(frozenset({"x", "fg-uid"}))]


def test_unresolvable_owner_is_never_collected() -> None:
    item = obj("c", "c-uid", refs=[ref("gone", "x"), ref("web", "deploy-uid", kind="Deployment", api_version="apps/v1")])
    assert decide(item) == []


def test_owner_waiting_dependent_without_dependents_background() -> None:
    assert decide(obj("c", "c-uid", refs=[ref("fg", "fg-uid", block=True)])) == [Delete(BACKGROUND)]


def test_owner_waiting_dependent_with_dependents_foreground() -> None:
    item = obj("c", "c-uid", refs=[ref("fg", "fg-uid", block=True)])
    grandchild = obj(
        "g", "g-uid", refs=[ref("c", "c-uid", kind="ResourceClaim", api_version="resource.k8s.io/v1alpha3")]
    )
    assert decide(item, [grandchild]) == [Delete(FOREGROUND)]


def test_foreground_cycle_is_broken_by_unblocking() -> None:
    item = obj("c", "c-uid", refs=[ref("fg", "fg-uid", block=True)])
    waiting_child = obj("g", "g-uid", finalizers=[FOREGROUND_FINALIZER], deleting=True)
    assert decide(item, [waiting_child]) == [UnblockOwnerReferences(), Delete(FOREGROUND)]


def test_orphaning_owner_releases_dependents_then_its_finalizer() -> None:
    owner = obj("p", "pod-uid", finalizers=[ORPHAN_FINALIZER], deleting=True)
    mine = obj("c", "c-uid", refs=[ref("p", "pod-uid")])
    assert decide(owner, [mine]) == [OrphanDependents((mine,)), RemoveFinalizer(ORPHAN_FINALIZER)]
    assert decide(owner, []) == [OrphanDependents(()), RemoveFinalizer(ORPHAN_FINALIZER)]


def test_foreground_owner_waits_for_blocking_dependents() -> None:
    owner = obj("p", "pod-uid", finalizers=[FOREGROUND_FINALIZER], deleting=True)
    blocking = obj("c", "c-uid", refs=[ref("p", "pod-uid", block=True)])
    loose = obj("d", "d-uid", refs=[ref("p", "pod-uid")])
    assert decide(owner, [blocking, loose]) == [Enqueue((blocking, loose))]
    going = obj("c", "c-uid", refs=[ref("p", "pod-uid", block=True)], finalizers=["x"], deleting=True)
    assert decide(owner, [going]) == [], "a blocking dependent being deleted: just wait"
    assert decide(owner, [loose]) == [RemoveFinalizer(FOREGROUND_FINALIZER)], "non-blocking ones do not hold it"
    assert decide(owner, []) == [RemoveFinalizer(FOREGROUND_FINALIZER)]


def test_object_held_by_other_finalizers_is_left_alone() -> None:
    assert decide(obj("c", "c-uid", refs=[ref("gone", "x")], finalizers=["example.com/x"], deleting=True)) == []


def test_edits_copy() -> None:
    item = obj("c", "c-uid", refs=[ref("p", "pod-uid", block=True), ref("q", "q-uid")], finalizers=["a", "b"])
    assert without_owner_references(item, frozenset({"pod-uid"}))["metadata"]["ownerReferences"] == [ref("q", "q-uid")]
    assert "ownerReferences" not in without_owner_references(item, frozenset({"pod-uid", "q-uid"}))["metadata"]
    unblocked = with_unblocked_owner_references(item)["metadata"]["ownerReferences"]
    assert unblocked[0]["blockOwnerDeletion"] is False and "blockOwnerDeletion" not in unblocked[1]
    assert without_finalizer(item, "a")["metadata"]["finalizers"] == ["b"]
    assert "finalizers" not in without_finalizer(without_finalizer(item, "a"), "b")["metadata"]
    assert item["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True, "originals stay untouched"
    assert item["metadata"]["finalizers"] == ["a", "b"]
