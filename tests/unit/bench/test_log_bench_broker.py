"""`ops/bench/log.py`'s broker: the one given, or a throwaway one from `ops/kafka/launcher.py`.

It once loaded the launcher from its file path without a `sys.modules` entry,
and the launcher's dataclass made that fail at start whenever no broker was
given.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from ops.bench import log as log_bench


async def test_a_given_broker_is_used_as_it_is(tmp_path: Path) -> None:
    async with log_bench.kafka_broker("127.0.0.1:1", tmp_path) as bootstrap:
        assert bootstrap == "127.0.0.1:1"
    assert not (tmp_path / "kafka").exists()  # nothing was started


def test_the_launcher_it_starts_brokers_with_is_importable_and_finds_a_free_port() -> None:
    port = log_bench.launcher.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # free, as it says


def test_a_figure_that_timed_nothing_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """A backlog of --records that fits one batch times 0 records; it printed "inf" records/s."""
    log_bench.print_report(
        [log_bench.Figure("embedded", "committer, backlog, admission chain", 0, 0.0)], records=50, kafka="k:1"
    )
    row = capsys.readouterr().out.splitlines()[-1]
    assert not re.search(r"\binf\b", row) and "nothing timed: more --records" in row


@pytest.mark.kafka
async def test_the_benchmark_runs_through_on_the_embedded_log(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every section, on the suite's broker: nothing else in the suite runs the script, and it once crashed at start."""
    args = ["--records", "300", "--client-writes", "40", "--writers", "2", "--backends", "embedded"]
    await log_bench.main([*args, "--kafka", kafka_bootstrap])
    out = capsys.readouterr().out
    for measure in (
        "adapter produce (plain, 1000/batch)",
        "adapter consume (catch-up)",
        "committer, backlog, admission chain",
        "informer catch-up",
        "2 clients, request->reply, admission chain",
    ):
        assert f"embedded  {measure}" in out, out
    assert not re.search(r"\binf\b", out), out
