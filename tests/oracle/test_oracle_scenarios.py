"""Every scenario of tests/oracle/scenarios against kube-apiserver 1.31.14 and draplane at 1.31, compared.

A difference must be listed in docs/compatibility.md's known-differences block
with its reason; anything else fails with the diff. A listed difference that
no longer occurs fails too. tests/oracle/README.md says how to add a scenario.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.oracle import compare
from tests.support.oracle.runner import Target, play
from tests.support.oracle.scenario import Scenario, load_all
from tests.support.upstream import UPSTREAM_TIMEOUT

# The first test's setup may wait for ./ops/test's background build of kube-apiserver.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(UPSTREAM_TIMEOUT)]

SCENARIOS = load_all()
KNOWN = compare.load_known()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario_matches_kube_apiserver(scenario: Scenario, oracle_upstream: Target, oracle_draplane: Target) -> None:
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda t: play(scenario, t), (oracle_upstream, oracle_draplane)))
    oracle, ours = (r.normalised() for r in runs)
    verdict = compare.judge(scenario.id, compare.differences(oracle, ours), KNOWN)
    assert verdict.ok, compare.report(scenario.id, verdict, oracle, ours)


def test_every_known_difference_names_a_scenario() -> None:
    """An entry whose scenario glob matches no scenario would never be checked for staleness."""
    ids = [s.id for s in SCENARIOS]
    orphans = [k for k in KNOWN if not any(compare.Known(k.scenario, "*", "").matches(i, "") for i in ids)]
    assert not orphans, orphans
