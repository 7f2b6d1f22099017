"""Component processes: started, SIGKILLed and restarted like a supervisor (a kubelet, systemd) would.

Why this module exists: the chaos run needs every component as its own OS
process, so that a kill loses exactly what a crash loses (memory, open
transactions, sockets) and nothing else. A `Supervisor` runs each
`ComponentSpec` (``python -m services.cli <component> ...``) as an
`ops.processes.supervised.SupervisedProcess` — the one process supervisor
the tools share: output appended to ``<logs>/<name>.log`` with a marker per
start, SIGKILL and start again on request, a restart after an exit on its
own, SIGKILL when the run's own process dies. What is chaos's own is here: an
exit on its own is a finding (counted, with the last error line of its output,
restarted after a short backoff), and readiness is the component's health
port (``/healthz``; ``/readyz`` for the apiserver).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from ops.processes.supervised import Exit, ProcessSpec, Run, SupervisedProcess

log = logging.getLogger(__name__)

STOP_GRACE_S = 5.0


@dataclass(frozen=True, slots=True)
class ComponentSpec:
    """How to run one component: its name, its ``draplane`` arguments and where it answers when ready."""

    name: str
    kind: str  # apiserver, scheduler, controller-manager, driver, nodeagent
    args: tuple[str, ...]
    health_url: str


@dataclass
class Component:
    spec: ComponentSpec
    process: SupervisedProcess
    crashes: list[tuple[float, int | None, str]] = field(default_factory=list)  # (time, exit status, why)
    watcher: asyncio.Task[int | None] | None = None

    @property
    def log_path(self) -> Path:
        return self.process.spec.log

    @property
    def current(self) -> Run | None:
        return self.process.current

    @property
    def starts(self) -> int:
        return self.process.starts

    @property
    def kills(self) -> int:
        return self.process.kills


class Supervisor:
    """Runs components as processes; ``kill`` SIGKILLs and restarts one; ``stop`` ends them all."""

    def __init__(self, *, logs: Path, python: str = sys.executable, env: dict[str, str] | None = None) -> None:
        self.logs = logs
        self.python = python
        self.env = {**os.environ, **(env or {})}
        self.components: dict[str, Component] = {}
        self.on_crash: Callable[[Component, int | None], None] | None = None
        self._http: aiohttp.ClientSession | None = None

    # -- lifecycle ------------------------------------------------------------------

    async def start_all(self, specs: Sequence[ComponentSpec]) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        for spec in specs:
            process = SupervisedProcess(
                ProcessSpec(
                    spec.name,
                    (self.python, "-m", "services.cli", *spec.args),
                    self.logs / f"{spec.name}.log",
                    env=self.env,
                    stop_grace=STOP_GRACE_S,
                    label="chaos",
                ),
                restart=_after_crashes,
            )
            component = self.components[spec.name] = Component(spec, process)
            process.on_exit = functools.partial(self._exited, component)
            await process.start()
            component.watcher = asyncio.create_task(process.supervise(), name=spec.name)

    async def stop(self) -> None:
        """SIGTERM every component, SIGKILL those still there after a grace period."""
        for component in self.components.values():
            component.process.halt_restarts()
        await asyncio.gather(*(c.process.stop() for c in self.components.values()))
        for component in self.components.values():
            if component.watcher is not None:
                component.watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await component.watcher
        if self._http is not None:
            await self._http.close()

    async def kill(self, name: str, *, restart_after: float = 0.0) -> None:
        """SIGKILL a component, wait for it to be gone, and start it again."""
        await self.components[name].process.kill(restart_after=restart_after)

    # -- readiness ------------------------------------------------------------------

    async def ready(self, name: str) -> bool:
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2.0))
        component = self.components[name]
        if not component.process.running:
            return False
        try:
            async with self._http.get(component.spec.health_url) as response:
                return response.status == 200
        except (aiohttp.ClientError, TimeoutError, OSError):
            return False

    async def metrics(self, name: str) -> str | None:
        """The text of a component's ``/metrics`` (beside its ``/healthz``), None when it does not answer."""
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2.0))
        component = self.components[name]
        if not component.process.running:
            return None
        url = component.spec.health_url.rsplit("/", 1)[0] + "/metrics"
        try:
            async with self._http.get(url) as response:
                return await response.text() if response.status == 200 else None
        except (aiohttp.ClientError, TimeoutError, OSError):
            return None

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

    def _exit_reason(self, component: Component, inc: Run) -> str:
        """Why the incarnation exited: its "exits with status" line, else the last line naming an exception."""
        try:
            with component.log_path.open("rb") as f:
                f.seek(inc.log_offset)
                lines = f.read().decode(errors="replace").splitlines()
        except OSError:
            return ""
        for line in reversed(lines):  # the component's own last word first ("<name> exits with status 1: ...")
            if "exits with status" in line:
                return line.strip()[:300]
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

    def _exited(self, component: Component, exit: Exit) -> None:
        why = self._exit_reason(component, exit.run)
        component.crashes.append((time.time(), exit.code, why))
        component.process.note(f"exited on its own with status {exit.code}; restarting")
        log.warning("component exited on its own", extra={"component": component.spec.name, "status": exit.code})
        if self.on_crash is not None:
            self.on_crash(component, exit.code)


def _after_crashes(exit: Exit, restarts: int) -> float:
    """Always restart a component, after a backoff that grows with its exits (at most 5 s)."""
    return min(1.0 * (restarts + 1), 5.0)
