"""A three-broker KRaft cluster from ``ops/kafka/start --brokers 3``, and what draplane makes of it.

The cluster is the one ops/chaos and ops/bench/failover_broker.py run on:
three combined broker+controller nodes on loopback. These tests start one (a
minute or two on a busy 2-core machine, so once per module) and check that

- ``start --brokers 3`` prints the three client addresses and every node registers;
- topics draplane creates there (``draplane topics``) have three replicas and
  ``min.insync.replicas=2``;
- its producers, plain and transactional, ask for ``acks=all`` with idempotence;
- a write acknowledged before its partition's leader is SIGKILLed is still read
  back after, and writes go on while that node is away;
- ``stop --node`` and ``start --node`` take one node away and bring it back on
  its port; ``stop`` ends every node.

Marked ``kafka``: it needs Java and the broker jars that ``ops/test`` fetches
(``ops/kafka/fetch``); without them it skips, or fails under
``DRAPLANE_REQUIRE_KAFKA=1`` as the other Kafka tests do. The cluster is this
module's own; the broker ``ops/test`` starts is not used.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.bus import open_bus
from services.bus.kafka.bus import KafkaBus
from services.bus.kafka.producer import KafkaProducer
from services.bus.kafka.topics import _describe
from services.bus.port import BusError, OutRecord, TopicSpec
from services.cli import main
from tests.support.eventually import eventually
from topics.declarations import declarations

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "ops" / "kafka" / "launcher.py"
START_TIMEOUT_S = 400  # three JVMs on a loaded 2-core machine


@dataclass
class Cluster:
    data: Path
    bootstrap: str

    def launcher(self, *args: str, timeout: float = START_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KAFKA_JVM_EXTRA_OPTS": "-XX:TieredStopAtLevel=1"}
        return subprocess.run(
            [sys.executable, str(LAUNCHER), *args, "--data", str(self.data)],
            capture_output=True, text=True, timeout=timeout, check=False, env=env,
        )

    def metadata(self) -> dict[str, object]:
        done = self.launcher("metadata", timeout=30)
        assert done.returncode == 0, done.stderr
        found: dict[str, object] = json.loads(done.stdout)
        return found

    def brokers(self) -> set[int]:
        return {int(n) for n in self.metadata()["brokers"]}  # type: ignore[attr-defined]

    def pid(self, node: int) -> int | None:
        try:
            return int((self.data / f"node-{node}" / "kafka.pid").read_text())
        except (OSError, ValueError):
            return None


def jars_present() -> bool:
    version = os.environ.get("KAFKA_VERSION", "4.1.1")
    return shutil.which("java") is not None and (REPO / ".cache" / "kafka" / version / "libs" / ".complete").exists()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if not jars_present():
        problem = "needs java and the Kafka jars (ops/kafka/fetch; ./ops/test fetches them)"
        if os.environ.get("DRAPLANE_REQUIRE_KAFKA") == "1":
            pytest.fail(f"DRAPLANE_REQUIRE_KAFKA=1 but this test {problem}")
        pytest.skip(problem)
    data = tmp_path_factory.mktemp("kafka3")
    found = Cluster(data, "")
    started = found.launcher("start", "--brokers", "3")
    assert started.returncode == 0, started.stderr[-6000:]
    line = started.stdout.strip().splitlines()[-1]
    assert line.startswith("KAFKA_BOOTSTRAP_SERVERS="), started.stdout
    found.bootstrap = line.split("=", 1)[1]
    try:
        yield found
    finally:
        found.launcher("stop", timeout=120)


def url(cluster: Cluster, prefix: str) -> str:
    return f"kafka://{cluster.bootstrap}?prefix={prefix}"


def test_start_prints_three_addresses_and_every_node_registers(cluster: Cluster) -> None:
    addresses = cluster.bootstrap.split(",")
    assert len(addresses) == 3
    assert all(a.startswith("127.0.0.1:") for a in addresses)
    meta = cluster.metadata()
    assert meta["brokers"] == {str(n): int(a.rsplit(":", 1)[1]) for n, a in enumerate(addresses, 1)}
    config = (cluster.data / "node-2" / "server.properties").read_text()
    assert "process.roles=broker,controller" in config  # combined nodes
    assert config.count("@127.0.0.1:") == 3  # three voters
    assert "offsets.topic.replication.factor=3" in config
    assert "transaction.state.log.min.isr=2" in config


def test_draplane_topics_creates_three_replicas_with_min_insync_two(
    cluster: Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    assert main(["topics", "--bus", url(cluster, prefix)]) == 0, capsys.readouterr().err
    topics = cluster.metadata()["topics"]
    for spec in declarations():
        partitions = topics[prefix + spec.name]  # type: ignore[index]
        assert [len(p["replicas"]) for p in partitions.values()] == [3] * spec.partitions, (spec.name, partitions)

    async def configs() -> dict[str, dict[str, str]]:
        bus = open_bus(url(cluster, prefix))
        await bus.start()
        try:
            assert isinstance(bus, KafkaBus) and bus._context is not None
            return await _describe(bus._context, [prefix + s.name for s in declarations()])
        finally:
            await bus.close()

    found = asyncio.run(configs())
    assert {name: config["min.insync.replicas"] for name, config in found.items()} == {
        prefix + s.name: "2" for s in declarations()
    }


def test_producers_ask_for_acks_all_with_idempotence(cluster: Cluster) -> None:
    async def check() -> None:
        bus = open_bus(url(cluster, f"t{uuid.uuid4().hex[:8]}-"))
        await bus.start()
        try:
            await bus.ensure_topics([TopicSpec("p", 1)])
            for transactional_id in (None, "txn"):
                producer = await bus.producer(transactional_id=transactional_id)
                assert isinstance(producer, KafkaProducer)
                inner = producer._producer
                assert inner._sender._acks == -1  # acks=all
                assert inner._txn_manager is not None  # idempotence: a producer id and sequence numbers
                if transactional_id is None:
                    await producer.send([OutRecord("p", b"k", b"v")])
                else:
                    async with producer.transaction() as txn:
                        await txn.send([OutRecord("p", b"k", b"v")])
                assert inner._txn_manager.producer_id >= 0
                await producer.close()
        finally:
            await bus.close()

    asyncio.run(check())


def test_an_acknowledged_write_survives_killing_the_partition_leader(cluster: Cluster) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}-"

    async def go() -> None:
        bus = open_bus(url(cluster, prefix))
        await bus.start()
        try:
            await bus.ensure_topics([TopicSpec("acks", 1)])
            producer = await bus.producer()
            acked: dict[int, bytes] = {}

            async def write(n: int) -> None:
                value = f"w{n}".encode()

                async def attempt() -> bool | None:
                    try:
                        [offset] = await producer.send([OutRecord("acks", None, value)])
                    except BusError:
                        return False  # no leader yet: this write was not acknowledged; try again
                    acked[offset] = value
                    return True

                acknowledged: bool = await eventually(
                    attempt, timeout=60, what=f"write {n} acknowledged", interval=0.1
                )
                assert acknowledged

            for n in range(20):
                await write(n)
            topic = cluster.metadata()["topics"][prefix + "acks"]  # type: ignore[index]
            leader = int(topic["0"]["leader"])
            pid = cluster.pid(leader)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            for n in range(20, 40):
                await write(n)
            assert leader not in cluster.brokers()
            consumer = await bus.consumer("acks")
            read: dict[int, bytes | None] = {}

            async def all_read() -> bool | None:
                for record in await consumer.getmany(timeout_ms=200):
                    read[record.offset] = record.value
                return acked.keys() <= read.keys()

            complete: bool = await eventually(all_read, timeout=60, what="every acknowledged write read back")
            assert complete
            assert {o: read[o] for o in acked} == acked
            await consumer.close()
            await producer.close()
        finally:
            await bus.close()
        (cluster.data / f"node-{leader}" / "kafka.pid").unlink(missing_ok=True)
        started = cluster.launcher("start", "--node", str(leader))
        assert started.returncode == 0, started.stderr[-4000:]
        assert cluster.brokers() == {1, 2, 3}

    asyncio.run(go())


def test_stop_and_start_one_node_then_stop_every_node(cluster: Cluster) -> None:
    port = cluster.metadata()["brokers"]["2"]  # type: ignore[index]
    stopped = cluster.launcher("stop", "--node", "2", timeout=120)
    assert stopped.returncode == 0, stopped.stderr
    assert cluster.brokers() == {1, 3}
    assert cluster.pid(2) is None
    started = cluster.launcher("start", "--node", "2")
    assert started.returncode == 0, started.stderr[-4000:]
    assert started.stdout.strip() == f"KAFKA_NODE_2=127.0.0.1:{port}"  # on its old port
    assert cluster.brokers() == {1, 2, 3}
    pids = [cluster.pid(n) for n in (1, 2, 3)]
    assert stopped.returncode == 0
    assert cluster.launcher("stop", timeout=120).returncode == 0
    assert [cluster.pid(n) for n in (1, 2, 3)] == [None, None, None]
    for pid in pids:
        assert pid is not None
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
