"""`ops/bench/kafka_transaction.py` on a real broker: both ways run, and their requests differ by one Produce."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]


def test_the_benchmark_times_both_ways_and_counts_their_produce_requests(kafka_bootstrap: str) -> None:
    args = ["--kafka", kafka_bootstrap, "--transactions", "5", "--rounds", "2", "--records", "3"]
    out = subprocess.run(
        [sys.executable, "-m", "ops.bench.kafka_transaction", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    ).stdout
    assert "10 transactions of each way (3 records, 3 replies, an offset commit)" in out
    produce = dict(re.findall(r"(one Produce|two-step)\s+p50.*\n\s+requests per transaction: .*Produce ([\d.]+)", out))
    assert produce == {"one Produce": "1.00", "two-step": "2.00"}
    assert re.search(r"p50 two-step / one Produce: \d+\.\d\d", out)
