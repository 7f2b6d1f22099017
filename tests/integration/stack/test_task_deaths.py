"""A component task that dies on purpose: /healthz fails naming it, and the run ends with status 1.

`draplane up` (`services.cmd.up.serve`, the whole stack in this process on
the embedded log) and a single component command (`run_component`, which
every ``draplane <component>`` runs) are broken on purpose: the scheduler
task of the stack is cancelled, the component's task raises. Each run then
ends by itself with status 1 (nothing signals it), and a probe task stopped
with the others reads ``/healthz`` while the process shuts down: 500 with
kube's wording (k8s.io/apiserver ``pkg/server/healthz``: ``[-]<check> failed:
reason withheld`` and ``healthz check failed``; the reason on
``/healthz/<check>``).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from services.cmd.component import run_component
from services.cmd.up import serve
from services.runtime.supervised import Supervised
from services.stack import LocalStack, StackConfig
from services.testing.ports import free_port

Answer = tuple[int, str]


async def get(port: int, path: str = "/healthz") -> Answer:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}{path}") as resp:
        return resp.status, await resp.text()


async def probe(port: int, answers: list[Answer], check: str, *, api_port: int | None = None) -> None:
    """Runs until stopped; stopped with the other tasks on the way out, it reads /healthz and /healthz/<check>
    (and the API port's /healthz and /livez when given)."""
    try:
        await asyncio.Event().wait()
    finally:
        answers.append(await get(port))
        answers.append(await get(port, f"/healthz/{check}"))
        if api_port is not None:
            answers.append(await get(api_port, "/healthz"))
            answers.append(await get(api_port, "/livez"))


@pytest.fixture
def data() -> Iterator[Path]:
    """A data directory with a short path: the drivers' unix socket paths are limited to about 100 bytes."""
    path = Path(tempfile.mkdtemp(prefix="dp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def test_up_exits_1_and_healthz_fails_when_a_component_task_is_killed(
    data: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port = free_port()
    config = StackConfig(bus_url=f"sqlite:///{data / 'bus.db'}", data_dir=data / "d", port=0, nodes=1)
    stack = LocalStack(config)
    answers: list[Answer] = []
    ready = asyncio.Event()

    def on_ready(s: LocalStack) -> None:
        assert s.apiserver is not None
        s.tasks.spawn("probe", probe(port, answers, "scheduler", api_port=s.apiserver.port))
        ready.set()

    run = asyncio.create_task(serve(stack, metrics_listen=f"127.0.0.1:{port}", on_ready=on_ready))
    waiting = asyncio.create_task(ready.wait())
    await asyncio.wait({run, waiting}, return_when=asyncio.FIRST_COMPLETED, timeout=120)
    assert ready.is_set(), run.exception() if run.done() else "not ready in 120 s"
    status, body = await get(port, "/healthz?verbose")
    assert status == 200, body
    assert "[+]scheduler ok\n" in body and "[+]committer ok\n" in body and body.endswith("healthz check passed\n")
    assert stack.apiserver is not None
    assert await get(stack.apiserver.port, "/healthz") == (200, "ok")

    with caplog.at_level(logging.ERROR):
        stack.tasks.tasks["scheduler"].cancel()  # killed on purpose
        assert await asyncio.wait_for(run, timeout=120) == 1

    (status, body), (one_status, reason), (api_status, api_body), (live_status, live_body) = answers
    assert status == 500
    assert "[-]scheduler failed: reason withheld\n" in body and "[+]controller-manager ok\n" in body
    assert body.endswith("healthz check failed\n")
    # The API port (what `kubectl get --raw /healthz` reads) says the same, as kube-apiserver's does.
    assert api_status == 500 and "[-]scheduler failed: reason withheld\n" in api_body, api_body
    assert api_body.endswith("healthz check failed\n")
    assert live_status == 500 and live_body.endswith("livez check failed\n"), live_body
    assert (one_status, reason) == (500, "internal server error: scheduler was cancelled\n")
    assert "component task died: scheduler was cancelled" in caplog.text
    assert "draplane exits with status 1: scheduler was cancelled" in caplog.text


async def test_a_component_command_exits_1_and_healthz_fails_when_its_task_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_port()
    answers: list[Answer] = []
    started, broken = asyncio.Event(), asyncio.Event()

    async def component() -> None:
        started.set()
        await broken.wait()
        raise RuntimeError("injected failure")

    tasks = Supervised()
    tasks.spawn("probe", probe(port, answers, "scheduler"))
    run = asyncio.create_task(
        run_component("scheduler", component(), [], f"127.0.0.1:{port}", started.is_set, tasks=tasks)
    )
    await asyncio.wait_for(started.wait(), timeout=60)  # the task starts once /healthz is served
    assert await get(port) == (200, "ok")

    with caplog.at_level(logging.ERROR):
        broken.set()  # the component raises
        assert await asyncio.wait_for(run, timeout=60) == 1

    (status, body), (one_status, reason) = answers
    assert status == 500
    assert body == "[+]informer-sync ok\n[+]probe ok\n[-]scheduler failed: reason withheld\nhealthz check failed\n"
    assert (one_status, reason) == (500, "internal server error: scheduler raised RuntimeError: injected failure\n")
    died = [r for r in caplog.records if r.getMessage().startswith("component task died: scheduler")]
    assert len(died) == 1 and died[0].exc_info is not None and isinstance(died[0].exc_info[1], RuntimeError)
    assert "Traceback" in caplog.text and "injected failure" in caplog.text
    assert "scheduler exits with status 1: scheduler raised RuntimeError: injected failure" in caplog.text
