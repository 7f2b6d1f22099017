"""The tests' one polling helper: what it returns, when it gives up and what it says then (on fake time)."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from tests.support.eventually import eventually


@pytest.mark.looptime
async def test_returns_the_first_truthy_value_of_a_plain_probe() -> None:
    values = iter([None, 0, "", "found"])
    assert await eventually(lambda: next(values), what="a value") == "found"


@pytest.mark.looptime
async def test_a_bool_probe_returns_true() -> None:
    calls = itertools.count(1)
    assert await eventually(lambda: next(calls) >= 3) is True


@pytest.mark.looptime
async def test_an_async_probe_is_awaited_and_until_decides() -> None:
    offsets = iter([0, 1, 2, 5])

    async def end_offset() -> int:
        return next(offsets)

    assert await eventually(end_offset, until=lambda end: end > 1) == 2


@pytest.mark.looptime
async def test_until_can_accept_a_falsy_value() -> None:
    assert await eventually(lambda: 0, until=lambda v: v == 0) == 0


@pytest.mark.looptime
async def test_it_fails_after_the_timeout_naming_what_and_the_last_value() -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(AssertionError) as failed:
        await eventually(lambda: [1], until=lambda v: len(v) > 1, timeout=5, what="a second item", interval=0.5)
    assert str(failed.value) == "timed out after 5s waiting for a second item (last value [1])"
    assert loop.time() - start == pytest.approx(5.0)


@pytest.mark.looptime
async def test_it_polls_every_interval() -> None:
    loop = asyncio.get_running_loop()
    seen: list[float] = []
    start = loop.time()

    def probe() -> bool:
        seen.append(round(loop.time() - start, 6))
        return len(seen) == 3

    await eventually(probe, interval=0.25)
    assert seen == [0.0, 0.25, 0.5]
