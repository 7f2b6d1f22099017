"""The node Lease as kubelet's lease controller writes it (component-helpers/apimachinery/lease,
pkg/kubelet/util/nodelease.go): created with holder, duration and renewTime, owned by the Node once its uid is
known, and on renewal only renewTime moves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.nodeagent import node_lease

T0 = datetime(2026, 12, 2, 4, 1, 9, 739820, tzinfo=UTC)
NODE = {"metadata": {"name": "node-1", "uid": "3438889f-d5db-4607-94bd-f1905473ee90"}}
OWNER = [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "3438889f-d5db-4607-94bd-f1905473ee90"}]


def test_kubelets_defaults() -> None:
    assert (node_lease.LEASE_DURATION_SECONDS, node_lease.RENEW_INTERVAL) == (40, 10.0)


def test_a_new_lease() -> None:
    assert node_lease.new_lease("node-1", node=NODE, now=T0) == {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "node-1", "namespace": "kube-node-lease", "ownerReferences": OWNER},
        "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40, "renewTime": "2026-12-02T04:01:09.739820Z"},
    }


def test_a_lease_before_its_node_exists_has_no_owner_until_a_renewal_finds_it() -> None:
    lease = node_lease.new_lease("node-1", node=None, now=T0, duration=15)
    assert "ownerReferences" not in lease["metadata"] and lease["spec"]["leaseDurationSeconds"] == 15
    renewed = node_lease.renewed(lease, node=NODE, now=T0 + timedelta(seconds=10))
    assert renewed["metadata"]["ownerReferences"] == OWNER


def test_a_renewal_moves_only_renew_time() -> None:
    stored = {
        **node_lease.new_lease("node-1", node=NODE, now=T0),
        "metadata": {"name": "node-1", "namespace": "kube-node-lease", "ownerReferences": OWNER, "uid": "u"},
    }
    stored["metadata"]["resourceVersion"] = "7"
    later = node_lease.renewed(
        stored, node={"metadata": {"name": "node-1", "uid": "other"}}, now=T0 + timedelta(seconds=10)
    )
    assert later["spec"] == {**stored["spec"], "renewTime": "2026-12-02T04:01:19.739820Z"}
    assert later["metadata"] == stored["metadata"]  # an owner already set is kept, as kubelet keeps it
    assert stored["spec"]["renewTime"] == "2026-12-02T04:01:09.739820Z"  # not changed in place
