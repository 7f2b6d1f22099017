"""Every scenario of tests/oracle/scenarios against kube-apiserver 1.31.14 and draplane at 1.31, compared.

A difference must be listed in docs/compatibility.md's known-differences block
with its reason; anything else fails with the diff. A listed difference that
no longer occurs fails too. tests/oracle/README.md says how to add a scenario.

Scenarios are independent (a namespace each, cluster-scoped names prefixed
with it), so the selected ones are played a few at a time before the first
comparison; each test then judges its own scenario's captures.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.oracle import compare
from tests.support.oracle.runner import Run, Target, play
from tests.support.oracle.scenario import Scenario, load_all
from tests.support.upstream import UPSTREAM_TIMEOUT

# The first test's setup may wait for ./ops/test's background build of kube-apiserver.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(UPSTREAM_TIMEOUT)]

SCENARIOS = load_all()
KNOWN = compare.load_known()
PARALLEL = 4

Played = dict[str, tuple[Run, Run] | BaseException]


@pytest.fixture(scope="session")
def oracle_played(request: pytest.FixtureRequest, oracle_upstream: Target, oracle_draplane: Target) -> Played:
    """Each selected scenario played on kube-apiserver, then on draplane; a failure to play is kept for its test."""
    wanted = [
        item.callspec.params["scenario"]
        for item in request.session.items
        if isinstance(item, pytest.Function) and hasattr(item, "callspec") and "oracle_played" in item.fixturenames
    ]

    def both(s: Scenario) -> tuple[Run, Run] | BaseException:
        try:
            return play(s, oracle_upstream), play(s, oracle_draplane)
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(PARALLEL) as pool:
        return dict(zip((s.id for s in wanted), pool.map(both, wanted), strict=True))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario_matches_kube_apiserver(scenario: Scenario, oracle_played: Played) -> None:
    runs = oracle_played[scenario.id]
    if isinstance(runs, BaseException):
        raise runs
    oracle, ours = (r.normalised() for r in runs)
    verdict = compare.judge(scenario.id, compare.differences(oracle, ours), KNOWN)
    assert verdict.ok, compare.report(scenario.id, verdict, oracle, ours)


def test_every_glob_entry_still_explains_something(oracle_played: Played) -> None:
    """An entry for many scenarios (a scenario glob) must explain a difference somewhere in a full run."""
    if set(oracle_played) != {s.id for s in SCENARIOS}:
        pytest.skip("only a full run of the scenarios can tell an entry for many scenarios is stale")
    verdicts = []
    for scenario in SCENARIOS:
        runs = oracle_played[scenario.id]
        if isinstance(runs, BaseException):
            pytest.skip(f"{scenario.id} did not play: {runs}")
        oracle, ours = (r.normalised() for r in runs)
        verdicts.append(compare.judge(scenario.id, compare.differences(oracle, ours), KNOWN))
    stale = compare.stale_globs(KNOWN, verdicts)
    assert not stale, "listed in docs/compatibility.md but no longer different anywhere:\n" + "\n".join(
        f"  scenario={k.scenario} path={k.path} ({k.reason})" for k in stale
    )


def test_every_known_difference_names_a_scenario() -> None:
    """An entry whose scenario glob matches no scenario would never be checked for staleness."""
    ids = [s.id for s in SCENARIOS]
    orphans = [k for k in KNOWN if not any(compare.glob_match(i, k.scenario) for i in ids)]
    assert not orphans, orphans
