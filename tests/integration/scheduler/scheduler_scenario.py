"""Objects and a running stack for the scheduler scenario tests.

A scenario runs on its own log (``LogHarness``: bus, leading committer with the
real admission chain) with the scheduler service started as a task, exactly as
``draplane scheduler`` runs it. Fixtures are created directly as admin: nodes,
a DeviceClass, ResourceSlices with devices, claims; where a pod needs a claim
from a template, the test creates the claim (owned by the pod) and records it
in the pod's ``status.resourceClaimStatuses`` as the claim controller would.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.apiserver.admission_chain import build_admission
from services.bus.port import BEGINNING
from services.kube.feature_gates import FeatureGates
from services.runtime.client import Client
from services.scheduler.decisions import Decision, read_decisions
from services.scheduler.service import SchedulerConfig, SchedulerService
from services.testing.harness import LogHarness
from topics.declarations import EVENTS
from topics.envelope import decode_event

RG = "resource.k8s.io"
NS = "default"
DRIVER = "gpu.example.com"
CLASS = "gpu.example.com"


# -- objects ------------------------------------------------------------------------------


def node(name: str, *, cpu: str = "4", memory: str = "32Gi", pods: str = "110") -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def device_class(name: str = CLASS, *, driver: str = DRIVER) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def resource_slice(node_name: str, *, devices: int, driver: str = DRIVER) -> dict[str, Any]:
    """One slice per node, one pool per node, ``gpu-0`` … ``gpu-<n-1>``."""
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "basic": {
                        "attributes": {"index": {"int": i}, "model": {"string": "LATEST-GPU-MODEL"}},
                        "capacity": {"memory": {"value": "80Gi"}},  # the storage form components write
                    },
                }
                for i in range(devices)
            ],
        },
    }


def claim(
    name: str, *, class_name: str = CLASS, controller: str = "", owner: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    spec: dict[str, Any] = {"devices": {"requests": [{"name": "gpu", "deviceClassName": class_name}]}}
    if controller:
        spec["controller"] = controller
    return {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim", "metadata": meta, "spec": spec}


def pod(name: str, *, claim_name: str = "", template: str = "") -> dict[str, Any]:
    """A pause pod with one pod claim ``gpu``: by claim name, or from a template."""
    source = {"resourceClaimName": claim_name} if claim_name else {"resourceClaimTemplateName": template}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "containers": [
                {
                    "name": "ctr",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
            "resourceClaims": [{"name": "gpu", **source}],
        },
    }


# -- the running stack -----------------------------------------------------------------------


@dataclass
class Stack:
    log: LogHarness
    admin: Client
    scheduler: SchedulerService
    task: asyncio.Task[None]

    def sample(self, name: str, **labels: str) -> float:
        return self.scheduler.registry.get_sample_value(name, labels) or 0.0

    def attempts(self, result: str) -> float:
        return self.sample("scheduler_schedule_attempts_total", result=result, profile="default-scheduler")

    def pod(self, name: str) -> dict[str, Any] | None:
        return self.admin.get("", "pods", NS, name)

    def node_of(self, name: str) -> str | None:
        p = self.pod(name)
        return ((p or {}).get("spec") or {}).get("nodeName")

    async def seen_by_scheduler(self, obj: Mapping[str, Any]) -> None:
        """Wait until the scheduler's informer has applied this version of ``obj``."""
        await self.scheduler.informer.wait_for(int(obj["metadata"]["resourceVersion"]), timeout=30)

    async def decisions(self, pod_name: str) -> list[Decision]:
        await self.scheduler.flush()
        return await read_decisions(self.log.bus, pod=f"{NS}/{pod_name}")

    async def events(self, pod_name: str) -> list[dict[str, Any]]:
        """The latest version of each Event about the pod, in log order."""
        await self.scheduler.flush()
        bus = self.log.bus
        end = await bus.end_offset(EVENTS)
        consumer = await bus.consumer(EVENTS, start=BEGINNING)
        latest: dict[str, dict[str, Any]] = {}
        try:
            while consumer.position() < end:
                for record in await consumer.getmany(timeout_ms=500):
                    if record.value is None:
                        continue
                    event = decode_event(record.value).object
                    if event["involvedObject"].get("name") == pod_name:
                        latest[event["metadata"]["name"]] = event
        finally:
            await consumer.close()
        return list(latest.values())

    async def create_all(
        self, group: str, plural: str, objects: Sequence[dict[str, Any]], *, parallel: int = 64
    ) -> list[dict[str, Any]]:
        gate = asyncio.Semaphore(parallel)

        async def one(obj: dict[str, Any]) -> dict[str, Any]:
            async with gate:
                return await self.admin.create(group, plural, obj)

        return list(await asyncio.gather(*(one(o) for o in objects)))

    async def node_with_devices(self, name: str, *, devices: int) -> None:
        await self.admin.create("", "nodes", node(name))
        await self.admin.create(RG, "resourceslices", resource_slice(name, devices=devices))

    async def give_generated_claim(self, p: dict[str, Any], claim_name: str) -> dict[str, Any]:
        """Do the claim controller's part for a template pod claim: create the claim, record it in the pod."""
        created = await self.admin.create(RG, "resourceclaims", claim(claim_name, owner=p))
        current = self.pod(p["metadata"]["name"])
        assert current is not None
        status = dict(current.get("status") or {})
        status["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": claim_name}]
        await self.admin.update_status("", "pods", {**current, "status": status})
        return created

    async def release(self, claim_name: str) -> None:
        """The claim controller's part after a pod is gone: drop reservedFor, deallocate, drop the finalizer."""
        current = self.admin.get(RG, "resourceclaims", NS, claim_name)
        assert current is not None
        current = await self.admin.update_status(RG, "resourceclaims", {**current, "status": {}})
        meta = {**current["metadata"], "finalizers": []}
        await self.admin.update(RG, "resourceclaims", {**current, "metadata": meta})


@contextlib.asynccontextmanager
async def running_stack(
    url: str, *, apiserver_gates: str = "", scheduler_gates: str = "", config: SchedulerConfig | None = None
) -> AsyncIterator[Stack]:
    async with LogHarness.running(url, admission=build_admission(gates=FeatureGates.parse(apiserver_gates))) as log:
        admin = await log.client(timeout=30.0)
        config = config or SchedulerConfig(gates=FeatureGates.parse(scheduler_gates))
        scheduler = SchedulerService(log.bus, config=config)
        task = asyncio.create_task(scheduler.run(), name="scheduler")
        try:
            await asyncio.wait_for(scheduler.ready.wait(), 60)
            yield Stack(log, admin, scheduler, task)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
