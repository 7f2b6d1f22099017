"""Supervised tasks: raising, returning or being cancelled by someone else is a death; `stop` is not."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from services.runtime.supervised import Supervised


async def forever() -> None:
    await asyncio.Event().wait()


async def returns() -> None:
    return None


async def raises() -> None:
    raise ValueError("bad input")


@pytest.mark.parametrize(
    ("body", "kill", "why"),
    [
        (returns, False, "returned, though it runs until the process stops"),
        (raises, False, "raised ValueError: bad input"),
        (forever, True, "was cancelled"),
    ],
)
async def test_a_task_that_ends_before_stop_is_a_death(
    body: Callable[[], Coroutine[Any, Any, None]], kill: bool, why: str
) -> None:
    tasks = Supervised()
    task = tasks.spawn("worker", body())
    tasks.spawn("other", forever())
    if kill:
        task.cancel()
    assert await asyncio.wait_for(tasks.wait_death(), 5) == f"worker {why}"
    assert tasks.died and tasks.deaths == {"worker": why}
    assert [(c.name, c.check()) for c in tasks.checks()] == [("worker", f"worker {why}"), ("other", None)]
    await tasks.stop()
    assert tasks.deaths == {"worker": why}  # the others, stopped, did not die


async def test_stopping_is_no_death() -> None:
    tasks = Supervised()
    tasks.spawn("worker", forever())
    await asyncio.sleep(0)  # running
    await tasks.stop()
    assert not tasks.died and tasks.deaths == {}
    assert [c.check() for c in tasks.checks()] == [None]
