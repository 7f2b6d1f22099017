"""Backoff is client-go's wait.Backoff: growth, steps, cap, and jitter within its bounds.

The sequences without jitter were printed by ``wait.Backoff.Step`` of
k8s.io/apimachinery v0.31.3 (a Go program calling Step repeatedly; in ms):
  {100ms, Factor 2, Cap 1s, Steps huge}  → 100 200 400 800 1000 1000 1000
  {100ms, Factor 2, Steps 4}             → 100 200 400 800 1600 1600 1600
  {100ms, Factor 3, Cap 1s, Steps 10}    → 100 300 900 1000 1000 1000
  {100ms, Factor 2, Steps 0}             → 100 100 100
  {10ms, Factor 1, Steps 5}              → 10 10 10 10 10 10
and its Jitter(d, 0.5) stayed within [d, 1.5 d).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest

from services.runtime.backoff import Backoff, log_unavailable, node_registration, retry_on_conflict, write_retry


@pytest.mark.parametrize(
    ("backoff", "expected_ms"),
    [
        (Backoff(0.1, factor=2, cap=1.0), [100, 200, 400, 800, 1000, 1000, 1000]),
        (Backoff(0.1, factor=2, steps=4), [100, 200, 400, 800, 1600, 1600, 1600]),
        (Backoff(0.1, factor=3, cap=1.0, steps=10), [100, 300, 900, 1000, 1000, 1000]),
        (Backoff(0.1, factor=2, steps=0), [100, 100, 100]),
        (Backoff(0.01, factor=1, steps=5), [10, 10, 10, 10, 10, 10]),
        (Backoff(0.1, factor=0), [100, 100, 100]),
    ],
    ids=["doubling-to-cap", "four-steps", "factor-3-cap", "no-steps", "factor-1", "factor-0"],
)
def test_steps_grow_as_client_go_does_without_jitter(backoff: Backoff, expected_ms: list[int]) -> None:
    assert [round(backoff.step() * 1000) for _ in expected_ms] == expected_ms


def test_jitter_adds_up_to_its_share_of_the_pause_and_never_feeds_the_growth() -> None:
    seed = 18
    backoff = Backoff(0.1, factor=2.0, jitter=0.5, cap=2.0, rand=random.Random(seed).random)
    draws = random.Random(seed)
    bases = [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0, 2.0, 2.0]
    pauses = [backoff.step() for _ in bases]
    for base, pause in zip(bases, pauses, strict=True):
        assert base <= pause < base * 1.5
        assert pause == pytest.approx(base + draws.random() * 0.5 * base)
    assert max(pauses) < 2.0 * 1.5, "the cap applies before the jitter"
    assert len(set(pauses[5:])) == 5, "capped pauses still spread"


def test_processes_with_different_draws_spread_their_retries() -> None:
    firsts = {round(Backoff(1.0, jitter=1.0, rand=random.Random(seed).random).step(), 6) for seed in range(50)}
    assert len(firsts) == 50
    assert min(firsts) >= 1.0 and max(firsts) < 2.0


def test_reset_starts_over_with_the_steps_it_had() -> None:
    backoff = Backoff(0.1, factor=2, steps=2)
    assert [backoff.step() for _ in range(3)] == pytest.approx([0.1, 0.2, 0.4])
    backoff.reset()
    assert [backoff.step() for _ in range(3)] == pytest.approx([0.1, 0.2, 0.4])


@pytest.mark.parametrize(
    "make",
    [
        lambda: Backoff(-0.1),
        lambda: Backoff(0.1, factor=-1.0),
        lambda: Backoff(0.1, jitter=-0.1),
        lambda: Backoff(0.1, cap=-1.0),
    ],
)
def test_negative_settings_are_refused(make: Callable[[], Backoff]) -> None:
    with pytest.raises(ValueError, match="negative"):
        make()


def test_the_presets() -> None:
    # client-go's retry.DefaultRetry {Steps: 5, Duration: 10ms, Factor: 1.0, Jitter: 0.1}
    conflict = retry_on_conflict()
    assert (conflict.initial, conflict.factor, conflict.jitter, conflict.steps) == (0.01, 1.0, 0.1, 5)
    assert all(0.01 <= conflict.step() < 0.011 for _ in range(10))
    for backoff, first, cap in [
        (log_unavailable(), 0.1, 2.0),
        (node_registration(), 0.1, 7.0),
        (write_retry(cap=30.0), 0.05, 30.0),
    ]:
        pauses = [backoff.step() for _ in range(20)]
        assert first <= pauses[0] < first * (1 + backoff.jitter)
        assert cap <= pauses[-1] < cap * (1 + backoff.jitter)


@pytest.mark.looptime
async def test_pause_sleeps_for_the_step_it_returns() -> None:
    loop = asyncio.get_running_loop()
    backoff = Backoff(1.0, factor=2.0, cap=4.0)
    start = loop.time()
    waited = [await backoff.pause() for _ in range(4)]
    assert waited == [1.0, 2.0, 4.0, 4.0]
    assert loop.time() - start == pytest.approx(11.0)
