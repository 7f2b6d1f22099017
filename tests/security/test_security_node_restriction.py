"""NodeRestriction end to end: a node identity writes only its own node's objects, through REST.

``system:node:node-a`` (group ``system:nodes``, from the token file) may
publish and change the ResourceSlices of node-a, its own Node, and the
status of pods bound to node-a — and nothing of node-b's. Each refusal is a
403 with the message Kubernetes' NodeRestriction admission plugin (or, for
slice updates, the node authorizer) gives, and nothing is written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from tests.security.apiservers import ADMIN, NODE_A, RunningApiserver, assert_status, call

pytestmark = pytest.mark.asyncio(loop_scope="module")

SLICES = "/apis/resource.k8s.io/v1alpha3/resourceslices"
PODS = "/api/v1/namespaces/default/pods"
NODES = "/api/v1/nodes"


def resource_slice(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node,
            "devices": [{"name": "gpu-0", "basic": {"attributes": {"index": {"int": 0}}}}],
        },
    }


def pod(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "x"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sessions(secured: RunningApiserver) -> AsyncIterator[tuple[aiohttp.ClientSession, aiohttp.ClientSession]]:
    """(admin, node-a), with node-b's slice, both nodes' pods and both Nodes created by the admin."""
    async with secured.session(ADMIN) as admin, secured.session(NODE_A) as node_a:
        for path, body in [
            (NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-b"}}),
            (SLICES, resource_slice("node-b-gpus", "node-b")),
            (PODS, pod("on-a", "node-a")),
            (PODS, pod("on-b", "node-b")),
        ]:
            reply = await call(admin, "POST", path, body)
            assert reply.status == 201, reply.doc
        yield admin, node_a


async def test_a_node_publishes_and_updates_its_own_slices(
    sessions: tuple[aiohttp.ClientSession, aiohttp.ClientSession],
) -> None:
    _, node_a = sessions
    created = await call(node_a, "POST", SLICES, resource_slice("node-a-gpus", "node-a"))
    assert created.status == 201, created.doc
    created.doc["spec"]["pool"]["generation"] = 2
    updated = await call(node_a, "PUT", f"{SLICES}/node-a-gpus", created.doc)
    assert updated.status == 200 and updated.doc["spec"]["pool"]["generation"] == 2


async def test_a_node_cannot_write_another_nodes_slices(
    sessions: tuple[aiohttp.ClientSession, aiohttp.ClientSession],
) -> None:
    admin, node_a = sessions
    assert_status(
        await call(node_a, "POST", SLICES, resource_slice("forged", "node-b")),
        403,
        "Forbidden",
        'resourceslices.resource.k8s.io "forged" is forbidden: '
        "can only create ResourceSlice with the same NodeName as the requesting node",
    )
    theirs = (await call(admin, "GET", f"{SLICES}/node-b-gpus")).doc
    theirs["spec"]["devices"] = []
    assert_status(
        await call(node_a, "PUT", f"{SLICES}/node-b-gpus", theirs),
        403,
        "Forbidden",
        'resourceslices.resource.k8s.io "node-b-gpus" is forbidden: User "system:node:node-a" cannot update '
        'resource "resourceslices" in API group "resource.k8s.io" at the cluster scope: '
        "no relationship found between node 'node-a' and this object",
    )
    # Moving one's own slice to another node is refused the same way.
    mine = await call(node_a, "POST", SLICES, resource_slice("node-a-moving", "node-a"))
    assert mine.status == 201
    mine.doc["spec"]["nodeName"] = "node-b"
    assert_status(
        await call(node_a, "PUT", f"{SLICES}/node-a-moving", mine.doc),
        403,
        "Forbidden",
        'resourceslices.resource.k8s.io "node-a-moving" is forbidden: User "system:node:node-a" cannot update '
        'resource "resourceslices" in API group "resource.k8s.io" at the cluster scope: '
        "no relationship found between node 'node-a' and this object",
    )
    assert_status(
        await call(node_a, "DELETE", f"{SLICES}/node-b-gpus"),
        403,
        "Forbidden",
        'resourceslices.resource.k8s.io "node-b-gpus" is forbidden: '
        "can only delete ResourceSlice with the same NodeName as the requesting node",
    )
    assert (await call(admin, "GET", f"{SLICES}/forged")).status == 404
    still = (await call(admin, "GET", f"{SLICES}/node-b-gpus")).doc
    assert still["spec"]["devices"] == [{"name": "gpu-0", "basic": {"attributes": {"index": {"int": 0}}}}]


async def test_a_node_updates_the_status_of_its_own_pods_only(
    sessions: tuple[aiohttp.ClientSession, aiohttp.ClientSession],
) -> None:
    admin, node_a = sessions
    mine = (await call(admin, "GET", f"{PODS}/on-a")).doc
    mine["status"] = {"phase": "Running"}
    reply = await call(node_a, "PUT", f"{PODS}/on-a/status", mine)
    assert reply.status == 200 and reply.doc["status"]["phase"] == "Running", reply.doc

    theirs = (await call(admin, "GET", f"{PODS}/on-b")).doc
    theirs["status"] = {"phase": "Failed"}
    assert_status(
        await call(node_a, "PUT", f"{PODS}/on-b/status", theirs),
        403,
        "Forbidden",
        'pods "on-b" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself',
    )
    assert_status(
        await call(
            node_a,
            "PATCH",
            f"{PODS}/on-b/status",
            {"status": {"phase": "Failed"}},
            content_type="application/merge-patch+json",
        ),
        403,
        "Forbidden",
        'pods "on-b" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself',
    )
    # Labels do not change through status (the status strategy keeps the stored ones, as in Kubernetes).
    mine = (await call(admin, "GET", f"{PODS}/on-a")).doc
    mine["metadata"]["labels"] = {"app": "changed"}
    reply = await call(node_a, "PUT", f"{PODS}/on-a/status", mine)
    assert reply.status == 200 and reply.doc["metadata"]["labels"] == {"app": "x"}
    assert (await call(admin, "GET", f"{PODS}/on-b")).doc["status"].get("phase") != "Failed"
    # Deleting: its own pods only.
    assert_status(
        await call(node_a, "DELETE", f"{PODS}/on-b"),
        403,
        "Forbidden",
        'pods "on-b" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself',
    )


async def test_a_node_writes_its_own_node_object_only(
    sessions: tuple[aiohttp.ClientSession, aiohttp.ClientSession],
) -> None:
    admin, node_a = sessions
    created = await call(node_a, "POST", NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}})
    assert created.status == 201, created.doc
    theirs = (await call(admin, "GET", f"{NODES}/node-b")).doc
    theirs["metadata"]["labels"] = {"hijacked": "yes"}
    assert_status(
        await call(node_a, "PUT", f"{NODES}/node-b", theirs),
        403,
        "Forbidden",
        'nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"',
    )
    created.doc["spec"] = {"taints": [{"key": "example.com/x", "effect": "NoSchedule"}]}
    assert_status(
        await call(node_a, "PUT", f"{NODES}/node-a", created.doc),
        403,
        "Forbidden",
        'nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints',
    )


async def test_a_node_may_not_write_claims_or_classes(
    sessions: tuple[aiohttp.ClientSession, aiohttp.ClientSession],
) -> None:
    _, node_a = sessions
    claim = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }
    assert_status(
        await call(node_a, "POST", "/apis/resource.k8s.io/v1alpha3/namespaces/default/resourceclaims", claim),
        403,
        "Forbidden",
        'resourceclaims.resource.k8s.io is forbidden: User "system:node:node-a" cannot create resource '
        '"resourceclaims" in API group "resource.k8s.io" in the namespace "default"',
    )
    device_class = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceClass", "metadata": {"name": "x"}}
    assert_status(
        await call(node_a, "POST", "/apis/resource.k8s.io/v1alpha3/deviceclasses", device_class),
        403,
        "Forbidden",
        'deviceclasses.resource.k8s.io is forbidden: User "system:node:node-a" cannot create resource '
        '"deviceclasses" in API group "resource.k8s.io" at the cluster scope',
    )
