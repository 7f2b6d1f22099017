"""SIGINT and SIGTERM stop a long-running command cleanly whenever they come: during its start, while it
serves (also before it waits for them), and during its stop, which they never cut short.

The signals are real (raised in this process): `stopping.run` takes them on
its event loop and gives the test's own handlers back when it returns.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator

import pytest

from services.cmd import stopping
from services.cmd.common import until_signalled_or_died
from services.runtime.supervised import Supervised


class Unhandled(Exception):
    """A signal reached the test's own handler: `stopping.run` did not take it."""


def _unhandled(signum: int, frame: object) -> None:
    raise Unhandled(signal.Signals(signum).name)


@pytest.fixture(autouse=True)
def handlers() -> Iterator[None]:
    """The test's own handlers (a SIGTERM or SIGINT that `run` did not take fails the test, not the run)."""
    previous = {sig: signal.signal(sig, _unhandled) for sig in stopping.SIGNALS}
    try:
        yield
        assert {sig: signal.getsignal(sig) for sig in stopping.SIGNALS} == dict.fromkeys(stopping.SIGNALS, _unhandled)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@pytest.mark.parametrize("sig", stopping.SIGNALS, ids=lambda s: s.name)
def test_a_signal_during_the_start_cuts_it_short_and_the_command_stops_cleanly(sig: signal.Signals) -> None:
    seen: list[str] = []

    async def start() -> None:
        try:
            signal.raise_signal(sig)
            await asyncio.Event().wait()  # catching up with a long log, say
        finally:
            seen.append("start cancelled")

    async def main() -> int:
        try:
            await stopping.unless_stopped(start())
            seen.append("served")
            return 1
        finally:
            seen.append("stopped")

    assert stopping.run(main) == 0
    assert seen == ["start cancelled", "stopped"]


@pytest.mark.parametrize("sig", stopping.SIGNALS, ids=lambda s: s.name)
def test_a_signal_before_the_command_waits_for_one_still_stops_it(sig: signal.Signals) -> None:
    """The race of "ready" printed and Ctrl-C at once: the signal came before anything waited for it."""

    async def main() -> int:
        signal.raise_signal(sig)
        await asyncio.sleep(0.01)  # the loop has taken it by now
        return await until_signalled_or_died(Supervised(), name="test")

    assert stopping.run(main) == 0


@pytest.mark.parametrize("sig", stopping.SIGNALS, ids=lambda s: s.name)
def test_a_signal_during_the_stop_does_not_cut_it_short(sig: signal.Signals) -> None:
    seen: list[str] = []

    async def dies() -> None:
        return

    async def main() -> int:
        tasks = Supervised()
        tasks.spawn("dies", dies())
        try:
            return await until_signalled_or_died(tasks, name="test")
        finally:
            signal.raise_signal(sig)  # a supervisor's SIGTERM as the process stops on its own
            await asyncio.sleep(0.01)
            seen.append("stop finished")

    assert stopping.run(main) == 1  # the death's status: the signal changed nothing
    assert seen == ["stop finished"]


def test_a_start_that_fails_fails_the_command() -> None:
    async def start() -> None:
        raise OSError("address in use")

    async def main() -> int:
        await stopping.unless_stopped(start())
        return 0

    with pytest.raises(OSError, match="address in use"):
        stopping.run(main)
