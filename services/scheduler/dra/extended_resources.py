"""The scheduler's side of extended resources backed by DRA: the pod's special claim, per node and per cycle.

kube-scheduler's extendeddynamicresources.go, without the I/O:

- PreFilter: a pod whose requests name an extended resource that some
  DeviceClass provides gets *one* special claim — the one created for it in an
  earlier cycle (annotation ``resource.kubernetes.io/extended-resource-claim:
  "true"``, the pod as controlling owner: ``ExtendedClaimIndex``), or an
  in-memory claim named ``<extended-resources>`` without requests
  (``in_memory_claim``).
- Filter (``node_claim``): a claim left over from an earlier cycle that already
  has requests rejects every node (PostFilter deletes it); otherwise the
  resources the node does not advertise as allocatable but a class provides
  become the node's requests; a resource neither allocatable nor provided
  rejects the node.
- PreBind writes the node's claim (``claim_to_create``) and
  ``pod.status.extendedResourceClaimStatus`` (``status_patch``).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from services.kube.extended_resources import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    ExtendedResourceClasses,
    RequestMapping,
    is_dra_extended_resource_name,
    requests_and_mappings,
)

SPECIAL_CLAIM_NAME = "<extended-resources>"  # never a valid claim name, so it cannot clash with a real one
MSG_STALE_CLAIM = "cannot schedule extended resource claim"
MSG_CANNOT_FIT = "cannot fit resource"
MSG_DELETION_COMPLETED = "deletion of ResourceClaim completed"

DeviceID = tuple[str, str, str]


def _meta(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("metadata") or {}


def is_special_claim_name(name: str) -> bool:
    return name == SPECIAL_CLAIM_NAME


def is_extended_resource_claim(claim: Mapping[str, Any]) -> bool:
    return (_meta(claim).get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"


def _controlling_pod_uid(claim: Mapping[str, Any]) -> str | None:
    for ref in _meta(claim).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == "Pod":
            return str(ref.get("uid") or "")
    return None


class ExtendedClaimIndex:
    """Pod uid -> (namespace, name) of its extended resource claim, fed with every claim change.

    kube's findExtendedResourceClaim scans all claims per pod; an index keeps
    PreFilter independent of how many claims exist.
    """

    def __init__(self) -> None:
        self._by_pod: dict[str, tuple[str, str]] = {}

    def observe(self, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if old is not None and is_extended_resource_claim(old):
            owner = _controlling_pod_uid(old)
            key = (str(_meta(old).get("namespace", "")), str(_meta(old).get("name", "")))
            if owner is not None and self._by_pod.get(owner) == key:
                del self._by_pod[owner]
        if new is not None and is_extended_resource_claim(new):
            owner = _controlling_pod_uid(new)
            if owner:
                self._by_pod[owner] = (str(_meta(new).get("namespace", "")), str(_meta(new).get("name", "")))

    def claim_of(self, pod: Mapping[str, Any]) -> tuple[str, str] | None:
        """(namespace, name) of the pod's extended resource claim, if one exists in its namespace."""
        found = self._by_pod.get(str(_meta(pod).get("uid") or ""))
        if found is None or found[0] != _meta(pod).get("namespace"):
            return None
        return found


def in_memory_claim(pod: Mapping[str, Any], *, claim_uid: str | None = None) -> dict[str, Any]:
    """The special claim of a pod that has none yet: no requests, a temporary uid, the pod as controller."""
    pod_meta = _meta(pod)
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": pod_meta.get("namespace", ""),
            "name": SPECIAL_CLAIM_NAME,
            "uid": claim_uid or str(uuid.uuid4()),
            "generateName": f"{pod_meta.get('name', '')}-extended-resources-",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod_meta.get("name", ""),
                    "uid": pod_meta.get("uid", ""),
                    "controller": True,
                }
            ],
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        },
        "spec": {},
    }


@dataclass(slots=True)
class NodeClaim:
    """What one node needs through DRA: the node's variant of the claim and the container mappings."""

    claim: dict[str, Any]
    mappings: list[RequestMapping]


@dataclass(slots=True)
class ExtendedState:
    """The special claim's part of the DynamicResources cycle state."""

    claim: Mapping[str, Any]  # found from an earlier cycle, or in_memory_claim
    requests: Mapping[str, int]  # the pod's scalar requests (kube's podScalarResources)
    classes: ExtendedResourceClasses
    node_claims: dict[str, NodeClaim] = field(default_factory=dict)
    node_allocations: dict[str, dict[str, Any]] = field(default_factory=dict)
    allocation: dict[str, Any] | None = None  # chosen in Reserve
    node: str = ""  # the node Reserve chose
    in_flight_uid: str = ""  # the in-memory claim's uid while its allocation is in flight
    # Per cycle: DeviceClasses by name, and one allocator per distinct node claim (nodes that need the same
    # requests and take no devices for the pod's own claims share it).
    device_classes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    allocators: dict[str, Any] = field(default_factory=dict)

    @property
    def in_memory(self) -> bool:
        return is_special_claim_name(str(_meta(self.claim).get("name", "")))


def _has_requests(claim: Mapping[str, Any]) -> bool:
    return bool(((claim.get("spec") or {}).get("devices") or {}).get("requests"))


def node_claim(
    state: ExtendedState, pod: Mapping[str, Any], *, allocatable: Mapping[str, int]
) -> tuple[NodeClaim | None, str | None]:
    """(the node's claim or None when the node needs nothing through DRA, rejection reason or None).

    kube's filterExtendedResources. ``allocatable`` is the node's scalar
    allocatable (resource name -> amount; a name is absent when the node does
    not list it).
    """
    if _has_requests(state.claim):
        return None, MSG_STALE_CLAIM
    through_dra: list[str] = []
    for name, amount in state.requests.items():
        if not amount or not is_dra_extended_resource_name(name):
            continue
        backed = state.classes.get(name) is not None
        if backed and allocatable.get(name, 0) == 0:
            through_dra.append(name)
        elif name not in allocatable:
            return None, MSG_CANNOT_FIT
    if not through_dra or (state.claim.get("status") or {}).get("allocation") is not None:
        return None, None
    requests, mappings = requests_and_mappings(pod, through_dra, state.classes)
    claim = copy.deepcopy(dict(state.claim))
    claim["spec"] = {"devices": {"requests": [r.wire() for r in requests]}}
    return NodeClaim(claim, mappings), None


def used_devices(allocations: Iterable[Mapping[str, Any] | None]) -> frozenset[DeviceID]:
    """Devices that ``allocations`` (AllocationResults) hold, admin-access results excepted."""
    return frozenset(
        (str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", "")))
        for alloc in allocations
        if alloc is not None
        for r in (alloc.get("devices") or {}).get("results") or ()
        if not r.get("adminAccess")
    )


class Taken:
    """Devices allocated in the cluster plus those the pod's own claims take on this node."""

    __slots__ = ("_also", "_base")

    def __init__(self, base: Container[DeviceID], also: frozenset[DeviceID]) -> None:
        self._base = base
        self._also = also

    def __contains__(self, item: object) -> bool:
        return item in self._also or item in self._base


def claim_to_create(node: NodeClaim, *, finalizer: str) -> dict[str, Any]:
    """The node's claim as PreBind creates it: no name (generateName), no uid, no status.

    It carries the delete-protection ``finalizer`` from the start: kube-scheduler
    adds it with an update right after the create, before the allocation; one
    write less, the same claim once allocated.
    """
    claim = copy.deepcopy(node.claim)
    claim_meta = dict(claim.get("metadata") or {})
    claim_meta.pop("name", None)
    claim_meta.pop("uid", None)
    claim_meta["finalizers"] = [finalizer]
    claim["metadata"] = claim_meta
    claim.pop("status", None)
    return claim


def status_patch(claim_name: str, mappings: Iterable[RequestMapping]) -> dict[str, Any]:
    """The pod status merge patch that records the claim and the container → request mappings."""
    return {
        "status": {
            "extendedResourceClaimStatus": {
                "requestMappings": [m.wire() for m in mappings],
                "resourceClaimName": claim_name,
            }
        }
    }
