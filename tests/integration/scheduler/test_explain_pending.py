"""``draplane explain pod`` says why a pod is pending: counts per request, the failing count or constraint,
the claim it waits for, or that there is no such pod (issue 17, "why" 2).

Each case runs the scheduler on its own log and then the real command line on
that log. Before: every case printed ``cannot allocate all claims`` per node,
or the same ``No scheduling attempts recorded`` for a missing claim and a
missing pod.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from scheduler_scenario import CLASS, NS, RG, Stack, claim, device_class, pod, running_stack

from tests.conftest import BusUrl
from tests.support.eventually import eventually

REPO = Path(__file__).resolve().parents[3]


async def explain(url: str, name: str) -> tuple[int, str, str]:
    """``draplane explain pod NAME --bus URL``: exit status, stdout, stderr."""
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
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def gpu_claim(name: str, *, count: int = 1, selector: str = "", match: str = "") -> dict[str, Any]:
    obj = claim(name)
    request = obj["spec"]["devices"]["requests"][0]
    request.update({"allocationMode": "ExactCount", "count": count})
    if selector:
        request["selectors"] = [{"cel": {"expression": selector}}]
    if match:
        obj["spec"]["devices"]["constraints"] = [{"matchAttribute": match}]
    return obj


async def pending(stack: Stack, name: str, claim_obj: dict[str, Any]) -> None:
    """Create the claim and its pod; return once the scheduler recorded an attempt that left it pending."""
    before = stack.attempts("unschedulable")
    await stack.admin.create(RG, "resourceclaims", claim_obj)
    await stack.admin.create("", "pods", pod(name, claim_name=claim_obj["metadata"]["name"]))
    await eventually(lambda: stack.attempts("unschedulable") > before, what=f"{name} unschedulable")
    await stack.scheduler.flush()


async def test_devices_run_out(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:
        await stack.admin.create(RG, "deviceclasses", device_class())
        for n in ("node-1", "node-2"):
            await stack.node_with_devices(n, devices=1)
        for name in ("first", "second"):
            await stack.admin.create(RG, "resourceclaims", gpu_claim(f"{name}-gpu"))
            await stack.admin.create("", "pods", pod(name, claim_name=f"{name}-gpu"))
            await eventually(lambda name=name: stack.node_of(name), what=f"{name} bound")  # type: ignore[misc]
        await pending(stack, "third", gpu_claim("third-gpu"))

        status, out, _ = await explain(url, "default/third")
    assert status == 0
    assert out.startswith("Pod default/third is not scheduled.\n")
    assert f"claim default/third-gpu, request gpu: needs 1 device(s) of class {CLASS}" in out
    assert "2 device(s) match the class and selectors on 2 node(s); 0 free on 0 node(s), at most 0 on one node" in out
    assert (
        "not enough free devices on 2 node(s) (node-1, node-2): "
        "claim default/third-gpu, request gpu: count 1 > free 0 (1 matching)"
    ) in out
    assert "DynamicResources (UnschedulableAndUnresolvable): cannot allocate all claims" in out  # Kubernetes' words


async def test_count_too_high(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.node_with_devices("node-1", devices=2)
        await stack.node_with_devices("node-2", devices=1)
        await pending(stack, "big", gpu_claim("big-gpu", count=3))

        status, out, _ = await explain(url, "default/big")
    assert status == 0
    assert "claim default/big-gpu, request gpu: needs 3 device(s)" in out
    assert "3 device(s) match the class and selectors on 2 node(s); 3 free on 2 node(s), at most 2 on one node" in out
    assert "not enough free devices on 1 node(s) (node-1): claim default/big-gpu, request gpu: count 3 > free 2" in out
    assert "not enough free devices on 1 node(s) (node-2): claim default/big-gpu, request gpu: count 3 > free 1" in out


async def test_selector_matches_nothing(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.node_with_devices("node-1", devices=2)
        selector = f'device.attributes["{CLASS}"].model == "NO-SUCH-MODEL"'
        await pending(stack, "picky", gpu_claim("picky-gpu", selector=selector))

        status, out, _ = await explain(url, "default/picky")
    assert status == 0
    assert "claim default/picky-gpu, request gpu: needs 1 device(s)" in out
    assert "    no device matches the class and selectors\n" in out
    assert "count 1 > free 0 (0 matching)" in out


async def test_constraint_that_no_devices_meet(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.node_with_devices("node-1", devices=2)  # both devices publish index 0 and 1
        await pending(stack, "pair", gpu_claim("pair-gpu", count=2, match=f"{CLASS}/index"))

        status, out, _ = await explain(url, "default/pair")
    assert status == 0
    assert (
        f"a constraint cannot be met on 1 node(s) (node-1): claim default/pair-gpu: matchAttribute {CLASS}/index"
    ) in out


async def test_missing_claim_is_waited_for_in_kubernetes_words(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:
        await stack.node_with_devices("node-1", devices=1)
        await stack.admin.create("", "pods", pod("early", claim_name="later"))
        # PreEnqueue keeps the pod out of the queue: no attempt is ever recorded.
        await stack.scheduler.flush()

        status, out, _ = await explain(url, f"{NS}/early")
    assert status == 0
    assert out == (
        "Pod default/early is not scheduled.\n"
        '  waiting for ResourceClaim default/later to be created — could not find ResourceClaim "default/later"\n'
        "\n"
        "No scheduling attempts recorded for pod default/early.\n"
    )


async def test_claim_from_a_template_not_created_yet(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:  # no claim controller runs here: the claim never comes
        await stack.admin.create("", "pods", pod("templated", template="gpu-template"))
        await stack.scheduler.flush()

        status, out, _ = await explain(url, f"{NS}/templated")
    assert status == 0
    assert (
        "  waiting for the ResourceClaim of pod claim gpu (from template gpu-template) to be created — "
        'pod "default/templated": ResourceClaim not created yet\n'
    ) in out


async def test_missing_pod_is_not_found(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:
        await stack.node_with_devices("node-1", devices=1)
        status, out, err = await explain(url, "default/nobody")
    assert (status, out, err) == (1, "", "error: pod default/nobody not found\n")


async def test_a_deleted_pod_shows_its_recorded_attempts(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:
        await stack.admin.create(RG, "deviceclasses", device_class())
        await stack.node_with_devices("node-1", devices=1)
        await pending(stack, "gone", gpu_claim("gone-gpu", count=2))
        await stack.admin.delete("", "pods", NS, "gone")

        status, out, _ = await explain(url, f"{NS}/gone")
    assert status == 0
    assert out.startswith("Pod default/gone does not exist (any more); what its attempts recorded:\n\nPod default/gone: ")
    assert "cannot allocate all claims" in out
