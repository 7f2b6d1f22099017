"""``services.kube.resourceclaim``: claim names, ownership and reservations (Kubernetes 1.31).

Mirrors ``k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim_test.go``
(TestResourceClaimIsForPod, v0.31.3) and adds tables for the rest of the
package (``Name``, ``IsReservedForPod``, ``CanBeReserved``) and the
controller's naming rules. ``CanBeReserved`` in 1.31 returns true and leaves the
``reservedFor`` limit (32 in v1alpha3) to validation; draplane's
`can_be_reserved` checks that limit and nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.kube.resource_limits import RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE
from services.kube.resourceclaim import (
    MAX_GENERATE_NAME_BASE_LENGTH,
    APIUnsupportedError,
    ClaimLookupError,
    ClaimNameError,
    ClaimNotForPodError,
    ClaimNotFoundError,
    can_be_reserved,
    check_is_for_pod,
    claim_name,
    claim_pod_owner_uids,
    generate_name_prefix,
    is_controlled_by,
    is_for_pod,
    is_reserved_for_pod,
    known_claim_names,
    legacy_claim_name,
    owning_pod,
    pod_claim_keys,
)


def pod(*claims: dict[str, Any], statuses: list[dict[str, Any]] | None = None, uid: str = "pod-uid") -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": "web-0", "namespace": "ns", "uid": uid},
        "spec": {"resourceClaims": list(claims)},
        "status": {},
    }
    if statuses is not None:
        obj["status"]["resourceClaimStatuses"] = statuses
    return obj


def claim(
    name: str = "c", *, owner_uid: str | None = "pod-uid", controller: bool = True, **extra: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": extra.pop("namespace", "ns")}
    if owner_uid is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "web-0", "uid": owner_uid, "controller": controller}
        ]
    return {"metadata": meta, **extra}


# -- generateName truncation ---------------------------------------------------

TRUNCATION = [
    # (pod name, pod claim name, expected generateName)
    ("web-0", "gpu", "web-0-gpu-"),
    ("a" * 27, "b" * 28, "a" * 27 + "-" + "b" * 28 + "-"),  # exactly 57: untouched
    # 58 characters: both parts cut in proportion (len*57//58), no trailing hyphen
    ("a" * 28, "b" * 28, "a" * 27 + "-" + "b" * 27),
    # A long pod name must not swallow the pod claim name.
    ("p" * 100, "gpu", "p" * (100 * 57 // 105) + "-" + "gpu"[: 3 * 57 // 105]),
    ("p" * 253, "my-claim", "p" * (253 * 57 // 263) + "-" + "my-claim"[: 8 * 57 // 263]),
    ("pod", "c" * 63, "pod"[: 3 * 57 // 68] + "-" + "c" * (63 * 57 // 68)),
    ("p" * 40, "c" * 40, "p" * (40 * 57 // 82) + "-" + "c" * (40 * 57 // 82)),
]


@pytest.mark.parametrize(("pod_name", "claim_name_", "expected"), TRUNCATION)
def test_generate_name_prefix(pod_name: str, claim_name_: str, expected: str) -> None:
    prefix = generate_name_prefix(pod_name, claim_name_)
    assert prefix == expected
    assert len(prefix) <= MAX_GENERATE_NAME_BASE_LENGTH
    assert len(prefix) + 5 <= 63, "room for the apiserver's random suffix"


def test_generate_name_prefix_keeps_part_of_both_names() -> None:
    prefix = generate_name_prefix("x" * 200, "gpu-claim")
    assert prefix == "x" * (200 * 57 // 211) + "-gp"


def test_legacy_name() -> None:
    assert legacy_claim_name("web-0", "gpu") == "web-0-gpu"


# -- the name lookup -----------------------------------------------------------

LOOKUP = [
    # (case, pod claim, statuses, expected (name, must_check_owner))
    ("shared claim by name", {"name": "gpu", "resourceClaimName": "shared"}, None, ("shared", False)),
    ("empty name is still a name", {"name": "gpu", "resourceClaimName": ""}, None, ("", False)),
    (
        "generated, recorded",
        {"name": "gpu", "resourceClaimTemplateName": "t"},
        [{"name": "gpu", "resourceClaimName": "web-0-gpu-x7k2p"}],
        ("web-0-gpu-x7k2p", True),
    ),
    (
        "recorded among others",
        {"name": "b", "resourceClaimTemplateName": "t"},
        [{"name": "a", "resourceClaimName": "x"}, {"name": "b", "resourceClaimName": "y"}],
        ("y", True),
    ),
    ("nil name: no claim needed", {"name": "gpu", "resourceClaimTemplateName": "t"}, [{"name": "gpu"}], (None, True)),
    (
        "explicit null name",
        {"name": "gpu", "resourceClaimTemplateName": "t"},
        [{"name": "gpu", "resourceClaimName": None}],
        (None, True),
    ),
    (
        "resourceClaimName wins over a template",
        {"name": "gpu", "resourceClaimName": "shared", "resourceClaimTemplateName": "t"},
        [{"name": "gpu", "resourceClaimName": "other"}],
        ("shared", False),
    ),
]


@pytest.mark.parametrize(("case", "pod_claim", "statuses", "expected"), LOOKUP, ids=[c[0] for c in LOOKUP])
def test_claim_name(
    case: str, pod_claim: dict[str, Any], statuses: list[dict[str, Any]] | None, expected: tuple[str | None, bool]
) -> None:
    assert claim_name(pod(pod_claim, statuses=statuses), pod_claim) == expected


def test_claim_not_created_yet() -> None:
    pc = {"name": "gpu", "resourceClaimTemplateName": "t"}
    with pytest.raises(ClaimNotFoundError) as info:
        claim_name(pod(pc, statuses=[{"name": "other", "resourceClaimName": "x"}]), pc)
    assert str(info.value) == 'pod "ns/web-0": ResourceClaim not created yet'
    assert isinstance(info.value, ClaimNameError)


def test_unsupported_api_shape() -> None:
    pc = {"name": "gpu", "resourceClaimFromTheFuture": "x"}
    with pytest.raises(APIUnsupportedError) as info:
        claim_name(pod(pc), pc)
    assert str(info.value) == 'pod "ns/web-0", spec.resourceClaim "gpu": none of the supported fields are set'
    assert not isinstance(info.value, ClaimNotFoundError)


# -- ownership helpers -----------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "the_claim", "expected"),
    [
        ("controlled by the pod", claim(), True),
        ("owned but not controller", claim(controller=False), False),
        ("controlled by another pod", claim(owner_uid="other"), False),
        ("no owner", claim(owner_uid=None), False),
        ("other namespace", claim(namespace="elsewhere"), False),
    ],
)
def test_is_for_pod(case: str, the_claim: dict[str, Any], expected: bool) -> None:
    assert is_for_pod(pod(), the_claim) is expected


def test_check_is_for_pod_message() -> None:
    with pytest.raises(ClaimNotForPodError) as info:
        check_is_for_pod(pod(), claim("web-0-gpu", owner_uid="other"))
    assert str(info.value) == "ResourceClaim ns/web-0-gpu was not created for pod ns/web-0 (pod is not owner)"
    check_is_for_pod(pod(), claim())  # no error


def test_owning_pod_and_owner_index() -> None:
    assert owning_pod(claim()) == ("web-0", "pod-uid")
    assert owning_pod(claim(controller=False)) is None
    assert list(claim_pod_owner_uids(claim())) == ["pod-uid"]
    assert list(claim_pod_owner_uids(claim(controller=False))) == []
    not_a_pod = claim()
    not_a_pod["metadata"]["ownerReferences"][0]["kind"] = "ReplicaSet"
    assert owning_pod(not_a_pod) is None
    assert list(claim_pod_owner_uids(not_a_pod)) == []


def reservations(count: int, **extra: Any) -> dict[str, Any]:
    status: dict[str, Any] = {
        "allocation": {},
        "reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(count)],
        **extra,
    }
    return claim(status=status)


def test_reservations() -> None:
    reserved = claim(status={"reservedFor": [{"resource": "pods", "name": "web-0", "uid": "pod-uid"}]})
    assert is_reserved_for_pod(pod(), reserved)
    assert not is_reserved_for_pod(pod(uid="other"), reserved)
    assert not is_reserved_for_pod(pod(), claim())


@pytest.mark.parametrize(
    ("case", "the_claim", "expected"),
    [
        ("no consumers", claim(), True),
        ("one below the limit", reservations(RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE - 1), True),
        ("at the limit", reservations(RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE), False),
        # Deletion and deallocation are not CanBeReserved's business (callers that care check them).
        ("deallocation requested", reservations(1, deallocationRequested=True), True),
    ],
)
def test_can_be_reserved(case: str, the_claim: dict[str, Any], expected: bool) -> None:
    assert can_be_reserved(the_claim) is expected
    assert RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE == 32  # resource.k8s.io/v1alpha3 (1.31)


# TestResourceClaimIsForPod
def _owned(name: str, namespace: str, owner_uid: str | None) -> dict[str, Any]:
    refs = [] if owner_uid is None else [{"uid": owner_uid, "controller": True}]
    return {"metadata": {"name": name, "namespace": namespace, "uid": "c", "ownerReferences": refs}}


_POD_OWNER = {"metadata": {"namespace": "kube-system", "name": "podOwner", "uid": "2"}}
_POD_NOT_OWNER = {"metadata": {"namespace": "kube-system", "name": "podNotOwner", "uid": "1"}}


@pytest.mark.parametrize(
    ("case", "the_pod", "the_claim", "error"),
    [
        ("owned", _POD_OWNER, _owned("claimNoOwner", "kube-system", "2"), None),
        (
            "other-pod",
            _POD_NOT_OWNER,
            _owned("claimNoOwner", "kube-system", "2"),
            "ResourceClaim kube-system/claimNoOwner was not created for pod kube-system/podNotOwner (pod is not owner)",
        ),
        (
            "no-owner",
            _POD_OWNER,
            _owned("claimNoOwner", "kube-system", None),
            "ResourceClaim kube-system/claimNoOwner was not created for pod kube-system/podOwner (pod is not owner)",
        ),
        (
            "different-namespace",
            _POD_OWNER,
            _owned("userClaimWithOwner", "user-namespace", "2"),
            "ResourceClaim user-namespace/userClaimWithOwner was not created for pod kube-system/podOwner "
            "(pod is not owner)",
        ),
    ],
)
def test_resource_claim_is_for_pod(
    case: str, the_pod: dict[str, Any], the_claim: dict[str, Any], error: str | None
) -> None:
    if error is None:
        check_is_for_pod(the_pod, the_claim)
        return
    with pytest.raises(ClaimNotForPodError) as info:
        check_is_for_pod(the_pod, the_claim)
    assert str(info.value) == error
    assert isinstance(info.value, ClaimLookupError)


def test_pod_claim_index_keys() -> None:
    p = pod(
        {"name": "a", "resourceClaimName": "shared"},
        {"name": "b", "resourceClaimTemplateName": "t"},
        {"name": "c", "resourceClaimTemplateName": "t"},
        {"name": "d", "resourceClaimTemplateName": "t"},
        {"name": "e"},
        statuses=[{"name": "b", "resourceClaimName": "web-0-b-abcde"}, {"name": "c"}],
    )
    assert list(pod_claim_keys(p)) == ["ns/shared", "ns/web-0-b-abcde"]
    assert known_claim_names(p) == ["shared", "web-0-b-abcde"]


def test_is_controlled_by() -> None:
    pod = {"metadata": {"uid": "p1"}}
    ctx = {"metadata": {"ownerReferences": [{"uid": "p1", "controller": True}]}}
    assert is_controlled_by(ctx, pod)
    assert not is_controlled_by(ctx, {"metadata": {"uid": "p2"}})
    assert not is_controlled_by({"metadata": {}}, pod)
    owned = {"metadata": {"ownerReferences": [{"uid": "p1"}]}}  # an owner, but not the controller
    assert not is_controlled_by(owned, pod)
