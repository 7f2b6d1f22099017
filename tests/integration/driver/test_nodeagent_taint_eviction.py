"""A pod the device-taint-eviction controller deletes is stopped by the node agent and its claim unprepared.

The controller deletes an evicted pod like any client (graceful deletion with
its uid as precondition, after the ``DisruptionTarget`` condition); the node
agent must treat it like any other deleted pod: stop it, unprepare its claim
through the driver (the CDI spec file goes), and finalize the pod.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from driver_fixtures import (
    DRIVER,
    NS,
    RG,
    allocate,
    by_name,
    cdi_files,
    claim,
    consumer,
    pod,
    running_agent,
    running_driver,
)

from services.controllers.device_taint_eviction import DeviceTaintEvictionController
from services.runtime.client import Client
from services.runtime.informer import Change, Informer
from services.testing.harness import LogHarness
from tests.support.eventually import eventually


async def test_a_pod_evicted_for_a_device_taint_is_stopped_and_its_claim_unprepared(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    changes: list[Change] = []
    assert admin.informer is not None
    admin.informer.add_listener(changes.append)
    await admin.create(RG, "resourceclaims", claim("gpu-claim"))
    informer = Informer(log.bus, name="device-taint-eviction")
    controller = DeviceTaintEvictionController(informer, admin)
    await informer.start()
    controller.register()
    task = asyncio.create_task(controller.run(), name="device-taint-eviction")
    try:
        async with running_driver(log, "node-a", state_dir), running_agent(log, "node-a", state_dir):
            p = await admin.create("", "pods", pod("user", by_name("gpu", "gpu-claim")))
            await allocate(admin, "gpu-claim", reserved_for=[consumer(p)])
            await eventually(
                lambda: (admin.get("", "pods", NS, "user") or {}).get("status", {}).get("phase") == "Running",
                what="the pod running",
            )
            assert len(cdi_files(state_dir)) == 1
            await admin.create(
                RG,
                "devicetaintrules",
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "DeviceTaintRule",
                    "metadata": {"name": "gpu-0-broken"},
                    "spec": {
                        "deviceSelector": {"driver": DRIVER, "pool": "node-a", "device": "gpu-0"},
                        "taint": {"key": "example.com/broken", "effect": "NoExecute"},
                    },
                },
            )
            await eventually(lambda: admin.get("", "pods", NS, "user") is None, what="the pod finalized")
            assert cdi_files(state_dir) == [], "its claim was unprepared"
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await informer.stop()
    versions = [c.object for c in changes if c.resource == "pods" and c.name == "user"]
    reasons = [
        (x.get("type"), x.get("reason")) for v in versions for x in (v.get("status") or {}).get("conditions") or ()
    ]
    assert ("DisruptionTarget", "DeletionByDeviceTaintManager") in reasons
    assert any(v["metadata"].get("deletionTimestamp") for v in versions), "deleted gracefully, as a kubelet expects"
