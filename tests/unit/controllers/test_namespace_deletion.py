"""The namespace controller's pure decisions, table by table.

Wording and reasons are Kubernetes 1.37's pkg/controller/namespace/deletion
(status_condition_utils.go: okReasons/okMessages, ProcessContentTotals,
makeDeleteContentCondition, updateConditions; namespaced_resources_deleter.go:
pods first, "unexpected items still remain", finalizeNamespace).
"""

from __future__ import annotations

from typing import Any

import pytest

from services.api.types import registry
from services.api.types.registry import ResourceType
from services.controllers import namespace_deletion as nd

NOW = "2026-12-02T04:00:00Z"
LATER = "2026-12-02T04:01:00Z"


def rt(group: str, plural: str) -> ResourceType:
    found = registry.by_resource(group, plural)
    assert found is not None
    return found


PODS = rt("", "pods")
CLAIMS = rt("resource.k8s.io", "resourceclaims")
TEMPLATES = rt("resource.k8s.io", "resourceclaimtemplates")


def obj(name: str, *, finalizers: tuple[str, ...] = (), deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "t"}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if deleting:
        meta["deletionTimestamp"] = NOW
    return {"metadata": meta}


def ns(*, deleted: bool = True, finalizers: tuple[str, ...] = ("kubernetes",)) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "t"}
    if deleted:
        meta["deletionTimestamp"] = NOW
    return {"metadata": meta, "spec": {"finalizers": list(finalizers)}, "status": {"phase": "Terminating"}}


def test_namespaced_resources_put_pods_first_and_leave_out_cluster_scope_and_events() -> None:
    chosen = nd.namespaced_resources(registry.RESOURCES)
    assert chosen[0] == PODS
    names = {(r.group, r.plural) for r in chosen}
    assert ("resource.k8s.io", "resourceclaims") in names and ("resource.k8s.io", "resourceclaimtemplates") in names
    assert not names & {("", "namespaces"), ("", "nodes"), ("", "events"), ("resource.k8s.io", "deviceclasses")}


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [
        (None, False),
        (ns(deleted=False), False),
        (ns(), True),
        (ns(finalizers=()), False),
        (ns(finalizers=("example.com/other",)), False),
        (ns(finalizers=("example.com/other", "kubernetes")), True),
    ],
)
def test_needs_work(namespace: dict[str, Any] | None, expected: bool) -> None:
    assert nd.needs_work(namespace) is expected


def test_to_delete_skips_objects_already_being_deleted() -> None:
    assert [o["metadata"]["name"] for o in nd.to_delete([obj("a"), obj("b", deleting=True), obj("c")])] == ["a", "c"]


@pytest.mark.parametrize(
    ("contents", "by_resource", "by_finalizer", "errors"),
    [
        ({PODS: [], CLAIMS: []}, {}, {}, []),
        # Pods may remain while they terminate gracefully.
        ({PODS: [obj("p", deleting=True)]}, {PODS: 1}, {}, []),
        (
            {CLAIMS: [obj("a", finalizers=("resource.kubernetes.io/delete-protection",), deleting=True)] * 2},
            {CLAIMS: 2},
            {"resource.kubernetes.io/delete-protection": 2},
            [],
        ),
        (
            {TEMPLATES: [obj("x")]},
            {TEMPLATES: 1},
            {},
            [
                "unexpected items still remain in namespace: t for gvr: "
                "resource.k8s.io/v1, Resource=resourceclaimtemplates"  # the preferred version, as kube lists it
            ],
        ),
    ],
)
def test_remaining(
    contents: dict[ResourceType, list[dict[str, Any]]],
    by_resource: dict[ResourceType, int],
    by_finalizer: dict[str, int],
    errors: list[str],
) -> None:
    left = nd.remaining("t", contents)
    assert left.by_resource == by_resource
    assert left.by_finalizer == by_finalizer
    assert left.errors == errors
    assert left.empty is (not by_resource)


def test_failure_conditions_report_totals_and_errors_in_kubernetes_wording() -> None:
    left = nd.Remaining(by_resource={PODS: 2, CLAIMS: 1}, by_finalizer={"b/f": 1, "a/f": 3})
    conditions = nd.failure_conditions(remaining=left, errors=["z failed", "a failed"], now=NOW)
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in conditions] == [
        (
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            "Some resources are remaining: pods. has 2 resource instances, "
            "resourceclaims.resource.k8s.io has 1 resource instances",
        ),
        (
            "NamespaceFinalizersRemaining",
            "True",
            "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining: a/f in 3 resource instances, "
            "b/f in 1 resource instances",
        ),
        (
            "NamespaceDeletionContentFailure",
            "True",
            "ContentDeletionFailed",
            "Failed to delete all resource types, 2 remaining: a failed, z failed",
        ),
    ]


def test_while_pods_remain_only_errors_are_reported() -> None:
    assert nd.failure_conditions(remaining=None, errors=[], now=NOW) == []


OK = [
    ("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered"),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "False",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "False",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    ("NamespaceContentRemaining", "False", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
]


def summary(conditions: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["message"]) for c in conditions]


def test_updated_conditions_set_every_type_then_only_change_what_changed() -> None:
    first = nd.updated_conditions([], [], now=NOW)
    assert first is not None and summary(first) == OK
    assert nd.updated_conditions(first, [], now=LATER) is None  # nothing changed: no write
    left = nd.Remaining(by_resource={CLAIMS: 1}, by_finalizer={"f": 1})
    second = nd.updated_conditions(first, nd.failure_conditions(remaining=left, errors=[], now=LATER), now=LATER)
    assert second is not None
    by_type = {c["type"]: c for c in second}
    assert by_type["NamespaceContentRemaining"]["status"] == "True"
    assert by_type["NamespaceContentRemaining"]["lastTransitionTime"] == LATER
    assert by_type["NamespaceDeletionDiscoveryFailure"]["lastTransitionTime"] == NOW
    assert first[3]["status"] == "False"  # the input is not changed


def test_finalized_spec_drops_only_the_kubernetes_finalizer() -> None:
    namespace = ns(finalizers=("z/f", "kubernetes", "a/f"))
    namespace["spec"]["other"] = 1
    assert nd.finalized_spec(namespace) == {"finalizers": ["a/f", "z/f"], "other": 1}
