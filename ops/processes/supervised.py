"""One supervised child process: started, watched, killed, stopped and restarted.

Why this module exists: the chaos run (every component as its own process,
SIGKILLed and started again) and ``ops/compose/run-local`` (compose's restart
policies, healthchecks and clean stop) both start, watch, kill and restart
children. What every supervisor must get right is here once:

- a start appends the child's output to its log file, after a marker line
  (``=== <label> HH:MM:SS: start #n: argv``), and remembers where that start's
  output begins (`Run.log_offset`);
- each child runs in its own session, so a signal reaches its whole process
  group and nothing else; with ``die_with_parent`` it gets SIGKILL when the
  supervising process dies (``PR_SET_PDEATHSIG``), so a killed tool leaves
  nothing behind;
- `SupervisedProcess.supervise` watches the child: an exit on its own is
  reported (``on_exit``) and the restart policy says whether and after how
  long it starts again; a `SupervisedProcess.kill` (SIGKILL) starts it again
  itself after its delay and is not an exit on its own;
- `SupervisedProcess.stop` is SIGTERM, then SIGKILL after the grace period,
  and no start follows; a start that races with it is killed at once;
- a cancelled supervisor never leaves its child running.

What differs — restart policies, readiness, what an exit means — stays with
each tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PR_SET_PDEATHSIG = 1


@dataclass(frozen=True, slots=True)
class ProcessSpec:
    """What to run and where its output goes."""

    name: str
    argv: tuple[str, ...]
    log: Path
    env: Mapping[str, str] | None = None  # None: this process's environment
    cwd: Path | None = None
    stop_grace: float = 5.0  # SIGTERM, then SIGKILL after this many seconds
    die_with_parent: bool = True
    label: str = "supervisor"  # names the supervisor in the log's marker lines


@dataclass
class Run:
    """One start of a process."""

    process: asyncio.subprocess.Process
    number: int  # 1 for the first start
    started: float  # the event loop's clock
    log_offset: int  # where this start's output begins in the log file
    stopped: bool = False  # ended by us (a kill or the stop), not on its own
    forced: bool = False  # the stop had to SIGKILL it after the grace period

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode


@dataclass(frozen=True, slots=True)
class Exit:
    """A run that ended on its own."""

    run: Run
    code: int
    ran_for: float  # seconds


RestartPolicy = Callable[[Exit, int], "float | None"]
"""Given an exit and the restarts so far: the delay before the next start, or None to leave it down."""


def never(_exit: Exit, _restarts: int) -> float | None:
    """The restart policy that leaves an exited process down."""
    return None


def kill_group(pid: int, sig: signal.Signals) -> None:
    """Signal the process group of a child started in its own session (its pid is the group's id)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class SupervisedProcess:
    """One child process and its starts; see the module docstring for the rules."""

    def __init__(
        self,
        spec: ProcessSpec,
        *,
        restart: RestartPolicy = never,
        on_start: Callable[[Run], None] | None = None,
        on_exit: Callable[[Exit], None] | None = None,
        while_running: Callable[[Run], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        self.spec = spec
        self.restart = restart
        self.on_start = on_start
        self.on_exit = on_exit
        self.while_running = while_running  # runs beside each start (a health probe); cancelled when it ends
        self.current: Run | None = None
        self.starts = 0
        self.kills = 0
        self.restarts = 0  # starts after an exit on its own
        self.exits: list[Exit] = []
        self._stopping = False
        self._changed = asyncio.Condition()
        self._companion: asyncio.Task[None] | None = None

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def running(self) -> bool:
        return self.current is not None and self.current.returncode is None

    # -- starting and watching --------------------------------------------------------

    def note(self, message: str) -> None:
        """Append a marker line to the process's log."""
        self.spec.log.parent.mkdir(parents=True, exist_ok=True)
        with self.spec.log.open("a") as f:
            f.write(f"=== {self.spec.label} {time.strftime('%H:%M:%S')}: {message}\n")

    async def start(self) -> Run:
        """Start the process now (a new run); killed at once when a stop has begun."""
        self.starts += 1
        self.note(f"start #{self.starts}: {' '.join(self.spec.argv)}")
        offset = self.spec.log.stat().st_size
        with self.spec.log.open("ab") as sink:
            process = await asyncio.create_subprocess_exec(
                *self.spec.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=sink,
                stderr=asyncio.subprocess.STDOUT,
                env=dict(self.spec.env) if self.spec.env is not None else None,
                cwd=self.spec.cwd,
                start_new_session=True,
                preexec_fn=_die_with_parent if self.spec.die_with_parent and sys.platform.startswith("linux") else None,
            )
        run = Run(process, self.starts, asyncio.get_running_loop().time(), offset)
        self.current = run
        if self._stopping:  # the stop began while it was being spawned
            run.stopped = True
            kill_group(process.pid, signal.SIGKILL)
            await process.wait()
        elif self.on_start is not None:
            self.on_start(run)
        async with self._changed:
            self._changed.notify_all()
        return run

    async def supervise(self) -> int | None:
        """Start the process (unless it runs) and keep it going until stopped or the policy leaves it down.

        Returns the last exit status (None when it never ran). Cancelling it
        SIGKILLs a child still running.
        """
        if self.current is None and not self._stopping:
            await self.start()
        while self.current is not None:
            run = self.current
            code = await self._watch(run)
            if self._stopping:
                return code
            if run.stopped:  # killed by us: `kill` starts the next run
                await self._replaced(run)
                continue
            loop = asyncio.get_running_loop()
            exit = Exit(run, code, loop.time() - run.started)
            self.exits.append(exit)
            if self.on_exit is not None:
                self.on_exit(exit)
            delay = self.restart(exit, self.restarts)
            if delay is None:
                return code
            await asyncio.sleep(delay)
            if self._stopping:
                return code
            if self.current is run:  # not started meanwhile by a kill
                self.restarts += 1
                await self.start()
        return None

    async def _replaced(self, run: Run) -> None:
        """Wait until another run has started (or a stop has begun)."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.current is not run or self._stopping)

    async def _watch(self, run: Run) -> int:
        companion = None
        if self.while_running is not None and run.returncode is None:
            companion = self._companion = asyncio.create_task(self.while_running(run))
        try:
            return await run.process.wait()
        except asyncio.CancelledError:
            if run.returncode is None:  # never leave a process behind
                run.stopped = True
                kill_group(run.pid, signal.SIGKILL)
                await run.process.wait()
            raise
        finally:
            if companion is not None:
                companion.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await companion

    # -- killing and stopping ---------------------------------------------------------

    async def kill(self, *, restart_after: float = 0.0) -> Run | None:
        """SIGKILL the process, wait until it is gone, and start it again after ``restart_after`` seconds.

        Returns the new run (None when a stop began meanwhile).
        """
        run = self.current
        if run is not None and run.returncode is None:
            run.stopped = True
            kill_group(run.pid, signal.SIGKILL)
            await run.process.wait()
        self.kills += 1
        self.note(f"SIGKILL (start again in {restart_after:.1f}s)")
        if restart_after > 0:
            await asyncio.sleep(restart_after)
        if self._stopping:
            return None
        return await self.start()

    def halt_restarts(self) -> None:
        """From now on nothing starts the process again (the first step of a stop)."""
        self._stopping = True

    async def stop(self) -> int | None:
        """SIGTERM the process group, SIGKILL it after the grace period; no start follows. The exit status."""
        self._stopping = True
        async with self._changed:
            self._changed.notify_all()
        if self._companion is not None:
            self._companion.cancel()
        run = self.current
        if run is None:
            return None
        if run.returncode is None:
            run.stopped = True
            kill_group(run.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.shield(run.process.wait()), self.spec.stop_grace)
            except TimeoutError:
                run.forced = True
                kill_group(run.pid, signal.SIGKILL)
                await run.process.wait()
        return run.returncode
