"""A committer in a process of its own, for the tests that kill it with SIGKILL.

    python committer_process.py BUS_URL HOLD_AFTER

It runs `services.runtime.committer.Committer` with the apiserver's admission
chain on a `StallingBus`, prints ``leader`` once it leads, and once it has
committed HOLD_AFTER requests it holds its next batch mid-transaction (object
records and replies sent, request offsets not, nothing committed) and prints
``held``. Then it waits for its SIGKILL.
"""

from __future__ import annotations

import asyncio
import sys

from runtime_support import StallingBus

from services.apiserver.admission_chain import build_admission
from services.apiserver.committer_hooks import wired_core
from services.bus import open_bus
from services.runtime.committer import Committer
from services.runtime.committer_core import Outcome


async def main(url: str, hold_after: int) -> None:
    bus = StallingBus(open_bus(url))
    await bus.start()
    committed = 0

    def on_batch(outcomes: list[Outcome]) -> None:
        nonlocal committed
        committed += len(outcomes)
        if committed >= hold_after:
            bus.armed = True

    committer = Committer(bus.as_bus(), wired_core(admission=build_admission()), on_batch=on_batch)
    task = asyncio.create_task(committer.run())
    await committer.is_leader.wait()
    print("leader", flush=True)
    await bus.held.wait()
    print("held", flush=True)
    await task


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
