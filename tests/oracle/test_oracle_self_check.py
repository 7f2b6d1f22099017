"""The oracle's own check: every scenario against two fresh draplane servers shows no difference at all.

Two servers of the same code differ only in what normalisation must take out
(uids, times, resourceVersions, ports, ages) and in anything timing-dependent.
So this test proves the normalisation complete and the scenarios
deterministic, and it runs without kube-apiserver.

In ``./ops/test`` it plays the first scenario of each file, to keep the run
short; ``DRAPLANE_ORACLE_SELF_CHECK=all`` plays every one (do that when you
add scenarios or change a normalisation rule).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.oracle import compare, targets
from tests.support.oracle.runner import Target, play
from tests.support.oracle.scenario import Scenario, load_all

pytestmark = [pytest.mark.e2e]

SAMPLE_ENV = "DRAPLANE_ORACLE_SELF_CHECK"


def _chosen() -> list[Scenario]:
    everything = load_all()
    if os.environ.get(SAMPLE_ENV) == "all":
        return everything
    first: dict[Path, Scenario] = {}
    for s in everything:
        first.setdefault(s.source, s)
    return list(first.values())


SCENARIOS = _chosen()


@pytest.fixture(scope="module")
def two_draplanes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Target, Target]]:
    """Servers of their own: the session's draplane has already played the scenarios in their namespaces."""
    with (
        targets.draplane(tmp_path_factory.mktemp("oracle-self-a"), name="draplane-a") as a,
        targets.draplane(tmp_path_factory.mktemp("oracle-self-b"), name="draplane-b") as b,
    ):
        yield a, b


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_two_draplanes_agree(scenario: Scenario, two_draplanes: tuple[Target, Target]) -> None:
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda t: play(scenario, t), two_draplanes))
    left, right = (r.normalised() for r in runs)
    verdict = compare.judge(scenario.id, compare.differences(left, right), [])
    assert verdict.ok, compare.report(scenario.id, verdict, left, right, oracle_name="draplane-a")
