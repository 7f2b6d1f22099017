"""Broker failover: seconds from SIGKILLing a partition's leader broker to the next committed write.

    .venv/bin/python ops/bench/failover_broker.py [--rounds 5] [--brokers 3] [--interval 0.02] [--keep]

It starts a cluster with ``ops/kafka/start --brokers 3`` (combined
broker+controller nodes, ``broker.session.timeout.ms=3000``), creates a topic
through the bus port (so as draplane creates its own: three replicas,
``min.insync.replicas=2``) and writes to it one record at a time through the
bus's producer (``acks=all``, idempotent), as fast as acknowledgements come
back with ``--interval`` seconds between them. Each round waits until the
partition has its three in-sync replicas again, SIGKILLs the node that leads
the partition, and measures the time from the kill to the first
write sent after it is acknowledged — the next committed write. (Only a write
sent after the kill counts: an acknowledgement the dying leader sent just
before may still sit in the socket; so the figure is at most one round trip
longer than the true gap.)
The node is then started again for the next round. At the end the topic is
read back: every acknowledged write must be there at its offset.

It prints one line per round and min / median / max; it asserts nothing but
exits 1 when an acknowledged write is missing. The figures are in
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("ops") is None or importlib.util.find_spec("services") is None:
    sys.path.insert(0, str(REPO))  # run as a script from a checkout

from ops.chaoskit.acks import ACKS_SPEC, AckProbe, read_back  # noqa: E402
from ops.chaoskit.broker import Cluster  # noqa: E402
from ops.chaoskit.invariants import check_acks_kept  # noqa: E402
from ops.chaoskit.run import poll  # noqa: E402
from services.bus import open_bus  # noqa: E402

TOPIC = ACKS_SPEC.name
FAILOVER_TIMEOUT_S = 60.0


async def full_isr(cluster: Cluster, *, replicas: int, timeout: float = 180.0) -> int:
    """Wait until the topic's partition has a leader and ``replicas`` in-sync replicas; returns the leader."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            entry = (await cluster.metadata())["topics"][TOPIC]["0"]  # type: ignore[index]
            if entry["leader"] > 0 and len(entry["isr"]) >= replicas:
                return int(entry["leader"])
        await asyncio.sleep(0.2)
    raise SystemExit(f"the partition of {TOPIC} did not get {replicas} in-sync replicas in {timeout:.0f}s")


async def run(args: argparse.Namespace, work: Path) -> int:
    cluster = Cluster(work / "kafka", args.brokers)
    print(f"broker failover: starting {args.brokers} nodes in {cluster.data} ...", flush=True)
    took = await cluster.start()
    print(f"broker failover: cluster on {cluster.bootstrap} in {took:.0f}s; {os.cpu_count()} CPUs", flush=True)
    bus = open_bus(f"kafka://{cluster.bootstrap}")
    figures: list[float] = []
    probe: AckProbe | None = None
    task: asyncio.Task[None] | None = None
    try:
        await bus.start()
        await bus.ensure_topics([ACKS_SPEC])
        probe = AckProbe(bus, interval=args.interval)
        task = asyncio.create_task(probe.run())
        replicas = min(3, args.brokers)
        for n in range(1, args.rounds + 1):
            leader = await full_isr(cluster, replicas=replicas)
            before = len(probe.acked)
            await poll(lambda: len(probe.acked) >= before + 20, interval=0.05)  # noqa: B023 (writes flowing)
            failures = probe.failures
            killed = time.monotonic()
            await cluster.kill(leader)
            await poll(lambda: probe.next_ack_after(killed) is not None, timeout=FAILOVER_TIMEOUT_S, interval=0.01)  # noqa: B023
            gap = probe.next_ack_after(killed)
            if gap is None:
                print(f"round {n}: killed node {leader}: no write acknowledged within {FAILOVER_TIMEOUT_S:.0f}s")
            else:
                figures.append(gap)
                print(
                    f"round {n}: killed node {leader} (leader of {TOPIC}): next committed write {gap:.2f}s later "
                    f"({probe.failures - failures} sends failed meanwhile)",
                    flush=True,
                )
            await cluster.start_node(leader)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        read = await read_back(bus)
        missing = check_acks_kept(probe.acked, read)
    finally:
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(Exception):
            await bus.close()
        await cluster.stop()
    if figures:
        print(
            f"broker failover ({len(figures)} rounds, {args.brokers} brokers, broker.session.timeout.ms=3000): "
            f"min {min(figures):.2f}s, median {statistics.median(figures):.2f}s, max {max(figures):.2f}s"
        )
    print(f"acknowledged writes: {len(probe.acked) if probe else 0}, missing after read-back: {len(missing)}")
    for violation in missing[:20]:
        print(f"  {violation}")
    return 1 if missing or len(figures) < args.rounds else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="leader kills (default 5)")
    parser.add_argument("--brokers", type=int, default=3, help="cluster nodes (default 3)")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between two writes (default 0.02)")
    parser.add_argument("--keep", action="store_true", help="keep the cluster's data directory")
    args = parser.parse_args(argv)
    if args.brokers < 2:
        parser.error("--brokers must be at least 2: a single broker has nothing to fail over to")
    # aiokafka logs every failed connection to the dead node at ERROR: the rounds' lines are the report.
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    work = Path(tempfile.mkdtemp(prefix="draplane-failover-"))
    try:
        return asyncio.run(run(args, work))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
