"""`ops/bench/ab.py`'s pure parts: the order of a pair, the figures read from a run, the ratios."""

from __future__ import annotations

import math

import pytest

from ops.bench import ab


def result(pods_per_s: float, cpu: dict[str, float]) -> list[dict[str, object]]:
    return [
        {
            "pods_per_s": pods_per_s,
            "latency_ms": {"p50": 20.0, "p99": 40.0},
            "cpu_s_per_pod": cpu,
            "machine_reference_ms": {"before": 5.4, "during": 6.5, "after": 5.5},
        }
    ]


def test_a_runs_first_in_odd_pairs_and_b_in_even_ones() -> None:
    assert [ab.order(n) for n in (1, 2, 3, 4)] == [("A", "B"), ("B", "A"), ("A", "B"), ("B", "A")]


def test_a_runs_figures_come_from_its_json() -> None:
    run = ab.run_from_json("B", result(400.0, {"committer": 0.0015, "scheduler": 0.0016, "load generator": 0.0008}))
    assert (run.side, run.pods_per_s, run.p50_ms, run.probe_ms) == ("B", 400.0, 20.0, 6.5)
    assert run.cpu_ms_per_pod == pytest.approx(3.9)


@pytest.mark.parametrize("doc", [[], {"pods_per_s": 1}, [*result(1, {}), *result(2, {})], ["x"]])
def test_anything_but_one_result_is_refused(doc: object) -> None:
    with pytest.raises(ValueError, match="exactly one workload"):
        ab.run_from_json("A", doc)


def test_the_summary_is_b_over_a_per_pair() -> None:
    def run(side: str, pods: float, cpu: float) -> ab.Run:
        return ab.Run(side, pods, 20.0, cpu, 6.5)

    pairs = [(run("A", 100, 4.0), run("B", 110, 3.8)), (run("A", 100, 4.0), run("B", 90, 4.2))]
    text = ab.summary(pairs)
    assert f"geo-mean {math.sqrt(1.1 * 0.9):.3f}, B ahead in 1 of 2" in text
    assert f"CPU per pod geo-mean {math.sqrt(0.95 * 1.05):.3f}, B lower in 1 of 2" in text
    assert math.isnan(ab.geo_mean([]))
