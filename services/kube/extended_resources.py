"""Extended resources backed by DRA (DRAExtendedResource): names, the class a name maps to, and the claim's requests.

A pod may ask for ``example.com/gpu: 1`` in its containers' resources. When no
node advertises that name as allocatable but a DeviceClass names it in
``spec.extendedResourceName`` (or the pod uses the implicit
``deviceclass.resource.kubernetes.io/<class>``), kube-scheduler allocates
devices of that class instead, in one ResourceClaim it creates for the pod.
These are the rules both the scheduler and the node agent rely on:

- ``is_extended_resource_name`` / ``is_dra_extended_resource_name``:
  v1helper.IsExtendedResourceName and schedutil.IsDRAExtendedResourceName;
- ``ExtendedResourceClasses``: dynamic-resource-allocation's
  ExtendedResourceCache, built from the current DeviceClasses (when two
  classes claim the same name the newer wins, the lower name on a tie);
- ``requests_and_mappings``: the scheduler's createRequestsAndMappings, one
  request ``container-<i>-request-<j>`` per container and resource (``i``
  counts init containers first, ``j`` is the resource's index among the
  container's sorted request names); init containers that are not sidecars
  reuse later long-lived containers' requests and share the largest request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.kube.names import is_qualified_name
from services.kube.quantity import value

EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
EXACT_COUNT = "ExactCount"


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """A domain-qualified name outside kubernetes.io that may also appear as ``requests.<name>`` in quotas."""
    if _is_native(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def is_dra_extended_resource_name(name: str) -> bool:
    """An extended resource name, or an implicit ``deviceclass.resource.kubernetes.io/<class>`` name."""
    return is_extended_resource_name(name) or name.startswith(RESOURCE_DEVICE_CLASS_PREFIX)


def _created(device_class: Mapping[str, Any]) -> str:
    # RFC 3339 in UTC with a fixed layout: string order is time order.
    return str((device_class.get("metadata") or {}).get("creationTimestamp") or "")


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _preferred(candidate: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """Whether ``candidate`` takes an explicit name from ``current``: newer, or as old with a lower name."""
    if _created(candidate) != _created(current):
        return _created(candidate) > _created(current)
    return _name(candidate) < _name(current)


class ExtendedResourceClasses:
    """Extended resource name -> the DeviceClass that provides it, for one set of DeviceClasses."""

    __slots__ = ("_by_resource",)

    def __init__(self, classes: Iterable[Mapping[str, Any]]) -> None:
        by_resource: dict[str, Mapping[str, Any]] = {}
        for device_class in classes:
            name = _name(device_class)
            by_resource[RESOURCE_DEVICE_CLASS_PREFIX + name] = device_class
            explicit = (device_class.get("spec") or {}).get("extendedResourceName")
            if not explicit:
                continue
            current = by_resource.get(str(explicit))
            if current is not None and not _preferred(device_class, current):
                continue
            by_resource[str(explicit)] = device_class
        self._by_resource = by_resource

    def get(self, resource_name: str) -> Mapping[str, Any] | None:
        """The class mapped to ``resource_name``, or None."""
        return self._by_resource.get(resource_name)

    def __bool__(self) -> bool:
        return bool(self._by_resource)


NO_CLASSES = ExtendedResourceClasses(())


def mapped_resources(requests: Mapping[str, int], classes: ExtendedResourceClasses) -> frozenset[str]:
    """The names among non-zero ``requests`` that are DRA extended resource names with a class."""
    if not classes:
        return frozenset()
    return frozenset(
        name for name, qty in requests.items() if qty and is_dra_extended_resource_name(name) and classes.get(name)
    )


@dataclass(frozen=True, slots=True)
class RequestMapping:
    """One ``pod.status.extendedResourceClaimStatus.requestMappings`` entry."""

    container_name: str
    resource_name: str
    request_name: str

    def wire(self) -> dict[str, str]:
        return {
            "containerName": self.container_name,
            "resourceName": self.resource_name,
            "requestName": self.request_name,
        }


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """One ExactCount request of the extended resource claim."""

    name: str
    device_class_name: str
    count: int

    def wire(self) -> dict[str, Any]:
        """The request in the storage (v1beta1 hub) layout: the exact fields sit on the request itself."""
        return {
            "name": self.name,
            "deviceClassName": self.device_class_name,
            "allocationMode": EXACT_COUNT,
            "count": self.count,
        }


def _container_requests(container: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((container.get("resources") or {}).get("requests")) or {}


def _is_sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def _request_and_mappings(
    index: int,
    container: Mapping[str, Any],
    resource: str,
    class_name: str,
    reusable: Sequence[DeviceRequest | None],
) -> tuple[DeviceRequest | None, list[RequestMapping]]:
    requests = _container_requests(container)
    if resource not in requests:
        return None, []
    try:
        wanted = value(requests[resource])
    except (ValueError, TypeError):
        return None, []
    if wanted == 0:
        return None, []
    container_name = str(container.get("name") or "")
    mappings: list[RequestMapping] = []
    covered = 0
    for request in reusable:
        if request is None:
            continue
        covered += request.count
        mappings.append(RequestMapping(container_name, resource, request.name))
        if covered >= wanted:
            return None, mappings
    position = sorted(requests).index(resource)
    name = f"container-{index}-request-{position}"
    mappings.append(RequestMapping(container_name, resource, name))
    return DeviceRequest(name, class_name, wanted - covered), mappings


def requests_and_mappings(
    pod: Mapping[str, Any], resources: Iterable[str], classes: ExtendedResourceClasses
) -> tuple[list[DeviceRequest], list[RequestMapping]]:
    """The claim's requests (sorted by name) and the container mappings for ``resources`` of ``pod``.

    ``resources`` are the extended resource names the node must provide through
    DRA; names without a class are skipped.
    """
    pod_spec = pod.get("spec") or {}
    init = list(pod_spec.get("initContainers") or ())
    containers = init + list(pod_spec.get("containers") or ())
    short_lived = [i for i in range(len(init)) if not _is_sidecar(init[i])]
    long_lived = [i for i in range(len(containers)) if i >= len(init) or _is_sidecar(init[i])]
    device_requests: list[DeviceRequest] = []
    mappings: list[RequestMapping] = []
    for resource in sorted(set(resources)):
        device_class = classes.get(resource)
        if device_class is None:
            continue
        class_name = _name(device_class)
        long_requests: list[DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[RequestMapping] = []
        for i in long_lived:
            request, found = _request_and_mappings(i, containers[i], resource, class_name, ())
            long_requests[i] = request
            long_mappings.extend(found)
        largest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[RequestMapping] = []
        for i in short_lived:
            request, found = _request_and_mappings(i, containers[i], resource, class_name, long_requests[i:])
            if request is not None:
                short_names.add(request.name)
                if largest is None or largest.count < request.count:
                    largest = request
            short_mappings.extend(found)
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest.name)
            short_mappings = [
                RequestMapping(m.container_name, m.resource_name, largest.name) if m.request_name in short_names else m
                for m in short_mappings
            ]
        if largest is not None:
            device_requests.append(largest)
        device_requests.extend(r for r in long_requests if r is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    device_requests.sort(key=lambda r: r.name)
    return device_requests, mappings
