"""PreBind's claim writes and the binding reach the committer as one chain, and the log holds what it held before.

The scheduler sends the claim's finalizer (update), its allocation and
reservation (status, on the version the finalizer's write made) and the
pod's binding in one append, each chained to the one before; the objects log
then holds the same three records, in the same order, as when they were sent
one after the other.
"""

from __future__ import annotations

from typing import Any

from scheduler_scenario import NS, RG, device_class, pod, running_stack

from services.kube.resourceclaim import FINALIZER
from services.scheduler.service import SCHEDULER_USER
from tests.conftest import BusUrl
from tests.support.eventually import eventually
from tests.support.log_reading import read_topic
from topics.declarations import OBJECTS, REQUESTS
from topics.envelope import Request, decode_event, decode_request


async def test_finalizer_allocation_and_binding_are_one_chain(bus_url: BusUrl) -> None:
    async with running_stack(bus_url()) as stack:
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.node_with_devices("node-1", devices=2)
        created = await stack.admin.create("", "pods", pod("web-0", template="gpu-template"))
        await stack.give_generated_claim(created, "web-0-gpu")
        assert await eventually(lambda: stack.node_of("web-0"), what="web-0 bound") == "node-1"

        sent: list[Request] = [
            request
            for record in await read_topic(stack.log.bus, REQUESTS)
            if record.value is not None
            and (request := decode_request(record.value)).user.name == SCHEDULER_USER.name
            and request.namespace == NS
        ]
        # The scheduler's writes for the pod: nothing but the chain (and a chained write is applied once).
        assert [(r.op, r.resource, r.name, r.options.get("subresource")) for r in sent] == [
            ("update", "resourceclaims", "web-0-gpu", None),
            ("update_status", "resourceclaims", "web-0-gpu", None),
            ("create", "pods", "web-0", "binding"),
        ]
        finalizer, status, binding = sent
        assert (finalizer.after, status.after, binding.after) == ("", finalizer.id, status.id)
        assert status.after_version and not binding.after_version
        assert status.object is not None and "resourceVersion" not in status.object["metadata"]

        written: list[tuple[int, dict[str, Any]]] = []
        for record in await read_topic(stack.log.bus, OBJECTS):
            if record.value is None:
                continue
            event = decode_event(record.value)
            if event.request_id in (finalizer.id, status.id, binding.id):
                written.append((record.offset, event.object))
        assert [offset for offset, _ in written] == sorted(offset for offset, _ in written)
        (_, after_finalizer), (_, after_status), (_, bound) = written
        assert after_finalizer["metadata"]["finalizers"] == [FINALIZER] and not after_finalizer.get("status")
        assert after_status["status"]["reservedFor"] == [
            {"resource": "pods", "name": "web-0", "uid": created["metadata"]["uid"]}
        ]
        assert after_status["status"]["allocation"]["devices"]["results"][0]["pool"] == "node-1"
        assert bound["spec"]["nodeName"] == "node-1"
