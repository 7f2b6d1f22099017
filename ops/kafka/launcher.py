"""A single-node Apache Kafka broker for tests and benchmarks, without Docker.

No package registry reachable here ships a Kafka broker, but Maven Central does:
``fetch`` copies ``org.apache.kafka:kafka_2.13`` and its dependencies once into a
git-ignored cache, ``start`` runs it in KRaft mode (broker and controller in one
JVM) on 127.0.0.1 with settings tuned for tests, and ``stop`` ends it. Only the
standard library is used, so the launcher runs before any virtualenv exists.

    python3 ops/kafka/launcher.py fetch
    python3 ops/kafka/launcher.py start [--data DIR] [--port N]   # prints KAFKA_BOOTSTRAP_SERVERS=...
    python3 ops/kafka/launcher.py stop [--data DIR]

``start`` on a data directory used before starts the same broker again (its
log, its cluster id, its controller port) on the port given; a port still in
TIME_WAIT from the broker that just stopped counts as free.
``KAFKA_JVM_EXTRA_OPTS`` adds JVM options.

The ``ops/kafka/{fetch,start,stop}`` scripts are thin wrappers around these.
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
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

# Broker settings for a throwaway single-node cluster: replication factors of
# one, internal topics with one partition (fast to create), quick first
# rebalance, short session timeouts allowed, a log cleaner that looks for work
# often, and no topic auto-creation (topics are declared, never guessed).
SERVER_PROPERTIES = """\
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{controller_port}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs={logs}
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=500
log.cleaner.backoff.ms=200
log.cleaner.dedupe.buffer.size=16777216
log.retention.check.interval.ms=1000
log.initial.task.delay.ms=0
log.segment.delete.delay.ms=0
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


def start(data: Path, port: int | None, version: str = KAFKA_VERSION) -> int:
    """Start a broker on ``data``; print the bootstrap address once it answers."""
    libs = fetch(version)
    data = data.resolve()
    data.mkdir(parents=True, exist_ok=True)
    pid_file = data / "kafka.pid"
    old = read_pid(pid_file)
    if old is not None and alive(old):
        fail(f"start: a broker (pid {old}) already runs on {data}; stop it first")
    if port is not None and not port_free(port):
        fail(f"start: port {port} on 127.0.0.1 is already in use")
    port = port or free_port()
    # A restart on the same data directory keeps the controller's port when it
    # can: the KRaft quorum was formatted with that voter address.
    controller_port = previous_controller_port(data / "server.properties")
    if controller_port is None or controller_port == port or not port_free(controller_port):
        controller_port = free_port(avoid=port)
    logs = data / "logs"
    broker_log = data / "broker.log"
    config = data / "server.properties"
    config.write_text(
        SERVER_PROPERTIES.format(port=port, controller_port=controller_port, logs=logs)
    )
    log4j = data / "log4j2.properties"
    log4j.write_text(LOG4J2_PROPERTIES.format(log=broker_log))
    java = [
        "java", "-Xms256m", "-Xmx1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
        "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true",
        # Extra JVM options, e.g. -XX:TieredStopAtLevel=1 (C1 only: half the CPU to start,
        # which short-lived brokers on small machines want; ops/chaos uses it).
        *os.environ.get("KAFKA_JVM_EXTRA_OPTS", "").split(),
        f"-Dlog4j2.configurationFile={log4j}", "-cp", f"{libs}/*",
    ]
    if not (logs / "meta.properties").exists():
        fmt = subprocess.run(
            [*java, "kafka.tools.StorageTool", "format", "-t", new_cluster_id(), "-c", str(config)],
            capture_output=True,
            text=True,
            check=False,
        )
        if fmt.returncode != 0:
            sys.stderr.write(tail_text(fmt.stdout + fmt.stderr, 40))
            fail("start: formatting the KRaft storage failed")
    out = data / "broker.out"
    with out.open("ab") as sink:
        proc = subprocess.Popen(
            [*java, "kafka.Kafka", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this launcher
        )
    pid_file.write_text(f"{proc.pid}\n")
    cluster = formatted_cluster_id(logs)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if answering_cluster("127.0.0.1", port) == cluster:  # ours, not whoever holds the port
            print(f"KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:{port}", flush=True)
            log(f"start: broker pid {proc.pid} ready on 127.0.0.1:{port} (data {data})")
            return 0
        time.sleep(0.2)
    status = proc.poll()
    reason = f"exited with status {status}" if status is not None else "did not answer in time"
    log(f"start: the broker {reason}. Tail of {broker_log} and {out}:")
    for path in (broker_log, out):
        if path.exists():
            sys.stderr.write(f"--- {path}\n{tail_text(path.read_text(errors='replace'), 60)}")
    if status is None:
        terminate(proc.pid)
    pid_file.unlink(missing_ok=True)
    return 1


def stop(data: Path) -> int:
    """Stop the broker started on ``data`` (SIGTERM, then SIGKILL after a grace period)."""
    pid_file = data.resolve() / "kafka.pid"
    pid = read_pid(pid_file)
    if pid is None:
        log(f"stop: no pid file in {data}; nothing to stop")
        return 0
    if alive(pid):
        terminate(pid)
        log(f"stop: broker pid {pid} stopped")
    pid_file.unlink(missing_ok=True)
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


def free_port(avoid: int | None = None) -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != avoid:
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


def previous_controller_port(config: Path) -> int | None:
    """The controller port an earlier start on this data directory wrote into its config."""
    try:
        text = config.read_text()
    except FileNotFoundError:
        return None
    for line in text.splitlines():
        if line.startswith("controller.quorum.voters="):
            _, _, port = line.rpartition(":")
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


def answering_cluster(host: str, port: int) -> str | None:
    """The cluster id reported by a Metadata request (v4) once a broker is registered.

    None while nothing answers, or no broker is registered yet.
    """
    client_id = b"draplane-launcher"
    header = struct.pack(">hhih", 3, 4, 1, len(client_id)) + client_id  # Metadata v4
    body = struct.pack(">ib", 0, 0)  # no topics, no auto-creation
    request = header + body
    try:
        with socket.create_connection((host, port), timeout=1.0) as sock:
            sock.sendall(struct.pack(">i", len(request)) + request)
            size = struct.unpack(">i", recv_exactly(sock, 4))[0]
            response = Reader(recv_exactly(sock, size))
        if response.int32() != 1:  # correlation id
            return None
        response.int32()  # throttle time
        brokers = response.int32()
        for _ in range(brokers):
            response.int32()  # node id
            response.string()  # host
            response.int32()  # port
            response.string()  # rack
        cluster = response.string()
    except (OSError, struct.error):
        return None
    return cluster if brokers >= 1 else None


class Reader:
    """Big-endian Kafka protocol fields from a response."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def int32(self) -> int:
        (value,) = struct.unpack_from(">i", self.data, self.at)
        self.at += 4
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
    p_start = sub.add_parser("start", help="start a broker and wait until it answers")
    p_start.add_argument("--data", type=Path, default=DEFAULT_DATA, help="broker directory")
    p_start.add_argument("--port", type=int, default=None, help="client port (default: free)")
    p_stop = sub.add_parser("stop", help="stop the broker of a data directory")
    p_stop.add_argument("--data", type=Path, default=DEFAULT_DATA, help="broker directory")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        fetch()
        return 0
    if args.command == "start":
        return start(args.data, args.port)
    return stop(args.data)


if __name__ == "__main__":
    sys.exit(main())
