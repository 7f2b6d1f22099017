"""``ops/bench/scheduler.py --scheduler both`` runs end to end with unmodified kube-scheduler 1.31.14, tiny.

Four nodes, ten measured templated pods: draplane's scheduler and then
kube-scheduler (through a ``draplane apiserver`` at ``--emulated-version 1.31``)
bind every one of them, and the run prints the ratio line. Figures are
checked for what they count, never for speed. The binary comes from
``ops/upstream``'s cache: the test waits for ``./ops/test``'s background build,
then skips with the reason without it, or fails when
``DRAPLANE_REQUIRE_UPSTREAM=1`` says it must be there (tests/support/upstream.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ops.bench import kube_scheduler
from tests.support.upstream import UPSTREAM_TIMEOUT, require_upstream

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(UPSTREAM_TIMEOUT)]

REPO = Path(__file__).resolve().parents[2]
VERSION = "1.31.14"  # the set ./ops/test builds


def test_kube_scheduler_and_draplane_bind_the_same_tiny_workload(tmp_path: Path) -> None:
    require_upstream([("kube-scheduler", VERSION)])
    out = tmp_path / "figures.json"
    argv = ["--scheduler", "both", "--kube-version", VERSION, "--workload", "claim-template"]
    argv += ["--nodes", "4", "--pods", "10", "--timeout", "120", "--json", str(out)]
    result = subprocess.run(
        [sys.executable, str(REPO / "ops" / "bench" / "scheduler.py"), *argv],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    draplane, kube = orjson.loads(out.read_bytes())
    assert draplane["scheduler"] == "draplane (emulated 1.31, committer in a draplane apiserver)"
    assert kube["scheduler"] == kube_scheduler.label(VERSION)
    for figures in (draplane, kube):
        assert figures["measured_pods"] == 10 and figures["devices"] == 40 and figures["pods_per_s"] > 0
    assert set(draplane["cpu_s_per_pod"]) == {"apiserver", "scheduler", "load generator"}
    assert set(kube["cpu_s_per_pod"]) == {"apiserver", "kube-scheduler", "load generator"}
    assert draplane["attempts_histogram"] == {"1": 10} and kube["attempts_histogram"] == {}
    assert f"SchedulingWithResourceClaimTemplate: {kube_scheduler.label(VERSION)} / draplane = " in result.stdout
