"""A plain Kafka producer recovers from a gap in its idempotent sequence (found by ``ops/chaos``).

After a broker restart a batch can expire while its partition has no leader;
aiokafka has already given it sequence numbers and does not take them back,
so the broker answers every later batch of that producer id
OutOfOrderSequenceNumber. Here the gap is made directly (the sequence is moved
on as a failed batch would move it), against a real broker; the adapter must
fail that send and succeed with the next one.
"""

from __future__ import annotations

import uuid

import pytest
from aiokafka.structs import TopicPartition

from services.bus import BusError, OutRecord, TopicSpec, open_bus
from services.bus.kafka.producer import KafkaProducer

pytestmark = pytest.mark.kafka


async def test_a_gap_in_the_sequence_costs_one_send_not_the_producer(kafka_bootstrap: str) -> None:
    bus = open_bus(f"kafka://{kafka_bootstrap}?prefix=t{uuid.uuid4().hex[:12]}-")
    await bus.start()
    try:
        await bus.ensure_topics([TopicSpec("gap", 1)])
        producer = await bus.producer()
        assert isinstance(producer, KafkaProducer)
        await producer.send([OutRecord("gap", b"k", b"before")])

        inner = producer._producer
        stored = TopicPartition(producer._context.stored("gap"), 0)
        inner._txn_manager.increment_sequence_number(stored, 3)  # a batch of 3 that never reached the broker

        with pytest.raises(BusError, match="OutOfOrderSequence"):
            await producer.send([OutRecord("gap", b"k", b"lost")])
        offsets = await producer.send([OutRecord("gap", b"k", b"after")])
        again = await producer.send([OutRecord("gap", b"k", b"and after")])

        assert producer._producer is not inner
        assert again[0] > offsets[0]
        await producer.close()
    finally:
        await bus.close()
