"""``draplane replay --scheduler`` over a recorded run: the same scheduler decides alike; a change shows where.

Each test records a real run on its own log: the scheduler service over a
committer (``LogHarness``), three nodes of which two have one GPU each, a
pod whose claim names a DeviceClass that does not exist yet (unschedulable,
then scheduled once the class appears), two pods racing for the last GPU
(one binds, the other is unschedulable until the winner goes away and its
claim is released) and two pods without claims. The replay runs after the
live scheduler has stopped, on a bus of its own, as a person debugging
would run it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from services.bus import open_bus
from services.kube.feature_gates import FeatureGates
from services.replay.scheduler_diff import RecordedAttempt, Window
from services.replay.scheduler_replay import replay_scheduler
from services.replay.scheduler_report import Report
from services.scheduler.decisions import Decision, read_decisions
from services.scheduler.service import SchedulerConfig
from tests.conftest import BusUrl
from tests.integration.scheduler.scheduler_scenario import (
    NS,
    RG,
    claim,
    device_class,
    node,
    pod,
    running_stack,
)
from tests.support.eventually import eventually

REPO = Path(__file__).resolve().parents[3]
CLAIM_PODS = {"early", "racer-a", "racer-b"}
PLAIN_PODS = {"web-1", "web-2"}


def plain_pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "containers": [
                {"name": "ctr", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "100m"}}}
            ]
        },
    }


@dataclass(frozen=True)
class Recording:
    url: str
    decisions: list[Decision]
    class_offset: int  # where the DeviceClass was created
    winner: str
    loser: str

    def pods(self) -> set[str]:
        return {d.pod.split("/", 1)[1] for d in self.decisions}

    def attempts_of(self, *names: str) -> list[Decision]:
        return [d for d in self.decisions if d.pod.split("/", 1)[1] in names]


async def record_run(url: str) -> Recording:
    async with running_stack(url) as stack:
        for name in ("node-1", "node-2"):
            await stack.node_with_devices(name, devices=1)
        await stack.admin.create("", "nodes", node("node-3"))
        await stack.admin.create(RG, "resourceclaims", claim("early-gpu"))
        await stack.admin.create("", "pods", pod("early", claim_name="early-gpu"))
        await eventually(lambda: stack.attempts("unschedulable") == 1, what="early's attempt without a class")
        created = await stack.admin.create(RG, "deviceclasses", device_class())
        await eventually(lambda: stack.node_of("early"), what="early bound")

        for name in ("claim-a", "claim-b"):
            await stack.admin.create(RG, "resourceclaims", claim(name))
        await asyncio.gather(
            stack.admin.create("", "pods", pod("racer-a", claim_name="claim-a")),
            stack.admin.create("", "pods", pod("racer-b", claim_name="claim-b")),
            stack.admin.create("", "pods", plain_pod("web-1")),
            stack.admin.create("", "pods", plain_pod("web-2")),
        )
        winner = await eventually(
            lambda: next((n for n in ("racer-a", "racer-b") if stack.node_of(n)), None), what="one racer bound"
        )
        loser = "racer-b" if winner == "racer-a" else "racer-a"
        await eventually(lambda: stack.node_of("web-1") and stack.node_of("web-2"), what="plain pods bound")
        await eventually(lambda: stack.attempts("unschedulable") >= 2, what="the loser's attempt")

        # The winner goes away and its claim is released, as the claim controller would: the loser binds.
        await stack.admin.delete("", "pods", NS, winner, gracePeriodSeconds=0)
        await eventually(lambda: stack.pod(winner) is None, what="winner deleted")
        await stack.release("claim-a" if winner == "racer-a" else "claim-b")
        await eventually(lambda: stack.node_of(loser), what="loser bound")
        await stack.scheduler.flush()
        recorded = await read_decisions(stack.log.bus)
    return Recording(url, recorded, int(created["metadata"]["resourceVersion"]), winner, loser)


async def replay(url: str, **options: Any) -> Report:
    bus = open_bus(url)
    await bus.start()
    try:
        return await replay_scheduler(bus, **options)
    finally:
        await bus.close()


def key(attempt: RecordedAttempt) -> tuple[str, int]:
    return attempt.pod, attempt.decision_offset


async def test_replaying_a_recorded_run_decides_every_attempt_alike(bus_url: BusUrl) -> None:
    run = await record_run(bus_url())
    results = {(d.pod, d.record["result"]) for d in run.decisions}
    assert (f"{NS}/early", "unschedulable") in results
    assert (f"{NS}/{run.loser}", "unschedulable") in results
    assert (f"{NS}/{run.loser}", "scheduled") in results
    assert all(isinstance(d.record.get("objectsPosition"), int) for d in run.decisions)

    report = await replay(run.url)

    assert report.not_replayed == []
    assert [c.differ for c in report.compared if c.differ] == []
    assert report.attempts == report.same == len(run.decisions)
    assert {c.attempt.decision_offset for c in report.compared} == {d.offset for d in run.decisions}
    scheduled = [c for c in report.compared if c.replayed.result == "scheduled" and c.attempt.pod != f"{NS}/web-1"]
    assert any(c.replayed.allocation for c in scheduled)  # devices were compared, not just results

    # --from OFFSET selects the attempts that saw that record; -n/--name one pod's.
    after_class = await replay(run.url, window=Window(start=("offset", run.class_offset)))
    expected = [d for d in run.decisions if d.record["objectsPosition"] - 1 >= run.class_offset]
    assert 0 < after_class.attempts == len(expected) < len(run.decisions)
    assert after_class.different == 0
    early = await replay(run.url, window=Window(namespace=NS, name="early"))
    assert [c.replayed.result for c in early.compared] == ["unschedulable", "scheduled"]
    assert early.different == 0


async def test_replay_without_dra_differs_in_exactly_the_pods_with_claims(bus_url: BusUrl) -> None:
    run = await record_run(bus_url())

    # DRA can be turned off only at 1.31 (the seeds' release); 1.37 locks it on.
    gates = FeatureGates.parse("DynamicResourceAllocation=false", release="1.31")
    report = await replay(run.url, config=SchedulerConfig(gates=gates))

    assert report.not_replayed == []
    assert report.attempts == len(run.decisions)
    differing = {c.attempt.pod.split("/", 1)[1] for c in report.differences()}
    assert differing == CLAIM_PODS
    assert report.different == len(run.attempts_of(*CLAIM_PODS))
    assert all(c.replayed.result == "scheduled" and not c.replayed.allocation for c in report.differences())
    for comparison in report.differences():
        if comparison.recorded.result == "scheduled":
            assert "allocation" in comparison.differ
        else:
            assert comparison.differ[0] == "result"
    assert report.same == len(run.attempts_of(*PLAIN_PODS))


def tampered_class(obj: dict[str, Any]) -> dict[str, Any]:
    """The DeviceClass as if its selector matched another driver's devices."""
    selectors = [{"cel": {"expression": 'device.driver == "other.example.com"'}}]
    return {**obj, "spec": {**obj["spec"], "selectors": selectors}}


def rewrite_class(group: str, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
    return tampered_class(obj) if (group, plural) == (RG, "deviceclasses") else obj


async def test_replay_with_a_tampered_device_class_reports_the_attempts_that_got_devices(bus_url: BusUrl) -> None:
    run = await record_run(bus_url())

    report = await replay(run.url, rewrite=rewrite_class)

    # The attempts that were scheduled with a device become unschedulable; every other attempt
    # (no class yet, the loser's while no device was free, the plain pods) decides alike.
    recorded_with_devices = {d.offset for d in run.attempts_of(*CLAIM_PODS) if d.record["result"] == "scheduled"}
    assert len(recorded_with_devices) == 3  # early, the winner, the loser at last
    assert {c.attempt.decision_offset for c in report.differences()} == recorded_with_devices
    for comparison in report.differences():
        assert comparison.differ == ("result", "node", "allocation", "rejections")
        assert set(comparison.replayed.rejections.values()) == {"DynamicResources"}
    assert report.same == len(run.decisions) - 3
    assert report.not_replayed == []


async def draplane(*argv: str) -> tuple[int, str, str]:
    """Run the real command line: (exit status, stdout, stderr)."""
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
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_command_line_reports_differences_and_exits_zero(bus_url: BusUrl, tmp_path: Path) -> None:
    run = await record_run(bus_url())
    n = len(run.decisions)

    status, out, err = await draplane("replay", "--scheduler", "--bus", run.url)
    assert (status, out) == (0, f"replay-scheduler: attempts={n} same={n} different=0\n"), err

    override = tmp_path / "class.yaml"
    override.write_text(yaml.safe_dump(tampered_class(device_class())))
    status, out, err = await draplane("replay", "--scheduler", "--bus", run.url, "--override", str(override))
    assert status == 0, err
    *lines, summary = out.splitlines()
    assert summary == f"replay-scheduler: attempts={n} same={n - 3} different=3"
    assert len(lines) == 3
    for line in lines:
        pod_name = line.split(" ", 1)[0].split("/", 1)[1]
        assert pod_name in CLAIM_PODS
        assert ": recorded scheduled on node-" in line
        assert "; replayed unschedulable (DynamicResources on node-1, node-2, node-3)" in line
        assert line.endswith(" — result, node, allocation, rejections differ")

    status, out, err = await draplane(
        "replay", "--scheduler", "--bus", run.url, "--emulated-version", "1.31",
        "--feature-gates", "DynamicResourceAllocation=false", "-o", "json",
    )  # fmt: skip
    assert status == 0, err
    doc = orjson.loads(out)
    assert (doc["attempts"], doc["different"], doc["notReplayed"]) == (n, len(run.attempts_of(*CLAIM_PODS)), 0)
    assert {d["pod"] for d in doc["differences"]} == {f"{NS}/{p}" for p in CLAIM_PODS}

    status, out, err = await draplane("replay", "--scheduler", "--bus", run.url, "--feature-gates", "Nope=true")
    assert status == 2
    assert 'invalid argument "Nope=true" for "--feature-gates" flag: unrecognized feature gate: Nope' in err
    status, out, err = await draplane(
        "replay", "--scheduler", "--bus", run.url, "--feature-gates", "DynamicResourceAllocation=false"
    )
    assert status == 2  # the default release, 1.37, locks DRA on
    assert "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true" in err
    status, out, err = await draplane("replay", "--scheduler", "--bus", run.url, "--emulated-version", "1.33")
    assert status == 2
    assert 'invalid argument "1.33" for "--emulated-version" flag: emulation version 1.33 is not one of' in err
