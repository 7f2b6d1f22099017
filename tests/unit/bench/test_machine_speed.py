"""The machine-speed reference printed beside the benchmarks' figures (ops/bench/machine_speed.py)."""

from __future__ import annotations

import asyncio
import gc
import math
import statistics
import sys
import threading
from pathlib import Path

import orjson
import pytest

from ops.bench import machine_speed


def test_the_fixed_work_decodes_changes_and_encodes_every_object() -> None:
    encoded = [orjson.dumps(machine_speed._object(i)) for i in range(3)]
    # Each object comes back with its node set and its condition true, so its encoding grows; the checksum is
    # the re-encoded sizes plus the kept label's length (the index label is dropped).
    expected = 0
    for raw in encoded:
        obj = orjson.loads(raw)
        obj["spec"]["nodeName"] = "node-1-1"
        obj["status"]["conditions"][0]["status"] = "True"
        expected += len(orjson.dumps(obj)) + len("app") + len("bench")
    assert machine_speed._one_round(encoded) == expected


def test_the_reference_is_a_positive_time_and_leaves_collection_as_it_was() -> None:
    assert gc.isenabled()
    assert machine_speed.reference_ms(rounds=2) > 0
    assert gc.isenabled()
    gc.disable()
    try:
        machine_speed.reference_ms(rounds=1)
        assert not gc.isenabled()  # a caller that had collection off keeps it off
    finally:
        gc.enable()


def test_the_report_line_shows_all_three_timings() -> None:
    line = machine_speed.text(5.25, 9.0, 7.125)
    assert "5.25 ms before" in line and "7.12 during" in line and "9.00 after" in line


def test_a_probe_times_rounds_until_stopped_in_the_references_units() -> None:
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    timings = machine_speed.probe_rounds(stop, interval=0.01)
    assert len(timings) >= 3 and all(t > 0 for t in timings)
    # Scaled to the reference's work: the same order as a reference round (not a fifteenth of it).
    assert 0.2 < statistics.median(timings) / machine_speed.reference_ms(rounds=3) < 5
    gc.enable()  # probe_rounds runs in a process of its own, which it leaves with collection off


async def test_a_probe_is_running_its_rounds_when_start_returns(tmp_path: Path) -> None:
    """`start` waits for the probe's ready line, so its interpreter's start-up falls before the window."""
    marker = tmp_path / "started"
    child = (
        "import sys, time\n"
        "time.sleep(0.3)\n"
        f"open({str(marker)!r}, 'w').close()\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
        "print('4.0')\n"
    )
    probe = machine_speed.Probe([sys.executable, "-c", child])
    await probe.start()
    assert marker.exists()
    assert await probe.stop() == 4.0


async def test_a_probe_that_exits_before_it_is_ready_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="exited before it was ready"):
        await machine_speed.Probe([sys.executable, "-c", "pass"]).start()


async def test_the_probe_process_reports_its_median_once_stopped() -> None:
    probe = machine_speed.Probe()
    await probe.start()
    await asyncio.sleep(0.5)
    assert await probe.stop() > 0
    assert math.isnan(await probe.stop())  # stopped: nothing more to report


@pytest.mark.parametrize("rounds", [0, -1])
def test_no_rounds_is_refused(rounds: int) -> None:
    with pytest.raises(ValueError, match="at least one round"):
        machine_speed.reference_ms(rounds=rounds)
