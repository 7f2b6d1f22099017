"""Running a plan's processes with compose's semantics: conditions, healthchecks, restarts, a clean stop.

Why this module exists: ``docker compose up --wait`` starts each service once
its ``depends_on`` conditions hold (started, healthy, completed successfully),
fails when a dependency exits or turns unhealthy, probes healthchecks
(``start_interval`` during ``start_period``, then ``interval``; ``retries``
consecutive failures after the start period make a service unhealthy), restarts
services by their policy, and stops dependents before their dependencies
(SIGTERM, then SIGKILL after ``stop_grace_period``). This does the same for
local processes. Each process runs in its own session, so stopping it reaches
only its own process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ops.compose.localize import LocalService, Plan
from ops.compose.order import stop_waves
from ops.processes.supervised import Exit, ProcessSpec, RestartPolicy, Run, SupervisedProcess, kill_group

RESTART_BACKOFF_START = 0.1
RESTART_BACKOFF_MAX = 60.0
RESTART_BACKOFF_RESET_AFTER = 10.0  # a run this long counts as a healthy start again, as in Docker


class StackError(RuntimeError):
    """A service could not be brought up: a failed dependency, an unhealthy service, a bad exit."""


def _quiet(future: asyncio.Future[Any]) -> None:
    """Mark a failed future's exception as seen; whoever awaits it still gets it."""
    if not future.cancelled():
        future.exception()


@dataclass
class _State:
    service: LocalService
    started: asyncio.Future[None]
    healthy: asyncio.Future[None]
    completed: asyncio.Future[int]
    proc: SupervisedProcess | None = None
    probe: asyncio.subprocess.Process | None = None
    restarts: int = 0
    exit_codes: list[int] = field(default_factory=list)
    health: str = "starting"
    task: asyncio.Task[None] | None = None

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The current (or last) start's process."""
        run = self.proc.current if self.proc is not None else None
        return run.process if run is not None else None

    def fail(self, error: BaseException) -> None:
        for future in (self.started, self.healthy, self.completed):
            if not future.done():
                future.set_exception(error)


class Supervisor:
    """Starts, watches and stops the services of a plan (one asyncio loop, one instance per stack)."""

    def __init__(self, plan: Plan, *, report: Callable[[str], None] = print) -> None:
        self.plan = plan
        self.report = report
        self._stopping = False
        self._states: dict[str, _State] = {}

    # -- up -------------------------------------------------------------------

    async def up(self) -> None:
        """Start every service in order and return once each is up: healthy, started or completed.

        Raises StackError naming the service (the caller then calls ``down``).
        """
        loop = asyncio.get_running_loop()
        for name in self.plan.order:
            service = self.plan.services[name]
            for dependency, condition in service.depends_on.items():
                if condition == "service_healthy" and self.plan.services[dependency].healthcheck is None:
                    raise StackError(f"service {name} waits for {dependency} to be healthy, but it has no healthcheck")
            state = _State(service, loop.create_future(), loop.create_future(), loop.create_future())
            for future in (state.started, state.healthy, state.completed):
                future.add_done_callback(_quiet)
            self._states[name] = state
        for name in self.plan.order:
            self._states[name].task = asyncio.create_task(self._run(name), name=f"run-local {name}")
        targets = [self._target(state) for state in self._states.values()]
        try:
            await asyncio.gather(*targets)
        finally:
            for target in targets:
                if isinstance(target, asyncio.Task) and not target.done():
                    target.cancel()

    def _target(self, state: _State) -> asyncio.Future[Any]:
        if state.service.one_shot:
            return asyncio.ensure_future(self._completed_successfully(state))
        return state.healthy if state.service.healthcheck is not None else state.started

    async def _completed_successfully(self, state: _State) -> None:
        code = await state.completed
        if code != 0:
            raise StackError(f"service {state.service.name} didn't complete successfully: exit {code}")

    async def _wait_for(self, name: str, dependency: str, condition: str) -> None:
        state = self._states[dependency]
        try:
            if condition == "service_started":
                await state.started
            elif condition == "service_healthy":
                await state.healthy
            else:
                await self._completed_successfully(state)
        except StackError as exc:
            raise StackError(f"dependency {dependency} of {name} failed: {exc}") from None

    async def _run(self, name: str) -> None:
        state = self._states[name]
        service = state.service
        try:
            for dependency, condition in service.depends_on.items():
                await self._wait_for(name, dependency, condition)
            for directory in service.dirs:
                directory.mkdir(parents=True, exist_ok=True)
            if self._stopping:
                return
            state.proc = SupervisedProcess(
                ProcessSpec(
                    name,
                    tuple(service.argv),
                    service.log,
                    env=dict(service.env),
                    cwd=service.cwd,
                    stop_grace=service.stop_grace_period,
                    label="run-local",
                ),
                restart=self._policy(state),
                on_start=functools.partial(self._started, state),
                on_exit=functools.partial(self._exited, state),
                while_running=functools.partial(self._probe_loop, state) if service.health else None,
            )
            code = await state.proc.supervise()
            if code is not None and not self._stopping:  # the restart policy leaves it down
                if not state.completed.done():
                    state.completed.set_result(code)
                self.report(f"{name} exited ({code})")
        except StackError as exc:
            state.fail(exc)
        except Exception as exc:
            state.fail(StackError(f"service {name}: {exc}"))

    def _started(self, state: _State, run: Run) -> None:
        state.health = "starting"
        if not state.started.done():
            state.started.set_result(None)
        self.report(f"{state.service.name} started (pid {run.pid})")

    def _exited(self, state: _State, exit: Exit) -> None:
        state.exit_codes.append(exit.code)
        if not state.healthy.done():
            state.healthy.set_exception(
                StackError(f"service {state.service.name} exited ({exit.code}) before it was healthy")
            )

    def _policy(self, state: _State) -> RestartPolicy:
        """The service's restart policy, with Docker's backoff (doubling, reset after a long enough run)."""
        service = state.service
        failures_in_a_row = 0

        def restart(exit: Exit, restarts: int) -> float | None:
            nonlocal failures_in_a_row
            if not self._restarts(service.restart, exit.code, restarts):
                return None
            failures_in_a_row = 0 if exit.ran_for >= RESTART_BACKOFF_RESET_AFTER else failures_in_a_row
            delay = min(RESTART_BACKOFF_START * 2**failures_in_a_row, RESTART_BACKOFF_MAX)
            failures_in_a_row += 1
            state.restarts += 1
            self.report(f"{service.name} exited ({exit.code}); restarting in {delay:g}s (restart: {service.restart})")
            return delay

        return restart

    @staticmethod
    def _restarts(policy: str, code: int, restarts: int) -> bool:
        if policy in ("always", "unless-stopped"):
            return True
        if policy.startswith("on-failure"):
            _, _, limit = policy.partition(":")
            return code != 0 and (not limit or restarts < int(limit))
        return False

    # -- healthchecks ---------------------------------------------------------

    async def _probe_loop(self, state: _State, run: Run) -> None:
        check = state.service.healthcheck
        assert check is not None
        process = run.process
        loop = asyncio.get_running_loop()
        began = loop.time()
        failures = 0
        healthy_once = False
        while process.returncode is None and not self._stopping:
            in_start_period = loop.time() - began < check.start_period
            ok, output = await self._probe(state)
            if ok:
                failures = 0
                healthy_once = True
                if state.health != "healthy":
                    state.health = "healthy"
                    self.report(f"{state.service.name} healthy")
                if not state.healthy.done():
                    state.healthy.set_result(None)
            elif not in_start_period or healthy_once:
                failures += 1
                if failures >= check.retries and state.health != "unhealthy":
                    state.health = "unhealthy"
                    problem = f"service {state.service.name} is unhealthy: {output or 'healthcheck failed'}"
                    if not state.healthy.done():
                        state.healthy.set_exception(StackError(problem))
                    self.report(problem)
            starting = not healthy_once and in_start_period
            await asyncio.sleep(check.start_interval if starting else check.interval)

    async def _probe(self, state: _State) -> tuple[bool, str]:
        service = state.service
        assert service.health is not None and service.healthcheck is not None
        probe = await asyncio.create_subprocess_exec(
            *service.health,
            env=dict(service.env),
            cwd=service.cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        state.probe = probe
        try:
            out, _ = await asyncio.wait_for(probe.communicate(), service.healthcheck.timeout)
        except TimeoutError:
            return False, f"healthcheck timed out after {service.healthcheck.timeout:g}s"
        finally:
            state.probe = None
            if probe.returncode is None:  # timed out, or the service stopped meanwhile
                kill_group(probe.pid, signal.SIGKILL)
                await probe.wait()
        text = out.decode(errors="replace").strip().splitlines()
        return probe.returncode == 0, text[-1] if text else f"exit {probe.returncode}"

    # -- down -----------------------------------------------------------------

    async def down(self) -> dict[str, int | None]:
        """Stop every process, dependents first; the last exit code of each service (None: never ran)."""
        self._stopping = True
        for state in self._states.values():
            if state.proc is not None:
                state.proc.halt_restarts()
        depends = {name: list(self.plan.services[name].depends_on) for name in self.plan.order}
        for wave in stop_waves(depends):
            await asyncio.gather(*(self._stop(self._states[n]) for n in wave if n in self._states))
        for state in self._states.values():
            if state.task is not None:
                state.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await state.task
        codes: dict[str, int | None] = {}
        for name, state in self._states.items():
            process = state.process
            codes[name] = process.returncode if process is not None else None
        return codes

    async def _stop(self, state: _State) -> None:
        probe = state.probe
        if probe is not None and probe.returncode is None:
            kill_group(probe.pid, signal.SIGKILL)
            await probe.wait()
        proc = state.proc
        if proc is None or not proc.running:
            return
        code = await proc.stop()
        if proc.current is not None and proc.current.forced:
            self.report(f"{state.service.name} did not stop in {state.service.stop_grace_period:g}s; killed it")
        self.report(f"{state.service.name} stopped ({code})")

    # -- status ---------------------------------------------------------------

    def status(self) -> dict[str, dict[str, Any]]:
        """What runs where: for people (``services.json``) and tests."""
        found: dict[str, dict[str, Any]] = {}
        for name, state in self._states.items():
            service = state.service
            process = state.process
            found[name] = {
                "pid": process.pid if process is not None else None,
                "running": process is not None and process.returncode is None,
                "returncode": process.returncode if process is not None else None,
                "health": state.health if service.healthcheck is not None else None,
                "restarts": state.restarts,
                "exit_codes": list(state.exit_codes),
                "argv": list(service.argv),
                "environment": dict(service.compose_env),
                "cwd": str(service.cwd),
                "ports": {str(k): v for k, v in service.ports.items()},
                "published": {str(k): v for k, v in service.published.items()},
                "healthcheck": list(service.health) if service.health else None,
                "log": str(service.log),
            }
        return found
