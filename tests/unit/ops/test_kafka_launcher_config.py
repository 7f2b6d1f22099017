"""The broker settings `ops/kafka/launcher.py` writes (a throwaway broker for tests and benchmarks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ops.kafka import launcher

DELETE_DELAY_DEFAULT_MS = 60_000  # Kafka's log.segment.delete.delay.ms


def _properties(path: Path) -> dict[str, str]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


@pytest.mark.parametrize("nodes", [1, 3])
def test_file_deletion_waits_long_enough_that_its_task_does_not_run_without_pause(tmp_path: Path, nodes: int) -> None:
    # The task that deletes files waits this long when there are none: at 0 it
    # reran at once, forever (KAFKA-16588), ~4 % of a core on an idle broker.
    config = launcher.write_config(
        tmp_path, node_id=1, port=9092, controller_port=9093, voters="1@127.0.0.1:9093", nodes=nodes
    )
    settings = _properties(config)
    assert int(settings.get("log.segment.delete.delay.ms", DELETE_DELAY_DEFAULT_MS)) >= 1000
    assert settings["log.dirs"] == str(tmp_path / "logs")
