"""``ops/chaos --short`` end to end: kills and a broker restart, and the log keeps every invariant.

The run starts its own broker (it must restart it on the same data directory
and port), so it needs what the other Kafka tests need: Java and the broker
jars that ``ops/test`` fetches. It is marked ``kafka`` and gated like them. The
embedded-log variant (process kills only) is marked ``e2e``. The
three-broker variant (``--brokers 3``) starts a cluster of its own and SIGKILLs
the leader of the busiest topic while components are killed; it needs a few
minutes more for three JVMs to start on a busy machine.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAST_LINE = re.compile(r"^chaos: kills=(\d+) broker_restarts=(\d+) violations=(\d+)$")
LEADER_KILLED = re.compile(r"^    killed node \d \(leader of \w+\): next committed write on \w+ \d+\.\d+s after the kill$", re.M)
# --short fits in 3 minutes on 2 cores; the test allows for a slower machine before calling it stuck.
RUN_TIMEOUT_S = 600


def run_chaos(*args: str) -> tuple[str, int, int, int, int]:
    """Run ops/chaos; returns (output, exit status, kills, broker restarts, violations)."""
    proc = subprocess.run(
        [str(REPO / "ops" / "chaos"), "--short", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    output = proc.stdout
    lines = output.strip().splitlines()
    assert lines, f"ops/chaos printed nothing; stderr:\n{proc.stderr[-4000:]}"
    match = LAST_LINE.match(lines[-1])
    assert match, f"unexpected last line {lines[-1]!r}\n{output[-6000:]}\n{proc.stderr[-2000:]}"
    kills, restarts, violations = (int(g) for g in match.groups())
    sys.stdout.write(output)  # the summary, in the test's captured output
    return output, proc.returncode, kills, restarts, violations


@pytest.mark.kafka
@pytest.mark.timeout(RUN_TIMEOUT_S + 60)
def test_short_chaos_run_on_kafka(kafka_bootstrap: str) -> None:
    output, status, kills, restarts, violations = run_chaos("--bus", "kafka")
    assert violations == 0, output[-8000:]
    assert status == 0
    assert kills >= 1
    assert restarts >= 1


@pytest.mark.kafka
@pytest.mark.timeout(RUN_TIMEOUT_S + 60)
def test_short_chaos_run_on_three_brokers(kafka_bootstrap: str) -> None:
    output, status, kills, restarts, violations = run_chaos("--bus", "kafka", "--brokers", "3")
    assert violations == 0, output[-8000:]
    assert status == 0
    assert kills >= 1
    assert restarts >= 1
    assert LEADER_KILLED.search(output), output[-8000:]  # the busiest topic's leader died, and writes went on
    assert "acks-kept ok" in output  # every acknowledged probe write was read back


@pytest.mark.e2e
@pytest.mark.timeout(RUN_TIMEOUT_S + 60)
def test_short_chaos_run_on_the_embedded_log() -> None:
    output, status, kills, restarts, violations = run_chaos("--bus", "embedded")
    assert violations == 0, output[-8000:]
    assert status == 0
    assert kills >= 1
    assert restarts == 0
