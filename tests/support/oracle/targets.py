"""The two servers the oracle suite compares: draplane's apiserver and kube-apiserver 1.31 on etcd.

Why this module exists: both must be started the way an operator would start
them — separate processes, TLS, a bearer token or client certificate in a
kubeconfig — so that kubectl and HTTP reach them exactly alike. draplane runs
as ``draplane apiserver --emulated-version 1.31`` on its embedded log, with no
controllers, because kube-apiserver alone runs none either.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

from services.apiserver.certs import self_signed
from services.apiserver.kubeconfig import write_kubeconfig
from tests.support.oracle.runner import Target

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


REQUIRE_ENV = "DRAPLANE_REQUIRE_UPSTREAM"


def _unavailable(reason: str) -> None:
    import pytest

    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)


@contextlib.contextmanager
def upstream(root: Path) -> Iterator[Target]:
    """kube-apiserver 1.31.14 with DRA on, on a fresh etcd, from the shared build cache (ops/upstreamkit)."""
    try:
        from ops.upstreamkit import run as upstream_run  # type: ignore[import-not-found]
    except ImportError as exc:
        _unavailable(f"ops/upstreamkit cannot start kube-apiserver here ({exc})")
        raise
    with upstream_run.kube_apiserver(root) as server:  # pragma: no cover - adapted once the kit lands
        yield Target("kube-apiserver", Path(server.kubeconfig), root / "home")
