"""Helpers for the driver and node agent integration tests: objects, running services, polling.

Every test runs on its own embedded log (`LogHarness` on a SQLite file) with a
leading committer whose admission chain has the authorization table and
NodeRestriction, so drivers and node agents write with their real identities.
The scheduler is not part of these tests: claims are allocated and reserved
with the admin client, as the scheduler would do it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

from services.driver.service import DriverOptions, DriverService
from services.nodeagent.agent import NodeAgent
from services.runtime.client import Client
from services.runtime.lifecycle import stop
from services.testing.harness import LogHarness

RG = "resource.k8s.io"
NS = "default"
DRIVER = "gpu.example.com"

DEVICE_CLASS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "DeviceClass",
    "metadata": {"name": DRIVER},
    "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
}


@contextlib.asynccontextmanager
async def running(
    run: Callable[[], Coroutine[Any, Any, None]], ready: asyncio.Event, *, name: str = "service"
) -> AsyncIterator[asyncio.Task[None]]:
    """Run a service's ``run()`` in a task until the block ends; wait until it is ready first."""
    task = asyncio.create_task(run(), name=name)
    waiter = asyncio.create_task(ready.wait())
    done, _ = await asyncio.wait({task, waiter}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        waiter.cancel()
        task.result()  # raises what the service raised
        raise AssertionError(f"{name} stopped before it was ready")
    if waiter not in done:
        task.cancel()
        raise AssertionError(f"{name} did not get ready")
    try:
        yield task
    finally:
        await stop([task])
    if not task.cancelled() and task.exception() is not None:
        raise AssertionError(f"{name} failed") from task.exception()


def driver(log: LogHarness, node: str, state_dir: Path, **options: Any) -> DriverService:
    devices = options.pop("devices", None)
    fault = options.pop("fault", None)
    opts = DriverOptions(node=node, state_dir=state_dir, nvidia_smi=None, **options)
    return DriverService(log.bus, opts, devices=devices, fault=fault)


@contextlib.asynccontextmanager
async def running_driver(log: LogHarness, node: str, state_dir: Path, **options: Any) -> AsyncIterator[DriverService]:
    service = driver(log, node, state_dir, **options)
    async with running(service.run, service.ready, name=f"driver-{node}"):
        yield service


@contextlib.asynccontextmanager
async def running_agent(log: LogHarness, node: str, state_dir: Path, **options: Any) -> AsyncIterator[NodeAgent]:
    agent = NodeAgent(log.bus, node=node, state_dir=state_dir, **options)
    async with running(agent.run, agent.ready, name=f"nodeagent-{node}"):
        yield agent


def pod(
    name: str,
    *claims: dict[str, Any],
    node: str = "node-a",
    containers: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    if containers is None:
        containers = [
            {"name": "ctr0", "image": "busybox:1.36", "resources": {"claims": [{"name": c["name"]} for c in claims]}}
        ]
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {"containers": containers, "resourceClaims": list(claims)}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def by_name(pod_claim: str, claim: str) -> dict[str, str]:
    return {"name": pod_claim, "resourceClaimName": claim}


def claim(name: str, *, count: int = 1, controller: str = "", config: list[Any] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"name": "gpu", "deviceClassName": DRIVER}
    if count != 1:
        request["count"] = count
    devices: dict[str, Any] = {"requests": [request]}
    if config:
        devices["config"] = config
    spec: dict[str, Any] = {"devices": devices}
    if controller:
        spec["controller"] = controller
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def consumer(p: dict[str, Any]) -> dict[str, str]:
    return {"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}


async def allocate(
    admin: Client,
    name: str,
    *,
    node: str = "node-a",
    devices: list[str] = ("gpu-0",),  # type: ignore[assignment]
    reserved_for: list[dict[str, Any]] = (),  # type: ignore[assignment]
    config: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Allocate (and reserve) a claim as the scheduler would."""
    current = admin.get(RG, "resourceclaims", NS, name)
    assert current is not None
    allocation: dict[str, Any] = {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": node, "device": d} for d in devices],
            **({"config": config} if config else {}),
        },
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
        },
    }
    status: dict[str, Any] = {"allocation": allocation}
    if reserved_for:
        status["reservedFor"] = list(reserved_for)
    return await admin.update_status(RG, "resourceclaims", {**current, "status": status})


async def reserve(admin: Client, name: str, *pods: dict[str, Any]) -> dict[str, Any]:
    current = admin.get(RG, "resourceclaims", NS, name)
    assert current is not None
    status = dict(current["status"])
    status["reservedFor"] = [*(status.get("reservedFor") or ()), *(consumer(p) for p in pods)]
    return await admin.update_status(RG, "resourceclaims", {**current, "status": status})


def cdi_files(state_dir: Path) -> list[str]:
    """Claim spec files in the driver's CDI directory (the common spec left out)."""
    root = state_dir / "cdi"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.suffix == ".yaml" and not p.name.endswith("_common.yaml"))
