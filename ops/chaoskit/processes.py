"""Component processes: started, SIGKILLed and restarted like a supervisor (a kubelet, systemd) would.

Why this module exists: the chaos run needs every component as its own OS
process, so that a kill loses exactly what a crash loses (memory, open
transactions, sockets) and nothing else. A `Supervisor` starts each
`ComponentSpec` (``python -m services.cli <component> ...``), appends its
output to ``<logs>/<name>.log`` with a marker per start, kills one on request
and starts it again, and restarts one that exits on its own (after a short
backoff, counting it: a component that dies by itself is a finding). Every
component gets a health port; ``/healthz`` (``/readyz`` for the apiserver)
says when it is ready. Children get SIGKILL when the run's own process dies
(``PR_SET_PDEATHSIG``), so a killed run leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
STOP_GRACE_S = 5.0


@dataclass(frozen=True, slots=True)
class ComponentSpec:
    """How to run one component: its name, its ``draplane`` arguments and where it answers when ready."""

    name: str
    kind: str  # apiserver, scheduler, controller-manager, driver, nodeagent
    args: tuple[str, ...]
    health_url: str


@dataclass
class Incarnation:
    """One start of a component."""

    proc: asyncio.subprocess.Process
    started: float
    log_offset: int  # where this start's output begins in the log file
    killed: bool = False  # by us (a kill or the final stop), not on its own


@dataclass
class Component:
    spec: ComponentSpec
    log_path: Path
    current: Incarnation | None = None
    starts: int = 0
    kills: int = 0
    crashes: list[tuple[float, int | None, str]] = field(default_factory=list)  # (time, exit status, why)
    watcher: asyncio.Task[None] | None = None


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Supervisor:
    """Runs components as processes; ``kill`` SIGKILLs and restarts one; ``stop`` ends them all."""

    def __init__(self, *, logs: Path, python: str = sys.executable, env: dict[str, str] | None = None) -> None:
        self.logs = logs
        self.python = python
        self.env = {**os.environ, **(env or {})}
        self.components: dict[str, Component] = {}
        self.on_crash: Callable[[Component, int | None], None] | None = None
        self._stopping = False
        self._http: aiohttp.ClientSession | None = None

    # -- lifecycle ------------------------------------------------------------------

    async def start_all(self, specs: Sequence[ComponentSpec]) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        for spec in specs:
            component = self.components[spec.name] = Component(spec, self.logs / f"{spec.name}.log")
            await self._start(component)

    async def stop(self) -> None:
        """SIGTERM every component, SIGKILL those still there after a grace period."""
        self._stopping = True
        for component in self.components.values():
            if component.watcher is not None:
                component.watcher.cancel()
        procs = []
        for component in self.components.values():
            inc = component.current
            if inc is not None and inc.proc.returncode is None:
                inc.killed = True
                with contextlib.suppress(ProcessLookupError):
                    inc.proc.send_signal(signal.SIGTERM)
                procs.append(inc.proc)
        if procs:
            _, pending = await asyncio.wait([asyncio.create_task(p.wait()) for p in procs], timeout=STOP_GRACE_S)
            for p in procs:
                if p.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        p.kill()
            for task in pending:
                with contextlib.suppress(Exception):
                    await task
        if self._http is not None:
            await self._http.close()

    async def kill(self, name: str, *, restart_after: float = 0.0) -> None:
        """SIGKILL a component, wait for it to be gone, and start it again."""
        component = self.components[name]
        inc = component.current
        if inc is not None and inc.proc.returncode is None:
            inc.killed = True
            with contextlib.suppress(ProcessLookupError):
                inc.proc.kill()
            await inc.proc.wait()
        component.kills += 1
        self._note(component, f"SIGKILL by chaos (restart in {restart_after:.1f}s)")
        if restart_after > 0:
            await asyncio.sleep(restart_after)
        if not self._stopping:
            await self._start(component)

    # -- readiness ------------------------------------------------------------------

    async def ready(self, name: str) -> bool:
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2.0))
        component = self.components[name]
        if component.current is None or component.current.proc.returncode is not None:
            return False
        try:
            async with self._http.get(component.spec.health_url) as response:
                return response.status == 200
        except (aiohttp.ClientError, TimeoutError, OSError):
            return False

    async def wait_ready(self, names: Sequence[str], *, timeout: float) -> list[str]:
        """Wait until each named component is ready; returns those still not ready at the timeout."""
        deadline = time.monotonic() + timeout
        waiting = list(names)
        while waiting and time.monotonic() < deadline:
            answers = await asyncio.gather(*(self.ready(n) for n in waiting))
            waiting = [n for n, ok in zip(waiting, answers, strict=True) if not ok]
            if waiting:
                await asyncio.sleep(0.25)
        return waiting

    def was_leader(self, name: str) -> bool:
        """Whether an apiserver's current start has logged that its committer leads."""
        component = self.components[name]
        if component.current is None:
            return False
        try:
            with component.log_path.open("rb") as f:
                f.seek(component.current.log_offset)
                return b"committer is leader" in f.read()
        except OSError:
            return False

    def _exit_reason(self, component: Component, inc: Incarnation) -> str:
        """The last line of the incarnation's output that names an exception (or its last line)."""
        try:
            with component.log_path.open("rb") as f:
                f.seek(inc.log_offset)
                lines = f.read().decode(errors="replace").splitlines()
        except OSError:
            return ""
        for line in reversed(lines):
            if "Error" in line or "Exception" in line or "Unavailable" in line:
                return line.strip()[:300]
        return lines[-1].strip()[:300] if lines else ""

    def tail(self, name: str, lines: int = 20) -> str:
        try:
            text = self.components[name].log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- internals ------------------------------------------------------------------

    def _note(self, component: Component, message: str) -> None:
        with component.log_path.open("a") as f:
            f.write(f"=== chaos {time.strftime('%H:%M:%S')}: {message}\n")

    async def _start(self, component: Component) -> None:
        component.starts += 1
        self._note(component, f"start #{component.starts}")
        offset = component.log_path.stat().st_size
        sink = component.log_path.open("ab")
        try:
            proc = await asyncio.create_subprocess_exec(
                self.python,
                "-m",
                "services.cli",
                *component.spec.args,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=sink,
                stderr=asyncio.subprocess.STDOUT,
                env=self.env,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        finally:
            sink.close()
        component.current = Incarnation(proc, time.monotonic(), offset)
        component.watcher = asyncio.create_task(self._watch(component, component.current), name=component.spec.name)

    async def _watch(self, component: Component, inc: Incarnation) -> None:
        status = await inc.proc.wait()
        if inc.killed or self._stopping or component.current is not inc:
            return
        why = self._exit_reason(component, inc)
        component.crashes.append((time.time(), status, why))
        self._note(component, f"exited on its own with status {status}; restarting")
        log.warning("component exited on its own", extra={"component": component.spec.name, "status": status})
        if self.on_crash is not None:
            self.on_crash(component, status)
        await asyncio.sleep(min(1.0 * len(component.crashes), 5.0))
        if not self._stopping and component.current is inc:
            await self._start(component)
