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
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ops.compose.localize import LocalService, Plan
from ops.compose.order import stop_waves

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
    process: asyncio.subprocess.Process | None = None
    probe: asyncio.subprocess.Process | None = None
    restarts: int = 0
    exit_codes: list[int] = field(default_factory=list)
    health: str = "starting"
    task: asyncio.Task[None] | None = None

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
            service.log.parent.mkdir(parents=True, exist_ok=True)
            failures_in_a_row = 0
            while not self._stopping:
                began = time.monotonic()
                code = await self._run_once(state)
                if self._stopping:
                    break
                state.exit_codes.append(code)
                if not state.healthy.done():
                    state.healthy.set_exception(StackError(f"service {name} exited ({code}) before it was healthy"))
                if not self._restarts(service.restart, code, state.restarts):
                    if not state.completed.done():
                        state.completed.set_result(code)
                    self.report(f"{name} exited ({code})")
                    return
                failures_in_a_row = 0 if time.monotonic() - began >= RESTART_BACKOFF_RESET_AFTER else failures_in_a_row
                delay = min(RESTART_BACKOFF_START * 2**failures_in_a_row, RESTART_BACKOFF_MAX)
                failures_in_a_row += 1
                state.restarts += 1
                self.report(f"{name} exited ({code}); restarting in {delay:g}s (restart: {service.restart})")
                await asyncio.sleep(delay)
        except StackError as exc:
            state.fail(exc)
        except Exception as exc:
            state.fail(StackError(f"service {name}: {exc}"))

    @staticmethod
    def _restarts(policy: str, code: int, restarts: int) -> bool:
        if policy in ("always", "unless-stopped"):
            return True
        if policy.startswith("on-failure"):
            _, _, limit = policy.partition(":")
            return code != 0 and (not limit or restarts < int(limit))
        return False

    async def _run_once(self, state: _State) -> int:
        service = state.service
        with service.log.open("ab") as log:
            log.write(f"=== run-local: {' '.join(service.argv)}\n".encode())
            log.flush()
            process = await asyncio.create_subprocess_exec(
                *service.argv,
                env=dict(service.env),
                cwd=service.cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        state.process = process
        state.health = "starting"
        if self._stopping:  # `down` began while it was being spawned
            _kill_group(process.pid, signal.SIGKILL)
            return await process.wait()
        if not state.started.done():
            state.started.set_result(None)
        self.report(f"{service.name} started (pid {process.pid})")
        probes = asyncio.create_task(self._probe_loop(state, process)) if service.health else None
        try:
            return await process.wait()
        except asyncio.CancelledError:
            if process.returncode is None:  # never leave a process behind
                _kill_group(process.pid, signal.SIGKILL)
                await process.wait()
            raise
        finally:
            if probes is not None:
                probes.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await probes

    # -- healthchecks ---------------------------------------------------------

    async def _probe_loop(self, state: _State, process: asyncio.subprocess.Process) -> None:
        check = state.service.healthcheck
        assert check is not None
        began = time.monotonic()
        failures = 0
        healthy_once = False
        while process.returncode is None and not self._stopping:
            in_start_period = time.monotonic() - began < check.start_period
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
                _kill_group(probe.pid, signal.SIGKILL)
                await probe.wait()
        text = out.decode(errors="replace").strip().splitlines()
        return probe.returncode == 0, text[-1] if text else f"exit {probe.returncode}"

    # -- down -----------------------------------------------------------------

    async def down(self) -> dict[str, int | None]:
        """Stop every process, dependents first; the last exit code of each service (None: never ran)."""
        self._stopping = True
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
            _kill_group(probe.pid, signal.SIGKILL)
            await probe.wait()
        process = state.process
        if process is None or process.returncode is not None:
            return
        _kill_group(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), state.service.stop_grace_period)
        except TimeoutError:
            self.report(f"{state.service.name} did not stop in {state.service.stop_grace_period:g}s; killing it")
            _kill_group(process.pid, signal.SIGKILL)
            await process.wait()
        self.report(f"{state.service.name} stopped ({process.returncode})")

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


def _kill_group(pid: int, sig: signal.Signals) -> None:
    """Signal the process group of a child started in its own session (its pid is the group's id)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
