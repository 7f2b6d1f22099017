"""`eventually`: poll a probe until what it returns is good enough, with a deadline and a clear failure.

Why this module exists: some states are only reached some time after the
call that causes them returns (a log round trip to an informer, a broker
moving its last stable offset, a child process handling a signal) and nothing
announces them. Tests poll those with a deadline instead of sleeping a fixed
time. This is the one polling helper the tests share; every test imports it
from here.

The deadline is on the event loop's clock, so a test on fake time (looptime)
times out in fake time too.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

T = TypeVar("T")


async def eventually(
    probe: Callable[[], T | None] | Callable[[], Awaitable[T | None]],
    *,
    until: Callable[[T], bool] | None = None,
    timeout: float = 30.0,
    what: str = "condition",
    interval: float = 0.01,
) -> T:
    """Call ``probe`` (plain or async) every ``interval`` seconds until its value is good; return that value.

    Good means ``until(value)`` when given, else a truthy value (a probe may
    return a bool, or the thing it looked for and None while it is not there).
    After ``timeout`` seconds it fails with an AssertionError that names
    ``what`` and shows the last value seen.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = probe()
        value = cast(T, await result if inspect.isawaitable(result) else result)
        if until(value) if until is not None else value:
            return value
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what} (last value {value!r})")
        await asyncio.sleep(interval)
