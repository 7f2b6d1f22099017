"""One stack per data directory, and one line (never a traceback) for what a user gets wrong.

The commands run as a user runs them, as child processes:

- a second `draplane up` (or `draplane apiserver` on the embedded log) on the
  ``--data`` of a running stack refuses in one line naming the holder's PID
  and address, exit status 1, and leaves the kubeconfig alone; the lock file a
  killed stack leaves behind blocks nobody;
- a port in use is one line, exit status 1;
- `draplane replay` and `draplane explain` with a mistyped ``--data`` say
  ``no log at PATH`` and create nothing; an unreachable Kafka and a missing
  topic are one line; a closed stdout ends them quietly with status 1
  (kubectl dies of SIGPIPE there, silently too; Python's documented way is
  status 1).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.stack.processes import Command

TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Running:
    cmd: Command
    data: Path
    url: str
    port: int


def draplane(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """A draplane command to its end: exit status, stdout and stderr apart."""
    return subprocess.run(
        [sys.executable, "-m", "services.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``error: …`` line a failed command printed, its status being 1."""
    assert TRACEBACK not in result.stderr, result.stderr
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = (result.stdout + result.stderr).splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    data = tmp_path_factory.mktemp("held") / "d"  # short: the drivers' unix sockets live under it
    cmd = Command("up", "--data", str(data), "--listen", "127.0.0.1:0", "--nodes", "1", "--plain-logs")
    try:
        url = cmd.wait_for_line(r"draplane is ready: (\S+)").group(1)
        yield Running(cmd, data, url, int(url.rsplit(":", 1)[1]))
    finally:
        cmd.stop()


def test_a_second_up_on_the_same_data_refuses_naming_the_first(running: Running, tmp_path: Path) -> None:
    kubeconfig = (running.data / "kubeconfig").read_bytes()
    line = one_error_line(draplane("up", "--data", str(running.data), "--listen", "127.0.0.1:0", "--nodes", "1"))
    assert line == (
        f"error: {running.data} is in use by another draplane (PID {running.cmd.proc.pid}, {running.url}); "
        "stop it or choose another --data"
    )
    assert (running.data / "kubeconfig").read_bytes() == kubeconfig
    assert running.cmd.proc.poll() is None


def test_an_apiserver_on_the_embedded_log_of_a_running_stack_refuses(running: Running) -> None:
    line = one_error_line(draplane("apiserver", "--data", str(running.data), "--listen", "127.0.0.1:0"))
    assert line.startswith(f"error: {running.data} is in use by another draplane (PID {running.cmd.proc.pid}, ")


@pytest.mark.parametrize("command", ["up", "apiserver"])
def test_a_port_in_use_is_one_line(running: Running, tmp_path: Path, command: str) -> None:
    line = one_error_line(draplane(command, "--data", str(tmp_path / "d"), "--listen", f"127.0.0.1:{running.port}"))
    assert line == f"error: cannot listen on 127.0.0.1:{running.port}: address already in use"
    assert not (tmp_path / "d" / "bus.db").exists()


HOLD = """
import sys, time
from pathlib import Path
from services.cmd import data_lock
data_lock.acquire(Path(sys.argv[1]), address="http://127.0.0.1:1")
print("held", flush=True)
time.sleep(3600)
"""


def test_the_lock_file_of_a_killed_holder_blocks_nobody(tmp_path: Path) -> None:
    """A holder killed outright leaves its file (PID and address) behind; the kernel has dropped its lock.

    (A whole `draplane up` killed by SIGKILL and started again on its --data: test_up_restart's crash case.)
    """
    data = tmp_path / "d"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(data)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    assert one_error_line(draplane("apiserver", "--data", str(data), "--listen", "127.0.0.1:0")) == (
        f"error: {data} is in use by another draplane (PID {holder.pid}, http://127.0.0.1:1); "
        "stop it or choose another --data"
    )
    holder.kill()
    holder.wait()
    holder.stdout.close()
    assert (data / "draplane.lock").read_text() == f"{holder.pid}\nhttp://127.0.0.1:1\n"  # left behind
    server = Command("apiserver", "--data", str(data), "--listen", "127.0.0.1:0", "--anonymous", "--plain-logs")
    try:
        port = server.wait_for_line(r"apiserver ready on (\d+)").group(1)
        assert (data / "draplane.lock").read_text() == f"{server.proc.pid}\nhttp://127.0.0.1:{port}\n"
    finally:
        assert server.stop() == 0  # whenever the Ctrl-C comes (tests/integration/stack/test_signals.py)
    assert (data / "draplane.lock").read_text() == ""  # a clean stop leaves no PID behind


READ_ONLY = [
    ("replay",),
    ("replay", "-o", "table"),
    ("replay", "get", "pods", "-A"),
    ("replay", "--scheduler"),
    ("explain", "pod", "default/p"),
]


@pytest.mark.parametrize("args", READ_ONLY, ids=" ".join)
def test_read_only_commands_on_a_mistyped_data_say_no_log_and_create_nothing(tmp_path: Path, args: tuple[str]) -> None:
    typo = tmp_path / ".draplan"
    line = one_error_line(draplane(*args[:1], "--data", str(typo), *args[1:]))
    assert line == f"error: no log at {typo}/bus.db"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [("replay",), ("explain", "pod", "default/p")], ids=" ".join)
def test_an_unreachable_kafka_is_one_line(args: tuple[str]) -> None:
    line = one_error_line(draplane(*args[:1], "--bus", "kafka://127.0.0.1:1", *args[1:]))
    assert line.startswith("error: connecting to 127.0.0.1:1: Kafka is not reachable"), line


def test_a_missing_topic_is_one_line(running: Running) -> None:
    assert one_error_line(draplane("replay", "--data", str(running.data), "--topic", "nope")) == (
        "error: unknown topic or partition: nope[0]"
    )


@pytest.mark.kafka
@pytest.mark.parametrize("args", [("replay", "--topic", "nope"), ("explain", "pod", "default/p")], ids=" ".join)
def test_a_missing_topic_on_kafka_is_one_line(kafka_bootstrap: str, args: tuple[str, ...]) -> None:
    """A prefix nothing was ever written under: replay's topic, and explain's decisions, do not exist."""
    prefix = f"missing{uuid.uuid4().hex[:8]}-"
    line = one_error_line(draplane(args[0], "--bus", f"kafka://{kafka_bootstrap}?prefix={prefix}", *args[1:]))
    topic = "nope" if args[0] == "replay" else "decisions"
    assert line == f"error: unknown topic or partition: {topic}[0]", line


def test_a_closed_stdout_ends_replay_quietly_with_status_1(running: Running) -> None:
    """``draplane replay | head -1`` once head has gone: the reading end is closed before replay writes."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "services.cli", "replay", "--data", str(running.data)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (1, "")


def test_a_malformed_bus_url_is_one_line() -> None:
    line = one_error_line(draplane("replay", "--bus", "mysql://x"))
    assert re.match(r"error: bus URL 'mysql://x': unknown scheme 'mysql'", line), line
