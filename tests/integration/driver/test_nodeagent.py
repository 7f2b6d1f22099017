"""The node agent on the log: Node registration and heartbeat, running pods with prepared claims, events,
graceful deletion, shared claims and run-time completion."""

from __future__ import annotations

import itertools
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import driver_fixtures
import orjson
import pytest
from driver_fixtures import (
    DRIVER,
    NS,
    RG,
    allocate,
    by_name,
    cdi_files,
    claim,
    consumer,
    pod,
    reserve,
    running_agent,
    running_driver,
)

from services.nodeagent import claim_cache
from services.nodeagent.agent import NodeAgent
from services.nodeagent.node_object import node_address
from services.nodeagent.pod_status import RUN_SECONDS_ANNOTATION, pod_ip
from services.runtime.atomic_files import write_atomically
from services.runtime.client import Client
from services.runtime.informer import Informer
from services.testing.harness import LogHarness
from tests.support.eventually import eventually
from topics.declarations import EVENTS

T0 = datetime(2024, 8, 14, 12, 0, 0, tzinfo=UTC)


def ready_condition(node: dict[str, Any]) -> dict[str, Any]:
    return {c["type"]: c for c in node["status"]["conditions"]}["Ready"]


async def test_registers_its_node_and_heartbeats(log: LogHarness, admin: Client, state_dir: Path) -> None:
    ticks = itertools.count()
    clock = lambda: T0 + timedelta(minutes=next(ticks))  # noqa: E731 - every reading a minute later
    async with running_agent(log, "node-a", state_dir, heartbeat_interval=0.05, clock=clock):
        node = admin.get("", "nodes", "", "node-a")
        assert node is not None
        assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "node-a"
        assert node["metadata"]["labels"]["kubernetes.io/os"] == "linux"
        assert node["metadata"]["labels"]["kubernetes.io/arch"]
        assert node["status"]["capacity"] == {"cpu": "8", "memory": "32Gi", "pods": "110"}
        assert node["status"]["allocatable"] == node["status"]["capacity"]
        assert {"type": "InternalIP", "address": node_address("node-a")} in node["status"]["addresses"]
        first = ready_condition(node)
        assert first["status"] == "True" and first["reason"] == "KubeletReady"

        def beaten() -> dict[str, Any] | None:
            current = admin.get("", "nodes", "", "node-a")
            ready = ready_condition(current) if current else None
            return ready if ready and ready["lastHeartbeatTime"] > first["lastHeartbeatTime"] else None

        later = await eventually(beaten, what="a heartbeat")
        assert later["lastTransitionTime"] == first["lastTransitionTime"]


async def test_creates_and_renews_its_node_lease_as_kubelet_does(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    """kubelet's node lease: kube-node-lease/<node>, held by the node for 40 s, owned by the Node, renewed."""
    ticks = itertools.count()
    clock = lambda: T0 + timedelta(seconds=next(ticks))  # noqa: E731 - every reading a second later
    async with running_agent(log, "node-a", state_dir, lease_renew_interval=0.05, clock=clock):
        node = admin.get("", "nodes", "", "node-a")
        assert node is not None

        def lease() -> dict[str, Any] | None:
            return admin.get("coordination.k8s.io", "leases", "kube-node-lease", "node-a")

        first = await eventually(lease, what="the node lease")
        assert first["spec"]["holderIdentity"] == "node-a"
        assert first["spec"]["leaseDurationSeconds"] == 40
        assert first["metadata"]["ownerReferences"] == [
            {"apiVersion": "v1", "kind": "Node", "name": "node-a", "uid": node["metadata"]["uid"]}
        ]
        later = await eventually(
            lease, until=lambda current: current["spec"]["renewTime"] > first["spec"]["renewTime"], what="a renewal"
        )
        assert later["metadata"]["uid"] == first["metadata"]["uid"]
        assert later["spec"]["renewTime"].endswith("Z") and "." in later["spec"]["renewTime"]

        # A lease deleted under the agent is created again (kubelet: the update fails, ensureLease creates it).
        await admin.delete("coordination.k8s.io", "leases", "kube-node-lease", "node-a")
        await eventually(
            lease,
            until=lambda current: bool(current) and current["metadata"]["uid"] != first["metadata"]["uid"],
            what="a new lease",
        )


def running(admin: Client, name: str) -> dict[str, Any] | None:
    p = admin.get("", "pods", NS, name)
    return p if p and p["status"].get("phase") == "Running" else None


@pytest.fixture
async def events(log: LogHarness) -> AsyncIterator[Informer]:
    """An informer over the `events` topic, where Events go (they skip the committer)."""
    informer = Informer(log.bus, name="events", topic=EVENTS)
    await informer.start()
    try:
        yield informer
    finally:
        await informer.stop()


def events_of(events: Informer, name: str, reason: str) -> list[dict[str, Any]]:
    found = events.store("", "events").list(NS)
    return [e for e in found if e["involvedObject"].get("name") == name and e["reason"] == reason]


async def test_runs_a_pod_whose_claim_is_reserved_and_records_its_cdi_devices(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    await admin.create(RG, "resourceclaims", claim("gpu-claim"))
    async with running_driver(log, "node-a", state_dir), running_agent(log, "node-a", state_dir):
        p = await admin.create("", "pods", pod("user", by_name("gpu", "gpu-claim")))
        c = await allocate(admin, "gpu-claim", devices=["gpu-3"], reserved_for=[consumer(p)])
        started = await eventually(lambda: running(admin, "user"), what="the pod running")
    uid = c["metadata"]["uid"]
    status = started["status"]
    assert status["hostIP"] == node_address("node-a") and status["podIP"] == pod_ip(p["metadata"]["uid"])
    assert status["startTime"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "PodReadyToStartContainers": "True",
        "Initialized": "True",
        "Ready": "True",
        "ContainersReady": "True",
        "PodScheduled": "True",
    }
    (ctr,) = status["containerStatuses"]
    assert ctr["name"] == "ctr0" and "running" in ctr["state"] and ctr["ready"] is True
    assert ctr["allocatedResourcesStatus"] == [
        {
            "name": "claim:gpu",
            # kubelet 1.37: one entry per device, its first CDI id, the health the driver reported.
            "resources": [{"resourceID": f"k8s.gpu.example.com/gpu={uid}-gpu-3", "health": "Healthy"}],
        }
    ]
    assert cdi_files(state_dir) == [f"k8s.gpu.example.com-gpu_{uid}.yaml"]


async def test_a_claim_not_reserved_for_the_pod_gets_kubelets_event_and_a_retry(
    log: LogHarness, admin: Client, state_dir: Path, events: Informer
) -> None:
    await admin.create(RG, "resourceclaims", claim("gpu-claim"))
    c = await allocate(admin, "gpu-claim")
    async with running_driver(log, "node-a", state_dir), running_agent(log, "node-a", state_dir):
        p = await admin.create("", "pods", pod("user", by_name("gpu", "gpu-claim")))
        (event,) = await eventually(lambda: events_of(events, "user", "FailedPrepareDynamicResources"))
        assert event["type"] == "Warning"
        assert event["message"] == (
            "Failed to prepare dynamic resources: "
            f"pod user({p['metadata']['uid']}) is not allowed to use resource claim gpu-claim({c['metadata']['uid']})"
        )
        assert event["source"] == {"component": "kubelet", "host": "node-a"}
        assert event["involvedObject"]["uid"] == p["metadata"]["uid"] and event["involvedObject"]["kind"] == "Pod"
        assert (admin.get("", "pods", NS, "user") or {})["status"]["phase"] == "Pending"
        await eventually(
            lambda: [e for e in events_of(events, "user", "FailedPrepareDynamicResources") if e["count"] >= 2],
            what="the retry counted on the same event",
        )
        await reserve(admin, "gpu-claim", p)
        await eventually(lambda: running(admin, "user"), what="the pod running once reserved")


async def test_a_missing_driver_is_reported(log: LogHarness, admin: Client, state_dir: Path, events: Informer) -> None:
    await admin.create(RG, "resourceclaims", claim("gpu-claim"))
    async with running_agent(log, "node-a", state_dir):
        p = await admin.create("", "pods", pod("user", by_name("gpu", "gpu-claim")))
        await allocate(admin, "gpu-claim", reserved_for=[consumer(p)])
        (event,) = await eventually(
            lambda: [e for e in events_of(events, "user", "FailedPrepareDynamicResources") if "Plugin" in e["message"]]
        )
    assert event["message"] == (
        f"Failed to prepare dynamic resources: failed to get DRA Plugin client for plugin name {DRIVER}: "
        f"plugin name {DRIVER} not found in the list of registered DRA plugins"
    )


async def test_graceful_deletion_stops_unprepares_and_finalizes(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    await admin.create(RG, "resourceclaims", claim("gpu-claim"))
    async with running_driver(log, "node-a", state_dir), running_agent(log, "node-a", state_dir):
        p = await admin.create("", "pods", pod("user", by_name("gpu", "gpu-claim")))
        await allocate(admin, "gpu-claim", reserved_for=[consumer(p)])
        await eventually(lambda: running(admin, "user"))
        assert len(cdi_files(state_dir)) == 1
        deleting = await admin.delete("", "pods", NS, "user")
        assert deleting["metadata"]["deletionTimestamp"], "a running pod is deleted gracefully"
        await eventually(lambda: admin.get("", "pods", NS, "user") is None, what="the pod finalized")
        assert cdi_files(state_dir) == [], "its claim was unprepared"


async def test_a_claim_shared_by_two_pods_is_unprepared_with_the_last_one(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    await admin.create(RG, "resourceclaims", claim("shared"))
    async with running_driver(log, "node-a", state_dir), running_agent(log, "node-a", state_dir):
        p0 = await admin.create("", "pods", pod("pod0", by_name("shared-gpu", "shared")))
        p1 = await admin.create("", "pods", pod("pod1", by_name("shared-gpu", "shared")))
        c = await allocate(admin, "shared", reserved_for=[consumer(p0), consumer(p1)])
        first = await eventually(lambda: running(admin, "pod0"))
        second = await eventually(lambda: running(admin, "pod1"))
        ids = [s["status"]["containerStatuses"][0]["allocatedResourcesStatus"] for s in (first, second)]
        assert ids[0] == ids[1], "both pods get the same device"
        assert cdi_files(state_dir) == [f"k8s.gpu.example.com-gpu_{c['metadata']['uid']}.yaml"]

        await admin.delete("", "pods", NS, "pod0")
        await eventually(lambda: admin.get("", "pods", NS, "pod0") is None)
        assert len(cdi_files(state_dir)) == 1, "pod1 still uses the claim"
        await admin.delete("", "pods", NS, "pod1")
        await eventually(lambda: admin.get("", "pods", NS, "pod1") is None)
        await eventually(lambda: cdi_files(state_dir) == [], what="the claim unprepared")


async def test_a_pod_with_a_run_time_completes_and_releases_its_claim(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    await admin.create(RG, "resourceclaims", claim("gpu-claim"))
    async with running_driver(log, "node-a", state_dir), running_agent(log, "node-a", state_dir):
        p = await admin.create(
            "", "pods", pod("batch", by_name("gpu", "gpu-claim"), annotations={RUN_SECONDS_ANNOTATION: "0.3"})
        )
        await allocate(admin, "gpu-claim", reserved_for=[consumer(p)])
        await eventually(lambda: running(admin, "batch"))

        def done() -> dict[str, Any] | None:
            current = admin.get("", "pods", NS, "batch")
            return current if current and current["status"]["phase"] == "Succeeded" else None

        finished = await eventually(done, what="the pod completed")
        (ctr,) = finished["status"]["containerStatuses"]
        assert ctr["state"]["terminated"]["exitCode"] == 0 and ctr["state"]["terminated"]["reason"] == "Completed"
        await eventually(lambda: cdi_files(state_dir) == [], what="the claim unprepared")
        # A terminated pod is deleted at once (no graceful period left).
        await admin.delete("", "pods", NS, "batch")
        await eventually(lambda: admin.get("", "pods", NS, "batch") is None)


async def test_pods_of_other_nodes_are_left_alone(log: LogHarness, admin: Client, state_dir: Path) -> None:
    async with running_agent(log, "node-a", state_dir):
        await admin.create("", "pods", pod("elsewhere", node="node-b"))
        await admin.create("", "pods", pod("here", node="node-a"))
        await eventually(lambda: running(admin, "here"))
    assert (admin.get("", "pods", NS, "elsewhere") or {})["status"]["phase"] == "Pending"


@pytest.mark.parametrize("restart_driver", [False, True])
async def test_a_pod_deleted_while_the_agent_was_down_gets_its_claim_unprepared(
    log: LogHarness, admin: Client, state_dir: Path, restart_driver: bool
) -> None:
    await admin.create(RG, "resourceclaims", claim("gpu-claim"))
    async with running_driver(log, "node-a", state_dir):
        async with running_agent(log, "node-a", state_dir):
            p = await admin.create("", "pods", pod("user", by_name("gpu", "gpu-claim")))
            await allocate(admin, "gpu-claim", reserved_for=[consumer(p)])
            await eventually(lambda: running(admin, "user"))
        # Force-deleted while no agent runs.
        await admin.delete("", "pods", NS, "user", gracePeriodSeconds=0)
        await eventually(lambda: admin.get("", "pods", NS, "user") is None)
        assert len(cdi_files(state_dir)) == 1
        if not restart_driver:
            async with running_agent(log, "node-a", state_dir):
                await eventually(lambda: cdi_files(state_dir) == [], what="the orphaned claim unprepared")
    if restart_driver:
        async with running_driver(log, "node-a", state_dir), running_agent(log, "node-a", state_dir):
            await eventually(lambda: cdi_files(state_dir) == [], what="the orphaned claim unprepared")


async def test_registration_tries_again_after_a_conflict(log: LogHarness, admin: Client, state_dir: Path) -> None:
    """Someone else changes the Node between the agent's read and its status write (as a heartbeat of
    the agent's previous run still in flight does): the write gets a real 409 and the agent tries again."""
    agent = NodeAgent(log.bus, node="node-a", state_dir=state_dir, heartbeat_interval=60)
    real = agent.client.update_status
    conflicts: list[int] = []

    async def racing_update_status(group: str, resource: str, obj: dict[str, Any], **kw: Any) -> dict[str, Any]:
        if not conflicts:
            current = admin.get("", "nodes", "", "node-a")
            assert current is not None
            labels = {**current["metadata"].get("labels", {}), "racer": "was-here"}
            await admin.update("", "nodes", {**current, "metadata": {**current["metadata"], "labels": labels}})
        try:
            return await real(group, resource, obj, **kw)
        except Exception as err:
            conflicts.append(getattr(err, "code", 0))
            raise

    agent.client.update_status = racing_update_status  # type: ignore[method-assign]
    async with driver_fixtures.running(agent.run, agent.ready, name="nodeagent-node-a"):
        node = admin.get("", "nodes", "", "node-a")
        assert node is not None
        assert conflicts == [409]
        assert node["metadata"]["labels"]["racer"] == "was-here"
        assert ready_condition(node)["status"] == "True"


async def test_the_pod_is_reported_running_while_the_checkpoint_after_its_prepare_is_written(
    log: LogHarness, admin: Client, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim is checkpointed before the driver is called (and waited for); the checkpoint that marks it
    prepared is written while the Running status goes out, and lands after it."""
    held = threading.Event()
    release = threading.Event()
    written: list[list[bool]] = []  # per checkpoint on disk: each claim's "prepared"

    def write(path: Path, data: bytes, **options: Any) -> None:
        prepared = [c["prepared"] for c in orjson.loads(data)["claims"]]
        if any(prepared):
            held.set()
            assert release.wait(30)
        write_atomically(path, data, **options)
        written.append(prepared)

    monkeypatch.setattr(claim_cache, "write_atomically", write)
    await admin.create(RG, "resourceclaims", claim("gpu-claim"))
    async with running_driver(log, "node-a", state_dir), running_agent(log, "node-a", state_dir):
        p = await admin.create("", "pods", pod("user", by_name("gpu", "gpu-claim")))
        await allocate(admin, "gpu-claim", devices=["gpu-3"], reserved_for=[consumer(p)])
        await eventually(lambda: running(admin, "user"), what="the pod running")
        assert held.is_set(), "the checkpoint marking the claim prepared is still being written"
        assert written[-1] == [False], "the claim was recorded before the driver was called"
        release.set()
        await eventually(lambda: written[-1] == [True], what="the claim marked prepared on disk")
    (info,) = orjson.loads((state_dir / "nodeagent" / "claims.json").read_bytes())["claims"]
    assert info["prepared"] and info["podUIDs"] == [p["metadata"]["uid"]]
