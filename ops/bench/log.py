"""Log benchmark: how fast the bus adapters and the runtime move 1 KB records, against raw aiokafka.

    .venv/bin/python ops/bench/log.py [--records 20000] [--kafka HOST:PORT] [--sections log,runtime]
                                      [--backends embedded,kafka] [--writers 64] [--client-writes 5000]

It prints figures and never asserts on them. Every rate is also printed as a
ratio to plain aiokafka producing or consuming the same records in the same
run (>1: faster than raw aiokafka), so a loaded machine shows in both. Without
``--kafka`` (or ``KAFKA_BOOTSTRAP_SERVERS``) it starts a throwaway broker with
``ops/kafka`` and stops it afterwards.

The report is built from *sections*, async functions that take the shared
`Run` and return `Figure` rows:

- ``log``: the adapters alone: produce (plain and transactional, 1000 records a
  batch) and consume (catch-up) of 1 KB records.
- ``runtime``: the log core as draplane runs it, on each backend:

  - *committed writes/s*: a committer takes over a backlog of ``--records``
    creates of ~1 KB ResourceClaims on `requests` and commits them (records on
    `objects`, replies, request offsets: one transaction per batch), once with
    the admission chain `draplane apiserver` runs (authorization, defaulting,
    gates, validation, strict decoding) and once with an empty chain, so the
    log core's own cost shows. The baseline is raw aiokafka producing the very
    `objects` records the committer wrote.
  - *closed-loop clients*: ``--writers`` clients each send creates one after
    another through `services.runtime.client` (request → committer → reply),
    with p50/p99 latency.
  - *informer catch-up events/s*: a fresh informer replays `objects` to
    has_synced; the baseline is raw aiokafka consuming the same records.

A CPU column gives the benchmark process's CPU time per record (the broker's
is not included), a steadier figure than wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
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
if str(REPO) not in sys.path:  # for ops.bench and ops.kafka (ops/ is a namespace package, not installed)
    sys.path.append(str(REPO))

from ops.bench.fresh_logs import BACKENDS, dropped_after, fresh_url  # noqa: E402
from ops.kafka import launcher  # noqa: E402
from services.apiserver.admission_chain import build_admission  # noqa: E402
from services.apiserver.committer_hooks import wired_core  # noqa: E402
from services.bus import BEGINNING, Bus, OutRecord, TopicSpec, open_bus  # noqa: E402
from services.bus.kafka import raw  # noqa: E402
from services.runtime import gc_pause  # noqa: E402
from services.runtime.client import Client  # noqa: E402
from services.runtime.committer import Committer  # noqa: E402
from services.runtime.committer_core import CommitterCore, Outcome  # noqa: E402
from services.runtime.informer import Informer  # noqa: E402
from topics.declarations import OBJECTS, REQUESTS, declarations  # noqa: E402
from topics.envelope import Request, UserInfo, encode_event, encode_request  # noqa: E402

VALUE_SIZE = 1024
BATCH = 1000  # records per send / per transaction, like a committer batch
BENCH_USER = UserInfo("bench", ("system:masters", "system:authenticated"))
BENCH_REQUESTER = "bench"


@dataclass(frozen=True, slots=True)
class Figure:
    """One line of the report."""

    backend: str
    measure: str
    count: int
    seconds: float
    baseline_s: float | None = None  # raw aiokafka on the same records, when comparable
    cpu_seconds: float | None = None  # this process's CPU time, when measured
    latencies: list[float] | None = None  # per-request seconds, for request/reply figures

    @property
    def rate(self) -> float | None:
        """Records per second; None when nothing was timed (a backlog of --records that fit one batch)."""
        return self.count / self.seconds if self.count and self.seconds > 0 else None

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
    backends: tuple[str, ...] = BACKENDS
    writers: int = 64
    client_writes: int = 5000
    baseline: dict[str, float] = field(default_factory=dict)  # measure -> raw aiokafka seconds

    def bus_url(self, backend: str) -> str:
        return fresh_url(backend, kafka=self.kafka, workdir=self.workdir)

    @asynccontextmanager
    async def bus(self, backend: str) -> AsyncIterator[Bus]:
        async with dropped_after(self.bus_url(backend)) as url:
            bus = open_bus(url)
            await bus.start()
            try:
                yield bus
            finally:
                await bus.close()


Section = Callable[[Run], Awaitable[list[Figure]]]


# -- the log section ---------------------------------------------------------------------


async def measure_baseline(run: Run) -> list[Figure]:
    """Raw aiokafka producing, then consuming, the records (the reference for ratios)."""
    async with run.bus("kafka") as bus:  # the topic is deleted when the block ends
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
    for backend in run.backends:
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


# -- the committer and informer sections ---------------------------------------------------


def claim_request(i: int, *, pad: int) -> Request:
    """A create of a ResourceClaim whose stored object is about 1 KB."""
    obj = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": f"claim-{i:07d}", "namespace": "default", "annotations": {"bench/pad": "x" * pad}},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }
    return Request(
        id=uuid.uuid4().hex,
        op="create",
        group="resource.k8s.io",
        version="v1alpha3",
        resource="resourceclaims",
        namespace="default",
        name=f"claim-{i:07d}",
        user=BENCH_USER,
        reply_to=BENCH_REQUESTER,
        object=obj,
    )


def claim_pad() -> int:
    """The annotation length that makes a committed claim's `objects` record 1 KB."""
    core = CommitterCore()
    core.index.put("core/namespaces//default", 1, {"metadata": {"name": "default", "uid": "u"}})
    outcome = core.process([claim_request(0, pad=0)])[0]
    write = outcome.writes[0]
    size = len(encode_event("ADDED", write.object, request_id=write.request_id))
    return max(0, VALUE_SIZE - size)


def committer_core(chain: str) -> CommitterCore:
    """The core as `draplane apiserver` wires it ("real"), or with nothing plugged in ("empty")."""
    if chain == "real":
        return wired_core(admission=build_admission())
    return CommitterCore()


@dataclass(slots=True)
class Committed:
    """What one committer run left behind: the objects it wrote, for the next measures."""

    seconds: float
    cpu_seconds: float
    object_records: list[tuple[bytes, bytes]]


async def prefill(bus: Bus, requests: list[Request]) -> None:
    producer = await bus.producer()
    encoded = [OutRecord(REQUESTS, r.key.encode(), encode_request(r)) for r in requests]
    for i in range(0, len(encoded), BATCH):
        await producer.send(encoded[i : i + BATCH])
    await producer.close()


class RunningCommitter:
    """A committer on a bus, counting what it commits and when.

    Throughput is timed from the end of its first batch to the end of the
    batch that reaches the target, so group joining and recovery do not count.
    """

    def __init__(self, bus: Bus, core: CommitterCore) -> None:
        self.committed = 0
        self.marks: list[tuple[int, float, float]] = []  # (committed, wall, CPU) after each batch
        self._target = 0
        self._reached = asyncio.Event()
        self.committer = Committer(bus, core, on_batch=self._on_batch)
        self._task: asyncio.Task[None] | None = None

    def _on_batch(self, outcomes: list[Outcome]) -> None:
        self.committed += len(outcomes)
        self.marks.append((self.committed, time.perf_counter(), time.process_time()))
        if self.committed >= self._target:
            self._reached.set()

    async def __aenter__(self) -> RunningCommitter:
        self._task = asyncio.create_task(self.committer.run())
        await asyncio.wait_for(self.committer.is_leader.wait(), 120)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.committer.stop()
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def until(self, count: int) -> tuple[int, float, float]:
        """Wait until ``count`` requests are committed: (requests timed, wall s, CPU s)."""
        self._target = count
        if self.committed < count:
            self._reached.clear()
            await asyncio.wait_for(self._reached.wait(), 600)
        (first, wall0, cpu0), (last, wall1, cpu1) = self.marks[0], self.marks[-1]
        return last - first, wall1 - wall0, cpu1 - cpu0


async def read_objects(bus: Bus) -> list[tuple[bytes, bytes]]:
    """Every live (key, value) record of `objects`, in order."""
    consumer = await bus.consumer(OBJECTS, start=BEGINNING)
    end = await bus.end_offset(OBJECTS)
    found: list[tuple[bytes, bytes]] = []
    while consumer.position() < end:
        for r in await consumer.getmany(timeout_ms=500):
            if r.key is not None and r.value is not None:
                found.append((r.key, r.value))
    await consumer.close()
    return found


async def informer_catch_up(bus: Bus) -> tuple[int, float, float]:
    """A fresh informer replays `objects` to has_synced: (records applied, wall s, CPU s)."""
    informer = Informer(bus)
    start, cpu = time.perf_counter(), time.process_time()
    await informer.start()
    await informer.wait_synced(timeout=600)
    elapsed, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    await informer.stop()
    return informer.records_applied, elapsed, cpu_s


async def closed_loop_clients(bus: Bus, requests: list[Request], writers: int) -> tuple[float, list[float]]:
    """``writers`` clients each create their share of ``requests`` one after another (request → reply)."""
    clients = [Client(bus, user=BENCH_USER) for _ in range(writers)]
    for client in clients:
        await client.start()
    latencies: list[float] = []

    async def writer(client: Client, share: list[Request]) -> None:
        for request in share:
            t0 = time.perf_counter()
            reply = await client.submit(dataclasses.replace(request, reply_to=client.requester_id))
            if reply.code != 201:
                raise RuntimeError(f"create failed: {reply.code} {reply.status}")
            latencies.append(time.perf_counter() - t0)

    start = time.perf_counter()
    await asyncio.gather(*(writer(c, requests[i::writers]) for i, c in enumerate(clients)))
    elapsed = time.perf_counter() - start
    for client in clients:
        await client.close()
    return elapsed, latencies


async def raw_baseline(run: Run, records: list[tuple[bytes, bytes]]) -> tuple[float, float]:
    """Raw aiokafka producing, then consuming, exactly these records: seconds per record (produce, consume)."""
    async with run.bus("kafka") as bus:  # the topic is deleted when the block ends
        await bus.ensure_topics([TopicSpec("raw", 1)])
        topic = bus.prefix + "raw"  # type: ignore[attr-defined]
        produce_s = await raw.produce(run.kafka, topic, records, max_batch_size=512 * 1024)
        consume_s = await raw.consume(run.kafka, topic, len(records))
    return produce_s / len(records), consume_s / len(records)


async def section_runtime(run: Run) -> list[Figure]:
    """Committed writes/s (a backlog, and closed-loop clients) and informer catch-up events/s."""
    n = len(run.records)
    pad = claim_pad()
    figures: list[Figure] = []
    per_record: tuple[float, float] | None = None  # raw aiokafka s/record: produce, consume
    for backend in run.backends:
        for chain in ("real", "empty"):
            label = "admission chain" if chain == "real" else "empty chain"
            async with run.bus(backend) as bus:
                await bus.ensure_topics(declarations())
                await prefill(bus, [claim_request(i, pad=pad) for i in range(n)])
                async with RunningCommitter(bus, committer_core(chain)) as committer:
                    timed, wall, cpu = await committer.until(n)
                    if per_record is None:
                        claims = [kv for kv in await read_objects(bus) if kv[0].startswith(b"resource.k8s.io/")]
                        per_record = await raw_baseline(run, claims)
                        m = len(claims)
                        figures.append(Figure("kafka", "raw aiokafka produce (the same objects)", m, per_record[0] * m))
                        figures.append(Figure("kafka", "raw aiokafka consume (the same objects)", m, per_record[1] * m))
                    figures.append(
                        Figure(backend, f"committer, backlog, {label}", timed, wall, per_record[0] * timed, cpu)
                    )
                    if chain != "real":
                        continue
                    applied, wall, cpu = await informer_catch_up(bus)
                    figures.append(Figure(backend, "informer catch-up", applied, wall, per_record[1] * applied, cpu))
                    if run.client_writes:
                        more = [claim_request(i, pad=pad) for i in range(n, n + run.client_writes)]
                        cpu = time.process_time()
                        wall, latencies = await closed_loop_clients(bus, more, run.writers)
                        cpu = time.process_time() - cpu
                        figures.append(
                            Figure(
                                backend,
                                f"{run.writers} clients, request->reply, {label}",
                                len(more),
                                wall,
                                per_record[0] * len(more),
                                cpu,
                                latencies,
                            )
                        )
    return figures


SECTIONS: dict[str, Section] = {
    "log": section_log,
    "runtime": section_runtime,
}


# -- running and printing ------------------------------------------------------------------


def make_records(count: int) -> list[tuple[bytes, bytes]]:
    payload = os.urandom(VALUE_SIZE // 2).hex().encode()  # 1 KB, not trivially compressible
    return [(b"key-%010d" % i, payload) for i in range(count)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def print_report(figures: list[Figure], *, records: int, kafka: str) -> None:
    print(f"draplane log benchmark: {records} records of {VALUE_SIZE} B, Kafka at {kafka}, {os.cpu_count()} CPUs")
    print(
        f"{'backend':<9} {'measure':<46} {'records/s':>10} {'MB/s':>6} {'vs raw aiokafka':>16} "
        f"{'CPU us/rec':>10}  latency"
    )
    for f in figures:
        rate = f.rate
        if rate is None:
            print(f"{f.backend:<9} {f.measure:<46} {'-':>10} {'-':>6} {'':>16} {'':>10}  nothing timed: more --records")
            continue
        ratio = "" if f.ratio is None else f"{f.ratio:.2f}x"
        mb = rate * VALUE_SIZE / 1e6
        cpu = "" if f.cpu_seconds is None or not f.count else f"{f.cpu_seconds / f.count * 1e6:.0f}"
        latency = ""
        if f.latencies:
            p50, p99 = percentile(f.latencies, 0.5), percentile(f.latencies, 0.99)
            latency = f"p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"
        print(f"{f.backend:<9} {f.measure:<46} {rate:>10,.0f} {mb:>6.1f} {ratio:>16} {cpu:>10}  {latency}")


@asynccontextmanager
async def kafka_broker(bootstrap: str | None, workdir: Path) -> AsyncIterator[str]:
    """The given broker, or a throwaway one started with ops/kafka."""
    if bootstrap:
        yield bootstrap
        return
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
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated")
    parser.add_argument("--writers", type=int, default=64, help="concurrent clients (runtime section)")
    parser.add_argument("--client-writes", type=int, default=5000, help="creates the clients send (0: skip)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="draplane-bench-") as tmp:
        async with kafka_broker(args.kafka, Path(tmp)) as kafka:
            run = Run(
                make_records(args.records),
                kafka,
                Path(tmp),
                backends=tuple(b.strip() for b in args.backends.split(",")),
                writers=args.writers,
                client_writes=args.client_writes,
            )
            figures: list[Figure] = []
            for name in args.sections.split(","):
                figures += await SECTIONS[name.strip()](run)
            print_report(figures, records=args.records, kafka=kafka)


if __name__ == "__main__":
    gc_pause.tune_for_a_long_lived_heap()  # the committer and informers run here: tuned as `draplane` tunes them
    asyncio.run(main())
