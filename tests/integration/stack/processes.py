"""`draplane` commands as child processes, as a user or compose runs them, and waiting on what they print.

A reader thread drains the merged stdout/stderr into a queue (so the pipe
never fills) and keeps every line for failure messages; `wait_for_line`
blocks on that queue, so a test waits for the line itself, not for a time.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path


class Command:
    """One ``draplane ...`` child process."""

    def __init__(
        self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, script: str | None = None
    ) -> None:
        """``script``: Python run instead of ``-m services.cli`` (with ``args`` as its ``sys.argv[1:]``)."""
        self.args = args
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.proc = subprocess.Popen(
            [sys.executable, *(["-c", script] if script is not None else ["-m", "services.cli"]), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=cwd,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def output(self) -> str:
        return "\n".join(self.lines[-200:])

    def wait_for_line(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """The first line (from now on) matching ``pattern``; fails with the output when the process ends first."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                line = self._queue.get(timeout=max(0.0, remaining))
            except queue.Empty:
                raise AssertionError(
                    f"draplane {' '.join(self.args)}: no line matching {pattern!r} within {timeout:g}s; "
                    f"output:\n{self.output()}"
                ) from None
            if line is None:
                raise AssertionError(
                    f"draplane {' '.join(self.args)} exited ({self.proc.wait()}) before printing {pattern!r}; "
                    f"output:\n{self.output()}"
                )
            match = regex.search(line)
            if match:
                return match

    def stop(self, sig: int = signal.SIGINT, timeout: float = 60.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
            raise AssertionError(f"draplane {' '.join(self.args)} did not stop on {sig!r}:\n{self.output()}") from None
        self._reader.join(10)
        return code
