"""The Lease a node agent renews in ``kube-node-lease``, built as kubelet's node lease controller builds it.

Why this module exists: kubelet proves it is alive by renewing a Lease named
after its node in ``kube-node-lease`` (k8s.io/component-helpers/apimachinery/
lease and pkg/kubelet/util/nodelease.go): holder identity the node's name,
``leaseDurationSeconds`` 40, ``renewTime`` moved forward every 10 s (a quarter
of the duration), and an ownerReference to the Node once its uid is known,
so the garbage collector removes the Lease with its Node. ``kubectl describe
node`` prints it. Everything here is pure: objects in, objects out.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from services.kube.times import micro_time

Obj = dict[str, Any]

NODE_LEASE_NAMESPACE = "kube-node-lease"
# kubelet's defaults: --node-lease-duration-seconds 40, renewed at a quarter of it.
LEASE_DURATION_SECONDS = 40
RENEW_INTERVAL_FRACTION = 0.25
RENEW_INTERVAL = LEASE_DURATION_SECONDS * RENEW_INTERVAL_FRACTION


def node_owner(node: Mapping[str, Any] | None) -> list[Obj] | None:
    """The ownerReferences kubelet puts on its lease: the Node, once it has a uid."""
    uid = ((node or {}).get("metadata") or {}).get("uid")
    if not uid:
        return None
    name = node["metadata"]["name"] if node else ""
    return [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid}]


def _with_owner(meta: Obj, node: Mapping[str, Any] | None) -> Obj:
    # As kubelet's SetNodeOwnerFunc: set once, when the lease has no owner yet.
    if meta.get("ownerReferences"):
        return meta
    owners = node_owner(node)
    return {**meta, "ownerReferences": owners} if owners else meta


def new_lease(
    node_name: str, *, node: Mapping[str, Any] | None, now: datetime, duration: int = LEASE_DURATION_SECONDS
) -> Obj:
    """The Lease to create for ``node_name``, renewed at ``now``."""
    meta: Obj = {"name": node_name, "namespace": NODE_LEASE_NAMESPACE}
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": _with_owner(meta, node),
        "spec": {"holderIdentity": node_name, "leaseDurationSeconds": duration, "renewTime": micro_time(now)},
    }


def renewed(lease: Mapping[str, Any], *, node: Mapping[str, Any] | None, now: datetime) -> Obj:
    """``lease`` with ``renewTime`` at ``now`` (and its owner set if it had none); the rest as it was."""
    spec = {**(lease.get("spec") or {}), "renewTime": micro_time(now)}
    return {**lease, "metadata": _with_owner(dict(lease.get("metadata") or {}), node), "spec": spec}
