"""Runs the cached upstream binaries on loopback: etcd + kube-apiserver, and kube-scheduler + kube-controller-manager.

Why this module exists: the oracle suite compares draplane with a real
kube-apiserver, the upstream e2e test and ``ops/bench/scheduler.py
--scheduler kube`` run the real kube-scheduler and kube-controller-manager
against a draplane stack. Each needs the same few things done right: free
ports, a serving certificate, a token, DRA switched on, readiness waited for,
logs kept for the failure message, and every process stopped afterwards.

- ``async with kube_apiserver(workdir) as api`` starts etcd and kube-apiserver
  (default 1.31.14) with ``--feature-gates=DynamicResourceAllocation=true``,
  ``--runtime-config=resource.k8s.io/v1alpha3=true``, AlwaysAllow
  authorization and a static bearer token of a ``system:masters`` user over
  TLS; ``api.url``, ``api.kubeconfig`` (for kubectl and the Python
  ``kubernetes`` client), ``api.token``, ``api.ca_file``. The ServiceAccount
  admission plugin is off (no controller-manager creates the ``default``
  account); ``extra_args`` are appended (a later flag wins).
- ``async with kube_components(kubeconfig, workdir) as c`` starts
  kube-scheduler and kube-controller-manager, unmodified: default flags,
  leader election on, only ``--kubeconfig``, the DRA gate and loopback ports
  of their own. ``content_type="application/json"`` makes them speak JSON
  (``clientConnection.contentType`` / ``--kube-api-content-type``) instead of
  their default protobuf. ``which=("kube-scheduler",)`` starts one only.
- `Process` is one running binary: its log file, `Process.tail` for error
  messages, `Process.alive`.

Raises `UpstreamMissing` (with the reason from `build.binary_path`) when a
binary is not built. Needs the project venv (aiohttp, openssl for the key).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import ssl
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import aiohttp
import yaml

from ops.upstreamkit.build import binary_path
from ops.upstreamkit.versions import DEFAULT_KUBE_VERSION, ETCD, ETCD_VERSION
from services.apiserver.certs import self_signed
from services.apiserver.kubeconfig import write_kubeconfig

DRA_GATE = "DynamicResourceAllocation=true"
DRA_RUNTIME_CONFIG = "resource.k8s.io/v1alpha3=true"


class UpstreamMissing(Exception):
    """A binary is not in the cache; the message says why and how to build it."""


class UpstreamFailed(Exception):
    """A process exited or did not become ready; the message carries its log's tail."""


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def require(name: str, version: str | None = None) -> Path:
    path, reason = binary_path(name, version)
    if path is None:
        raise UpstreamMissing(reason)
    return path


@dataclass
class Process:
    """One running upstream binary, its output in ``log``."""

    name: str
    process: asyncio.subprocess.Process
    log: Path

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    async def stop(self, *, grace: float = 10.0) -> None:
        if self.process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()


def _open_log(log: Path) -> BinaryIO:
    log.parent.mkdir(parents=True, exist_ok=True)
    return open(log, "ab")


async def start_process(name: str, argv: Sequence[str], *, log: Path) -> Process:
    with _open_log(log) as out:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=asyncio.subprocess.STDOUT
        )
    return Process(name, process, log)


async def wait_http_ok(
    url: str, *, process: Process, timeout: float, token: str | None = None, ca_file: Path | None = None
) -> None:
    """Polls ``url`` until it answers 200; fails with the process's log when it exits or time runs out."""
    context = ssl.create_default_context(cafile=str(ca_file)) if ca_file is not None else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last = "no answer"
    async with aiohttp.ClientSession(headers=headers) as http:
        while True:
            if not process.alive:
                raise UpstreamFailed(f"{process.name} exited {process.process.returncode}:\n{process.tail()}")
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                async with http.get(
                    url, ssl=context if context is not None else False, timeout=aiohttp.ClientTimeout(total=5)
                ) as response:
                    if response.status == 200:
                        return
                    last = f"{response.status} {(await response.text())[:500]}"
            if loop.time() > deadline:
                raise UpstreamFailed(
                    f"{process.name} not ready at {url} after {timeout:.0f}s ({last}):\n{process.tail()}"
                )
            await asyncio.sleep(0.5)


def newer_apiserver_args(version: str) -> list[str]:
    """Flags a kube-apiserver after 1.31 needs on loopback: 1.37 refuses 127.0.0.1 for its endpoint reconciler."""
    minor = int(version.removeprefix("v").split(".")[1])
    return ["--endpoint-reconciler-type=none"] if minor > 31 else []


@dataclass
class KubeApiserver:
    """A running etcd + kube-apiserver pair."""

    url: str
    kubeconfig: Path
    token: str
    ca_file: Path
    version: str
    etcd: Process
    apiserver: Process
    processes: list[Process] = field(default_factory=list)


@contextlib.asynccontextmanager
async def kube_apiserver(
    workdir: Path,
    *,
    version: str = DEFAULT_KUBE_VERSION,
    etcd_version: str = ETCD_VERSION,
    extra_args: Sequence[str] = (),
    timeout: float = 120.0,
) -> AsyncIterator[KubeApiserver]:
    """etcd and kube-apiserver on free loopback ports; see the module docstring."""
    apiserver_bin = require("kube-apiserver", version)
    etcd_bin = require(ETCD, etcd_version)
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    client_port, peer_port, secure_port = free_port(), free_port(), free_port()
    etcd_url = f"http://127.0.0.1:{client_port}"
    peer_url = f"http://127.0.0.1:{peer_port}"
    etcd = await start_process(
        "etcd",
        [
            str(etcd_bin),
            "--name=default",
            f"--data-dir={workdir / 'etcd'}",
            f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=default={peer_url}",
            "--listen-metrics-urls=",
            "--unsafe-no-fsync",
        ],
        log=workdir / "etcd.log",
    )
    processes = [etcd]
    try:
        await wait_http_ok(f"{etcd_url}/health", process=etcd, timeout=timeout)
        cert, key = await asyncio.to_thread(self_signed, workdir / "pki")
        token = "oracle-" + uuid.uuid4().hex
        tokens = workdir / "tokens.csv"
        tokens.write_text(f'{token},admin,uid-admin,"system:masters"\n')
        url = f"https://127.0.0.1:{secure_port}"
        apiserver = await start_process(
            "kube-apiserver",
            [
                str(apiserver_bin),
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={secure_port}",
                f"--tls-cert-file={cert}",
                f"--tls-private-key-file={key}",
                f"--cert-dir={workdir / 'certs'}",
                f"--token-auth-file={tokens}",
                "--authorization-mode=AlwaysAllow",
                f"--service-account-key-file={key}",
                f"--service-account-signing-key-file={key}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--disable-admission-plugins=ServiceAccount",
                f"--feature-gates={DRA_GATE}",
                f"--runtime-config={DRA_RUNTIME_CONFIG}",
                *newer_apiserver_args(version),
                *extra_args,
            ],
            log=workdir / "kube-apiserver.log",
        )
        processes.append(apiserver)
        await wait_http_ok(f"{url}/readyz", process=apiserver, timeout=timeout, token=token, ca_file=cert)
        kubeconfig = write_kubeconfig(workdir / "kubeconfig", url, token=token, ca_file=cert, name="kube-apiserver")
        yield KubeApiserver(url, kubeconfig, token, cert, version, etcd, apiserver, processes)
    finally:
        for process in reversed(processes):
            await process.stop()


@dataclass
class KubeComponents:
    """Running kube-scheduler and/or kube-controller-manager, by name."""

    processes: dict[str, Process]
    ports: dict[str, int]

    def check_alive(self) -> None:
        """Raises `UpstreamFailed` with the log's tail when one of them exited."""
        for process in self.processes.values():
            if not process.alive:
                raise UpstreamFailed(f"{process.name} exited {process.process.returncode}:\n{process.tail()}")


def scheduler_config(kubeconfig: Path, *, content_type: str | None) -> dict[str, object]:
    """A KubeSchedulerConfiguration of defaults but the kubeconfig (and the content type when asked)."""
    connection: dict[str, object] = {"kubeconfig": str(kubeconfig)}
    if content_type is not None:
        connection["contentType"] = content_type
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": connection,
    }


@contextlib.asynccontextmanager
async def kube_components(
    kubeconfig: Path,
    workdir: Path,
    *,
    version: str = DEFAULT_KUBE_VERSION,
    content_type: str | None = None,
    which: Sequence[str] = ("kube-scheduler", "kube-controller-manager"),
    extra_args: dict[str, Sequence[str]] | None = None,
    timeout: float = 120.0,
) -> AsyncIterator[KubeComponents]:
    """kube-scheduler and kube-controller-manager against ``kubeconfig``; see the module docstring.

    Returns once each serves ``/healthz`` on its own port (it has started;
    leader election and informer sync go on in the background).
    """
    binaries = {name: require(name, version) for name in which}
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    processes: dict[str, Process] = {}
    ports: dict[str, int] = {}
    try:
        for name, binary in binaries.items():
            port = ports[name] = free_port()
            argv = [str(binary), f"--feature-gates={DRA_GATE}", "--bind-address=127.0.0.1", f"--secure-port={port}"]
            if name == "kube-scheduler" and content_type is not None:
                config = workdir / "kube-scheduler.yaml"
                config.write_text(yaml.safe_dump(scheduler_config(kubeconfig, content_type=content_type)))
                argv.append(f"--config={config}")
            else:
                argv.append(f"--kubeconfig={kubeconfig}")
                if content_type is not None:
                    argv.append(f"--kube-api-content-type={content_type}")
            argv += list((extra_args or {}).get(name, ()))
            processes[name] = await start_process(name, argv, log=workdir / f"{name}.log")
        for name, process in processes.items():
            await wait_http_ok(f"https://127.0.0.1:{ports[name]}/healthz", process=process, timeout=timeout)
        yield KubeComponents(processes, ports)
    finally:
        for process in reversed(list(processes.values())):
            await process.stop()
