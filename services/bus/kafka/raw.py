"""Plain aiokafka, without the adapter: the reference the log benchmark measures against.

``ops/bench/log.py`` reports the adapters' throughput as a ratio to these
loops over the same records. They live here because this package is the only
importer of aiokafka; they are the idiomatic way to use it (one ``send`` per
record, then wait for every future; one consumer reading with ``getmany``),
with the same durability (acks=all, idempotence) and isolation
(read_committed) as the adapter.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition


async def produce(
    bootstrap: str, topic: str, records: Sequence[tuple[bytes, bytes]], *, max_batch_size: int
) -> float:
    """Append ``records`` to partition 0 of ``topic``; returns the seconds it took."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
        max_batch_size=max_batch_size, max_request_size=max(max_batch_size, 1024 * 1024),
    )
    await producer.start()
    try:
        start = time.perf_counter()
        futures = [await producer.send(topic, value, key=key, partition=0) for key, value in records]
        await asyncio.gather(*futures)
        return time.perf_counter() - start
    finally:
        await producer.stop()


async def consume(bootstrap: str, topic: str, count: int) -> float:
    """Read ``count`` records of partition 0 from the beginning; returns the seconds it took."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed",
        enable_auto_commit=False, auto_offset_reset="earliest", fetch_max_wait_ms=50,
        max_partition_fetch_bytes=8 * 1024 * 1024,
    )
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        start = time.perf_counter()
        seen = 0
        while seen < count:
            batch = await consumer.getmany(tp, timeout_ms=1000, max_records=10_000)
            seen += len(batch.get(tp, []))
        return time.perf_counter() - start
    finally:
        await consumer.stop()
