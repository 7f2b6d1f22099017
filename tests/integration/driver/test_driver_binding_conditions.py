"""The driver's controller side of binding conditions: it sets them True in status.devices, also after a restart.

The scheduler waits in PreBind until every binding condition of an allocated
device is True. The first tests allocate the claim with the admin client as
the scheduler would, with the device's ``bindingConditions`` copied into the
result; the last runs the real scheduler and kills the driver while the
scheduler waits on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from driver_fixtures import DEVICE_CLASS, DRIVER, NS, RG, by_name, claim, pod, running, running_driver

from services.driver.profiles import parse_profile_spec
from services.kube.feature_gates import FeatureGates
from services.runtime.client import Client
from services.runtime.informer import Change
from services.scheduler.service import SchedulerConfig, SchedulerService
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


def ready_node(name: str) -> dict[str, Any]:
    resources = {"cpu": "4", "memory": "32Gi", "pods": "110"}
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


async def test_a_driver_killed_during_the_schedulers_binding_wait_recovers_on_restart(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    """The real scheduler (1.37, binding conditions on) allocates a device with a binding condition while its
    driver is down and waits in PreBind; the pod stays unbound. The restarted driver sets the condition, the
    pod binds: the claim was allocated once, to one device, and is reserved for the pod."""
    _, profile = parse_profile_spec("gpu,binding-conditions,count=2")
    await admin.create("", "nodes", ready_node("node-a"))
    await admin.create(RG, "deviceclasses", DEVICE_CLASS)
    changes: list[Change] = []
    assert admin.informer is not None
    admin.informer.add_listener(changes.append)
    scheduler = SchedulerService(log.bus, config=SchedulerConfig(gates=FeatureGates(release="1.37")))
    async with running(scheduler.run, scheduler.ready, name="scheduler"):
        async with running_driver(log, "node-a", state_dir, profile=profile):
            await eventually(lambda: admin.list(RG, "resourceslices"), what="the driver's slice")
        # The driver is down (killed: its slice stays); the scheduler allocates and waits.
        await admin.create(RG, "resourceclaims", claim("waiting"))
        await admin.create("", "pods", pod("p", by_name("gpu", "waiting"), node=""))
        allocated = await eventually(
            lambda: (admin.get(RG, "resourceclaims", NS, "waiting") or {}).get("status", {}).get("allocation"),
            what="the claim allocated",
        )
        (result,) = allocated["devices"]["results"]
        assert result["bindingConditions"] == ["BindingConditions"]
        assert condition_status(admin, "waiting", result["device"]) is None
        assert not (admin.get("", "pods", NS, "p") or {})["spec"].get("nodeName")

        async with running_driver(log, "node-a", state_dir, profile=profile):
            bound = await eventually(
                lambda: (admin.get("", "pods", NS, "p") or {})["spec"].get("nodeName"), what="the pod bound"
            )
            assert bound == "node-a"
            assert condition_status(admin, "waiting", result["device"]) == "True"
        current = admin.get(RG, "resourceclaims", NS, "waiting") or {}
        assert current["status"]["allocation"]["devices"]["results"] == [result]
        assert [e["name"] for e in current["status"]["reservedFor"]] == ["p"]

        # Allocated once: the claim's allocation appeared once and never went away; no other claim holds it.
        versions = [c.object for c in changes if c.resource == "resourceclaims" and c.name == "waiting"]
        allocated_states = [bool((v.get("status") or {}).get("allocation")) for v in versions]
        assert allocated_states.index(True) > 0 and False not in allocated_states[allocated_states.index(True) :]
        assert [c["metadata"]["name"] for c in admin.list(RG, "resourceclaims", NS)] == ["waiting"]
        success = scheduler.registry.get_sample_value(
            "scheduler_dra_bindingconditions_allocations_total",
            {"profile": "default-scheduler", "driver": DRIVER, "status": "success"},
        )
        assert success == 1  # one PreBind wait, ended by the condition
