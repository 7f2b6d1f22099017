"""Apache Kafka for tests and benchmarks, without Docker: one broker, or a three-node cluster.

No package registry reachable here ships a Kafka broker, but Maven Central does:
``fetch`` copies ``org.apache.kafka:kafka_2.13`` and its dependencies once into a
git-ignored cache, ``start`` runs it in KRaft mode (broker and controller in one
JVM) on 127.0.0.1 with settings tuned for tests, and ``stop`` ends it. Only the
standard library is used, so the launcher runs before any virtualenv exists.

    python3 ops/kafka/launcher.py fetch
    python3 ops/kafka/launcher.py start [--data DIR] [--port N]   # prints KAFKA_BOOTSTRAP_SERVERS=...
    python3 ops/kafka/launcher.py stop [--data DIR]
    python3 ops/kafka/launcher.py start --brokers 3 [--data DIR]  # KAFKA_BOOTSTRAP_SERVERS=h:p1,h:p2,h:p3
    python3 ops/kafka/launcher.py start --data DIR --node 2       # node 2 of that cluster again (after a kill)
    python3 ops/kafka/launcher.py stop --data DIR [--node 2]      # every node, or one
    python3 ops/kafka/launcher.py metadata --data DIR             # brokers and partition leaders, as JSON

``start`` on a data directory used before starts the same broker again (its
log, its cluster id, its controller port) on the port given; a port still in
TIME_WAIT from the broker that just stopped counts as free.
``KAFKA_JVM_EXTRA_OPTS`` adds JVM options.

A cluster (``--brokers N``, N > 1) runs N *combined* nodes, each broker and
KRaft controller in one JVM, in ``DIR/node-<id>``: N JVMs rather than 2N on a
small machine, and a quorum of N voters, so that losing any one node (the
failure ops/chaos injects) leaves a controller majority and the brokers that
hold the other replicas. Killing a node may kill the active controller too;
the failover then includes a controller election, which is the harder case.
The cluster replicates everything three ways (``default.replication.factor``
and the internal topics: min(3, N)) with ``min.insync.replicas=2``, and
fences a silent broker after 3 s (``broker.session.timeout.ms``; Kafka's
default is 9 s) so that a killed partition leader is replaced within seconds.
Each node keeps its client and controller ports in its ``server.properties``:
a restarted node comes back where clients and voters look for it.

The ``ops/kafka/{fetch,start,stop}`` scripts are thin wrappers around these.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KAFKA_VERSION = os.environ.get("KAFKA_VERSION", "4.1.1")
# Kafka 4.x logs through log4j2 behind slf4j; the broker jar does not bring the
# slf4j binding, so the launcher adds it. Both flavours are resolved and the one
# that does not match the broker's slf4j-api (1.x or 2.x) is dropped.
LOG4J_VERSION = os.environ.get("KAFKA_LOG4J_VERSION", "2.24.3")
CACHE = REPO / ".cache" / "kafka"
DEFAULT_DATA = CACHE / "broker"
READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>draplane.ops</groupId>
  <artifactId>kafka-broker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>{kafka}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>{log4j}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j2-impl</artifactId>
      <version>{log4j}</version>
    </dependency>
  </dependencies>
</project>
"""

# Broker settings for a throwaway cluster: replication factors of one on a
# single node (min(3, nodes) on a cluster), internal topics with one partition
# (fast to create), quick first rebalance, short session timeouts allowed, a
# log cleaner that looks for work often, and no topic auto-creation (topics
# are declared, never guessed). File deletion keeps Kafka's delay
# (``log.segment.delete.delay.ms``, 60 s): it is also how long the task that
# deletes files waits when there are none, and at 0 that task ran without
# pause, keeping the scheduler threads at ~4 % of a core on an idle broker and
# under load (KAFKA-16588; docs/decisions/latency.md, "Seventeenth pass").
SERVER_PROPERTIES = """\
process.roles=broker,controller
node.id={node_id}
controller.quorum.voters={voters}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs={logs}
num.partitions=1
default.replication.factor={replication}
min.insync.replicas={min_isr}
auto.create.topics.enable=false
offsets.topic.replication.factor={replication}
offsets.topic.num.partitions=1
transaction.state.log.replication.factor={replication}
transaction.state.log.min.isr={min_isr}
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=500
log.cleaner.backoff.ms=200
log.cleaner.dedupe.buffer.size=16777216
log.retention.check.interval.ms=1000
log.initial.task.delay.ms=0
"""

# Added on a cluster: brokers heartbeat every 500 ms and are fenced (their
# partitions led elsewhere) after 3 s of silence instead of Kafka's 9 s.
CLUSTER_PROPERTIES = """\
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
"""

LOG4J2_PROPERTIES = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.request.name = kafka.request.logger
logger.request.level = warn
logger.statechange.name = state.change.logger
logger.statechange.level = warn
logger.clients.name = org.apache.kafka.clients
logger.clients.level = warn
"""


def libs_dir(version: str = KAFKA_VERSION) -> Path:
    return CACHE / version / "libs"


def fetch(version: str = KAFKA_VERSION) -> Path:
    """Copy the broker jars into the cache once; later calls return at once."""
    libs = libs_dir(version)
    if (libs / ".complete").exists():
        return libs
    if shutil.which("mvn") is None or shutil.which("java") is None:
        fail("fetch: needs `mvn` and `java` (Java 17+) on PATH")
    work = libs.parent
    work.mkdir(parents=True, exist_ok=True)
    pom = work / "pom.xml"
    pom.write_text(POM.format(kafka=version, log4j=LOG4J_VERSION))
    staging = work / "libs.partial"
    shutil.rmtree(staging, ignore_errors=True)
    log(f"fetch: resolving org.apache.kafka:kafka_2.13:{version} from Maven Central ...")
    result = subprocess.run(
        [
            "mvn", "-B", "-q", "-f", str(pom), "dependency:copy-dependencies",
            f"-DoutputDirectory={staging}", "-DincludeScope=runtime",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        sys.stderr.write(tail_text(result.stdout + result.stderr, 40))
        fail(f"fetch: mvn failed with status {result.returncode}")
    keep_matching_slf4j_binding(staging)
    shutil.rmtree(libs, ignore_errors=True)
    staging.rename(libs)
    (libs / ".complete").write_text(version + "\n")
    log(f"fetch: {len(list(libs.glob('*.jar')))} jars in {libs}")
    return libs


def keep_matching_slf4j_binding(libs: Path) -> None:
    slf4j_1 = any(libs.glob("slf4j-api-1.*.jar"))
    drop = "log4j-slf4j2-impl-*.jar" if slf4j_1 else "log4j-slf4j-impl-*.jar"
    for jar in libs.glob(drop):
        jar.unlink()


def replication_for(nodes: int) -> tuple[int, int]:
    """(replication factor, min.insync.replicas) of a cluster of ``nodes``: min(3, nodes), and 2 from 3 on."""
    replication = max(1, min(3, nodes))
    return replication, 2 if replication >= 3 else 1


def node_dir(data: Path, node_id: int) -> Path:
    return data / f"node-{node_id}"


def cluster_nodes(data: Path) -> list[int]:
    """The node ids of the cluster kept in ``data`` (empty for a single-broker directory)."""
    ids = []
    for child in data.glob("node-*"):
        suffix = child.name.removeprefix("node-")
        if child.is_dir() and suffix.isdigit() and (child / "server.properties").exists():
            ids.append(int(suffix))
    return sorted(ids)


def java_command(data: Path, libs: Path) -> list[str]:
    """The JVM command line of the node in ``data`` (its log4j config written there)."""
    log4j = data / "log4j2.properties"
    log4j.write_text(LOG4J2_PROPERTIES.format(log=data / "broker.log"))
    return [
        "java", "-Xms256m", "-Xmx1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
        "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true",
        # Extra JVM options, e.g. -XX:TieredStopAtLevel=1 (C1 only: half the CPU to start,
        # which short-lived brokers on small machines want; ops/chaos uses it).
        *os.environ.get("KAFKA_JVM_EXTRA_OPTS", "").split(),
        f"-Dlog4j2.configurationFile={log4j}", "-cp", f"{libs}/*",
    ]


def write_config(
    data: Path, *, node_id: int, port: int, controller_port: int, voters: str, nodes: int
) -> Path:
    replication, min_isr = replication_for(nodes)
    config = data / "server.properties"
    text = SERVER_PROPERTIES.format(
        node_id=node_id,
        voters=voters,
        port=port,
        controller_port=controller_port,
        logs=data / "logs",
        replication=replication,
        min_isr=min_isr,
    )
    config.write_text(text + (CLUSTER_PROPERTIES if nodes > 1 else ""))
    return config


def format_storage(formats: list[tuple[list[str], Path]], cluster_id: str) -> None:
    """Format the KRaft storage of each (java command, config) for ``cluster_id``, all at once."""
    running = [
        (
            config,
            subprocess.Popen(
                [*java, "kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(config)],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            ),
        )
        for java, config in formats
    ]
    failed = []
    for config, proc in running:
        output, _ = proc.communicate()
        if proc.returncode != 0:
            sys.stderr.write(tail_text(output, 40))
            failed.append(str(config.parent))
    if failed:
        fail(f"start: formatting the KRaft storage of {', '.join(failed)} failed")


def spawn(data: Path, java: list[str]) -> subprocess.Popen[bytes]:
    """Start the node JVM of ``data`` in its own session (it outlives this launcher); write its pid file."""
    with (data / "broker.out").open("ab") as sink:
        proc = subprocess.Popen(
            [*java, "kafka.Kafka", str(data / "server.properties")],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    (data / "kafka.pid").write_text(f"{proc.pid}\n")
    return proc


def refuse_running(data: Path) -> None:
    old = read_pid(data / "kafka.pid")
    if old is not None and alive(old):
        fail(f"start: a broker (pid {old}) already runs on {data}; stop it first")


def start(data: Path, port: int | None, version: str = KAFKA_VERSION) -> int:
    """Start a broker on ``data``; print the bootstrap address once it answers."""
    libs = fetch(version)
    data = data.resolve()
    data.mkdir(parents=True, exist_ok=True)
    refuse_running(data)
    if port is not None and not port_free(port):
        fail(f"start: port {port} on 127.0.0.1 is already in use")
    port = port or free_port()
    # A restart on the same data directory keeps the controller's port when it
    # can: the KRaft quorum was formatted with that voter address.
    controller_port = previous_setting(data / "server.properties", "controller.quorum.voters")
    if controller_port is None or controller_port == port or not port_free(controller_port):
        controller_port = free_port(avoid=port)
    config = write_config(
        data, node_id=1, port=port, controller_port=controller_port,
        voters=f"1@127.0.0.1:{controller_port}", nodes=1,
    )
    java = java_command(data, libs)
    logs = data / "logs"
    if not (logs / "meta.properties").exists():
        format_storage([(java, config)], new_cluster_id())
    proc = spawn(data, java)
    if wait_ready({1: (proc, data, port)}, formatted_cluster_id(logs), expect={1}):
        print(f"KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:{port}", flush=True)
        log(f"start: broker pid {proc.pid} ready on 127.0.0.1:{port} (data {data})")
        return 0
    return 1


def start_cluster(data: Path, nodes: int, version: str = KAFKA_VERSION) -> int:
    """Start ``nodes`` combined nodes on ``data`` (formatted the first time); print their bootstrap list."""
    libs = fetch(version)
    data = data.resolve()
    data.mkdir(parents=True, exist_ok=True)
    known = cluster_nodes(data)
    if known and known != list(range(1, nodes + 1)):
        fail(f"start: {data} holds a cluster of nodes {known}, not of {nodes}; use another --data")
    ids = list(range(1, nodes + 1))
    for node_id in ids:
        node_dir(data, node_id).mkdir(exist_ok=True)
        refuse_running(node_dir(data, node_id))
    ports: dict[int, tuple[int, int]] = {}
    if known:  # the ports the quorum and the clients know
        for node_id in ids:
            config = node_dir(data, node_id) / "server.properties"
            port = previous_setting(config, "listeners", after="PLAINTEXT://")
            controller_port = previous_setting(config, "listeners", after="CONTROLLER://")
            if port is None or controller_port is None:
                fail(f"start: {config} names no PLAINTEXT or CONTROLLER listener")
            ports[node_id] = (port, controller_port)  # type: ignore[assignment]
        busy = [p for pair in ports.values() for p in pair if not port_free(p)]
        if busy:
            fail(f"start: ports {busy} of the cluster in {data} are in use")
    else:
        taken: set[int] = set()
        for node_id in ids:
            pair = (free_port(avoid=taken), 0)
            taken.add(pair[0])
            pair = (pair[0], free_port(avoid=taken))
            taken.add(pair[1])
            ports[node_id] = pair
    voters = ",".join(f"{n}@127.0.0.1:{ports[n][1]}" for n in ids)
    cluster_id = new_cluster_id()
    javas = {}
    unformatted = []
    for node_id in ids:
        nd = node_dir(data, node_id)
        config = write_config(
            nd, node_id=node_id, port=ports[node_id][0], controller_port=ports[node_id][1],
            voters=voters, nodes=nodes,
        )
        javas[node_id] = java_command(nd, libs)
        if not (nd / "logs" / "meta.properties").exists():
            unformatted.append((javas[node_id], config))
    if unformatted:
        format_storage(unformatted, cluster_id)
    cluster_id = formatted_cluster_id(node_dir(data, 1) / "logs") or cluster_id
    procs = {n: (spawn(node_dir(data, n), javas[n]), node_dir(data, n), ports[n][0]) for n in ids}
    if wait_ready(procs, cluster_id, expect=set(ids)):
        bootstrap = ",".join(f"127.0.0.1:{ports[n][0]}" for n in ids)
        print(f"KAFKA_BOOTSTRAP_SERVERS={bootstrap}", flush=True)
        pids = ", ".join(f"node {n} pid {p.pid} on 127.0.0.1:{port}" for n, (p, _, port) in procs.items())
        log(f"start: a cluster of {nodes} combined broker+controller nodes ready ({pids}; data {data})")
        return 0
    return 1


def start_node(data: Path, node_id: int, version: str = KAFKA_VERSION) -> int:
    """Start node ``node_id`` of the cluster in ``data`` again, on its ports; wait until it is registered."""
    libs = fetch(version)
    data = data.resolve()
    nd = node_dir(data, node_id)
    if node_id not in cluster_nodes(data):
        fail(f"start: {data} holds no node {node_id} (nodes: {cluster_nodes(data) or 'none'})")
    refuse_running(nd)
    port = previous_setting(nd / "server.properties", "listeners", after="PLAINTEXT://")
    if port is None:
        fail(f"start: {nd / 'server.properties'} names no PLAINTEXT listener")
    java = java_command(nd, libs)
    proc = spawn(nd, java)
    if wait_ready({node_id: (proc, nd, port)}, formatted_cluster_id(nd / "logs"), expect={node_id}):  # type: ignore[dict-item]
        print(f"KAFKA_NODE_{node_id}=127.0.0.1:{port}", flush=True)
        log(f"start: node {node_id} pid {proc.pid} ready on 127.0.0.1:{port} (data {nd})")
        return 0
    return 1


def wait_ready(
    procs: dict[int, tuple[subprocess.Popen[bytes], Path, int]], cluster: str | None, *, expect: set[int]
) -> bool:
    """Wait until every node answers for ``cluster`` with the ``expect``ed brokers registered (alive, unfenced).

    On failure (a JVM exited, or the time ran out) print the logs' tails, stop the started JVMs and
    return False.
    """
    deadline = time.monotonic() + READY_TIMEOUT_S
    waiting = dict(procs)
    while waiting and time.monotonic() < deadline:
        if any(proc.poll() is not None for proc, _, _ in waiting.values()):
            break
        for node_id, (_, _, port) in list(waiting.items()):
            found = read_metadata("127.0.0.1", port)
            # ours (not whoever holds the port), with the brokers we wait for
            if found is not None and found.cluster == cluster and expect <= found.brokers.keys():
                del waiting[node_id]
        if waiting:
            time.sleep(0.2)
    if not waiting:
        return True
    for node_id, (proc, data, _) in procs.items():
        status = proc.poll()
        reason = f"exited with status {status}" if status is not None else "did not answer in time"
        if node_id in waiting or status is not None:
            log(f"start: the broker of {data} {reason}. Tail of its broker.log and broker.out:")
            for path in (data / "broker.log", data / "broker.out"):
                if path.exists():
                    sys.stderr.write(f"--- {path}\n{tail_text(path.read_text(errors='replace'), 60)}")
    for _, (proc, data, _) in procs.items():
        if proc.poll() is None:
            terminate(proc.pid)
        (data / "kafka.pid").unlink(missing_ok=True)
    return False


def stop(data: Path, node_id: int | None = None) -> int:
    """Stop the broker started on ``data``, every node of a cluster there, or its node ``node_id``.

    SIGTERM, then SIGKILL after a grace period; the nodes of a cluster are told together.
    """
    data = data.resolve()
    nodes = cluster_nodes(data)
    if node_id is not None:
        if node_id not in nodes:
            fail(f"stop: {data} holds no node {node_id} (nodes: {nodes or 'none'})")
        dirs = [node_dir(data, node_id)]
    else:
        dirs = [node_dir(data, n) for n in nodes] if nodes else [data]
    running = []
    for nd in dirs:
        pid = read_pid(nd / "kafka.pid")
        if pid is None:
            continue
        if alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            running.append((nd, pid))
        else:
            (nd / "kafka.pid").unlink(missing_ok=True)
    if not running:
        log(f"stop: no running broker in {data}; nothing to stop")
        return 0
    for nd, pid in running:
        terminate(pid)
        (nd / "kafka.pid").unlink(missing_ok=True)
        log(f"stop: broker pid {pid} stopped ({nd})")
    return 0


def terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        if not alive(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    while alive(pid):
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie child of ours counts as gone)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass  # not our child
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def free_port(avoid: int | set[int] | None = None) -> int:
    avoided = {avoid} if isinstance(avoid, int) else (avoid or set())
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in avoided:
            return port


def port_free(port: int) -> bool:
    """True when a listener could bind ``port``.

    SO_REUSEADDR as the broker's own listener sets it: connections of a
    broker that just stopped linger in TIME_WAIT on its port, and must not
    keep a restart on the same port out for a minute.
    """
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def previous_setting(config: Path, key: str, *, after: str | None = None) -> int | None:
    """The port an earlier start on this data directory wrote into its config.

    ``key=controller.quorum.voters`` gives a single broker's controller port;
    ``key=listeners, after=PLAINTEXT://`` (or ``CONTROLLER://``) a listener's port.
    """
    try:
        text = config.read_text()
    except FileNotFoundError:
        return None
    for line in text.splitlines():
        if not line.startswith(f"{key}="):
            continue
        value = line.split("=", 1)[1]
        if after is not None:
            value = next((v for v in value.split(",") if v.startswith(after)), "")
        _, _, port = value.rpartition(":")
        return int(port) if port.strip().isdigit() else None
    return None


def formatted_cluster_id(logs: Path) -> str | None:
    for line in (logs / "meta.properties").read_text().splitlines():
        if line.startswith("cluster.id="):
            return line.split("=", 1)[1].strip()
    return None


def new_cluster_id() -> str:
    """A random Kafka cluster id: 16 bytes, URL-safe base64 without padding."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


@dataclass
class Metadata:
    """What a broker's Metadata response says: the cluster, the live brokers and the partitions' leaders."""

    cluster: str | None
    brokers: dict[int, int] = field(default_factory=dict)  # node id -> port
    # topic -> partition -> (leader node id, replica ids, in-sync replica ids); leader -1 while there is none
    partitions: dict[str, dict[int, tuple[int, list[int], list[int]]]] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        return {
            "cluster": self.cluster,
            "brokers": {str(n): port for n, port in sorted(self.brokers.items())},
            "topics": {
                topic: {
                    str(p): {"leader": leader, "replicas": replicas, "isr": isr}
                    for p, (leader, replicas, isr) in sorted(parts.items())
                }
                for topic, parts in sorted(self.partitions.items())
            },
        }


def read_metadata(host: str, port: int, *, topics: bool = False) -> Metadata | None:
    """A Metadata request (v4): the cluster id and the registered (unfenced) brokers, with ``topics`` every topic.

    None while nothing answers there.
    """
    client_id = b"draplane-launcher"
    header = struct.pack(">hhih", 3, 4, 1, len(client_id)) + client_id  # Metadata v4
    body = struct.pack(">ib", -1 if topics else 0, 0)  # all topics (or none), no auto-creation
    request = header + body
    try:
        with socket.create_connection((host, port), timeout=1.0) as sock:
            sock.sendall(struct.pack(">i", len(request)) + request)
            size = struct.unpack(">i", recv_exactly(sock, 4))[0]
            response = Reader(recv_exactly(sock, size))
        if response.int32() != 1:  # correlation id
            return None
        response.int32()  # throttle time
        found = Metadata(cluster=None)
        for _ in range(response.int32()):
            node_id = response.int32()
            response.string()  # host
            found.brokers[node_id] = response.int32()
            response.string()  # rack
        found.cluster = response.string()
        response.int32()  # controller id
        for _ in range(max(0, response.int32())):
            response.int16()  # error code
            name = response.string() or ""
            response.int8()  # internal
            parts = found.partitions.setdefault(name, {})
            for _ in range(max(0, response.int32())):
                response.int16()  # error code
                partition, leader = response.int32(), response.int32()
                replicas = [response.int32() for _ in range(max(0, response.int32()))]
                isr = [response.int32() for _ in range(max(0, response.int32()))]
                parts[partition] = (leader, replicas, isr)
    except (OSError, struct.error):
        return None
    return found


def cluster_metadata(data: Path) -> Metadata | None:
    """The metadata of the cluster (or broker) kept in ``data``, asked of the first node that answers."""
    data = data.resolve()
    dirs = [node_dir(data, n) for n in cluster_nodes(data)] or [data]
    for nd in dirs:
        port = previous_setting(nd / "server.properties", "listeners", after="PLAINTEXT://")
        pid = read_pid(nd / "kafka.pid")
        if port is None or pid is None or not alive(pid):
            continue
        found = read_metadata("127.0.0.1", port, topics=True)
        if found is not None:
            return found
    return None


class Reader:
    """Big-endian Kafka protocol fields from a response."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def int32(self) -> int:
        (value,) = struct.unpack_from(">i", self.data, self.at)
        self.at += 4
        return int(value)

    def int16(self) -> int:
        (value,) = struct.unpack_from(">h", self.data, self.at)
        self.at += 2
        return int(value)

    def int8(self) -> int:
        (value,) = struct.unpack_from(">b", self.data, self.at)
        self.at += 1
        return int(value)

    def string(self) -> str | None:
        (length,) = struct.unpack_from(">h", self.data, self.at)
        self.at += 2
        if length < 0:
            return None
        text = self.data[self.at : self.at + length].decode()
        self.at += length
        return text


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            raise OSError("connection closed")
        chunks += chunk
    return bytes(chunks)


def tail_text(text: str, lines: int) -> str:
    kept = text.splitlines()[-lines:]
    return "\n".join(kept) + ("\n" if kept else "")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fail(message: str) -> None:
    log(message)
    raise SystemExit(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="download the broker jars into the cache (once)")
    p_start = sub.add_parser("start", help="start a broker (or a cluster, or one node of it) and wait until it answers")
    p_start.add_argument("--data", type=Path, default=DEFAULT_DATA, help="broker (or cluster) directory")
    p_start.add_argument("--port", type=int, default=None, help="client port of a single broker (default: free)")
    p_start.add_argument(
        "--brokers", type=int, default=1,
        help="nodes (each broker and controller) of a new cluster on --data; 1: a single broker (default)",
    )
    p_start.add_argument("--node", type=int, default=None, help="start only this node of the cluster on --data")
    p_stop = sub.add_parser("stop", help="stop the broker, or every node of the cluster, of a data directory")
    p_stop.add_argument("--data", type=Path, default=DEFAULT_DATA, help="broker (or cluster) directory")
    p_stop.add_argument("--node", type=int, default=None, help="stop only this node of the cluster")
    p_meta = sub.add_parser("metadata", help="print the live brokers and every partition's leader and ISR as JSON")
    p_meta.add_argument("--data", type=Path, default=DEFAULT_DATA, help="broker (or cluster) directory")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        fetch()
        return 0
    if args.command == "start":
        if args.node is not None:
            return start_node(args.data, args.node)
        if args.brokers < 1:
            fail("start: --brokers must be at least 1")
        if args.brokers > 1:
            if args.port is not None:
                fail("start: --port is for a single broker; a cluster's nodes take free ports")
            return start_cluster(args.data, args.brokers)
        if cluster_nodes(args.data.resolve()):
            fail(f"start: {args.data} holds a cluster; start it with --brokers {len(cluster_nodes(args.data))}")
        return start(args.data, args.port)
    if args.command == "metadata":
        found = cluster_metadata(args.data)
        if found is None:
            fail(f"metadata: no broker of {args.data} answers")
            return 1
        print(json.dumps(found.as_json()), flush=True)
        return 0
    return stop(args.data, args.node)


if __name__ == "__main__":
    sys.exit(main())
