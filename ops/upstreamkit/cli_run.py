"""``ops/upstream apiserver`` and ``ops/upstream components``: run the upstream binaries until interrupted.

Why this module exists: a person comparing draplane with the real thing by
hand wants the same processes the tests start (`run`), with the kubeconfig
printed, until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import tempfile
from pathlib import Path

from ops.upstreamkit.run import KubeComponents, UpstreamFailed, UpstreamMissing, kube_apiserver, kube_components


async def _until_signalled(check: KubeComponents | None = None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, stop.set)
    while not stop.is_set():
        if check is not None:
            check.check_alive()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 2)


async def _apiserver(version: str) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="upstream-apiserver-"))
    async with kube_apiserver(workdir, version=version) as api:
        print(f"kube-apiserver {api.version} at {api.url}")
        print(f"logs in {workdir}")
        print(f"export KUBECONFIG={api.kubeconfig}", flush=True)
        await _until_signalled()


async def _components(kubeconfig: Path, version: str, content_type: str | None) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="upstream-components-"))
    async with kube_components(kubeconfig, workdir, version=version, content_type=content_type) as components:
        for name, process in components.processes.items():
            print(f"{name} {version} (pid {process.process.pid}, port {components.ports[name]}): log {process.log}")
        print("Ctrl-C stops them", flush=True)
        await _until_signalled(components)


def serve_apiserver(*, version: str) -> int:
    try:
        asyncio.run(_apiserver(version))
    except (UpstreamMissing, UpstreamFailed) as error:
        print(f"upstream: {error}")
        return 1
    return 0


def serve_components(*, kubeconfig: str, version: str, content_type: str | None) -> int:
    try:
        asyncio.run(_components(Path(kubeconfig).resolve(), version, content_type))
    except (UpstreamMissing, UpstreamFailed) as error:
        print(f"upstream: {error}")
        return 1
    return 0
