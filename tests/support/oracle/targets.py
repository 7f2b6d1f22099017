"""The two servers the oracle suite compares: draplane's apiserver and kube-apiserver 1.31 on etcd.

Why this module exists: both must be started the way an operator would start
them — separate processes, TLS, a bearer token or client certificate in a
kubeconfig — so that kubectl and HTTP reach them exactly alike. draplane runs
as ``draplane apiserver --emulated-version 1.31`` on its embedded log, with no
controllers, because kube-apiserver alone runs none either.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ops.upstreamkit.run import kube_apiserver
from ops.upstreamkit.versions import DEFAULT_KUBE_VERSION, ETCD, ETCD_VERSION
from services.apiserver.certs import self_signed
from services.apiserver.kubeconfig import write_kubeconfig
from tests.support.oracle.runner import Target
from tests.support.upstream import require_upstream

EMULATED_VERSION = "1.31"
# kube-apiserver 1.31 serves resource.k8s.io at v1alpha3 only; draplane's --emulated-version does not hide the
# versions later releases added, so the operator's switch does (docs/compatibility.md, "Served versions").
RUNTIME_CONFIG = "resource.k8s.io/v1=false,resource.k8s.io/v1beta2=false,resource.k8s.io/v1beta1=false"
READY_TIMEOUT = 60.0


def _draplane_binary() -> list[str]:
    script = Path(sys.executable).with_name("draplane")
    return [str(script)] if script.exists() else [sys.executable, "-m", "services.cli"]


@contextlib.contextmanager
def draplane(root: Path, *, name: str = "draplane") -> Iterator[Target]:
    """``draplane apiserver`` at 1.31 in ``root`` (embedded log), TLS and an admin token; stopped afterwards."""
    root.mkdir(parents=True, exist_ok=True)
    token = "oracle-" + uuid.uuid4().hex
    (root / "tokens.csv").write_text(f'{token},admin,uid-admin,"system:masters"\n')
    cert, key = self_signed(root / "pki")
    log = (root / "apiserver.log").open("w")
    proc = subprocess.Popen(
        [
            *_draplane_binary(),
            "apiserver",
            f"--data={root / 'data'}",
            "--listen=127.0.0.1:0",
            f"--emulated-version={EMULATED_VERSION}",
            f"--runtime-config={RUNTIME_CONFIG}",
            f"--token-auth-file={root / 'tokens.csv'}",
            f"--tls-cert-file={cert}",
            f"--tls-private-key-file={key}",
            "--log-level=WARNING",
        ],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        port = _ready_port(proc, root / "apiserver.log")
        kubeconfig = write_kubeconfig(root / "kubeconfig", f"https://127.0.0.1:{port}", token=token, ca_file=cert)
        yield Target(name, kubeconfig, root / "home")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _ready_port(proc: subprocess.Popen[str], log: Path) -> int:
    assert proc.stdout is not None
    for line in proc.stdout:  # `draplane apiserver` prints one line once it leads and serves
        if line.startswith("apiserver ready on "):
            return int(line.split()[-1])
    proc.wait()
    raise AssertionError(
        f"draplane apiserver exited ({proc.returncode}) before it was ready:\n{log.read_text()[-4000:]}"
    )


@contextlib.contextmanager
def upstream(root: Path) -> Iterator[Target]:
    """kube-apiserver 1.31.14 with DRA on, on a fresh etcd, from the shared build cache (ops/upstreamkit).

    Waits for ``./ops/test``'s background build when one runs; skips with the
    reason when the binaries cannot be had, fails instead when they must be
    (`tests.support.upstream.require_upstream`). The kit's context manager is
    async; it is held open on a thread of its own, as the suite is synchronous.
    """
    require_upstream((("kube-apiserver", DEFAULT_KUBE_VERSION), (ETCD, ETCD_VERSION)))
    with _held(kube_apiserver(root / "kube")) as api:
        yield Target("kube-apiserver", Path(api.kubeconfig), root / "home")


@contextlib.contextmanager
def _held(manager: contextlib.AbstractAsyncContextManager[Any]) -> Iterator[Any]:
    """Enter an async context manager on an event loop in a thread; leave it when the block ends."""
    entered: queue.Queue[tuple[bool, Any]] = queue.Queue()
    loop = asyncio.new_event_loop()
    leave = asyncio.Event()

    async def hold() -> None:
        try:
            async with manager as value:
                entered.put((True, value))
                await leave.wait()
        except BaseException as exc:
            entered.put((False, exc))
            raise

    def main() -> None:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(hold())
        loop.close()

    thread = threading.Thread(target=main, name="oracle-upstream", daemon=True)
    thread.start()
    ok, value = entered.get()
    if not ok:
        thread.join()
        raise AssertionError(f"kube-apiserver did not start: {value}") from value
    try:
        yield value
    finally:
        loop.call_soon_threadsafe(leave.set)
        thread.join(timeout=60)
