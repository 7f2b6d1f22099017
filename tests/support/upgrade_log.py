"""The recorded-log upgrade fixture: what it holds, and how to record it again.

Issue 14 changes how resource.k8s.io objects are stored. A log written before
that change must still load: same objects, same resourceVersions, same
allocations. ``tests/integration/upgrade/recorded-log/`` keeps a small real
log recorded by the code of that time (its README names the commit), and
``test_recorded_log_upgrade.py`` opens a copy of it with today's code.

Recording runs the whole stack in-process (`services.stack.LocalStack`, the
embedded SQLite log, one simulated node, DRAControlPlaneController on) and
writes through the components' own client:

- the stack's DeviceClass ``gpu.example.com`` and node-1's ResourceSlice
  (published by the driver, with ``memory`` capacity);
- a ResourceClaimTemplate and a pod whose claim the claim controller
  generates, the scheduler allocates and reserves, and the node agent runs;
- a v1alpha3 claim with ``spec.controller`` (classic DRA) and a pod using it:
  the scheduler creates the PodSchedulingContext, the driver's control-plane
  controller allocates (``status.allocation.controller``), the pod runs (the
  scheduler deletes that context once the pod is bound);
- a second classic claim and a pod held by a scheduling gate, with a
  PodSchedulingContext written as the scheduler writes one (potentialNodes
  node-1 and node-2) and answered by the driver (``unsuitableNodes``).

Then the stack stops, the log file is copied with ``VACUUM INTO`` and vacuumed
again with 4 KiB pages (small, no WAL), and ``expected.json`` records every object of the ``objects`` topic as
the code of that time read it (resourceVersion stamped) plus the end offset.

Re-record (from the repository root, with the venv)::

    .venv/bin/python -m tests.support.upgrade_log tests/integration/upgrade/recorded-log

and update the commit in the README there. A re-recording only makes sense on
a commit older than the storage change; the point of the fixture is that it
was written by old code.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from services.bus import open_bus
from services.bus.port import BEGINNING, Bus
from services.kube.feature_gates import FeatureGates
from services.runtime.client import Client
from services.runtime.log_fold import read_change
from services.stack import BOOTSTRAP_USER, GPU_DRIVER, LocalStack, StackConfig
from topics.declarations import OBJECTS

RG = "resource.k8s.io"
NS = "upgrade"
GATES = "DRAControlPlaneController=true"
LOG_FILE = "bus.db"
EXPECTED_FILE = "expected.json"
T = TypeVar("T")

TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "single-gpu", "namespace": NS},
    "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": GPU_DRIVER}]}}},
}

CLASSIC_CLAIM = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "ResourceClaim",
    "metadata": {"name": "classic", "namespace": NS},
    "spec": {
        "controller": GPU_DRIVER,
        "devices": {"requests": [{"name": "gpu", "deviceClassName": GPU_DRIVER}]},
    },
}


def pod(name: str, pod_claim: dict[str, str], *, gated: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "ctr0", "image": "busybox:1.36", "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", **pod_claim}],
    }
    if gated:
        spec["schedulingGates"] = [{"name": "example.com/hold"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def classic_claim(name: str) -> dict[str, Any]:
    return {**CLASSIC_CLAIM, "metadata": {"name": name, "namespace": NS}}


def scheduling_context(owner: dict[str, Any]) -> dict[str, Any]:
    """A PodSchedulingContext as the scheduler writes one (it deletes its own once the pod is bound)."""
    meta = owner["metadata"]
    ref = {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"], "controller": True}
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "PodSchedulingContext",
        "metadata": {"name": meta["name"], "namespace": NS, "ownerReferences": [ref]},
        "spec": {"potentialNodes": ["node-1", "node-2"]},
    }


async def until(probe: Callable[[], T | None], *, what: str, timeout: float = 60.0) -> T:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (value := probe()) is None or not value:
        if loop.time() >= deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
    return value


def running(client: Client, name: str) -> dict[str, Any] | None:
    found = client.get("", "pods", NS, name)
    return found if found is not None and (found.get("status") or {}).get("phase") == "Running" else None


async def run_stack(data: Path) -> None:
    """Run the stack on a fresh log in ``data``, write the objects, stop."""
    url = f"sqlite:///{data / LOG_FILE}"
    stack = LocalStack(StackConfig(bus_url=url, data_dir=data, port=0, nodes=1, gates=FeatureGates.parse(GATES)))
    await stack.start()
    try:
        await stack.wait_ready()
        assert stack.bus is not None and stack.informer is not None
        client = Client(stack.bus, user=BOOTSTRAP_USER, informer=stack.informer, timeout=30.0)
        await client.start()
        try:
            await write_objects(client)
        finally:
            await client.close()
    finally:
        await stack.stop()


def copy_log(source: Path, target: Path) -> None:
    """``source`` compacted into ``target``: one file, no WAL, small pages."""
    target.unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(source)) as db:
        db.execute("VACUUM INTO ?", (str(target),))
    with contextlib.closing(sqlite3.connect(target)) as db:
        # The log's 16 KiB pages are mostly empty in a log this small.
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("PRAGMA page_size=4096")
        db.execute("VACUUM")


def record(out: Path) -> None:
    """Record the log into ``out``: ``bus.db`` and ``expected.json``."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rec") as tmp:
        asyncio.run(run_stack(Path(tmp)))
        copy_log(Path(tmp) / LOG_FILE, out / LOG_FILE)
    expected = asyncio.run(read_objects(f"sqlite:///{out / LOG_FILE}"))
    (out / EXPECTED_FILE).write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


async def write_objects(client: Client) -> None:
    await until(lambda: client.list(RG, "resourceslices"), what="node-1's ResourceSlice")
    await client.create("", "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    await client.create(RG, "resourceclaimtemplates", TEMPLATE)
    await client.create("", "pods", pod("template-user", {"resourceClaimTemplateName": "single-gpu"}))
    await client.create(RG, "resourceclaims", CLASSIC_CLAIM)
    await client.create("", "pods", pod("classic-user", {"resourceClaimName": "classic"}))
    await until(lambda: running(client, "template-user"), what="pod template-user running")
    await until(lambda: running(client, "classic-user"), what="pod classic-user running")
    classic = client.get(RG, "resourceclaims", NS, "classic")
    assert classic is not None and classic["status"]["allocation"]["controller"] == GPU_DRIVER, classic
    # The scheduler deleted classic-user's PodSchedulingContext when it bound the pod (PostBind). One that
    # stays: a pod held by a scheduling gate, its context written as the scheduler would, answered by the driver.
    held = await client.create("", "pods", pod("classic-held", {"resourceClaimName": "classic-held"}, gated=True))
    await client.create(RG, "resourceclaims", classic_claim("classic-held"))
    await client.create(RG, "podschedulingcontexts", scheduling_context(held))
    await until(
        lambda: (client.get(RG, "podschedulingcontexts", NS, "classic-held") or {}).get("status"),
        what="the driver's unsuitableNodes",
    )
    # Everything the components do after the pods run is written by now: wait for the log to stand still.
    await settle(client)


async def settle(client: Client) -> None:
    """Every request answered, then a few seconds for the components' follow-up writes (recording only)."""
    await client.drain_earlier_requests()
    await asyncio.sleep(3.0)
    await client.drain_earlier_requests()


async def read_objects(url: str) -> dict[str, Any]:
    """Every live object of the log's ``objects`` topic keyed by its log key, and the end offset."""
    bus = open_bus(url)
    await bus.start()
    try:
        return await _read(bus)
    finally:
        await bus.close()


async def _read(bus: Bus) -> dict[str, Any]:
    end = await bus.end_offset(OBJECTS)
    consumer = await bus.consumer(OBJECTS, start=BEGINNING)
    objects: dict[str, Any] = {}
    try:
        while consumer.position() < end:
            for rec in await consumer.getmany(timeout_ms=200):
                change = read_change(rec)
                if change is None:
                    continue
                if change.deleted:
                    objects.pop(change.key, None)
                else:
                    objects[change.key] = change.obj
    finally:
        await consumer.close()
    return {"end_offset": end, "objects": dict(sorted(objects.items()))}


def commit() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="record the upgrade-test log with the code checked out")
    parser.add_argument("out", type=Path, help="directory to write bus.db and expected.json into")
    args = parser.parse_args(argv)
    record(args.out)
    print(f"recorded {args.out / LOG_FILE} with commit {commit()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
