"""A committer-shaped Kafka transaction, timed: the replies in the records' Produce request, or after its answer.

    .venv/bin/python -m ops.bench.kafka_transaction [--kafka HOST:PORT] [--transactions 300] [--rounds 3]

Why: the committer's cycle on Kafka is one transaction per batch, and a
transaction's serial round trips are most of it (docs/decisions/latency.md).
After a commit, the transactional producer knows the offsets its next records
will get, so `send_then` sends the replies computed from them in the same
Produce request as the records (`services.bus.kafka.producer`); the first
transaction of a producer sends them once the records' Produce is answered. This
script times both ways on one broker, round after round in alternation: each
transaction writes ``--records`` object records and a reply per record, and
commits a consumer offset, as a committer batch does. "two-step" is the same
producer told it knows no offsets (the one thing this script changes in it).
It prints, per way, the transaction's time (begin to commit answered) and the
requests it sent, and the ratio of the two.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections import Counter
from typing import Any

from ops.bench.fresh_logs import dropped_after, fresh_url
from services.bus import OutRecord, TopicSpec, open_bus
from services.bus.kafka.producer import KafkaProducer

TOPICS = ("objects", "replies", "requests")
WAYS = ("one Produce", "two-step")
WARM = 20  # transactions of each run not counted (the producer's first, and the connections' start)


async def run(bootstrap: str, way: str, transactions: int, records: int) -> tuple[list[float], Counter[str]]:
    """One run of ``way`` on a fresh prefix, whose topics are deleted when it ends."""
    async with dropped_after(fresh_url("kafka", kafka=bootstrap)) as url:
        return await _timed(url, way, transactions, records)


async def _timed(url: str, way: str, transactions: int, records: int) -> tuple[list[float], Counter[str]]:
    bus = open_bus(url)
    await bus.start()
    try:
        await bus.ensure_topics([TopicSpec(t, 1) for t in TOPICS])
        producer = await bus.producer(transactional_id="committer")
        assert isinstance(producer, KafkaProducer)
        if way == "two-step":
            producer._expected_offsets = lambda records: None  # type: ignore[method-assign]
        sent: Counter[str] = Counter()
        client = producer._producer.client
        send = client.send

        async def counting(node_id: int, request: Any, **kwargs: Any) -> Any:
            sent[type(request).__name__.split("Request")[0]] += 1
            return await send(node_id, request, **kwargs)

        client.send = counting
        times: list[float] = []
        body = b"x" * 600
        for n in range(WARM + transactions):
            if n == WARM:
                sent.clear()
            start = time.perf_counter()
            async with producer.transaction() as txn:
                offsets = asyncio.create_task(txn.send_offsets("committer", {("requests", 0): n + 1}))
                try:
                    await txn.send_then(
                        [OutRecord("objects", f"k{i}".encode(), body) for i in range(records)],
                        lambda at: [OutRecord("replies", b"r", str(o).encode()) for o in at],
                        then_to=[("replies", 0)],
                        after=offsets,
                    )
                finally:
                    await offsets
            if n >= WARM:
                times.append((time.perf_counter() - start) * 1000)
        await producer.close()
        return times, sent
    finally:
        await bus.close()


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kafka", default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS", ""))
    parser.add_argument("--transactions", type=int, default=300, help="timed transactions per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each way, alternating")
    parser.add_argument("--records", type=int, default=8, help="object records (and replies) per transaction")
    args = parser.parse_args()
    if not args.kafka:
        parser.error("no broker: pass --kafka or set KAFKA_BOOTSTRAP_SERVERS (ops/kafka/start prints it)")
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    requests: dict[str, Counter[str]] = {way: Counter() for way in WAYS}
    for round_ in range(args.rounds):
        for way in WAYS if round_ % 2 == 0 else reversed(WAYS):
            run_times, sent = await run(args.kafka, way, args.transactions, args.records)
            times[way] += run_times
            requests[way] += sent
            print(f"round {round_ + 1} {way:12s} p50 {statistics.median(run_times):6.2f} ms", flush=True)
    count = args.transactions * args.rounds
    print(f"\n{count} transactions of each way ({args.records} records, {args.records} replies, an offset commit):")
    for way in WAYS:
        t = times[way]
        per = ", ".join(f"{name} {n / count:.2f}" for name, n in sorted(requests[way].items()))
        p50, p90 = _quantile(t, 0.5), _quantile(t, 0.9)
        print(f"  {way:12s} p50 {p50:6.2f} ms  p90 {p90:6.2f}  mean {statistics.mean(t):6.2f}")
        print(f"  {'':12s} requests per transaction: {per}")
    ratio = _quantile(times["two-step"], 0.5) / _quantile(times["one Produce"], 0.5)
    print(f"  p50 two-step / one Produce: {ratio:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
