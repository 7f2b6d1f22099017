"""Preparing and unpreparing claims through the plugin socket: CDI files, idempotence, the checkpoint, restarts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml
from driver_fixtures import (
    DRIVER,
    NS,
    RG,
    allocate,
    by_name,
    cdi_files,
    claim,
    consumer,
    driver,
    pod,
    running,
    running_driver,
)

from services.driver.checkpoint import PREPARE_COMPLETED, PREPARE_STARTED, Checkpoint
from services.driver.claim_status import ClaimStatusWriter
from services.kubeletplugin.api import ClaimRef, socket_path
from services.kubeletplugin.unix_socket import PluginClient, registered_drivers
from services.runtime.client import Client
from services.testing.harness import LogHarness
from tests.support.eventually import eventually


def device_statuses(admin: Client, name: str) -> list[dict[str, Any]] | None:
    """The claim's ``status.devices`` once the driver wrote them (None before)."""
    c = admin.get(RG, "resourceclaims", NS, name)
    devices: list[dict[str, Any]] = ((c or {}).get("status") or {}).get("devices") or []
    return devices or None


def ready_devices(admin: Client, names: list[str]) -> dict[str, list[str]] | None:
    """Per claim, the devices whose Ready condition is True; None until every claim has one."""
    out = {}
    for name in names:
        entries = device_statuses(admin, name) or []
        ready = [
            e["device"] for e in entries if any(c["type"] == "Ready" and c["status"] == "True" for c in e["conditions"])
        ]
        if not ready:
            return None
        out[name] = ready
    return out


async def allocated_claim(admin: Client, name: str = "gpu-claim", *, devices: list[str] | None = None) -> ClaimRef:
    """A claim allocated on node-a and reserved for a pod bound to node-a."""
    p = await admin.create("", "pods", pod(f"{name}-user", by_name("gpu", name)))
    await admin.create(RG, "resourceclaims", claim(name))
    c = await allocate(admin, name, devices=devices or ["gpu-1"], reserved_for=[consumer(p)])
    return ClaimRef(c["metadata"]["uid"], NS, name, c["metadata"]["resourceVersion"])


def plugin(state_dir: Path) -> PluginClient:
    return PluginClient(DRIVER, socket_path(state_dir, DRIVER), timeout=20)


def counter(service: Any, name: str, outcome: str) -> float:
    value: float = getattr(service.metrics, name).labels(DRIVER, outcome)._value.get()
    return value


async def test_prepare_writes_the_cdi_spec_and_unprepare_removes_it(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    ref = await allocated_claim(admin)
    async with running_driver(log, "node-a", state_dir) as service:
        assert registered_drivers(state_dir) == {DRIVER: socket_path(state_dir, DRIVER)}
        response = await plugin(state_dir).prepare([ref])
        assert response.error == ""
        result = response.claims[ref.uid]
        assert result.error == ""
        assert result.devices == (
            {
                "requestNames": ["gpu"],
                "poolName": "node-a",
                "deviceName": "gpu-1",
                "cdiDeviceIDs": [f"k8s.gpu.example.com/gpu={ref.uid}-gpu-1", "k8s.gpu.example.com/gpu=common"],
            },
        )
        (spec_file,) = cdi_files(state_dir)
        assert spec_file == f"k8s.gpu.example.com-gpu_{ref.uid}.yaml"
        spec = yaml.safe_load((state_dir / "cdi" / spec_file).read_text())
        assert spec["kind"] == "k8s.gpu.example.com/gpu"
        assert spec["devices"] == [
            {
                "name": f"{ref.uid}-gpu-1",
                "containerEdits": {
                    "env": [
                        f"GPU_DEVICE_1_RESOURCE_CLAIM={ref.uid}",
                        "DRA_ADMIN_ACCESS=false",
                        "GPU_DEVICE_1=gpu-1",
                        "GPU_DEVICE_1_SHARING_STRATEGY=TimeSlicing",
                        "GPU_DEVICE_1_TIMESLICE_INTERVAL=Default",
                    ]
                },
            }
        ]
        assert (state_dir / "cdi" / "k8s.gpu.example.com-gpu_common.yaml").exists()
        (entry,) = await eventually(lambda: device_statuses(admin, "gpu-claim"), what="status.devices")
        assert {k: entry[k] for k in ("driver", "pool", "device")} == {
            "driver": DRIVER,
            "pool": "node-a",
            "device": "gpu-1",
        }
        assert [(c["type"], c["status"]) for c in entry["conditions"]] == [("Ready", "True")]
        assert set(entry["data"]) == {"uuid", "model", "driverVersion"}

        again = await plugin(state_dir).prepare([ref])
        assert again.claims[ref.uid] == result, "prepare is idempotent"
        assert counter(service, "prepare", "prepared") == 1
        assert counter(service, "prepare", "already_prepared") == 1
        assert service.metrics.prepared_claims.labels(DRIVER)._value.get() == 1

        gone = await plugin(state_dir).unprepare([ref])
        assert gone.claims[ref.uid].error == ""
        assert cdi_files(state_dir) == []
        assert (await plugin(state_dir).unprepare([ref])).claims[ref.uid].error == "", "unprepare is idempotent"
        assert counter(service, "unprepare", "unprepared") == 1
        assert counter(service, "unprepare", "not_prepared") == 1
    assert not socket_path(state_dir, DRIVER).exists(), "a stopped driver removes its socket"
    assert registered_drivers(state_dir) == {}


async def test_a_claim_not_reserved_for_a_pod_on_this_node_is_not_prepared(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    elsewhere = await admin.create("", "pods", pod("elsewhere", by_name("gpu", "c"), node="node-b"))
    await admin.create(RG, "resourceclaims", claim("c"))
    c = await allocate(admin, "c", reserved_for=[consumer(elsewhere)])
    ref = ClaimRef(c["metadata"]["uid"], NS, "c", c["metadata"]["resourceVersion"])
    async with running_driver(log, "node-a", state_dir):
        result = (await plugin(state_dir).prepare([ref])).claims[ref.uid]
    assert result.error == (
        f"error preparing devices for claim {ref.uid}: prepare failed: claim is not reserved for a pod on node node-a"
    )
    assert cdi_files(state_dir) == []


async def test_prepare_errors_have_dra_example_drivers_messages(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    ref = await allocated_claim(admin, devices=["gpu-42"])
    missing = ClaimRef("no-such-uid", NS, "missing")
    async with running_driver(log, "node-a", state_dir) as service:
        response = await plugin(state_dir).prepare([ref, missing])
    assert response.claims[ref.uid].error == (
        f"error preparing devices for claim {ref.uid}: prepare failed: requested GPU is not allocatable: gpu-42"
    )
    assert response.claims["no-such-uid"].error == (
        "error preparing devices for claim no-such-uid: failed to fetch ResourceClaim missing in namespace default"
    )
    assert counter(service, "prepare", "error") == 2


async def entries(state_dir: Path) -> list[Any]:
    checkpoint = Checkpoint(state_dir / "plugins" / DRIVER / "checkpoint.db")
    await checkpoint.open()
    try:
        return await checkpoint.entries()
    finally:
        await checkpoint.close()


async def test_a_driver_killed_during_prepare_prepares_each_claim_exactly_once_after_restart(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    refs = [await allocated_claim(admin, f"claim-{i}", devices=[f"gpu-{i}"]) for i in range(2)]
    reached = asyncio.Event()

    async def die_after_writing_cdi(stage: str, uid: str) -> None:
        if stage == "cdi-written" and uid == refs[1].uid:
            reached.set()
            await asyncio.Event().wait()  # the process is killed here: never continues

    first = driver(log, "node-a", state_dir, fault=die_after_writing_cdi)
    async with running(first.run, first.ready, name="driver-1") as task:
        # claim-0 completes; claim-1 stops between its CDI file and its completed checkpoint entry.
        call = asyncio.create_task(plugin(state_dir).prepare(refs))
        await asyncio.wait_for(reached.wait(), 20)
        task.cancel()  # kill the driver mid-prepare
        await asyncio.wait({task}, timeout=20)
    call.cancel()
    states = {e.claim.uid: e.state for e in await entries(state_dir)}
    assert states == {refs[0].uid: PREPARE_COMPLETED, refs[1].uid: PREPARE_STARTED}
    assert len(cdi_files(state_dir)) == 2

    async with running_driver(log, "node-a", state_dir) as second:
        response = await plugin(state_dir).prepare(refs)
        assert all(not r.error for r in response.claims.values())
        assert counter(second, "prepare", "prepared") == 1, "only the interrupted claim is prepared again"
        assert counter(second, "prepare", "already_prepared") == 1
        again = await plugin(state_dir).prepare(refs)
        assert again.claims == response.claims
        assert counter(second, "prepare", "prepared") == 1
    final = await entries(state_dir)
    assert sorted((e.claim.uid, e.state) for e in final) == sorted((r.uid, PREPARE_COMPLETED) for r in refs)
    assert cdi_files(state_dir) == sorted(f"k8s.gpu.example.com-gpu_{r.uid}.yaml" for r in refs)
    for ref, device in zip(refs, ["gpu-0", "gpu-1"], strict=True):
        spec = yaml.safe_load((state_dir / "cdi" / f"k8s.gpu.example.com-gpu_{ref.uid}.yaml").read_text())
        assert [d["name"] for d in spec["devices"]] == [f"{ref.uid}-{device}"]

    # Each claim's device reported Ready once: one status.devices entry per allocated device.
    ready = await eventually(lambda: ready_devices(admin, ["claim-0", "claim-1"]), what="Ready devices")
    assert ready == {"claim-0": ["gpu-0"], "claim-1": ["gpu-1"]}

    async with running_driver(log, "node-a", state_dir):
        response = await plugin(state_dir).unprepare(refs)
        assert all(not r.error for r in response.claims.values())
    assert cdi_files(state_dir) == [] and await entries(state_dir) == []


async def test_a_driver_killed_before_writing_the_device_status_writes_it_after_restart(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    """Prepared and checkpointed, killed before status.devices: the node agent's retry is answered from the
    checkpoint (nothing prepared twice) and the status gets written then."""
    ref = await allocated_claim(admin, "claim-s", devices=["gpu-2"])
    reached = asyncio.Event()

    async def die_before_status(stage: str, uid: str) -> None:
        if stage == "status":
            reached.set()
            await asyncio.Event().wait()

    first = driver(log, "node-a", state_dir, fault=die_before_status)
    async with running(first.run, first.ready, name="driver-1") as task:
        call = asyncio.create_task(plugin(state_dir).prepare([ref]))
        await asyncio.wait_for(reached.wait(), 20)
        task.cancel()
        await asyncio.wait({task}, timeout=20)
    call.cancel()
    assert [(e.claim.uid, e.state) for e in await entries(state_dir)] == [(ref.uid, PREPARE_COMPLETED)]
    assert device_statuses(admin, "claim-s") is None

    async with running_driver(log, "node-a", state_dir) as second:
        response = await plugin(state_dir).prepare([ref])
        assert not response.claims[ref.uid].error
        assert counter(second, "prepare", "prepared") == 0, "answered from the checkpoint"
        assert counter(second, "prepare", "already_prepared") == 1
    assert await eventually(lambda: ready_devices(admin, ["claim-s"])) == {"claim-s": ["gpu-2"]}
    (entry,) = device_statuses(admin, "claim-s") or []
    assert entry["device"] == "gpu-2"


async def test_a_restart_cleans_up_after_claims_that_are_gone(log: LogHarness, admin: Client, state_dir: Path) -> None:
    kept = await allocated_claim(admin, "kept")
    dropped = await allocated_claim(admin, "dropped", devices=["gpu-2"])
    async with running_driver(log, "node-a", state_dir):
        await plugin(state_dir).prepare([kept, dropped])
    stray = state_dir / "cdi" / "k8s.gpu.example.com-gpu_stray-uid.yaml"
    stray.write_text("cdiVersion: 0.3.0\n")  # a spec no checkpoint entry accounts for
    (state_dir / "cdi" / f"k8s.gpu.example.com-gpu_{kept.uid}.yaml").unlink()  # a completed claim's file lost
    await admin.delete(RG, "resourceclaims", NS, "dropped")
    await eventually(lambda: admin.get(RG, "resourceclaims", NS, "dropped") is None)
    async with running_driver(log, "node-a", state_dir):
        pass
    assert cdi_files(state_dir) == [f"k8s.gpu.example.com-gpu_{kept.uid}.yaml"]
    assert [e.claim.uid for e in await entries(state_dir)] == [kept.uid]


async def test_a_device_status_write_lost_with_the_driver_is_queued_again_when_it_restarts(
    log: LogHarness, admin: Client, state_dir: Path
) -> None:
    """The prepare is answered before status.devices is written (the write is queued); a driver gone before
    writing it leaves a completed claim without it, and the next run writes it with no new prepare call."""
    ref = await allocated_claim(admin, "claim-r", devices=["gpu-3"])
    async with running_driver(log, "node-a", state_dir, device_status=False):  # as if killed before the write
        response = await plugin(state_dir).prepare([ref])
        assert not response.claims[ref.uid].error
    assert [(e.claim.uid, e.state) for e in await entries(state_dir)] == [(ref.uid, PREPARE_COMPLETED)]
    assert device_statuses(admin, "claim-r") is None

    async with running_driver(log, "node-a", state_dir) as second:
        assert await eventually(lambda: ready_devices(admin, ["claim-r"])) == {"claim-r": ["gpu-3"]}
        assert counter(second, "prepare", "prepared") == 0
        assert counter(second, "prepare", "already_prepared") == 0


async def test_a_queued_device_status_write_is_dropped_once_the_claim_is_unprepared(
    log: LogHarness, admin: Client
) -> None:
    gone = await allocated_claim(admin, "claim-u", devices=["gpu-4"])
    kept = await allocated_claim(admin, "claim-k", devices=["gpu-5"])

    async def still_prepared(uid: str) -> bool:
        return uid == kept.uid  # claim-u was unprepared before its write came up

    writer = ClaimStatusWriter(
        admin.informer,  # type: ignore[arg-type]
        admin,
        driver=DRIVER,
        node="node-a",
        devices=lambda: {"gpu-4": {}, "gpu-5": {}},
        binding_conditions=False,
        still_prepared=still_prepared,
    )
    writer.report_prepared(NS, "claim-u", gone.uid)
    writer.report_prepared(NS, "claim-k", kept.uid)
    workers = asyncio.create_task(writer.run())  # one worker: claim-u is decided before claim-k is written
    try:
        (entry,) = await eventually(lambda: device_statuses(admin, "claim-k"), what="status.devices")
        assert entry["device"] == "gpu-5"
        assert device_statuses(admin, "claim-u") is None
    finally:
        writer.prepared_queue.shutdown()
        workers.cancel()
        await asyncio.gather(workers, return_exceptions=True)
