"""Alternating pairs: one scheduler-benchmark workload on two revisions, and their ratios.

    .venv/bin/python ops/bench/ab.py --a REV --b REV [--workload steady-full] [--pairs 4] [-- BENCH ARGS...]

Why: on this 2-vCPU VM a run's pods/s moves by 10 to 20 % with the machine's
phase (docs/decisions/latency.md, "The machine today"), more than most
changes are worth. Runs of A and B taken one after the other, A first in odd
pairs and B first in even ones, see the same phase; a change shows as the
geo-mean of the pairs' B/A ratios and the count of pairs where B was ahead.
Every pass since stop 31 measured that way with a throwaway script.

Each revision is checked out with ``git worktree add --detach`` in a
temporary directory (removed at the end) and run with this checkout's
``.venv`` (the bench imports the tree it runs in first: ``Process.start``
puts the tree on ``PYTHONPATH``). Each run writes ``--json`` and the figures
are read from it: pods/s, create→bound p50, the CPU per pod of all processes
together, and the in-window probe (``machine_speed``). It prints figures and
ratios; it asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Run:
    side: str  # "A" or "B"
    pods_per_s: float
    p50_ms: float
    cpu_ms_per_pod: float  # all processes together
    probe_ms: float  # the machine speed probe's median during the window


def order(pair: int) -> tuple[str, str]:
    """Which side runs first in pair ``pair`` (1-based): A in odd pairs, B in even ones."""
    return ("A", "B") if pair % 2 == 1 else ("B", "A")


def run_from_json(side: str, doc: object) -> Run:
    """The figures of the one result a ``scheduler.py --json`` file holds."""
    if not isinstance(doc, list) or len(doc) != 1 or not isinstance(doc[0], dict):
        raise ValueError("expected the results of exactly one workload")
    result = doc[0]
    cpu = result.get("cpu_s_per_pod") or {}
    return Run(
        side,
        float(result["pods_per_s"]),
        float((result.get("latency_ms") or {}).get("p50", math.nan)),
        sum(float(v) for v in cpu.values()) * 1000,
        float((result.get("machine_reference_ms") or {}).get("during", math.nan)),
    )


def geo_mean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def summary(pairs: Sequence[tuple[Run, Run]]) -> str:
    """B/A over the pairs: pods/s and CPU per pod, geo-means and how many pairs B was ahead in."""
    speed = [b.pods_per_s / a.pods_per_s for a, b in pairs]
    cpu = [b.cpu_ms_per_pod / a.cpu_ms_per_pod for a, b in pairs]
    return (
        f"B/A pods/s geo-mean {geo_mean(speed):.3f}, B ahead in {sum(r > 1 for r in speed)} of {len(pairs)}; "
        f"CPU per pod geo-mean {geo_mean(cpu):.3f}, B lower in {sum(r < 1 for r in cpu)} of {len(pairs)}"
    )


def line(pair: int, run: Run) -> str:
    return (
        f"pair {pair} {run.side}: {run.pods_per_s:7.1f} pods/s, create→bound p50 {run.p50_ms:4.0f} ms, "
        f"CPU {run.cpu_ms_per_pod:.2f} ms/pod, probe {run.probe_ms:.2f} ms"
    )


def checkout(rev: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), rev], check=True)
    (where / ".venv").symlink_to(REPO / ".venv")
    return where


def bench(tree: Path, side: str, workload: str, extra: Sequence[str], out: Path) -> Run:
    argv = [str(REPO / ".venv" / "bin" / "python"), "-m", "ops.bench.scheduler", "--workload", workload]
    subprocess.run([*argv, *extra, "--json", str(out)], cwd=tree, check=True, stdout=subprocess.DEVNULL)
    return run_from_json(side, orjson.loads(out.read_bytes()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="the revision to compare against")
    parser.add_argument("--b", required=True, help="the revision measured")
    parser.add_argument("--workload", default="steady-full")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("extra", nargs="*", help="after --: passed to ops/bench/scheduler.py")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="draplane-ab-") as tmp:
        trees: dict[str, Path] = {}
        try:
            for side, rev in (("A", args.a), ("B", args.b)):
                trees[side] = checkout(rev, Path(tmp) / side)
            pairs: list[tuple[Run, Run]] = []
            for pair in range(1, args.pairs + 1):
                runs = {}
                for side in order(pair):
                    runs[side] = bench(trees[side], side, args.workload, args.extra, Path(tmp) / f"{pair}{side}.json")
                    print(line(pair, runs[side]), flush=True)
                pairs.append((runs["A"], runs["B"]))
            print(f"{args.workload}: A {args.a}, B {args.b}; {summary(pairs)}")
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)


if __name__ == "__main__":
    main()
