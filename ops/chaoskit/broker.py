"""The Kafka of a chaos run: one broker, or a cluster whose nodes are killed and started again one at a time.

Why this module exists: a broker restart is only a real test when the broker
comes back with the log it had (same data directory) where the clients look
for it (same port). The launcher of ``ops/kafka`` does both; this module
drives it, and adds the unclean variant (SIGKILL, so the broker recovers its
log segments and transaction state on start).

`Broker` is the single broker (the whole log goes away at a restart);
`Cluster` is ``ops/kafka/start --brokers N``, where one node at a time is
killed — the partition leader of the busiest topic among them — and the
log stays available on the others.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "ops" / "kafka" / "launcher.py"


class BrokerError(RuntimeError):
    """The broker did not start (the message holds the launcher's output)."""


@dataclass
class Broker:
    data: Path
    port: int
    restarts: int = 0
    cpu_seconds: float = 0.0  # CPU the broker's JVMs used, counted when each one stops

    def _count_cpu(self) -> None:
        try:
            pid = int((self.data / "kafka.pid").read_text().strip())
        except (OSError, ValueError):
            return
        self.cpu_seconds += process_cpu_seconds(pid)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self, *, attempts: int = 3) -> float:
        """Start the broker on its data directory and port; returns the seconds it took."""
        began = time.monotonic()
        output = ""
        for attempt in range(attempts):
            code, output = await _launcher("start", "--data", str(self.data), "--port", str(self.port))
            if code == 0:
                return time.monotonic() - began
            await asyncio.sleep(2.0 * (attempt + 1))  # a port in TIME_WAIT, a slow JVM exit
        raise BrokerError(f"the Kafka broker did not start on {self.bootstrap}:\n{output}")

    async def stop(self) -> None:
        """A clean shutdown (SIGTERM; the launcher waits for the JVM to exit)."""
        self._count_cpu()
        await _launcher("stop", "--data", str(self.data))

    async def kill(self) -> None:
        """SIGKILL the broker, as a crash would stop it."""
        pid_file = self.data / "kafka.pid"
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        self._count_cpu()
        await _kill(pid)
        pid_file.unlink(missing_ok=True)

    async def restart(self, *, hard: bool, downtime: float = 0.0) -> float:
        """Stop (or kill) the broker, wait ``downtime`` seconds, start it again; returns seconds it was away."""
        began = time.monotonic()
        await (self.kill() if hard else self.stop())
        if downtime > 0:
            await asyncio.sleep(downtime)
        await self.start()
        self.restarts += 1
        return time.monotonic() - began


@dataclass
class Cluster:
    """A cluster of combined broker+controller nodes (``ops/kafka/start --brokers N``) on ``data``."""

    data: Path
    nodes: int = 3
    bootstrap: str = ""  # host:port,host:port,... once started
    kills: int = 0
    cpu_seconds: float = 0.0  # CPU the nodes' JVMs used, counted when each one stops

    def pid_file(self, node: int) -> Path:
        return self.data / f"node-{node}" / "kafka.pid"

    def _count_cpu(self, node: int) -> None:
        try:
            pid = int(self.pid_file(node).read_text().strip())
        except (OSError, ValueError):
            return
        self.cpu_seconds += process_cpu_seconds(pid)

    async def start(self) -> float:
        """Start every node (formatted the first time); returns the seconds it took."""
        began = time.monotonic()
        code, output = await _launcher("start", "--brokers", str(self.nodes), "--data", str(self.data))
        line = output.strip().splitlines()[-1] if output.strip() else ""
        found = [text for text in output.splitlines() if text.startswith("KAFKA_BOOTSTRAP_SERVERS=")]
        if code != 0 or not found:
            raise BrokerError(f"the Kafka cluster did not start on {self.data}:\n{output or line}")
        self.bootstrap = found[-1].split("=", 1)[1].strip()
        return time.monotonic() - began

    async def stop(self) -> None:
        """Stop every node (SIGTERM; the launcher waits for the JVMs to exit)."""
        for node in range(1, self.nodes + 1):
            self._count_cpu(node)
        await _launcher("stop", "--data", str(self.data))

    async def metadata(self) -> dict[str, object]:
        """The launcher's ``metadata``: live brokers, and per topic and partition its leader, replicas and ISR."""
        code, output = await _launcher("metadata", "--data", str(self.data), merge=False)
        if code != 0:
            raise BrokerError(f"no node of the cluster on {self.data} answers")
        found: dict[str, object] = json.loads(output)
        return found

    async def leader(self, topic: str, partition: int = 0) -> int | None:
        """The node that leads ``topic``'s partition now (None while it has none, or no node answers)."""
        try:
            topics = (await self.metadata()).get("topics") or {}
        except BrokerError:
            return None
        entry = (topics.get(topic) or {}).get(str(partition)) if isinstance(topics, dict) else None
        leader = int(entry["leader"]) if entry else -1
        return leader if leader > 0 else None

    async def kill(self, node: int) -> None:
        """SIGKILL one node, as a crash would stop it."""
        try:
            pid = int(self.pid_file(node).read_text().strip())
        except (OSError, ValueError):
            return
        self._count_cpu(node)
        await _kill(pid)
        self.pid_file(node).unlink(missing_ok=True)

    async def stop_node(self, node: int) -> None:
        self._count_cpu(node)
        await _launcher("stop", "--data", str(self.data), "--node", str(node))

    async def start_node(self, node: int, *, attempts: int = 3) -> None:
        output = ""
        for attempt in range(attempts):
            code, output = await _launcher("start", "--data", str(self.data), "--node", str(node))
            if code == 0:
                return
            await asyncio.sleep(2.0 * (attempt + 1))
        raise BrokerError(f"node {node} of the Kafka cluster did not start again:\n{output}")

    async def restart_node(self, node: int, *, hard: bool, downtime: float = 0.0) -> float:
        """Kill (or stop) ``node``, wait ``downtime`` seconds, start it again; returns the seconds it was away."""
        began = time.monotonic()
        await (self.kill(node) if hard else self.stop_node(node))
        if downtime > 0:
            await asyncio.sleep(downtime)
        await self.start_node(node)
        self.kills += 1
        return time.monotonic() - began


async def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    for _ in range(int(30 / 0.05)):
        if not _alive(pid):
            return
        await asyncio.sleep(0.05)


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of a running process (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _alive(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# C1 only: a broker that lives a few minutes starts with half the CPU (the run restarts it).
JVM_EXTRA_OPTS = "-XX:TieredStopAtLevel=1"


async def _launcher(*args: str, merge: bool = True) -> tuple[int, str]:
    """Run the launcher; its output (stdout, and stderr unless ``merge`` is False) and status."""
    env = {**os.environ, "KAFKA_JVM_EXTRA_OPTS": os.environ.get("KAFKA_JVM_EXTRA_OPTS", JVM_EXTRA_OPTS)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(LAUNCHER),
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT if merge else asyncio.subprocess.DEVNULL,
        env=env,
    )
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode(errors="replace")
