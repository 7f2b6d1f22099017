"""Two control-plane replicas of one driver: the Lease holder answers PodSchedulingContexts, the standby does not.

The replicas run as ``draplane driver --control-plane`` runs them, with
leader election on (short timings). The first leader answers a pod's
potentialNodes; once it is stopped (its Lease released, as on SIGTERM) the
standby takes the driver's Lease and answers the next pod's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from driver_fixtures import DEVICE_CLASS, DRIVER, NS, RG, by_name, claim, driver, pod, running_driver

from services.apiserver.admission_chain import build_admission
from services.driver.inventory import default_inventory
from services.driver.service import DriverService, controller_lease_name
from services.kube.feature_gates import FeatureGates
from services.kube.leader_election import ElectionTimings
from services.runtime.client import Client
from services.runtime.leader_election import LeaderElectionConfig
from services.testing.harness import LogHarness
from tests.support.eventually import eventually

TIMINGS = ElectionTimings(lease_duration=5, renew_deadline=4, retry_period=0.5)


@pytest.fixture
async def log(tmp_path: Path) -> AsyncIterator[LogHarness]:
    gates = FeatureGates.parse("DRAControlPlaneController=true")
    async with LogHarness.running(f"sqlite://{tmp_path / 'bus.db'}", admission=build_admission(gates=gates)) as harness:
        yield harness


async def answer(admin: Client, name: str) -> list[dict[str, Any]] | None:
    """Create a classic claim, its pod and a PodSchedulingContext listing node-a; the controller's answer."""
    await admin.create(RG, "resourceclaims", claim(name, controller=DRIVER))
    p = await admin.create("", "pods", pod(name, by_name("gpu", name), node=""))
    owner = {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": p["metadata"]["uid"], "controller": True}
    await admin.create(
        RG,
        "podschedulingcontexts",
        {
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "PodSchedulingContext",
            "metadata": {"name": name, "namespace": NS, "ownerReferences": [owner]},
            "spec": {"potentialNodes": ["node-a", "node-b"]},
        },
    )

    def status() -> list[dict[str, Any]] | None:
        ctx = admin.get(RG, "podschedulingcontexts", NS, name)
        return ((ctx or {}).get("status") or {}).get("resourceClaims")

    return await eventually(status, what=f"{name}'s unsuitable nodes")


async def test_only_the_lease_holder_acts_and_the_standby_takes_over(
    log: LogHarness, admin: Client, state_dir: Path, tmp_path: Path
) -> None:
    await admin.create(RG, "deviceclasses", DEVICE_CLASS)
    async with running_driver(log, "node-a", state_dir, devices=default_inventory("node-a", count=2)):
        await eventually(lambda: admin.list(RG, "resourceslices"), what="node-a's slice")
        replicas: dict[str, DriverService] = {
            who: driver(
                log,
                "",
                tmp_path / who,
                control_plane=True,
                leader_election=LeaderElectionConfig(name=controller_lease_name(DRIVER), identity=who, timings=TIMINGS),
            )
            for who in ("cp-a", "cp-b")
        }
        tasks = {who: asyncio.create_task(r.run(), name=who) for who, r in replicas.items()}
        try:

            def leader() -> str | None:
                leading = [w for w, r in replicas.items() if r.elector is not None and r.elector.leading.is_set()]
                assert len(leading) <= 1, leading
                return leading[0] if leading else None

            first = await eventually(leader, what="a replica leads")
            assert await answer(admin, "one") == [{"name": "gpu", "unsuitableNodes": ["node-b"]}]
            lease = admin.get("coordination.k8s.io", "leases", "kube-system", "dra-controller-leader-gpu-example-com")
            assert lease is not None and lease["spec"]["holderIdentity"] == first
            assert (
                replicas[first].registry.get_sample_value(
                    "leader_election_master_status", {"name": "dra-controller-leader-gpu-example-com"}
                )
                == 1
            )

            tasks[first].cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await tasks[first]
            second = await eventually(leader, what="the standby leads")
            assert second != first
            assert await answer(admin, "two") == [{"name": "gpu", "unsuitableNodes": ["node-b"]}]
        finally:
            for task in tasks.values():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
