"""The scheduler benchmarks still run: tiny sizes, figures checked for what they count, never for speed.

``ops/bench/scheduler.py`` and ``ops/bench/scheduling_cycle.py`` are run by
hand for the figures in ``docs/decisions/scheduler-performance.md``; run here
small on both backends, they keep working as the code under them changes. What is asserted is
behaviour: every measured pod bound on its first attempt (PreEnqueue keeps a
templated pod out until its claim exists), and remembered verdicts in use.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson

from tests.conftest import BusUrl

REPO = Path(__file__).resolve().parents[3]


def run_bench(script: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "ops" / "bench" / script), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )


def bench(script: str, *argv: str) -> str:
    result = run_bench(script, *argv)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_end_to_end_benchmark_binds_every_templated_pod_on_its_first_attempt(
    bus_url: BusUrl, tmp_path: Path
) -> None:
    out = tmp_path / "figures.json"
    argv = ["--workload", "claim-template", "--nodes", "10", "--pods", "30", "--json", str(out)]
    bench("scheduler.py", "--bus", bus_url(), *argv)
    (figures,) = orjson.loads(out.read_bytes())
    assert figures["bus"] == ("kafka" if bus_url.backend == "kafka" else "sqlite")
    assert figures["measured_pods"] == 30 and figures["devices"] == 100
    assert figures["attempts_histogram"] == {"1": 30} and figures["attempts_per_pod"] == 1.0
    assert figures["pods_per_s"] > 0 and set(figures["cpu_s_per_pod"]) == {"committer", "scheduler", "load generator"}
    # The committer's batches in the window: at least one, and no more than the requests they hold. Batches
    # per pod times requests per batch is the requests per pod: pod, claim, its status, finalizer, allocation,
    # binding (the claim and its status, and the scheduler's writes, are chains: one batch may take several).
    assert 0 < figures["committer_batches_per_pod"] and 1 <= figures["requests_per_batch"]
    assert 4 <= figures["committer_batches_per_pod"] * figures["requests_per_batch"] <= 8


def test_the_scheduling_cycle_benchmark_reuses_verdicts() -> None:
    text = bench("scheduling_cycle.py", "--nodes", "20", "--pods", "40")
    assert "nodes evaluated       median 20 of 20" in text
    share = re.search(r"remembered verdicts\s+([\d.]+)% of (\d+)", text)
    assert share is not None and int(share.group(2)) == 20 * 80 and float(share.group(1)) > 50


def test_the_steady_state_benchmark_breaks_create_to_bound_into_hops(bus_url: BusUrl, tmp_path: Path) -> None:
    """Each bound pod is replaced; its claim's clean-up runs beside the next create, and every hop is measured."""
    out = tmp_path / "figures.json"
    argv = ["--workload", "steady-empty", "--nodes", "10", "--duration", "5", "--json", str(out)]
    bench("scheduler.py", "--bus", bus_url(), *argv)
    (figures,) = orjson.loads(out.read_bytes())
    assert figures["measured_pods"] > 10  # more than the first ten: bound pods were replaced
    assert figures["attempts_histogram"] == {"1": figures["measured_pods"]}
    steps = ["pod", "claim", "pod claim status", "finalizer", "allocation", "binding"]
    expected = {"previous pod bound → pod create request", "pod committed → binding committed"}
    expected |= {f"request → {s} committed" for s in steps} | {f"→ {s} request" for s in steps[1:]}
    # The scheduler's hop, split where its attempt started (the decision record's time).
    expected |= {"(in it) pod claim status committed → attempt started", "(in it) attempt started → finalizer request"}
    assert set(figures["hops_ms"]) == expected
    # A request chained to the write before it (issue 21) is sent before that one is committed: its
    # "→ request" hop runs from the request it was sent with, so no hop is negative.
    assert all(v["p50"] >= 0 for v in figures["hops_ms"].values())
    # Per pod: its six writes to bound, then its delete and its claim's release, unfinalize and delete.
    assert 8 <= figures["writes_per_pod"] <= 12
    assert 8 <= figures["committer_batches_per_pod"] * figures["requests_per_batch"] <= 12  # its requests
    # The machine's speed, timed before, during and after the window (ops/bench/machine_speed.py).
    assert set(figures["machine_reference_ms"]) == {"before", "during", "after"}
    assert all(v > 0 for v in figures["machine_reference_ms"].values())


def test_a_warm_up_runs_on_a_log_of_its_own_before_the_measured_run(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    argv = ["--workload", "steady-empty", "--nodes", "10", "--duration", "2", "--warmup", "1", "--json", str(out)]
    text = bench("scheduler.py", *argv)
    warm = re.search(
        r"warm-up: SteadyStateClusterResourceClaimTemplate/empty, 1 s, ([\d.]+) pods/s \(not counted\)", text
    )
    assert warm is not None and float(warm.group(1)) > 0
    (figures,) = orjson.loads(out.read_bytes())  # only the measured run is a result
    # The measured run's log is fresh: on the warm-up's log its setup would fail (its namespaces, nodes and
    # class exist there already, a 409 and a non-zero exit above), and every measured pod bound on its first try.
    assert figures["measured_pods"] > 10 and figures["attempts_histogram"] == {"1": figures["measured_pods"]}


def test_a_warm_up_is_refused_on_a_given_embedded_log(tmp_path: Path) -> None:
    given = f"sqlite:///{tmp_path / 'bus.db'}"
    result = run_bench("scheduler.py", "--bus", given, "--workload", "steady-empty", "--warmup", "1")
    assert result.returncode != 0 and "no --warmup" in result.stderr
    assert not (tmp_path / "bus.db").exists()
