"""Log benchmark: how fast the bus adapters move 1 KB records, against raw aiokafka.

    .venv/bin/python ops/bench/log.py [--records 20000] [--kafka HOST:PORT] [--sections log]

For each backend (embedded SQLite, Kafka) it measures the adapter's produce
throughput (plain and transactional, in batches) and its consume (catch-up)
throughput, and prints each as a ratio to plain aiokafka producing and
consuming the same records in the same run. It prints figures and never
asserts on them. Without ``--kafka`` (or ``KAFKA_BOOTSTRAP_SERVERS``) it starts
a throwaway broker with ``ops/kafka`` and stops it afterwards.

The report is built from *sections*: async functions that take the shared
`Run` and return `Figure` rows. ``log`` is the only one today; the committer's
"committed writes/s" and the informer's "catch-up events/s" are meant to be
added to `SECTIONS` the same way (see the marked place below).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("services") is None:  # run from a checkout without `pip install -e`
    sys.path.insert(0, str(REPO))

from services.bus import BEGINNING, Bus, OutRecord, TopicSpec, open_bus  # noqa: E402
from services.bus.kafka import raw  # noqa: E402

VALUE_SIZE = 1024
BATCH = 1000  # records per send / per transaction, like a committer batch


@dataclass(frozen=True, slots=True)
class Figure:
    """One line of the report."""

    backend: str
    measure: str
    count: int
    seconds: float
    baseline_s: float | None = None  # raw aiokafka on the same records, when comparable

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else float("inf")

    @property
    def ratio(self) -> float | None:
        """Adapter throughput divided by raw aiokafka throughput (>1: faster)."""
        if self.baseline_s is None or self.seconds <= 0:
            return None
        return self.baseline_s / self.seconds


@dataclass(slots=True)
class Run:
    """What every section gets: the records, where the logs are, the baselines."""

    records: list[tuple[bytes, bytes]]
    kafka: str
    workdir: Path
    baseline: dict[str, float] = field(default_factory=dict)  # measure -> raw aiokafka seconds

    def bus_url(self, backend: str) -> str:
        prefix = f"bench{uuid.uuid4().hex[:8]}-"
        if backend == "kafka":
            return f"kafka://{self.kafka}?prefix={prefix}"
        return f"sqlite://{self.workdir / (prefix + 'bus.db')}"

    @asynccontextmanager
    async def bus(self, backend: str) -> AsyncIterator[Bus]:
        bus = open_bus(self.bus_url(backend))
        await bus.start()
        try:
            yield bus
        finally:
            await bus.close()


Section = Callable[[Run], Awaitable[list[Figure]]]


# -- the log section ---------------------------------------------------------------------


async def measure_baseline(run: Run) -> list[Figure]:
    """Raw aiokafka producing, then consuming, the records (the reference for ratios)."""
    async with run.bus("kafka") as bus:
        await bus.ensure_topics([TopicSpec("raw", 1)])
        topic = bus.prefix + "raw"  # type: ignore[attr-defined]
    produce_s = await raw.produce(run.kafka, topic, run.records, max_batch_size=512 * 1024)
    consume_s = await raw.consume(run.kafka, topic, len(run.records))
    run.baseline.update(produce=produce_s, consume=consume_s)
    n = len(run.records)
    return [
        Figure("kafka", "raw aiokafka produce (send per record)", n, produce_s),
        Figure("kafka", "raw aiokafka consume (catch-up)", n, consume_s),
    ]


async def adapter_produce(bus: Bus, records: list[tuple[bytes, bytes]], *, transactional: bool) -> float:
    producer = await bus.producer(transactional_id="bench" if transactional else None)
    batches = [
        [OutRecord("log", key, value) for key, value in records[i : i + BATCH]] for i in range(0, len(records), BATCH)
    ]
    start = time.perf_counter()
    for batch in batches:
        if transactional:
            async with producer.transaction() as txn:
                await txn.send(batch)
        else:
            await producer.send(batch)
    elapsed = time.perf_counter() - start
    await producer.close()
    return elapsed


async def adapter_consume(bus: Bus, count: int) -> float:
    consumer = await bus.consumer("log", start=BEGINNING)
    start = time.perf_counter()
    seen = 0
    while seen < count:
        seen += len(await consumer.getmany(timeout_ms=1000, max_records=10_000))
    elapsed = time.perf_counter() - start
    await consumer.close()
    return elapsed


async def section_log(run: Run) -> list[Figure]:
    figures = await measure_baseline(run)
    n = len(run.records)
    for backend in ("embedded", "kafka"):
        for transactional in (False, True):
            async with run.bus(backend) as bus:
                await bus.ensure_topics([TopicSpec("log", 1)])
                produce_s = await adapter_produce(bus, run.records, transactional=transactional)
                consume_s = await adapter_consume(bus, n)
            kind = "transactional" if transactional else "plain"
            figures.append(
                Figure(backend, f"adapter produce ({kind}, {BATCH}/batch)", n, produce_s, run.baseline["produce"])
            )
            if not transactional:
                figures.append(Figure(backend, "adapter consume (catch-up)", n, consume_s, run.baseline["consume"]))
    return figures


# -- sections ------------------------------------------------------------------------------
#
# Add the runtime's sections here, each an `async def section_x(run: Run) -> list[Figure]`
# using `run.bus(backend)`, `run.records` and, for a comparable figure, `run.baseline`:
#   "committer": committed writes/s through services.runtime's committer (request → reply);
#   "informer":  catch-up events/s of an informer replaying `objects` to has_synced.

SECTIONS: dict[str, Section] = {
    "log": section_log,
}


# -- running and printing ------------------------------------------------------------------


def make_records(count: int) -> list[tuple[bytes, bytes]]:
    payload = os.urandom(VALUE_SIZE // 2).hex().encode()  # 1 KB, not trivially compressible
    return [(b"key-%010d" % i, payload) for i in range(count)]


def print_report(figures: list[Figure], *, records: int, kafka: str) -> None:
    print(f"draplane log benchmark: {records} records of {VALUE_SIZE} B, Kafka at {kafka}")
    print(f"{'backend':<9} {'measure':<42} {'records/s':>11} {'MB/s':>7} {'vs raw aiokafka':>16}")
    for f in figures:
        ratio = "" if f.ratio is None else f"{f.ratio:.2f}x"
        mb = f.rate * VALUE_SIZE / 1e6
        print(f"{f.backend:<9} {f.measure:<42} {f.rate:>11,.0f} {mb:>7.1f} {ratio:>16}")


@asynccontextmanager
async def kafka_broker(bootstrap: str | None, workdir: Path) -> AsyncIterator[str]:
    """The given broker, or a throwaway one started with ops/kafka."""
    if bootstrap:
        yield bootstrap
        return
    spec = importlib.util.spec_from_file_location("launcher", REPO / "ops" / "kafka" / "launcher.py")
    assert spec is not None and spec.loader is not None
    launcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launcher)
    data = workdir / "kafka"
    port = launcher.free_port()
    if launcher.start(data, port) != 0:
        raise SystemExit("could not start a Kafka broker (see the log above)")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        launcher.stop(data)


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--kafka", default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS"))
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="draplane-bench-") as tmp:
        async with kafka_broker(args.kafka, Path(tmp)) as kafka:
            run = Run(make_records(args.records), kafka, Path(tmp))
            figures: list[Figure] = []
            for name in args.sections.split(","):
                figures += await SECTIONS[name.strip()](run)
            print_report(figures, records=args.records, kafka=kafka)


if __name__ == "__main__":
    asyncio.run(main())
