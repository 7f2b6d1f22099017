"""``draplane explain pod NS/NAME`` prints every recorded attempt of a pod, read from the decisions log."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import orjson
from scheduler_scenario import RG, claim, device_class, pod, running_stack

from tests.conftest import BusUrl
from tests.support.eventually import eventually

REPO = Path(__file__).resolve().parents[3]


async def draplane(*argv: str) -> str:
    """Run the real command line and return its stdout."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.cli",
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_explain_shows_each_attempt_with_reasons_node_and_allocation(bus_url: BusUrl) -> None:
    url = bus_url()
    async with running_stack(url) as stack:
        for n in ("node-1", "node-2"):
            await stack.node_with_devices(n, devices=1)
        await stack.admin.create(RG, "resourceclaims", claim("train-gpu"))
        await stack.admin.create("", "pods", pod("train", claim_name="train-gpu"))
        await eventually(lambda: stack.attempts("unschedulable") == 1, what="the first attempt")
        await stack.admin.create(RG, "deviceclasses", device_class())
        node = await eventually(lambda: stack.node_of("train"), what="train bound")
        await stack.scheduler.flush()

        text = await draplane("explain", "pod", "default/train", "--bus", url)
        assert text.startswith("Pod default/train: 2 attempt(s)\n")
        first, second = text.split("\nAttempt ")[1:]
        assert first.startswith("1  ")
        assert "Unschedulable" in first.splitlines()[0]
        assert "message: 0/2 nodes are available: request gpu: device class gpu.example.com does not exist." in first
        assert (
            "DynamicResources (UnschedulableAndUnresolvable): request gpu: device class gpu.example.com does not exist"
            in first
        )
        assert "2 node(s): node-1, node-2" in first
        assert second.startswith("2  ")
        assert f"Scheduled → {node} (bound)" in second.splitlines()[0]
        assert "claim default/train-gpu:" in second
        assert f"request gpu: gpu.example.com/{node}/gpu-0" in second

        as_json = await draplane("explain", "pod", "train", "-n", "default", "--bus", url, "-o", "json")
        records = [orjson.loads(line) for line in as_json.splitlines()]
        assert [(r["attempt"], r["result"]) for r in records] == [(1, "unschedulable"), (2, "scheduled")]
        assert records[1]["binding"] == {"result": "bound", "node": node}
