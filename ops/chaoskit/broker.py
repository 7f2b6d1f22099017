"""The Kafka broker of a chaos run: started, stopped or killed, and started again on its data and port.

Why this module exists: a broker restart is only a real test when the broker
comes back with the log it had (same data directory) where the clients look
for it (same port). The single-node launcher of ``ops/kafka`` does both; this
module drives it, and adds the unclean variant (SIGKILL, so the broker
recovers its log segments and transaction state on start).
"""

from __future__ import annotations

import asyncio
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
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for _ in range(int(30 / 0.05)):
            if not _alive(pid):
                break
            await asyncio.sleep(0.05)
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


async def _launcher(*args: str) -> tuple[int, str]:
    env = {**os.environ, "KAFKA_JVM_EXTRA_OPTS": os.environ.get("KAFKA_JVM_EXTRA_OPTS", JVM_EXTRA_OPTS)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(LAUNCHER),
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
    )
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode(errors="replace")
