"""The garbage collector on a real log: Background, Foreground and Orphan propagation, restarts, any resource."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from claim_fixtures import NS, RG, claim, claim_controller, from_template, garbage_collector, pod, template

from services.nodeagent import node_lease, node_object
from services.runtime.client import Client
from services.testing.harness import LogHarness
from tests.support.eventually import eventually

HOLD = "example.com/hold"


def get_claim(admin: Client, name: str) -> dict[str, Any] | None:
    return admin.get(RG, "resourceclaims", NS, name)


def get_pod(admin: Client, name: str) -> dict[str, Any] | None:
    return admin.get("", "pods", NS, name)


async def test_background_deletes_dependents_of_a_deleted_owner(log: LogHarness, admin: Client) -> None:
    owner = await admin.create("", "pods", pod("owner"))
    await admin.create(RG, "resourceclaims", claim("dep", owner=owner))
    await admin.create(RG, "resourceclaims", claim("unrelated"))
    async with garbage_collector(log) as gc:
        await admin.delete("", "pods", NS, "owner")
        await eventually(lambda: get_claim(admin, "dep") is None, what="the dependent deleted")
        labels = {"resource": "resourceclaims.resource.k8s.io", "policy": "Background"}
        # The GC counts after its own informer saw the delete, which may be after ours did.
        await eventually(lambda: gc.sample("draplane_garbagecollector_deletes_total", **labels), what="the count")
        assert gc.sample("draplane_garbagecollector_deletes_total", **labels) == 1
    assert get_claim(admin, "unrelated") is not None


async def test_dangling_owner_found_at_start_is_collected(log: LogHarness, admin: Client) -> None:
    """Restart safety: everything is re-derived from the log, including owners deleted while the GC was down."""
    owner = await admin.create("", "pods", pod("owner"))
    await admin.create(RG, "resourceclaims", claim("dep", owner=owner))
    await admin.delete("", "pods", NS, "owner")
    ghost = {"metadata": {"name": "never-existed", "uid": "no-such-uid"}}
    await admin.create(RG, "resourceclaims", claim("dep-of-ghost", owner=ghost))
    async with garbage_collector(log):
        await eventually(
            lambda: get_claim(admin, "dep") is None and get_claim(admin, "dep-of-ghost") is None,
            what="both dependents collected",
        )


async def test_replaced_owner_does_not_keep_the_old_dependents(log: LogHarness, admin: Client) -> None:
    old = await admin.create("", "pods", pod("owner"))
    await admin.create(RG, "resourceclaims", claim("dep", owner=old))
    async with garbage_collector(log):
        await admin.delete("", "pods", NS, "owner")
        await admin.create("", "pods", pod("owner"))  # same name, new uid
        await eventually(lambda: get_claim(admin, "dep") is None, what="the old owner's dependent collected")


async def test_a_solid_owner_keeps_the_dependent_and_dangling_references_are_trimmed(
    log: LogHarness, admin: Client
) -> None:
    alive = await admin.create("", "pods", pod("alive"))
    gone = await admin.create("", "pods", pod("gone"))
    dep = claim("dep", owner=alive)
    dep["metadata"]["ownerReferences"].append(
        {"apiVersion": "v1", "kind": "Pod", "name": "gone", "uid": gone["metadata"]["uid"]}
    )
    await admin.create(RG, "resourceclaims", dep)
    async with garbage_collector(log):
        await admin.delete("", "pods", NS, "gone")

        def trimmed_claim() -> dict[str, Any] | None:
            c = get_claim(admin, "dep")
            return c if c is not None and len(c["metadata"]["ownerReferences"]) == 1 else None

        trimmed = await eventually(trimmed_claim, what="the reference to the deleted owner trimmed")
    assert trimmed["metadata"]["ownerReferences"][0]["uid"] == alive["metadata"]["uid"]


async def test_foreground_waits_for_blocking_dependents(log: LogHarness, admin: Client) -> None:
    owner = await admin.create("", "pods", pod("owner"))
    # The blocking dependent has a finalizer of its own, so the owner has to wait for it visibly.
    await admin.create(RG, "resourceclaims", claim("blocking", owner=owner, finalizers=[HOLD]))
    await admin.create(RG, "resourceclaims", claim("loose", owner=owner, block=False))
    async with garbage_collector(log) as gc:
        await admin.delete("", "pods", NS, "owner", propagationPolicy="Foreground")
        await eventually(
            lambda: (c := get_claim(admin, "blocking")) and c["metadata"].get("deletionTimestamp"),
            what="the blocking dependent being deleted",
        )
        await eventually(lambda: get_claim(admin, "loose") is None, what="the non-blocking dependent deleted")
        waiting = get_pod(admin, "owner")
        assert waiting is not None, "the owner waits for its blocking dependent"
        assert "foregroundDeletion" in waiting["metadata"]["finalizers"]
        blocking = get_claim(admin, "blocking")
        assert blocking is not None
        await admin.update(RG, "resourceclaims", {**blocking, "metadata": {**blocking["metadata"], "finalizers": []}})
        await eventually(lambda: get_pod(admin, "owner") is None, what="the owner deleted after its dependents")
        removed = "draplane_garbagecollector_finalizers_removed_total"
        await eventually(lambda: gc.sample(removed, finalizer="foregroundDeletion"), what="the count")
        assert gc.sample(removed, finalizer="foregroundDeletion") == 1
    assert get_claim(admin, "blocking") is None


async def test_orphan_keeps_dependents_without_the_reference(log: LogHarness, admin: Client) -> None:
    owner = await admin.create("", "pods", pod("owner", finalizers=[HOLD]))
    other = await admin.create("", "pods", pod("other"))
    dep = claim("dep", owner=owner)
    dep["metadata"]["ownerReferences"].append(
        {"apiVersion": "v1", "kind": "Pod", "name": "other", "uid": other["metadata"]["uid"]}
    )
    await admin.create(RG, "resourceclaims", dep)
    await admin.create(RG, "resourceclaims", claim("only-dep", owner=owner))
    async with garbage_collector(log):
        await admin.delete("", "pods", NS, "owner", propagationPolicy="Orphan")
        await eventually(
            lambda: (p := get_pod(admin, "owner")) and "orphan" not in p["metadata"]["finalizers"],
            what="the orphan finalizer removed",
        )
        kept = get_claim(admin, "dep")
        only = get_claim(admin, "only-dep")
        assert kept is not None and only is not None
        assert [r["uid"] for r in kept["metadata"]["ownerReferences"]] == [other["metadata"]["uid"]]
        assert "ownerReferences" not in only["metadata"]
        remaining = get_pod(admin, "owner")
        assert remaining is not None
        await admin.update("", "pods", {**remaining, "metadata": {**remaining["metadata"], "finalizers": []}})
        await eventually(lambda: get_pod(admin, "owner") is None, what="the owner gone")
    assert get_claim(admin, "only-dep") is not None, "orphans stay after the owner is gone"


async def test_orphan_deletion_completes_the_owner(log: LogHarness, admin: Client) -> None:
    owner = await admin.create("", "pods", pod("owner"))
    await admin.create(RG, "resourceclaims", claim("dep", owner=owner))
    async with garbage_collector(log):
        await admin.delete("", "pods", NS, "owner", propagationPolicy="Orphan")
        await eventually(lambda: get_pod(admin, "owner") is None, what="the owner deleted")
        dep = get_claim(admin, "dep")
        assert dep is not None and "ownerReferences" not in dep["metadata"]


async def test_cluster_scoped_owner_and_dependent(log: LogHarness, admin: Client) -> None:
    """Not only pods and claims: a ResourceSlice owned by its Node goes with the node."""
    node = await admin.create("", "nodes", {"metadata": {"name": "node-1"}})
    await admin.create(
        RG,
        "resourceslices",
        {
            "metadata": {
                "name": "node-1-gpu",
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "name": "node-1",
                        "uid": node["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "node-1",
                "pool": {"name": "node-1", "resourceSliceCount": 1},
            },
        },
    )
    async with garbage_collector(log):
        await admin.delete("", "nodes", "", "node-1")
        await eventually(lambda: admin.get(RG, "resourceslices", "", "node-1-gpu") is None, what="the slice collected")


async def test_generated_claims_go_with_their_pod(log: LogHarness, admin: Client) -> None:
    """The claim controller and the GC together: a deleted pod's generated claim disappears."""
    await admin.create(RG, "resourceclaimtemplates", template())
    await admin.create("", "pods", pod("web-0", from_template("gpu"), node="node-1"))
    async with claim_controller(log), garbage_collector(log):
        name = await eventually(
            lambda: ((get_pod(admin, "web-0") or {}).get("status", {}).get("resourceClaimStatuses") or [{}])[0].get(
                "resourceClaimName"
            ),
            what="claim recorded",
        )
        assert get_claim(admin, name) is not None
        await admin.delete("", "pods", NS, "web-0", gracePeriodSeconds=0)
        await eventually(lambda: get_claim(admin, name) is None, what="the generated claim collected")



async def test_a_deleted_node_takes_its_lease_with_it(log: LogHarness, admin: Client) -> None:
    """The node agent's Lease names its Node as owner (as kubelet's does), so the collector removes it."""
    node = await admin.create("", "nodes", node_object.new_node("node-x", arch="amd64"))
    lease = node_lease.new_lease("node-x", node=node, now=datetime(2026, 12, 2, 4, 0, 0, tzinfo=UTC))
    await admin.create("coordination.k8s.io", "leases", lease, namespace="kube-node-lease")
    async with garbage_collector(log):
        await admin.delete("", "nodes", "", "node-x")
        await eventually(
            lambda: admin.get("coordination.k8s.io", "leases", "kube-node-lease", "node-x") is None,
            what="the node's lease collected",
        )
