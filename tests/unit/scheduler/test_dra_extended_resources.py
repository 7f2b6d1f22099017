"""Extended resources backed by DRA in the scheduler (DRAExtendedResource, on at 1.37).

The scheduler core runs over a fake API as in ``test_dra_plugin_1_37``. A pod
asks for ``example.com/gpu`` in its container's resources; a DeviceClass names
that extended resource; the node does not advertise it. Expectations follow
kube 1.37's extendeddynamicresources.go: the claim the scheduler creates
(generateName ``<pod>-extended-resources-``, annotation, controlling owner,
one request per container and resource), its allocation and reservation, and
the pod's ``status.extendedResourceClaimStatus``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry

from services.kube.extended_resources import EXTENDED_RESOURCE_CLAIM_ANNOTATION, RESOURCE_DEVICE_CLASS_PREFIX
from services.kube.feature_gates import FeatureGates
from services.kube.resourceclaim import FINALIZER
from services.kube.structured import Features
from services.scheduler.client import PODS, RESOURCE_CLAIMS, ResourceRef
from services.scheduler.cluster_events import Resource
from services.scheduler.dra.extended_resources import MSG_CANNOT_FIT, MSG_STALE_CLAIM
from services.scheduler.dra.stores import ObjectStore
from services.scheduler.metrics import SchedulerMetrics
from services.scheduler.plugins.default_binder import DefaultBinder
from services.scheduler.plugins.dynamic_resources import DynamicResources
from services.scheduler.profile import Profile, default_plugins
from services.scheduler.scheduler import SchedulerCore

from .builders import FakeClock, container, make_node, make_pod
from .dra_fixtures import DRIVER, NODE_NAME, no_sleep
from .fake_client import FakeClient

Obj = dict[str, Any]
GATES = FeatureGates(release="1.37")
GPU = "example.com/gpu"
CLASS = "gpu.example.com"


class GeneratingClient(FakeClient):
    """The fake API, plus ``metadata.generateName`` on create as the apiserver does it."""

    def __init__(self) -> None:
        super().__init__()
        self._suffix = itertools.count()

    async def create(
        self, resource: ResourceRef, obj: Mapping[str, Any], *, namespace: str = "", subresource: str = ""
    ) -> dict[str, Any]:
        meta = dict(obj.get("metadata") or {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{next(self._suffix):05d}"
            obj = {**obj, "metadata": meta}
        return await super().create(resource, obj, namespace=namespace, subresource=subresource)


def device_class(name: str = CLASS, extended: str | None = GPU) -> Obj:
    spec: Obj = {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}
    if extended is not None:
        spec["extendedResourceName"] = extended
    return {"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def gpu_slice(*names: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{NODE_NAME}-{DRIVER}", "resourceVersion": "1"},
        "spec": {
            "driver": DRIVER,
            "nodeName": NODE_NAME,
            "pool": {"name": NODE_NAME, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": n, "basic": {}} for n in names],
        },
    }


class World:
    """A 1.37 scheduler core; ``extended=False`` is DRAExtendedResource off."""

    def __init__(self, *, extended: bool = True, allocatable: Mapping[str, Any] | None = None) -> None:
        self.client = GeneratingClient()
        self.dra = DynamicResources(
            client=self.client,
            classes=ObjectStore(),
            slices=ObjectStore(),
            features=Features.from_gates(GATES),
            conflict_retry_delays=(0.0,) * 4,
            sleep=no_sleep,
            extended_resources=extended,
        )
        profile = Profile(default_plugins(binder=DefaultBinder(self.client), dynamic_resources=self.dra))
        self.core = SchedulerCore(profiles=[profile], clock=FakeClock(), metrics=SchedulerMetrics(CollectorRegistry()))
        node_allocatable = {"cpu": "4", "memory": "8Gi", "pods": "110", **(allocatable or {})}
        self.apply(Resource.NODE, None, make_node(NODE_NAME, allocatable=node_allocatable))
        self.apply(Resource.DEVICE_CLASS, None, device_class())

    def apply(self, resource: str, old: Obj | None, new: Obj | None) -> None:
        self.core.on_object_change(resource, old, new)

    def add_pod(self, name: str, resources: Mapping[str, str] | None = None, **pod_fields: Any) -> Obj:
        if "containers" not in pod_fields:
            wanted = dict(resources or {GPU: "1"})
            pod_fields["containers"] = [container("ctr", requests=wanted, limits=wanted)]
        stored = self.client.put(PODS, make_pod(name, uid=f"uid-{name}", **pod_fields))
        self.apply(Resource.POD, None, stored)
        return stored

    def claims(self) -> list[Obj]:
        return [obj for key, obj in self.client.objects.items() if key[1] == RESOURCE_CLAIMS[1]]

    def pod(self, name: str) -> Obj:
        stored = self.client.stored(PODS, name, "default")
        assert stored is not None
        return stored

    async def schedule_and_bind(self) -> Any:
        attempt = await self.core.schedule_one()
        assert attempt is not None
        if attempt.succeeded:
            assert (await self.core.bind(attempt)).succeeded
        return attempt


async def test_pod_asking_for_an_extended_resource_gets_a_claim_the_scheduler_creates() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    w.add_pod("train")
    attempt = await w.schedule_and_bind()
    assert attempt.succeeded, attempt.message
    assert w.pod("train")["spec"]["nodeName"] == NODE_NAME

    [claim] = w.claims()
    meta = claim["metadata"]
    assert meta["name"].startswith("train-extended-resources-")
    assert meta["generateName"] == "train-extended-resources-"
    assert meta["annotations"] == {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": "uid-train", "controller": True}
    ]
    assert meta["finalizers"] == [FINALIZER]
    assert claim["spec"]["devices"]["requests"] == [
        {"name": "container-0-request-0", "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1}
    ]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [("container-0-request-0", "gpu-0")]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "train", "uid": "uid-train"}]
    assert w.pod("train")["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "ctr", "resourceName": GPU, "requestName": "container-0-request-0"}],
        "resourceClaimName": meta["name"],
    }
    # The claim is created with its finalizer (kube adds it with an update right after): then allocation and
    # reservation, the pod's status, the binding.
    assert w.client.verbs() == [
        "create resourceclaims",
        "update resourceclaims/status",
        "patch pods/status",
        "create pods/binding",
    ]


async def test_implicit_device_class_name_is_an_extended_resource_too() -> None:
    w = World()
    w.apply(Resource.DEVICE_CLASS, None, device_class("plain.example.com", extended=None))
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    implicit = RESOURCE_DEVICE_CLASS_PREFIX + "plain.example.com"
    w.add_pod("p", {implicit: "1"})
    assert (await w.schedule_and_bind()).succeeded
    [claim] = w.claims()
    assert claim["spec"]["devices"]["requests"][0]["deviceClassName"] == "plain.example.com"
    mappings = w.pod("p")["status"]["extendedResourceClaimStatus"]["requestMappings"]
    assert mappings == [{"containerName": "ctr", "resourceName": implicit, "requestName": "container-0-request-0"}]


async def test_with_the_gate_off_node_resources_fit_rejects_the_pod() -> None:
    w = World(extended=False)
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    w.add_pod("p")
    attempt = await w.schedule_and_bind()
    assert not attempt.succeeded
    assert attempt.message.startswith(f"0/1 nodes are available: 1 Insufficient {GPU}.")
    assert w.claims() == []


async def test_a_node_that_advertises_the_resource_serves_it_without_a_claim() -> None:
    """The device plugin path: allocatable for the name wins over the class (shouldDelegateResourceToDRA)."""
    w = World(allocatable={GPU: "2"})
    w.add_pod("p")
    assert (await w.schedule_and_bind()).succeeded
    assert w.claims() == []
    assert "extendedResourceClaimStatus" not in (w.pod("p").get("status") or {})


async def test_resource_neither_allocatable_nor_provided_cannot_fit() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    w.add_pod("p", {GPU: "1", "example.com/other": "1"})
    attempt = await w.schedule_and_bind()
    assert not attempt.succeeded
    # NodeResourcesFit runs first and reports the shortage; DynamicResources would say MSG_CANNOT_FIT.
    assert attempt.message.startswith("0/1 nodes are available: 1 Insufficient example.com/other.")
    assert MSG_CANNOT_FIT == "cannot fit resource"


async def test_the_in_flight_allocation_keeps_the_device_from_the_next_pod() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    w.add_pod("a")
    w.add_pod("b")
    first = await w.core.schedule_one()
    second = await w.core.schedule_one()  # before the first is bound: its device is in flight
    assert first is not None and first.succeeded
    assert second is not None and not second.succeeded
    assert second.message.startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    assert (await w.core.bind(first)).succeeded
    assert len(w.claims()) == 1


async def test_two_containers_and_an_init_container_share_requests_as_upstream() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0", "gpu-1", "gpu-2"))
    w.add_pod(
        "p",
        containers=[
            container("a", requests={GPU: "1"}, limits={GPU: "1"}),
            container("b", requests={GPU: "1"}, limits={GPU: "1"}),
        ],
        init_containers=[container("init", requests={GPU: "2"}, limits={GPU: "2"})],
    )
    assert (await w.schedule_and_bind()).succeeded
    [claim] = w.claims()
    # The init container reuses the long-lived containers' requests: no request of its own.
    assert [(r["name"], r["count"]) for r in claim["spec"]["devices"]["requests"]] == [
        ("container-1-request-0", 1),
        ("container-2-request-0", 1),
    ]
    mappings = w.pod("p")["status"]["extendedResourceClaimStatus"]["requestMappings"]
    assert [(m["containerName"], m["requestName"]) for m in mappings] == [
        ("a", "container-1-request-0"),
        ("b", "container-2-request-0"),
        ("init", "container-1-request-0"),
        ("init", "container-2-request-0"),
    ]


async def test_a_claim_left_from_an_earlier_cycle_is_deleted_and_the_pod_retried() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    pod = w.add_pod("p")
    stale = w.client.put(
        RESOURCE_CLAIMS,
        {
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": "p-extended-resources-old",
                "namespace": "default",
                "uid": "uid-stale",
                "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": pod["metadata"]["uid"], "controller": True}
                ],
            },
            "spec": {"devices": {"requests": [{"name": "container-0-request-0", "deviceClassName": CLASS}]}},
        },
    )
    w.apply(Resource.RESOURCE_CLAIM, None, stale)
    attempt = await w.schedule_and_bind()
    assert not attempt.succeeded
    assert MSG_STALE_CLAIM in attempt.message
    assert w.client.stored(RESOURCE_CLAIMS, "p-extended-resources-old", "default") is None
    assert "delete resourceclaims" in w.client.verbs()
