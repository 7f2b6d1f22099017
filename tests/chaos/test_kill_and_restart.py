"""A component killed just before the churn ends is started again all the same."""

from __future__ import annotations

import asyncio

import pytest

from ops.chaoskit.run import kill_and_restart


class FakeSupervisor:
    def __init__(self) -> None:
        self.events: list[str] = []
        self.killed = asyncio.Event()
        self.restart = asyncio.Event()

    async def kill(self, name: str, *, restart_after: float = 0.0) -> None:
        self.events.append(f"kill {name}")
        self.killed.set()
        if restart_after:
            await self.restart.wait()  # the restart delay, over when the test says so
        self.events.append(f"start {name}")


async def test_a_cancelled_kill_still_restarts_its_component() -> None:
    supervisor = FakeSupervisor()
    task = asyncio.create_task(kill_and_restart(supervisor, "controller-manager", 0.05))
    await supervisor.killed.wait()  # killed, waiting to restart
    task.cancel()
    supervisor.restart.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert supervisor.events == ["kill controller-manager", "start controller-manager"]


async def test_an_uncancelled_kill_restarts_once() -> None:
    supervisor = FakeSupervisor()
    await kill_and_restart(supervisor, "scheduler", 0.0)
    assert supervisor.events == ["kill scheduler", "start scheduler"]
