"""The machine-speed reference printed beside the benchmarks' figures (ops/bench/machine_speed.py)."""

from __future__ import annotations

import gc

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


def test_the_report_line_shows_both_timings() -> None:
    line = machine_speed.text(5.25, 9.0)
    assert "5.25 ms before" in line and "9.00 ms after" in line


@pytest.mark.parametrize("rounds", [0, -1])
def test_no_rounds_is_refused(rounds: int) -> None:
    with pytest.raises(ValueError, match="at least one round"):
        machine_speed.reference_ms(rounds=rounds)
