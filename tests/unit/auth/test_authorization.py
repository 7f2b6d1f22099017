"""The authorization table and NodeRestriction, with Kubernetes' messages."""

from __future__ import annotations

from typing import Any

import pytest

from services.api.admission.authorization import Authorizer, NodeRestriction
from services.api.admission.chain import Attributes
from services.api.machinery.status import StatusError
from services.api.types import registry
from topics.envelope import UserInfo

NODE_A = UserInfo("system:node:node-a", ("system:nodes", "system:authenticated"))
SCHED = UserInfo("system:kube-scheduler", ("system:authenticated",))
KCM = UserInfo("system:kube-controller-manager", ("system:authenticated",))
ADMIN = UserInfo("alice", ("system:masters",))
BOB = UserInfo("bob", ("system:authenticated",))
ANON = UserInfo("system:anonymous", ("system:unauthenticated",))

PODS = registry.by_resource("", "pods")
NODES = registry.by_resource("", "nodes")
SLICES = registry.by_resource("resource.k8s.io", "resourceslices")
CLAIMS = registry.by_resource("resource.k8s.io", "resourceclaims")


def attrs(
    op: str, rt: Any, user: UserInfo, *, name: str = "x", sub: str = "", old: Any = None, new: Any = None
) -> Attributes:
    return Attributes(op, rt, "default" if rt.namespaced else "", name, user, subresource=sub, old=old, new=new)  # type: ignore[arg-type]


def slice_on(node: str) -> dict[str, Any]:
    return {"metadata": {"name": "s"}, "spec": {"nodeName": node, "driver": "gpu.example.com"}}


def pod_on(node: str, **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"nodeName": node}, "status": status}


def admit(a: Attributes, anonymous_writes: bool = False) -> str | None:
    try:
        Authorizer(anonymous_writes=anonymous_writes).admit(a, None)  # type: ignore[arg-type]
        NodeRestriction().admit(a, None)  # type: ignore[arg-type]
    except StatusError as err:
        assert err.code == 403
        return str(err.status["message"])
    return None


@pytest.mark.parametrize(
    ("a", "message"),
    [
        (attrs("CREATE", SLICES, NODE_A, new=slice_on("node-a")), None),
        (
            attrs("CREATE", SLICES, NODE_A, name="s", new=slice_on("node-b")),
            'resourceslices.resource.k8s.io "s" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node',
        ),
        (attrs("DELETE", SLICES, NODE_A, old=slice_on("node-a")), None),
        (
            attrs("DELETE", SLICES, NODE_A, name="s", old=slice_on("node-b")),
            'resourceslices.resource.k8s.io "s" is forbidden: can only delete ResourceSlice with the same NodeName as the requesting node',
        ),
        (attrs("UPDATE", SLICES, NODE_A, old=slice_on("node-a"), new=slice_on("node-a")), None),
        (
            attrs("UPDATE", SLICES, NODE_A, name="s", old=slice_on("node-b"), new=slice_on("node-b")),
            'resourceslices.resource.k8s.io "s" is forbidden: User "system:node:node-a" cannot update resource '
            '"resourceslices" in API group "resource.k8s.io" at the cluster scope: no relationship found between '
            "node 'node-a' and this object",
        ),
        (
            attrs("UPDATE", PODS, NODE_A, sub="status", old=pod_on("node-a"), new=pod_on("node-a", phase="Running")),
            None,
        ),
        (
            attrs("UPDATE", PODS, NODE_A, name="p", sub="status", old=pod_on("node-b"), new=pod_on("node-b")),
            'pods "p" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself',
        ),
        (
            attrs(
                "UPDATE",
                PODS,
                NODE_A,
                name="p",
                sub="status",
                old=pod_on("node-a"),
                new=pod_on("node-a", resourceClaimStatuses=[{"name": "gpu", "resourceClaimName": "c"}]),
            ),
            'pods "p" is forbidden: node "node-a" cannot update resource claim statues',
        ),
        (attrs("DELETE", PODS, NODE_A, old=pod_on("node-a")), None),
        (
            attrs("DELETE", PODS, NODE_A, name="p", old=pod_on("node-b")),
            'pods "p" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself',
        ),
        (attrs("CREATE", NODES, NODE_A, name="node-a", new={"metadata": {"name": "node-a"}}), None),
        (
            attrs("UPDATE", NODES, NODE_A, name="node-b", old={}, new={}),
            'nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"',
        ),
        (
            attrs("UPDATE", NODES, NODE_A, name="node-a", old={"spec": {}}, new={"spec": {"taints": [{"key": "k"}]}}),
            'nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints',
        ),
        (
            attrs("CREATE", CLAIMS, NODE_A, name="c"),
            'resourceclaims.resource.k8s.io is forbidden: User "system:node:node-a" cannot create resource '
            '"resourceclaims" in API group "resource.k8s.io" in the namespace "default"',
        ),
        (attrs("CREATE", PODS, SCHED, sub="binding"), None),
        (
            attrs("DELETE", PODS, SCHED, name="p"),
            'pods "p" is forbidden: User "system:kube-scheduler" cannot delete resource "pods" in API group "" in the namespace "default"',
        ),
        (attrs("UPDATE", CLAIMS, SCHED, sub="status"), None),
        (attrs("CREATE", CLAIMS, KCM), None),
        (attrs("DELETE", PODS, KCM), None),
        (attrs("CREATE", CLAIMS, ADMIN), None),
        (
            attrs("CREATE", CLAIMS, BOB, name="c"),
            'resourceclaims.resource.k8s.io is forbidden: User "bob" cannot create resource "resourceclaims" '
            'in API group "resource.k8s.io" in the namespace "default"',
        ),
        (
            attrs("CREATE", CLAIMS, ANON, name="c"),
            'resourceclaims.resource.k8s.io is forbidden: User "system:anonymous" cannot create resource '
            '"resourceclaims" in API group "resource.k8s.io" in the namespace "default"',
        ),
    ],
)
def test_authorization_table(a: Attributes, message: str | None) -> None:
    assert admit(a) == message


def test_anonymous_writes_only_in_the_demo() -> None:
    assert admit(attrs("CREATE", CLAIMS, ANON), anonymous_writes=True) is None


# --- node leases, and the one decision can-i asks ------------------------------------------------------------

LEASES = registry.by_resource("coordination.k8s.io", "leases")


def lease_attrs(op: str, user: UserInfo, *, namespace: str = "kube-node-lease", name: str = "node-a") -> Attributes:
    new = {"metadata": {"name": name, "namespace": namespace}} if op != "DELETE" else None
    return Attributes(op, LEASES, namespace, "" if op == "CREATE" else name, user, new=new)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("a", "message"),
    [
        (lease_attrs("CREATE", NODE_A), None),
        (lease_attrs("UPDATE", NODE_A), None),
        (lease_attrs("DELETE", NODE_A), None),
        (
            lease_attrs("CREATE", NODE_A, name="node-b"),
            "leases.coordination.k8s.io is forbidden: can only access node lease with the same name as the requesting node",
        ),
        (
            lease_attrs("UPDATE", NODE_A, name="node-b"),
            'leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as '
            "the requesting node",
        ),
        (
            lease_attrs("UPDATE", NODE_A, namespace="kube-system"),
            'leases.coordination.k8s.io "node-a" is forbidden: can only access leases in the "kube-node-lease" '
            "system namespace",
        ),
        (lease_attrs("CREATE", SCHED, namespace="kube-system", name="kube-scheduler"), None),
        (
            lease_attrs("CREATE", BOB, namespace="default", name="mine"),
            'leases.coordination.k8s.io is forbidden: User "bob" cannot create resource "leases" in API group '
            '"coordination.k8s.io" in the namespace "default"',
        ),
    ],
)
def test_node_leases(a: Attributes, message: str | None) -> None:
    """NodeRestriction's admitLease (plugin/pkg/admission/noderestriction, Kubernetes 1.37), messages verbatim."""
    assert admit(a) == message


USERS = [NODE_A, SCHED, KCM, ADMIN, BOB, ANON, UserInfo("system:serviceaccount:kube-system:dra-controller")]
OPERATIONS = [("CREATE", ""), ("UPDATE", ""), ("DELETE", ""), ("UPDATE", "status"), ("CREATE", "binding")]


@pytest.mark.parametrize("anonymous_writes", [False, True])
@pytest.mark.parametrize("user", USERS, ids=lambda u: u.name)
def test_allowed_is_what_the_authorization_plugin_does_on_a_write(user: UserInfo, anonymous_writes: bool) -> None:
    """Every resource draplane stores, every write: `allowed` (what can-i asks) agrees with `admit`."""
    authorizer = Authorizer(anonymous_writes=anonymous_writes)
    for rt in registry.RESOURCES:
        for op, sub in OPERATIONS:
            a = Attributes(op, rt, "default" if rt.namespaced else "", "x", user, subresource=sub)  # type: ignore[arg-type]
            try:
                authorizer.admit(a, None)  # type: ignore[arg-type]
                admitted = True
            except StatusError:
                admitted = False
            verb = op.lower()
            assert authorizer.allowed(user, verb=verb, resource=rt.plural, subresource=sub, group=rt.group) == admitted
            # a patch reaches admission as the update it becomes
            if op == "UPDATE":
                assert authorizer.allowed(user, verb="patch", resource=rt.plural, subresource=sub) == admitted


@pytest.mark.parametrize("verb", ["get", "list", "watch"])
def test_reads_are_allowed_to_everyone(verb: str) -> None:
    assert all(Authorizer().allowed(u, verb=verb, resource="pods") for u in USERS)


def test_a_rule_names_a_resource_of_its_own_group() -> None:
    authorizer = Authorizer()
    assert authorizer.allowed(NODE_A, verb="create", resource="resourceslices", group="resource.k8s.io")
    assert not authorizer.allowed(NODE_A, verb="create", resource="resourceslices", group="example.com")
    # the garbage collector's "update *" is every group's
    assert authorizer.allowed(KCM, verb="update", resource="widgets", group="example.com")


def test_rules_list_what_allowed_allows() -> None:
    authorizer = Authorizer()
    assert [(r.verbs, r.api_groups, r.resources) for r in authorizer.rules(ADMIN)] == [(("*",), ("*",), ("*",))]
    assert [(r.verbs, r.api_groups, r.resources) for r in authorizer.rules(BOB)] == [
        (("get", "list", "watch"), ("*",), ("*",))
    ]
    node_rules = {(r.api_groups, r.resources): r.verbs for r in authorizer.rules(NODE_A)}
    assert node_rules[(("coordination.k8s.io",), ("leases",))] == ("create", "delete", "update")
    assert node_rules[(("",), ("pods/status",))] == ("update",)
    for (groups, resources), verbs in node_rules.items():
        resource, _, sub = resources[0].partition("/")
        for verb in verbs:
            assert authorizer.allowed(NODE_A, verb=verb, resource=resource, subresource=sub, group=groups[0])
    assert [(r.verbs, r.urls) for r in authorizer.non_resource_rules(BOB)] == [(("get",), ("*",))]
    assert Authorizer(anonymous_writes=True).rules(ANON) == authorizer.rules(ADMIN)


def test_events_k8s_io_is_authorized_as_core_events() -> None:
    # One storage, two groups: a rule for events covers events.k8s.io's too (docs/decisions/upstream-kinds.md).
    authorizer = Authorizer()
    for group in ("", "events.k8s.io"):
        assert authorizer.allowed(SCHED, verb="create", resource="events", group=group)
        assert authorizer.allowed(NODE_A, verb="patch", resource="events", group=group)
        assert not authorizer.allowed(BOB, verb="create", resource="events", group=group)
    node_rules = {(r.api_groups, r.resources): r.verbs for r in authorizer.rules(NODE_A)}
    assert node_rules[(("", "events.k8s.io"), ("events",))] == ("create", "update")
    # A write through events.k8s.io/v1 reaches the committer as core Events, qualified version: denied in its own group.
    events = registry.by_resource("", "events")
    denied = Attributes("CREATE", events, "default", "e", BOB, version="events.k8s.io/v1")  # type: ignore[arg-type]
    assert admit(denied) == (
        'events.events.k8s.io is forbidden: User "bob" cannot create resource "events" in API group "events.k8s.io" '
        'in the namespace "default"'
    )
