"""reservedFor cleanup and claim release decisions, and what a pod needs (Kubernetes 1.31 syncClaim/syncPod)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.controllers.pod_claims import (
    consumer_reference,
    is_pod_done,
    needs_reservation,
    pod_needs_claims,
    pod_needs_work,
)
from services.controllers.reserved_for import (
    DELETE_PROTECTION_FINALIZER,
    UIDCache,
    UnsupportedConsumer,
    Verdict,
    judge_consumer,
    plan_release,
    should_delete_generated,
)

NOW = "2026-11-29T09:00:00Z"
ENTRY = {"resource": "pods", "name": "web-0", "uid": "pod-uid"}
OTHER = {"resource": "pods", "name": "web-1", "uid": "other-uid"}
ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "g0"}]}}


def pod(
    *, uid: str = "pod-uid", phase: str = "Running", node: str = "", deleting: bool = False, **spec: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web-0", "namespace": "ns", "uid": uid}
    if deleting:
        meta["deletionTimestamp"] = NOW
    obj: dict[str, Any] = {"metadata": meta, "spec": dict(spec), "status": {"phase": phase}}
    if node:
        obj["spec"]["nodeName"] = node
    return obj


def claim(
    *,
    reserved: list[dict[str, Any]] | None = None,
    allocated: bool = True,
    controller: str = "",
    protected: bool = True,
    deleting: bool = False,
    owner_uid: str | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web-0-gpu-abcde", "namespace": "ns", "uid": "claim-uid"}
    if protected:
        meta["finalizers"] = [DELETE_PROTECTION_FINALIZER]
    if deleting:
        meta["deletionTimestamp"] = NOW
    if owner_uid is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "web-0", "uid": owner_uid, "controller": True}
        ]
    status: dict[str, Any] = {}
    if allocated:
        status["allocation"] = copy.deepcopy(ALLOCATION)
        if controller:
            status["allocation"]["controller"] = controller
    if reserved:
        status["reservedFor"] = reserved
    spec: dict[str, Any] = {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}
    if controller:
        spec["controller"] = controller
    return {"metadata": meta, "spec": spec, "status": status}


# -- pods ------------------------------------------------------------------------

DONE = [
    ("pending", pod(phase="Pending"), False),
    ("running", pod(node="n1"), False),
    ("succeeded", pod(phase="Succeeded", node="n1"), True),
    ("failed", pod(phase="Failed", node="n1"), True),
    ("deleted before scheduling", pod(phase="Pending", deleting=True), True),
    ("deleted while running (may still run)", pod(node="n1", deleting=True), False),
]


@pytest.mark.parametrize(("case", "the_pod", "done"), DONE, ids=[c[0] for c in DONE])
def test_is_pod_done(case: str, the_pod: dict[str, Any], done: bool) -> None:
    assert is_pod_done(the_pod) is done


@pytest.mark.parametrize(
    ("the_pod", "deleted", "expected"),
    [
        (pod(), True, (False, "pod got removed")),
        (pod(phase="Succeeded"), False, (False, "pod has terminated")),
        (pod(deleting=True), False, (False, "pod got deleted before scheduling")),
        (pod(node="n1", deleting=True), False, (True, "pod might run")),
        (pod(), False, (True, "pod might run")),
    ],
)
def test_pod_needs_claims(the_pod: dict[str, Any], deleted: bool, expected: tuple[bool, str]) -> None:
    assert pod_needs_claims(the_pod, deleted=deleted) == expected


def templated(**kwargs: Any) -> dict[str, Any]:
    p = pod(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "t"}], **kwargs)
    return p


def recorded(name: str | None = "web-0-gpu-abcde", **kwargs: Any) -> dict[str, Any]:
    p = templated(**kwargs)
    entry: dict[str, Any] = {"name": "gpu"}
    if name is not None:
        entry["resourceClaimName"] = name
    p["status"]["resourceClaimStatuses"] = [entry]
    return p


def lookup(*claims: dict[str, Any]) -> Any:
    by_name = {c["metadata"]["name"]: c for c in claims}
    return lambda namespace, name: by_name.get(name)


NEEDS_WORK = [
    ("deleted pod", templated(deleting=True), lookup(), False, "pod is deleted"),
    ("claim not created", templated(), lookup(), True, 'pod "ns/web-0": ResourceClaim not created yet'),
    ("nil name", recorded(None), lookup(), False, "claim is not needed"),
    ("recorded but deleted", recorded(), lookup(), True, "must create ResourceClaim from template"),
    (
        "user claim missing",
        pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "mine"}]),
        lookup(),
        False,
        "claim is missing and must be created by user",
    ),
    ("unscheduled, claim exists", recorded(), lookup(claim(owner_uid="pod-uid")), False, "nothing to do"),
    (
        "scheduler bypassed: reserve",
        recorded(node="n1"),
        lookup(claim(owner_uid="pod-uid")),
        True,
        "need to reserve claim ns/web-0-gpu-abcde for pod",
    ),
    (
        "scheduled and reserved",
        recorded(node="n1"),
        lookup(claim(owner_uid="pod-uid", reserved=[ENTRY])),
        False,
        "nothing to do",
    ),
    (
        "scheduled, not allocated",
        recorded(node="n1"),
        lookup(claim(owner_uid="pod-uid", allocated=False)),
        False,
        "nothing to do",
    ),
    (
        "claim of another pod",
        recorded(node="n1"),
        lookup(claim(owner_uid="someone-else")),
        False,
        "ResourceClaim ns/web-0-gpu-abcde was not created for pod ns/web-0 (pod is not owner)",
    ),
]


@pytest.mark.parametrize(("case", "the_pod", "claims", "work", "reason"), NEEDS_WORK, ids=[c[0] for c in NEEDS_WORK])
def test_pod_needs_work(case: str, the_pod: dict[str, Any], claims: Any, work: bool, reason: str) -> None:
    assert pod_needs_work(the_pod, claims) == (work, reason)


def test_needs_reservation_respects_deallocation_and_deletion() -> None:
    p = pod(node="n1")
    assert needs_reservation(p, claim())
    assert not needs_reservation(p, claim(reserved=[ENTRY]))
    assert not needs_reservation(p, claim(deleting=True))
    dealloc = claim(controller="driver.example.com")
    dealloc["status"]["deallocationRequested"] = True
    assert not needs_reservation(p, dealloc)
    assert consumer_reference(p) == ENTRY


# -- reservedFor entries -------------------------------------------------------------

JUDGE = [
    # (case, pod in cache, deleted uids, caught up, verdict)
    ("pod running", pod(node="n1"), set(), False, Verdict.KEEP),
    ("pod pending", pod(phase="Pending"), set(), False, Verdict.KEEP),
    ("uid in deleted LRU", None, {"pod-uid"}, False, Verdict.REMOVE),
    ("deleted LRU wins over a cached pod", pod(node="n1"), {"pod-uid"}, False, Verdict.REMOVE),
    ("not in cache, not seen: confirm first", None, set(), False, Verdict.CONFIRM),
    ("not in cache after catching up", None, set(), True, Verdict.REMOVE),
    ("replaced by a new pod with the same name", pod(uid="new-uid", node="n1"), set(), False, Verdict.REMOVE),
    ("terminated", pod(phase="Succeeded", node="n1"), set(), False, Verdict.REMOVE),
    ("failed", pod(phase="Failed", node="n1"), set(), False, Verdict.REMOVE),
    ("deleted before it was scheduled", pod(phase="Pending", deleting=True), set(), False, Verdict.REMOVE),
    ("deleted while running: may still run", pod(node="n1", deleting=True), set(), False, Verdict.KEEP),
]


@pytest.mark.parametrize(("case", "the_pod", "deleted", "caught_up", "verdict"), JUDGE, ids=[c[0] for c in JUDGE])
def test_judge_consumer(
    case: str, the_pod: dict[str, Any] | None, deleted: set[str], caught_up: bool, verdict: Verdict
) -> None:
    assert judge_consumer(ENTRY, pod=the_pod, deleted_uids=deleted, caught_up=caught_up).verdict is verdict


def test_unsupported_consumer() -> None:
    entry = {"apiGroup": "example.com", "resource": "things", "name": "foo", "uid": "123"}
    with pytest.raises(UnsupportedConsumer, match=r"^unsupported ReservedFor entry: \{example.com things foo 123\}$"):
        judge_consumer(entry, pod=None, deleted_uids=set())


# -- release -----------------------------------------------------------------------


RELEASE = [
    ("nothing stale", claim(reserved=[ENTRY]), [ENTRY], None, False),
    (
        "one of two stale: keep allocation",
        claim(reserved=[ENTRY, OTHER]),
        [ENTRY],
        {"allocation": ALLOCATION, "reservedFor": [ENTRY]},
        False,
    ),
    ("last consumer gone, structured: deallocate then unprotect", claim(reserved=[ENTRY]), [], {}, True),
    (
        "last consumer gone, structured, no finalizer: deallocate",
        claim(reserved=[ENTRY], protected=False),
        [],
        {},
        False,
    ),
    (
        "last consumer gone, classic: ask the driver",
        claim(reserved=[ENTRY], controller="driver.example.com", protected=False),
        [],
        {"allocation": {**ALLOCATION, "controller": "driver.example.com"}, "deallocationRequested": True},
        False,
    ),
    ("never reserved: stays allocated", claim(), [], None, False),
    ("deleted, unused, allocated: deallocate then unprotect", claim(deleting=True), [], {}, True),
    ("deleted, unused, not allocated: unprotect", claim(deleting=True, allocated=False), [], None, True),
    ("deleted but in use: wait", claim(deleting=True, reserved=[ENTRY]), [ENTRY], None, False),
    (
        "classic claim being deleted: the driver's job",
        claim(deleting=True, controller="d", protected=False),
        [],
        None,
        False,
    ),
]


@pytest.mark.parametrize(
    ("case", "the_claim", "valid", "status", "remove_finalizer"), RELEASE, ids=[c[0] for c in RELEASE]
)
def test_plan_release(
    case: str, the_claim: dict[str, Any], valid: list[dict[str, Any]], status: Any, remove_finalizer: bool
) -> None:
    frozen = copy.deepcopy(the_claim)
    release = plan_release(the_claim, valid)
    assert release.status == status
    assert release.remove_finalizer is remove_finalizer
    assert the_claim == frozen, "the informer's claim must not be changed"


DELETE = [
    ("not generated", claim(), pod(phase="Succeeded"), set(), (False, "claim not generated for a pod")),
    ("pod done", claim(owner_uid="pod-uid"), pod(phase="Succeeded"), set(), (True, "pod is done")),
    ("pod deleted before scheduling", claim(owner_uid="pod-uid"), pod(deleting=True), set(), (True, "pod is done")),
    ("pod replaced", claim(owner_uid="pod-uid"), pod(uid="new"), set(), (True, "pod got replaced")),
    ("pod known deleted", claim(owner_uid="pod-uid"), None, {"pod-uid"}, (True, "pod was deleted")),
    ("pod unknown: leave it to the GC", claim(owner_uid="pod-uid"), None, set(), (False, "pod for claim not found")),
    ("pod running", claim(owner_uid="pod-uid"), pod(node="n1"), set(), (False, "pod may still use the claim")),
    (
        "already being deleted",
        claim(owner_uid="pod-uid", deleting=True),
        pod(phase="Failed"),
        set(),
        (False, "claim is already being deleted"),
    ),
]


@pytest.mark.parametrize(("case", "the_claim", "the_pod", "deleted", "expected"), DELETE, ids=[c[0] for c in DELETE])
def test_should_delete_generated(
    case: str, the_claim: dict[str, Any], the_pod: dict[str, Any] | None, deleted: set[str], expected: Any
) -> None:
    assert should_delete_generated(the_claim, pod=the_pod, deleted_uids=deleted) == expected


def test_uid_cache_is_a_bounded_lru() -> None:
    cache = UIDCache(3)
    for uid in "abcd":
        cache.add(uid)
    assert "a" not in cache and all(u in cache for u in "bcd")
    cache.add("b")  # refresh
    cache.add("e")
    assert "c" not in cache and "b" in cache and len(cache) == 3
