"""Helpers of the bus contract suite: reading to an offset, awaiting events, child processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from services.bus import Bus, Consumer, Record
from tests.support.eventually import eventually

OpenBus = Callable[..., Awaitable[Bus]]

SESSION_TIMEOUT_MS = 1000
REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("bus_process.py")


async def read_all(consumer: Consumer, end: int, *, deadline_s: float = 15.0) -> list[Record]:
    """Read until the consumer's position reaches ``end`` (fail after a deadline)."""
    records: list[Record] = []
    stop = time.monotonic() + deadline_s
    while consumer.position() < end:
        assert time.monotonic() < stop, f"stuck at position {consumer.position()} before {end}"
        records += await consumer.getmany(timeout_ms=200)
    return records


async def wait_for(event: asyncio.Event, what: str, *, timeout_s: float = 20.0) -> None:
    try:
        async with asyncio.timeout(timeout_s):
            await event.wait()
    except TimeoutError:
        pytest.fail(f"timed out after {timeout_s}s waiting for {what}")


def values(records: list[Record]) -> list[bytes | None]:
    return [r.value for r in records]


class BusProcess:
    """`bus_process.py` in a child process: a second user of the same log."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, url: str) -> BusProcess:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(CHILD),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env,
        )
        child = cls(proc)
        await child.call("open", url=url)
        return child

    async def call(self, op: str, *, timeout_s: float = 30.0, **args: Any) -> Any:
        """Run one command in the child; raise AssertionError if it failed."""
        answer = await self.ask(op, timeout_s=timeout_s, **args)
        assert answer["ok"], f"child {op} failed: {answer['error']}: {answer['message']}"
        return answer["result"]

    async def ask(self, op: str, *, timeout_s: float = 30.0, **args: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps({"op": op, **args}) + "\n").encode())
        await self.proc.stdin.drain()
        async with asyncio.timeout(timeout_s):
            line = await self.proc.stdout.readline()
        assert line, f"child exited during {op} (status {await self.proc.wait()})"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def freeze(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    async def close(self) -> None:
        if self.proc.returncode is None:
            self.thaw()
            try:
                await self.ask("close", timeout_s=10)
                async with asyncio.timeout(10):
                    await self.proc.wait()
            except (AssertionError, TimeoutError, BrokenPipeError, ConnectionResetError):
                self.proc.kill()
                await self.proc.wait()


async def end_after(bus: Any, topic: str, offset: int, partition: int = 0) -> int:
    """The topic's end offset once it has passed ``offset`` (a commit has settled)."""
    end: int = await eventually(
        lambda: bus.end_offset(topic, partition),
        until=lambda e: e > offset,
        what=f"{topic} to pass {offset}",
        interval=0.02,
    )
    return end
