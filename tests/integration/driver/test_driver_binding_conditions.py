"""The driver's controller side of binding conditions: it sets them True in status.devices, also after a restart.

The scheduler (another slice of issue 16) waits in PreBind until every
binding condition of an allocated device is True; here the claim is
allocated by the admin client as the scheduler would, with the device's
``bindingConditions`` copied into the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from driver_fixtures import DRIVER, NS, RG, claim, running_driver

from services.runtime.client import Client
from services.testing.harness import LogHarness
from tests.support.eventually import eventually

BINDING = {"bindingConditions": ["BindingConditions"], "bindingFailureConditions": ["BindingFailureConditions"]}


async def allocate_with_binding_conditions(admin: Client, name: str, device: str, *, node: str = "node-a") -> None:
    await admin.create(RG, "resourceclaims", claim(name))
    current = admin.get(RG, "resourceclaims", NS, name)
    assert current is not None
    result = {"request": "gpu", "driver": DRIVER, "pool": node, "device": device, **BINDING}
    selector = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    allocation = {"devices": {"results": [result]}, "nodeSelector": selector}
    await admin.update_status(RG, "resourceclaims", {**current, "status": {"allocation": allocation}})


def condition_status(admin: Client, name: str, device: str) -> str | None:
    c = admin.get(RG, "resourceclaims", NS, name) or {}
    for entry in (c.get("status") or {}).get("devices") or ():
        if entry["device"] == device:
            found: dict[str, Any] = {x["type"]: x["status"] for x in entry.get("conditions") or ()}
            return found.get("BindingConditions")
    return None


async def test_the_driver_sets_the_binding_condition_of_its_allocated_device(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    async with running_driver(log, "node-a", state_dir):
        await allocate_with_binding_conditions(admin, "bound", "gpu-2")
        assert await eventually(lambda: condition_status(admin, "bound", "gpu-2"), what="the condition") == "True"


async def test_a_claim_allocated_while_the_driver_was_down_gets_its_condition_after_restart(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    """A driver killed during the scheduler's binding-condition wait: on restart its informer's initial list
    queues the claim again, so the wait ends; a claim of another node's pool is left alone."""
    async with running_driver(log, "node-a", state_dir):
        pass
    await allocate_with_binding_conditions(admin, "waiting", "gpu-1")
    await allocate_with_binding_conditions(admin, "elsewhere", "gpu-1", node="node-b")
    assert condition_status(admin, "waiting", "gpu-1") is None
    async with running_driver(log, "node-a", state_dir):
        assert await eventually(lambda: condition_status(admin, "waiting", "gpu-1")) == "True"
        assert condition_status(admin, "elsewhere", "gpu-1") is None
