"""A scheduler killed mid-stream and started again re-derives everything from the log.

The first instance dies after PreBind wrote allocation and reservation for
most pods but before it bound them. The second reads all that from the log,
binds those pods to the nodes their claims were allocated on, and allocates
nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Sequence

from scheduler_scenario import NS, RG, claim, device_class, node, pod, resource_slice, running_stack

from services.scheduler.client import Write, WriteResult
from services.scheduler.service import SchedulerService
from tests.conftest import BusUrl
from tests.support.eventually import eventually

NODES = 4
DEVICES = 5
PODS = NODES * DEVICES


async def test_restarted_scheduler_finishes_without_allocating_a_device_twice(bus_url: BusUrl) -> None:
    async with running_stack(bus_url()) as stack:
        # The first scheduler binds five pods; then its Bind calls never return, as if it died right
        # after PreBind had written allocation and reservation for every other pod. The binding goes
        # either alone or chained after PreBind's writes (binding_chain): then only those reach the log.
        api = stack.scheduler.api
        create, write_chain = api.create, api.write_chain
        bindings = 0

        def dies(subresource: str) -> bool:
            nonlocal bindings
            if subresource != "binding":
                return False
            bindings += 1
            return bindings > 5

        async def dying_create(resource: tuple[str, str], obj: object, **kwargs: str) -> dict[str, object]:
            if dies(kwargs.get("subresource", "")):
                await asyncio.Event().wait()
            return await create(resource, obj, **kwargs)  # type: ignore[arg-type]

        async def dying_chain(writes: Sequence[Write]) -> list[WriteResult]:
            if writes and dies(writes[-1].subresource):
                await write_chain(writes[:-1])
                await asyncio.Event().wait()
            return await write_chain(writes)

        api.create = dying_create  # type: ignore[method-assign]
        api.write_chain = dying_chain  # type: ignore[method-assign]
        names = [f"node-{i}" for i in range(NODES)]
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.create_all("", "nodes", [node(n) for n in names])
        await stack.create_all(RG, "resourceslices", [resource_slice(n, devices=DEVICES) for n in names])
        await stack.create_all(RG, "resourceclaims", [claim(f"claim-{i:02d}") for i in range(PODS)])
        pods = await stack.create_all(
            "", "pods", [pod(f"pod-{i:02d}", claim_name=f"claim-{i:02d}") for i in range(PODS)]
        )

        def bound() -> int:
            return sum(1 for p in pods if stack.node_of(p["metadata"]["name"]))

        def reserved() -> int:
            claims = stack.admin.list(RG, "resourceclaims", NS)
            return sum(1 for c in claims if (c.get("status") or {}).get("reservedFor"))

        await eventually(lambda: reserved() == PODS, what="every claim allocated and reserved")
        await eventually(lambda: bound() == 5, what="five pods bound")
        stack.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stack.task

        second = SchedulerService(stack.log.bus, config=stack.scheduler.config)
        task = asyncio.create_task(second.run())
        try:
            await eventually(lambda: bound() == PODS, timeout=120, what="all pods bound after the restart")
            await second.flush()
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

        devices: Counter[tuple[str, str]] = Counter()
        for p in pods:
            name = p["metadata"]["name"]
            c = stack.admin.get(RG, "resourceclaims", NS, name.replace("pod-", "claim-"))
            assert c is not None
            (result,) = c["status"]["allocation"]["devices"]["results"]
            devices[(result["pool"], result["device"])] += 1
            assert result["pool"] == stack.node_of(name)
            assert c["status"]["reservedFor"] == [{"resource": "pods", "name": name, "uid": p["metadata"]["uid"]}]
        assert len(devices) == PODS and max(devices.values()) == 1
