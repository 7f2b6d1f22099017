"""The shared process supervisor on real child processes: start, crash, restart, kill -9, stop, cleanup."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ops.processes.supervised import Exit, ProcessSpec, Run, SupervisedProcess
from tests.support.eventually import eventually
from tests.support.processes import alive

# Touch a file once its SIGTERM handler is in place, then wait to be signalled.
SERVE = textwrap.dedent(
    """
    import pathlib, signal, sys, time
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("serving", flush=True)
    pathlib.Path(sys.argv[1]).touch()
    while True:
        time.sleep(60)
    """
)


def spec(tmp_path: Path, script: str, *args: str, grace: float = 5.0) -> ProcessSpec:
    return ProcessSpec("child", (sys.executable, "-c", script, *args), tmp_path / "child.log", stop_grace=grace)


async def test_a_start_writes_a_marker_and_the_output_after_it(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    proc = SupervisedProcess(spec(tmp_path, SERVE, str(ready)))
    run = await proc.start()
    try:
        await eventually(ready.exists, what="the child serving")
        text = proc.spec.log.read_text()
        assert text.startswith("=== supervisor ") and ": start #1: " in text.splitlines()[0]
        assert proc.spec.log.read_bytes()[run.log_offset :] == b"serving\n"
        assert proc.running and alive(run.pid)
    finally:
        assert await proc.stop() == 0, "SIGTERM, handled"
    assert not alive(run.pid)


async def test_an_exit_on_its_own_is_reported_and_restarted_by_the_policy(tmp_path: Path) -> None:
    flag = tmp_path / "second"
    # The first start fails with 3; the next ones serve.
    script = f"import pathlib, sys\nif not pathlib.Path({str(flag)!r}).exists():\n    sys.exit(3)\n" + SERVE
    exits: list[Exit] = []
    second = asyncio.Event()

    def restart(exit: Exit, restarts: int) -> float | None:
        flag.touch()
        return 0.0

    def started(run: Run) -> None:
        if run.number == 2:
            second.set()

    proc = SupervisedProcess(
        spec(tmp_path, script, str(tmp_path / "ready")), restart=restart, on_exit=exits.append, on_start=started
    )
    supervising = asyncio.create_task(proc.supervise())
    try:
        await asyncio.wait_for(second.wait(), 60)
        assert [e.code for e in exits] == [3]
        assert exits[0].run.number == 1
        assert proc.restarts == 1 and proc.starts == 2
        await eventually((tmp_path / "ready").exists, what="the second start serving")
    finally:
        await proc.stop()
        assert await supervising == 0


async def test_the_policy_may_leave_it_down(tmp_path: Path) -> None:
    proc = SupervisedProcess(spec(tmp_path, "import sys; sys.exit(5)"))
    assert await proc.supervise() == 5
    assert [e.code for e in proc.exits] == [5]
    assert proc.starts == 1


async def test_kill_is_a_sigkill_and_a_new_start_not_an_exit_on_its_own(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    exits: list[Exit] = []
    proc = SupervisedProcess(spec(tmp_path, SERVE, str(ready)), restart=lambda e, n: 0.0, on_exit=exits.append)
    supervising = asyncio.create_task(proc.supervise())
    try:
        await eventually(ready.exists, what="the first start serving")
        first = proc.current
        assert first is not None
        ready.unlink()
        second = await proc.kill()
        assert second is not None and second is proc.current
        assert first.returncode == -signal.SIGKILL and first.stopped
        assert second.pid != first.pid and not alive(first.pid)
        await eventually(ready.exists, what="the new start serving")
        assert exits == [], "a kill is not an exit on its own"
        assert proc.kills == 1 and proc.restarts == 0 and proc.starts == 2
        assert "SIGKILL" in proc.spec.log.read_text()
    finally:
        await proc.stop()
        await supervising


async def test_stop_kills_a_child_that_ignores_sigterm_after_the_grace_period(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    script = SERVE.replace("lambda *_: sys.exit(0)", "signal.SIG_IGN")
    proc = SupervisedProcess(spec(tmp_path, script, str(ready), grace=0.2))
    run = await proc.start()
    await eventually(ready.exists, what="SIGTERM ignored")
    assert await proc.stop() == -signal.SIGKILL
    assert run.forced and run.stopped


async def test_stop_reaches_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild"
    script = textwrap.dedent(
        f"""
        import pathlib, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pathlib.Path({str(pidfile)!r}).write_text(str(child.pid))
        time.sleep(600)
        """
    )
    proc = SupervisedProcess(spec(tmp_path, script))
    await proc.start()
    text = await eventually(lambda: pidfile.exists() and pidfile.read_text(), what="the grandchild's pid")
    grandchild = int(text)
    await proc.stop()
    await eventually(lambda: not alive(grandchild), what="the grandchild gone")


async def test_a_start_after_the_stop_began_is_killed_at_once(tmp_path: Path) -> None:
    proc = SupervisedProcess(spec(tmp_path, SERVE, str(tmp_path / "ready")))
    proc.halt_restarts()
    run = await proc.start()
    assert run.returncode == -signal.SIGKILL and run.stopped
    assert await proc.supervise() == -signal.SIGKILL, "supervise starts nothing once stopping"
    assert proc.starts == 1


async def test_cancelling_the_supervisor_leaves_no_child_behind(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    proc = SupervisedProcess(spec(tmp_path, SERVE, str(ready)))
    supervising = asyncio.create_task(proc.supervise())
    await eventually(ready.exists, what="the child serving")
    run = proc.current
    assert run is not None
    supervising.cancel()
    with pytest.raises(asyncio.CancelledError):
        await supervising
    assert run.returncode == -signal.SIGKILL
    assert not alive(run.pid)


def test_children_die_with_the_supervising_process(tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG: a supervisor that is SIGKILLed itself leaves nothing behind."""
    pidfile = tmp_path / "child.pid"
    ready = tmp_path / "ready"
    supervisor = textwrap.dedent(
        f"""
        import asyncio, pathlib, sys
        from ops.processes.supervised import ProcessSpec, SupervisedProcess

        async def main():
            proc = SupervisedProcess(ProcessSpec("c", (sys.executable, "-c", {SERVE!r}, {str(ready)!r}),
                                                 pathlib.Path({str(tmp_path / "c.log")!r})))
            run = await proc.start()
            pathlib.Path({str(pidfile)!r}).write_text(str(run.pid))
            await asyncio.Event().wait()

        asyncio.run(main())
        """
    )
    repo = Path(__file__).resolve().parents[3]
    parent = subprocess.Popen([sys.executable, "-c", supervisor], cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)})
    try:
        child = int(asyncio.run(eventually(lambda: ready.exists() and pidfile.read_text(), what="the child")))
        assert alive(child)
    finally:
        parent.kill()
        parent.wait()
    asyncio.run(eventually(lambda: not alive(child), what="the orphaned child killed"))
