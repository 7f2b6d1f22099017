"""`ops/bench/log.py`'s broker: the one given, or a throwaway one from `ops/kafka/launcher.py`.

It once loaded the launcher from its file path without a `sys.modules` entry,
and the launcher's dataclass made that fail at start whenever no broker was
given.
"""

from __future__ import annotations

import socket
from pathlib import Path

from ops.bench import log as log_bench


async def test_a_given_broker_is_used_as_it_is(tmp_path: Path) -> None:
    async with log_bench.kafka_broker("127.0.0.1:1", tmp_path) as bootstrap:
        assert bootstrap == "127.0.0.1:1"
    assert not (tmp_path / "kafka").exists()  # nothing was started


def test_the_launcher_it_starts_brokers_with_is_importable_and_finds_a_free_port() -> None:
    port = log_bench.launcher.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # free, as it says
