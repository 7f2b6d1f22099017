"""A committer that dies mid-batch: every request is still committed exactly once.

The active committer is stopped inside a transaction — its batch's object
records and replies are in the log, uncommitted — by SIGKILL of its process
(on both backends) or by cancelling its task (on the embedded log). A standby
committer takes over: its transactional producer fences the dead one and
aborts the open transaction, it recovers from `objects` and takes the requests
from the last committed offset. Clients time out and send again under the same
request ids while this happens; at the end every request is sent once more.
The log must hold exactly one object record per request id, and every reply a
client got must point at that record.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from runtime_support import ADMIN, StallingBus, create_claim, entries, request_id_counts

from services.apiserver.admission_chain import build_admission
from services.apiserver.committer_hooks import wired_core
from services.bus import Bus, open_bus
from services.runtime.client import Client
from services.runtime.committer import Committer
from services.runtime.committer_core import Outcome
from tests.support.log_reading import read_topic
from topics.declarations import declarations
from topics.envelope import Reply

FIRST_WAVE = 60  # committed by the first leader before it is stopped
SECOND_WAVE = 140  # in flight while it dies
CLIENTS = 4
CHILD = Path(__file__).with_name("committer_process.py")
REPO = Path(__file__).resolve().parents[3]


@contextlib.asynccontextmanager
async def started_bus(url: str) -> AsyncIterator[Bus]:
    bus = open_bus(url)
    await bus.start()
    try:
        await bus.ensure_topics(declarations())
        yield bus
    finally:
        await bus.close()


@contextlib.asynccontextmanager
async def running(committer: Committer) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(committer.run())
    try:
        yield task
    finally:
        committer.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def new_committer(bus: Bus, **kwargs: object) -> Committer:
    return Committer(bus, wired_core(admission=build_admission()), **kwargs)  # type: ignore[arg-type]


async def survive_a_crash(bus: Bus, crash: Callable[[], Awaitable[None]]) -> None:
    """Send two waves of creates; ``crash`` the leader once it holds the second; check the log.

    A standby committer runs throughout and must take over.
    """
    clients = [Client(bus, user=ADMIN, timeout=2.0, attempts=30) for _ in range(CLIENTS)]
    for client in clients:
        await client.start()
    standby = new_committer(bus, member_id="standby")
    try:
        async with running(standby):
            requests = [
                create_claim(clients[i % CLIENTS], f"crash-{i:03d}", request_id=f"req-{i:03d}", generate=i % 3 == 0)
                for i in range(FIRST_WAVE + SECOND_WAVE)
            ]
            replies: dict[str, Reply] = {}

            async def submit(i: int) -> None:
                replies[requests[i].id] = await clients[i % CLIENTS].submit(requests[i])

            await asyncio.gather(*(submit(i) for i in range(FIRST_WAVE)))
            assert not standby.is_leader.is_set()
            second = [asyncio.create_task(submit(i)) for i in range(FIRST_WAVE, len(requests))]
            await crash()
            await asyncio.wait_for(standby.is_leader.wait(), 60)
            await asyncio.wait_for(asyncio.gather(*second), 120)
            assert standby.batches > 0

            # Every request once more, under its id: answered from the log, never applied again.
            again = await asyncio.gather(*(clients[i % CLIENTS].submit(r) for i, r in enumerate(requests)))
            assert {r.code for r in again} == {200}
            assert [name_of(r) for r in again] == [name_of(replies[r.id]) for r in requests]
    finally:
        for client in clients:
            await client.close()

    log = entries(await read_topic(bus))
    assert request_id_counts(log) == dict.fromkeys((r.id for r in requests), 1)
    by_offset = {e.offset: e for e in log}
    for request in requests:
        reply = replies[request.id]
        assert reply.code in (200, 201), reply
        assert reply.object is not None
        committed = by_offset[int(reply.object["metadata"]["resourceVersion"])]
        assert (committed.request_id, committed.type) == (request.id, "ADDED")


def name_of(reply: Reply) -> str:
    assert reply.object is not None, reply
    return str(reply.object["metadata"]["name"])


class CommitterProcess:
    """`committer_process.py` in a child process."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, url: str, *, hold_after: int) -> CommitterProcess:
        path = os.pathsep.join([str(CHILD.parent), str(REPO), os.environ.get("PYTHONPATH", "")])
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(CHILD), url, str(hold_after),
            stdout=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": path},
        )  # fmt: skip
        return cls(proc)

    async def expect(self, line: str, timeout: float = 60) -> None:
        assert self.proc.stdout is not None
        got = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        assert got.decode().strip() == line, f"committer process said {got!r} (exit {self.proc.returncode})"

    async def kill(self) -> None:
        self.proc.kill()  # SIGKILL: no abort, no goodbye to the group
        await self.proc.wait()


async def test_a_committer_killed_mid_batch_commits_every_request_exactly_once(url: str) -> None:
    async with started_bus(url) as bus:
        child = await CommitterProcess.start(url, hold_after=FIRST_WAVE)
        try:
            await child.expect("leader")

            async def kill_when_held() -> None:
                await child.expect("held")
                await child.kill()

            await survive_a_crash(bus, kill_when_held)
        finally:
            if child.proc.returncode is None:
                await child.kill()


async def test_a_committer_cancelled_mid_batch_commits_every_request_exactly_once(tmp_path: Path) -> None:
    async with started_bus(f"sqlite://{tmp_path / 'bus.db'}?session_timeout_ms=1000") as bus:
        stalling = StallingBus(bus)
        committed = 0

        def arm(outcomes: list[Outcome]) -> None:
            nonlocal committed
            committed += len(outcomes)
            stalling.armed = committed >= FIRST_WAVE and not stalling.held.is_set()

        leader = new_committer(stalling.as_bus(), on_batch=arm, member_id="leader")
        async with running(leader) as leader_task:
            await asyncio.wait_for(leader.is_leader.wait(), 30)

            async def cancel_when_held() -> None:
                await asyncio.wait_for(stalling.held.wait(), 60)
                leader_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await leader_task

            await survive_a_crash(bus, cancel_when_held)
        assert stalling.endings and isinstance(stalling.endings[0], asyncio.CancelledError)

