"""A component killed just before the churn ends is started again all the same."""

from __future__ import annotations

import asyncio

import pytest

from ops.chaoskit.run import kill_and_restart


class FakeSupervisor:
    def __init__(self) -> None:
        self.events: list[str] = []

    async def kill(self, name: str, *, restart_after: float = 0.0) -> None:
        self.events.append(f"kill {name}")
        await asyncio.sleep(restart_after)
        self.events.append(f"start {name}")


async def test_a_cancelled_kill_still_restarts_its_component() -> None:
    supervisor = FakeSupervisor()
    task = asyncio.create_task(kill_and_restart(supervisor, "controller-manager", 0.05))
    await asyncio.sleep(0.01)  # killed, waiting to restart
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert supervisor.events == ["kill controller-manager", "start controller-manager"]


async def test_an_uncancelled_kill_restarts_once() -> None:
    supervisor = FakeSupervisor()
    await kill_and_restart(supervisor, "scheduler", 0.0)
    assert supervisor.events == ["kill scheduler", "start scheduler"]
