"""1,000 pods for 1,000 devices on 100 nodes: every pod bound, no device allocated twice."""

from __future__ import annotations

from collections import Counter

from scheduler_scenario import NS, RG, claim, device_class, node, pod, resource_slice, running_stack

from tests.conftest import BusUrl
from tests.support.eventually import eventually

NODES = 100
DEVICES_PER_NODE = 10
PODS = NODES * DEVICES_PER_NODE


async def test_a_full_cluster_of_claims_gets_every_device_exactly_once(bus_url: BusUrl) -> None:
    async with running_stack(bus_url()) as stack:
        names = [f"node-{i:03d}" for i in range(NODES)]
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.create_all("", "nodes", [node(n) for n in names])
        await stack.create_all(RG, "resourceslices", [resource_slice(n, devices=DEVICES_PER_NODE) for n in names])
        await stack.create_all(RG, "resourceclaims", [claim(f"claim-{i:04d}") for i in range(PODS)])
        pods = await stack.create_all(
            "", "pods", [pod(f"pod-{i:04d}", claim_name=f"claim-{i:04d}") for i in range(PODS)]
        )

        def bound() -> bool:
            return all(stack.node_of(p["metadata"]["name"]) for p in pods)

        await eventually(bound, timeout=600, what=f"all {PODS} pods bound")
        await stack.scheduler.flush()

        claims = {c["metadata"]["name"]: c for c in stack.admin.list(RG, "resourceclaims", NS)}
        devices: Counter[tuple[str, str, str]] = Counter()
        for p in pods:
            name = p["metadata"]["name"]
            c = claims[name.replace("pod-", "claim-")]
            (result,) = c["status"]["allocation"]["devices"]["results"]
            devices[(result["driver"], result["pool"], result["device"])] += 1
            # The claim is reserved for this pod, and its device sits on the node the pod went to.
            assert c["status"]["reservedFor"] == [{"resource": "pods", "name": name, "uid": p["metadata"]["uid"]}]
            assert result["pool"] == stack.node_of(name)
        assert len(devices) == PODS
        assert max(devices.values()) == 1
        per_node = Counter(pool for _, pool, _ in devices)
        assert set(per_node.values()) == {DEVICES_PER_NODE}
        assert stack.attempts("scheduled") == PODS
        assert stack.attempts("error") == 0
