"""``acks-kept``: every write the probe producer had acknowledged reads back at its offset, unchanged.

The pure check against hand-made read-backs, and the ``--brokers`` options of
``ops/chaos`` (what a cluster run changes in the plan).
"""

from __future__ import annotations

import pytest

from ops.chaoskit.invariants import ACKS_KEPT, check_acks_kept
from ops.chaoskit.run import build_parser, options_from

ACKED = {0: b"probe-0", 1: b"probe-1", 5: b"probe-4"}


@pytest.mark.parametrize(
    ("read", "expected"),
    [
        ({0: b"probe-0", 1: b"probe-1", 5: b"probe-4"}, []),
        # a send that failed may still be in the log (unacknowledged, not a loss); offsets may have gaps
        ({0: b"probe-0", 1: b"probe-1", 2: b"probe-2", 5: b"probe-4", 9: b"x"}, []),
        ({0: b"probe-0", 5: b"probe-4"}, [("acknowledged write b'probe-1' is missing from the log", (1,))]),
        ({0: b"probe-0", 1: b"probe-1", 5: b"other"}, [("acknowledged write b'probe-4' reads back as b'other'", (5,))]),
        (
            {},
            [
                ("acknowledged write b'probe-0' is missing from the log", (0,)),
                ("acknowledged write b'probe-1' is missing from the log", (1,)),
                ("acknowledged write b'probe-4' is missing from the log", (5,)),
            ],
        ),
    ],
)
def test_acknowledged_writes_are_read_back(
    read: dict[int, bytes | None], expected: list[tuple[str, tuple[int, ...]]]
) -> None:
    found = check_acks_kept(ACKED, read)
    assert [(v.message, v.offsets) for v in found] == expected
    assert all(v.invariant == ACKS_KEPT for v in found)


def test_a_short_cluster_run_gets_time_for_its_nodes() -> None:
    single = options_from(build_parser().parse_args(["--short", "--seed", "1"]))
    cluster = options_from(build_parser().parse_args(["--short", "--brokers", "3", "--seed", "1"]))
    assert (single.brokers, cluster.brokers) == (1, 3)
    assert single.budget is not None and cluster.budget is not None
    assert cluster.budget > single.budget
    assert cluster.minutes == single.minutes  # the same churn, on three brokers


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--brokers", "0"], "--brokers must be at least 1"),
        (["--brokers", "3", "--bus", "embedded"], "--brokers is for --bus kafka"),
    ],
)
def test_bad_broker_counts_are_refused(argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        options_from(build_parser().parse_args(argv))
