"""The controller-manager starts the device-taint-eviction controller at 1.37, not at ``--emulated-version=1.31``."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from services.controllers.manager import ControllerManager
from services.kube.feature_gates import FeatureGates
from services.testing.harness import LogHarness


@pytest.mark.parametrize(("release", "runs"), [("1.37", True), ("1.31", False)])
async def test_device_taint_eviction_runs_only_where_its_gate_is_on(log: LogHarness, release: str, runs: bool) -> None:
    manager = ControllerManager(log.bus, gates=FeatureGates(release=release))
    task = asyncio.create_task(manager.run(), name="controller-manager")
    try:
        await asyncio.wait_for(manager.ready.wait(), 60)
        assert (manager.taint_eviction is not None) is runs
        if manager.taint_eviction is not None:
            assert manager.taint_eviction.watch_rules
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
