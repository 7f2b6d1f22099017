"""Binding conditions on a running scheduler (1.37 gates), both backends.

The device of the node's slice carries a binding condition
(``example.com/attached``), a failure condition and ``bindsToNode``. The test
plays the driver's controller: it writes the device's conditions into the
claim's ``status.devices``. What happened is read from the claim's versions
as the scheduler's informer saw them, from the decisions log and the
scheduler's metrics — never from the wall clock. The one timer involved is
the scheduler's own ``bindingTimeout`` (1 s, the least kube-scheduler's
args validation allows) in the second scenario.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from scheduler_scenario import CLASS, DRIVER, NS, RG, Stack, device_class, node, pod

from services.api.machinery.status import StatusError
from services.apiserver.admission_chain import build_admission
from services.kube.feature_gates import FeatureGates
from services.runtime.informer import Obj
from services.scheduler.service import SchedulerConfig, SchedulerService
from services.testing.harness import LogHarness
from tests.conftest import BusUrl
from tests.support.eventually import eventually

GATES = FeatureGates(release="1.37")
ATTACHED = "example.com/attached"
FAILED = "example.com/attach-failed"
NODE = "node-1"
DEVICE = "fabric-0"
REPO = Path(__file__).resolve().parents[3]


@contextlib.asynccontextmanager
async def stack_1_37(url: str, *, binding_timeout: float | None = None) -> AsyncIterator[Stack]:
    async with LogHarness.running(url, admission=build_admission(gates=GATES)) as log:
        admin = await log.client(timeout=30.0)
        config = SchedulerConfig(gates=GATES, binding_timeout=binding_timeout)
        scheduler = SchedulerService(log.bus, config=config)
        task = asyncio.create_task(scheduler.run(), name="scheduler")
        try:
            await asyncio.wait_for(scheduler.ready.wait(), 60)
            yield Stack(log, admin, scheduler, task)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class ClaimHistory:
    """Every version of the claim the scheduler's informer delivered: allocated or not, reserved or not."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.states: list[tuple[bool, bool]] = []

    def _record(self, obj: Obj) -> None:
        if obj["metadata"]["name"] != self.name:
            return
        status = obj.get("status") or {}
        state = (bool(status.get("allocation")), bool(status.get("reservedFor")))
        if not self.states or self.states[-1] != state:
            self.states.append(state)

    def on_add(self, obj: Obj) -> None:
        self._record(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self._record(new)

    def on_delete(self, obj: Obj) -> None:
        pass


async def explain(url: str, name: str) -> str:
    """``draplane explain pod NAME --bus URL``'s output (it reads the log the scheduler runs on)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.cli",
        "explain",
        "pod",
        name,
        "--bus",
        url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return out.decode()


def fabric_slice() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",  # the storage (hub) layout the runtime client writes
        "kind": "ResourceSlice",
        "metadata": {"name": f"{NODE}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": NODE,
            "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": DEVICE,
                    "basic": {
                        "bindsToNode": True,
                        "bindingConditions": [ATTACHED],
                        "bindingFailureConditions": [FAILED],
                    },
                }
            ],
        },
    }


def claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": [{"name": "fabric", "deviceClassName": CLASS}]}},
    }


async def setup(stack: Stack, claim_name: str) -> ClaimHistory:
    history = ClaimHistory(claim_name)
    stack.scheduler.informer.add_handler(RG, "resourceclaims", history)
    await stack.admin.create("", "nodes", node(NODE))
    await stack.admin.create(RG, "resourceslices", fabric_slice())
    await stack.admin.create(RG, "deviceclasses", device_class())
    await stack.admin.create(RG, "resourceclaims", claim(claim_name))
    return history


def reserved_allocation(stack: Stack, claim_name: str) -> dict[str, Any] | None:
    """The claim when it is allocated and reserved for a pod (PreBind's writes), else None."""
    current = stack.admin.get(RG, "resourceclaims", NS, claim_name)
    status = (current or {}).get("status") or {}
    return current if status.get("allocation") and status.get("reservedFor") else None


async def report_attached(stack: Stack, current: dict[str, Any]) -> None:
    """The driver's controller: the device is attached (ATTACHED True, FAILED False)."""
    conditions = [
        {
            "type": t,
            "status": s,
            "reason": "FabricAttach",
            "message": f"{t} is {s}",
            "lastTransitionTime": "2026-12-02T07:00:00Z",
        }
        for t, s in ((ATTACHED, "True"), (FAILED, "False"))
    ]
    status = {
        **current["status"],
        "devices": [{"driver": DRIVER, "pool": NODE, "device": DEVICE, "conditions": conditions}],
    }
    await stack.admin.update_status(RG, "resourceclaims", {**current, "status": status})


def bc_allocations(stack: Stack, status: str) -> float:
    """``scheduler_dra_bindingconditions_allocations_total``: PreBind waits on a device, by how they ended."""
    return stack.sample(
        "scheduler_dra_bindingconditions_allocations_total", profile="default-scheduler", driver=DRIVER, status=status
    )


async def test_a_binding_condition_set_true_by_the_controller_lets_the_pod_bind(bus_url: BusUrl) -> None:
    url = bus_url()
    async with stack_1_37(url) as stack:
        history = await setup(stack, "attach-me")
        await stack.admin.create("", "pods", pod("fabric", claim_name="attach-me"))

        waiting = await eventually(lambda: reserved_allocation(stack, "attach-me"), timeout=30, what="PreBind wrote")
        binding = stack.scheduler.dynamic_resources.binding
        await eventually(lambda: binding.waiting() == 1, timeout=30, what="PreBind waits")
        [result] = waiting["status"]["allocation"]["devices"]["results"]
        assert result["bindingConditions"] == [ATTACHED] and result["bindingFailureConditions"] == [FAILED]
        assert waiting["status"]["allocation"]["allocationTimestamp"]
        assert stack.node_of("fabric") is None  # allocated and reserved, not bound
        out = await explain(url, f"{NS}/fabric")
        assert (
            f"claim {NS}/attach-me: binding condition pending: <driver={DRIVER}, pool={NODE}> {DEVICE} "
            f"pending=[{ATTACHED}]"
        ) in out

        await report_attached(stack, waiting)
        await eventually(lambda: stack.node_of("fabric"), timeout=30, what="fabric bound")
        assert stack.node_of("fabric") == NODE
        decisions = await stack.decisions("fabric")
        assert [(d.record["attempt"], d.record["result"], d.record["binding"]["result"]) for d in decisions] == [
            (1, "scheduled", "bound")
        ]
        assert history.states == [(False, False), (True, True)]
        assert bc_allocations(stack, "success") == 1
        assert bc_allocations(stack, "timeout") == bc_allocations(stack, "failure") == 0
        reasons = [(e["type"], e["reason"], e["message"]) for e in await stack.events("fabric")]
        assert ("Normal", "BindingConditionsPending", f"waiting for binding conditions for device on node {NODE}") in (
            reasons
        )
        assert binding.waiting() == 0


async def test_a_binding_condition_that_times_out_deallocates_the_claim_and_the_pod_is_retried(
    bus_url: BusUrl,
) -> None:
    async with stack_1_37(bus_url(), binding_timeout=1.0) as stack:
        history = await setup(stack, "never-attached")
        await stack.admin.create("", "pods", pod("stuck", claim_name="never-attached"))

        # Attempt 1 waits and times out; attempt 2's Filter finds the claim timed out and PostFilter deallocates
        # it; the deallocation requeues the pod, and attempt 3 allocates the device again.
        await eventually(lambda: stack.attempts("error") >= 1, timeout=30, what="PreBind timed out")
        assert bc_allocations(stack, "timeout") >= 1
        await eventually(lambda: stack.attempts("unschedulable") >= 1, timeout=30, what="claim deallocated")
        await eventually(lambda: len(history.states) >= 5, timeout=30, what="allocated again")
        assert history.states[:5] == [(False, False), (True, True), (True, False), (False, False), (True, True)]
        assert stack.node_of("stuck") is None

        # Now the controller attaches the device while the pod waits again: it binds.
        async def attach() -> bool:
            current = reserved_allocation(stack, "never-attached")
            if current is None or current["status"].get("devices"):
                return False  # not allocated right now, or already reported for this allocation
            with contextlib.suppress(StatusError):  # deallocated meanwhile: try on the next allocation
                await report_attached(stack, current)
            return True

        async def bound() -> str | None:
            if stack.node_of("stuck") is None:
                await attach()
            return stack.node_of("stuck")

        await eventually(bound, timeout=60, what="stuck bound")
        decisions = await stack.decisions("stuck")
        records = [d.record for d in decisions]
        assert records[0]["result"] == "error"
        assert records[0]["binding"]["message"] == (
            'running PreBind plugin "DynamicResources": device binding timeout: context deadline exceeded'
        )
        assert records[1]["result"] == "unschedulable"
        assert records[1]["postFilterMessage"] == (
            "deallocation of ResourceClaim completed, preemption: 0/1 nodes are available: "
            "1 Preemption is not helpful for scheduling."
        )
        assert records[1]["message"].startswith("0/1 nodes are available: 1 resourceclaim not available on the node.")
        assert records[-1]["binding"]["result"] == "bound"
        assert bc_allocations(stack, "success") == 1
        timed_out = [r for r in records if "device binding timeout" in (r.get("binding") or {}).get("message", "")]
        assert bc_allocations(stack, "timeout") == len(timed_out) >= 1
        assert [r["attempt"] for r in records] == list(range(1, len(records) + 1))
