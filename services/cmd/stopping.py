"""How a long-running command stops: SIGINT or SIGTERM, whenever it comes, is one clean stop (exit status 0).

Why this module exists: a command starts (opens the log, binds its ports,
catches up with the log), serves, and stops (closes all that, empties its
lock file). A signal may come at any of these moments. Left to asyncio, a
SIGINT cancels the main task wherever it is and SIGTERM ends the process on
the spot, until a handler of the command's own is in place; and a stop that
is itself cancelled half-way can leave a thread behind that keeps the
process from exiting (`services.runtime.sqlite_file`). So `run` installs the
handlers on the event loop before the command's first step, and a signal
only ever asks for the stop (`requested`):

- while the command starts (`unless_stopped`), its start is cancelled and
  `Stopped` raised, so the command's own ``finally`` stops what started;
- while it serves (`services.cmd.common.until_signalled_or_died`), it stops;
- while it stops, nothing more happens: a stop is never cut short.
"""

from __future__ import annotations

import asyncio
import signal
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM)

# One event per event loop; the handlers that set it are installed with it.
_requested: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Event] = weakref.WeakKeyDictionary()


class Stopped(Exception):
    """A signal asked the command to stop while it was starting (`unless_stopped`)."""


def run(main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """``asyncio.run(main())``, SIGINT and SIGTERM asking for the stop from before its first step on.

    The exit status is ``main``'s, and 0 when a signal stopped its start.
    The process's own handlers are back when it returns.
    """
    previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
    try:
        with asyncio.Runner() as runner:
            # Before Runner.run: it then leaves SIGINT alone (it would cancel the main task).
            _install(runner.get_loop())
            return runner.run(_stopped_is_zero(main))
    finally:
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)


async def _stopped_is_zero(main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    try:
        return await main()
    except Stopped:
        return 0


def requested() -> asyncio.Event:
    """Set once SIGINT or SIGTERM came (on the running loop; the first call installs the handlers, if `run` did not)."""
    return _install(asyncio.get_running_loop())


def _install(loop: asyncio.AbstractEventLoop) -> asyncio.Event:
    event = _requested.get(loop)
    if event is None:
        event = _requested[loop] = asyncio.Event()
        for sig in SIGNALS:
            loop.add_signal_handler(sig, event.set)
    return event


async def unless_stopped(start: Awaitable[T]) -> T:
    """Await a command's start, as a task of its own; a signal meanwhile cancels it and raises `Stopped`.

    The start is over (cancelled, its own clean-up done) when this returns or
    raises; stopping what it started is the caller's (its ``finally``).
    """
    stop = requested()
    work = asyncio.ensure_future(start)
    signalled = asyncio.ensure_future(stop.wait())
    cut_short = False
    try:
        await asyncio.wait({work, signalled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        signalled.cancel()
        if not work.done():
            cut_short = True
            work.cancel()
            await asyncio.wait({work})
    if cut_short:
        if not work.cancelled():
            work.exception()  # retrieved: a start cut short may fail on its way out; the stop goes on
        raise Stopped
    return work.result()
