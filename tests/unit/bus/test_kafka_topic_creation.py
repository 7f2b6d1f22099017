"""How many replicas a new Kafka topic gets, and when it gets ``min.insync.replicas=2``.

Pure rules of `services.bus.kafka.topics`; the cluster test
(tests/contract/test_kafka_cluster.py) checks what a three-broker cluster
then holds.
"""

from __future__ import annotations

import pytest

from services.bus.kafka.topics import creation_config, replication


@pytest.mark.parametrize(
    ("brokers", "configured", "expected"),
    [
        (1, 0, 1),
        (2, 0, 2),
        (3, 0, 3),
        (5, 0, 3),  # min(3, brokers)
        (0, 0, 1),  # a cluster that lists no broker yet still gets a valid factor
        (5, 2, 2),  # replication_factor= in the bus URL wins
        (1, 3, 3),  # even when the cluster is smaller (the broker refuses it, with its own message)
    ],
)
def test_replication_factor_of_a_new_topic(brokers: int, configured: int, expected: int) -> None:
    assert replication(brokers, configured=configured) == expected


@pytest.mark.parametrize(
    ("declared", "replicas", "expected"),
    [
        ({"cleanup.policy": "compact"}, 1, {"cleanup.policy": "compact"}),
        ({"cleanup.policy": "compact"}, 2, {"cleanup.policy": "compact"}),
        ({"cleanup.policy": "compact"}, 3, {"cleanup.policy": "compact", "min.insync.replicas": "2"}),
        ({}, 4, {"min.insync.replicas": "2"}),
        ({"min.insync.replicas": "3"}, 3, {"min.insync.replicas": "3"}),  # a declaration wins
    ],
)
def test_min_insync_replicas_from_three_replicas_on(
    declared: dict[str, str], replicas: int, expected: dict[str, str]
) -> None:
    assert creation_config(declared, replicas=replicas) == expected
    assert "min.insync.replicas" not in declared or declared == expected  # the declaration is not changed
