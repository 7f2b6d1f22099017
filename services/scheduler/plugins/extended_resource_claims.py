"""DynamicResources' steps for extended resources backed by DRA (DRAExtendedResource), one function per extension point.

Kept apart from ``dynamic_resources`` so the plugin only calls in: PreFilter
finds or makes the pod's special claim, Filter computes and allocates the
node's variant of it after the pod's own claims (their devices are taken),
Reserve keeps that allocation in flight, PreBind creates the claim (the pod as
controlling owner, so it goes when the pod goes), writes finalizer, allocation
and ``reservedFor``, then records ``pod.status.extendedResourceClaimStatus``;
Unreserve and PostFilter delete a claim created in vain, as kube-scheduler's
extendeddynamicresources.go does.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from services.api.machinery.status import StatusError
from services.kube.extended_resources import NO_CLASSES, ExtendedResourceClasses, mapped_resources
from services.kube.resourceclaim import FINALIZER, claim_key
from services.kube.structured import AllocationError, Allocator
from services.scheduler.client import PODS, RESOURCE_CLAIMS, Lister, is_conflict
from services.scheduler.dra.extended_resources import (
    MSG_DELETION_COMPLETED,
    SPECIAL_CLAIM_NAME,
    ExtendedState,
    Taken,
    claim_to_create,
    in_memory_claim,
    node_claim,
    status_patch,
    used_devices,
)
from services.scheduler.framework import Pod
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins._objects import meta, uid
from services.scheduler.resources import pod_resource
from services.scheduler.status import Code, Status, as_status, new_status

if TYPE_CHECKING:
    from services.scheduler.plugins.dynamic_resources import DynamicResources, StateData

log = logging.getLogger(__name__)

MSG_CANNOT_ALLOCATE = "cannot allocate all claims"


class ClassesCache:
    """The extended resource → DeviceClass mapping of the classes lister, rebuilt when the classes change."""

    def __init__(self, classes: Lister) -> None:
        self._classes = classes
        self._version: Any = None
        self._mapping = NO_CLASSES

    def get(self) -> ExtendedResourceClasses:
        version = getattr(self._classes, "version", None)
        if version is None or version != self._version:
            self._mapping = ExtendedResourceClasses(self._classes.list())
            self._version = version
        return self._mapping


def pre_filter(plugin: DynamicResources, pod: Pod) -> ExtendedState | None:
    """The pod's special claim, or None when none of its requests maps to a DeviceClass."""
    classes = plugin.extended_resource_classes()
    if not classes:
        return None
    requests = pod_resource(pod).scalar
    if not mapped_resources(requests, classes):
        return None
    found = plugin.extended_claims.claim_of(pod)
    claim = plugin.claims.get(*found) if found is not None else None
    if claim is None:
        claim = in_memory_claim(pod)
    device_classes = {str(meta(c).get("name", "")): c for c in plugin.classes.list()}
    return ExtendedState(claim=claim, requests=dict(requests), classes=classes, device_classes=device_classes)


def filter_node(
    plugin: DynamicResources,
    s: StateData,
    pod: Pod,
    node_info: NodeInfo,
    filter_claims: Callable[[], Status | None],
) -> Status | None:
    """kube's Filter with an extended resource claim: its per-node check, the pod's claims, then its allocation."""
    ext = s.extended
    assert ext is not None
    wanted, reason = node_claim(ext, pod, allocatable=node_info.allocatable.scalar)
    if reason is not None:
        return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)
    verdict = filter_claims() if s.claims else None
    if verdict is not None or wanted is None:
        return verdict
    node = node_info.node
    assert node is not None
    own = used_devices(s.node_allocations.get(node_info.name) or ())
    requests_key = repr(wanted.claim["spec"])
    allocator = ext.allocators.get(requests_key) if not own else None
    if allocator is None:
        allocator = Allocator(
            [wanted.claim],
            Taken(plugin.claims.allocated_devices(), own),
            ext.device_classes,
            plugin.slice_index(),
            features=plugin.features,
            cache=plugin.selector_cache,
            shared_devices=plugin.claims.shared_devices(),
            allocated_capacity=plugin.claims.allocated_capacity(),
            device_taints=plugin.device_taints(),
        )
        if not own:
            ext.allocators[requests_key] = allocator
    try:
        outcome = allocator.allocate(node)
    except AllocationError as err:
        return as_status(err)
    if not outcome:
        return new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_CANNOT_ALLOCATE)
    ext.node_claims[node_info.name] = wanted
    ext.node_allocations[node_info.name] = outcome[0]
    return None


def reserve(plugin: DynamicResources, ext: ExtendedState, node_name: str) -> None:
    """Keep the node's allocation in flight so that no other pod takes its devices before PreBind."""
    wanted = ext.node_claims.get(node_name)
    if wanted is None:
        return  # the node provides every extended resource itself (or none is needed)
    ext.allocation = copy.deepcopy(ext.node_allocations[node_name])
    ext.node = node_name
    in_flight = copy.deepcopy(wanted.claim)
    ext.in_flight_uid = uid(in_flight)
    # A name of its own per pod: every in-memory claim is called <extended-resources>.
    in_flight["metadata"]["name"] = f"{SPECIAL_CLAIM_NAME}{ext.in_flight_uid}"
    in_flight["metadata"]["finalizers"] = [FINALIZER]
    in_flight["status"] = {"allocation": ext.allocation}
    plugin.claims.add_in_flight(in_flight)


async def unreserve(plugin: DynamicResources, ext: ExtendedState) -> None:
    """Release the in-flight allocation; delete the claim if PreBind already created it."""
    if ext.in_flight_uid:
        plugin.claims.remove_in_flight(ext.in_flight_uid)
        ext.in_flight_uid = ""
    if ext.in_memory:
        return
    try:
        await delete_claim(plugin, ext.claim)
    except StatusError:
        log.exception("delete extended resource claim %s", claim_key(ext.claim))


async def delete_stale(plugin: DynamicResources, ext: ExtendedState) -> Status:
    """PostFilter: a claim from an earlier cycle cannot be reused; delete it and try anew."""
    try:
        await delete_claim(plugin, ext.claim)
    except StatusError as err:
        return as_status(err)
    return new_status(Code.UNSCHEDULABLE, MSG_DELETION_COMPLETED)


async def delete_claim(plugin: DynamicResources, claim: Mapping[str, Any]) -> None:
    """kube's deleteClaim: drop the delete-protection finalizer (retrying conflicts), then delete; gone is fine."""
    namespace = str(meta(claim).get("namespace", ""))
    name = str(meta(claim).get("name", ""))
    current: Mapping[str, Any] = claim
    delays = plugin._conflict_delays()
    for attempt in range(len(delays) + 1):
        if attempt:
            await plugin._sleep(delays[attempt - 1])
        try:
            if attempt:
                current = await plugin.client.get(RESOURCE_CLAIMS, name, namespace=namespace)
            finalizers = list(meta(current).get("finalizers") or [])
            if FINALIZER in finalizers:
                finalizers.remove(FINALIZER)
            updated = {**current, "metadata": {**meta(current), "finalizers": finalizers}}
            await plugin.client.update(RESOURCE_CLAIMS, updated)
            break
        except StatusError as err:
            if err.code == 404:
                return
            if not is_conflict(err) or attempt == len(delays):
                raise
    try:
        await plugin.client.delete(RESOURCE_CLAIMS, name, namespace=namespace)
    except StatusError as err:
        if err.code != 404:
            raise


def writes_in_pre_bind(ext: ExtendedState | None) -> bool:
    """Whether `pre_bind` has a claim to create for the pod's extended resources."""
    return ext is not None and ext.allocation is not None


async def pre_bind(plugin: DynamicResources, ext: ExtendedState | None, pod: Pod) -> Status | None:
    """Create the claim, write finalizer, allocation and reservation, then the pod's extendedResourceClaimStatus."""
    if not writes_in_pre_bind(ext):
        return None
    assert ext is not None and ext.allocation is not None
    wanted = ext.node_claims[ext.node]
    namespace = str(meta(pod).get("namespace", ""))
    pod_name = str(meta(pod).get("name", ""))
    try:
        created = await plugin.client.create(
            RESOURCE_CLAIMS, claim_to_create(wanted, finalizer=FINALIZER), namespace=namespace
        )
    except StatusError as err:
        return as_status(RuntimeError(f"create claim for extended resources {namespace}/{SPECIAL_CLAIM_NAME}: {err}"))
    ext.claim = created  # Unreserve deletes it from now on
    try:
        bound = await _bind(plugin, created, ext.allocation, pod)
    except StatusError as err:
        return as_status(RuntimeError(f"add allocation and reservation to claim {claim_key(created)}: {err}"))
    except RuntimeError as err:
        return as_status(err)
    plugin.claims.assume(bound, created=True)  # the informer may not have it yet
    plugin.claims.remove_in_flight(ext.in_flight_uid)
    ext.in_flight_uid = ""
    if not wanted.mappings:
        return as_status(
            RuntimeError(
                f"nil or empty request mappings, no update of pod {namespace}/{pod_name} ExtendedResourceClaimStatus"
            )
        )
    try:
        await plugin.client.patch(
            PODS,
            pod_name,
            status_patch(str(meta(bound).get("name", "")), wanted.mappings),
            namespace=namespace,
            subresource="status",
        )
    except StatusError as err:
        return as_status(RuntimeError(f"update pod {namespace}/{pod_name} ExtendedResourceClaimStatus: {err}"))
    return None


async def _bind(
    plugin: DynamicResources, claim: Mapping[str, Any], alloc: Mapping[str, Any], pod: Pod
) -> dict[str, Any]:
    """Finalizer (update), then allocation and ``reservedFor`` (status), re-reading the claim on conflicts."""
    namespace = str(meta(claim).get("namespace", ""))
    name = str(meta(claim).get("name", ""))
    current: dict[str, Any] = dict(claim)
    delays = plugin._conflict_delays()
    for attempt in range(len(delays) + 1):
        if attempt:
            await plugin._sleep(delays[attempt - 1])
            current = await plugin.client.get(RESOURCE_CLAIMS, name, namespace=namespace)
        if meta(current).get("deletionTimestamp"):
            raise RuntimeError(f"claim {namespace}/{name} got deleted in the meantime")
        if (current.get("status") or {}).get("allocation") is not None:
            raise RuntimeError(f"claim {namespace}/{name} got allocated elsewhere in the meantime")
        try:
            finalizers = list(meta(current).get("finalizers") or [])
            if FINALIZER not in finalizers:
                current = await plugin.client.update(
                    RESOURCE_CLAIMS, {**current, "metadata": {**meta(current), "finalizers": [*finalizers, FINALIZER]}}
                )
            reserved = [{"resource": "pods", "name": meta(pod).get("name", ""), "uid": uid(pod)}]
            current["status"] = {**(current.get("status") or {}), "allocation": alloc, "reservedFor": reserved}
            return await plugin.client.update_status(RESOURCE_CLAIMS, current)
        except StatusError as err:
            if not is_conflict(err) or attempt == len(delays):
                raise
    raise AssertionError("unreachable")
