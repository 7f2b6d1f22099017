"""Unmodified kube-scheduler in the scheduler benchmark (``ops/bench/scheduler.py --scheduler kube|both``).

kube-scheduler reaches draplane over HTTP, through a `draplane apiserver`
(which is also the stack's committer), with what scheduler_perf gives its
scheduler and nothing more:

- a KubeSchedulerConfiguration file whose ``clientConnection`` has QPS 5000
  and burst 5000, as ``mustSetupCluster`` in
  ``test/integration/scheduler_perf/util.go`` sets them (1.31.14 and 1.37.2
  alike), and ``contentType: application/json`` (``--kube-wire protobuf``:
  kube's default, ``application/vnd.kubernetes.protobuf``). Everything else
  is kube's default profile, as scheduler_perf's default component config.
- ``leaderElection.leaderElect: false``: one scheduler per run, so no Lease
  traffic in the measurement (kube's default is on; scheduler_perf starts its
  scheduler without leader election too).
- ``--feature-gates=DynamicResourceAllocation=true`` at 1.31 only (alpha
  there; GA and not settable at 1.37).
- its secure port on a free loopback port, only for ``/readyz`` (its
  ``sched-handler-sync`` check says the informers are synced, as
  ``draplane scheduler`` prints ``scheduler ready``).

The user it writes as is ``system:kube-scheduler`` (a bearer token over
HTTPS, the apiserver's self-signed certificate), which draplane's
authorization table treats as kube's bootstrap policy does.
The pure parts (the config document, the flags, the comparison line) have
unit tests in ``tests/unit/bench/test_bench_kube_scheduler.py``.
"""

from __future__ import annotations

import asyncio
import math
import ssl
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from ops.upstreamkit.build import binary_path
from ops.upstreamkit.versions import KUBE_VERSIONS

VERSIONS = KUBE_VERSIONS  # what ops/upstream builds (1.31.14 first, then 1.37.2)
CLIENT_QPS = 5000.0  # test/integration/scheduler_perf/util.go, mustSetupCluster
CLIENT_BURST = 5000
CONTENT_TYPES = {"json": "application/json", "protobuf": "application/vnd.kubernetes.protobuf"}  # kube's default
USER = "system:kube-scheduler"


def release_of(version: str) -> str:
    """The emulated release a draplane stack needs for this kube-scheduler: ``1.31.14`` → ``1.31``."""
    major, minor, *_ = version.split(".")
    return f"{major}.{minor}"


def binary(version: str) -> tuple[Path | None, str]:
    """kube-scheduler ``version``'s path in ``ops/upstream``'s cache, or None and why it is not there."""
    path, reason = binary_path("kube-scheduler", version)
    return path, reason or ""


def default_version() -> str:
    """The newest kube-scheduler that is built (1.37.2, else 1.31.14)."""
    for version in reversed(VERSIONS):
        if binary(version)[0] is not None:
            return version
    return VERSIONS[0]


def scheduler_config(
    kubeconfig: Path, *, qps: float = CLIENT_QPS, burst: int = CLIENT_BURST, wire: str = "json"
) -> dict[str, Any]:
    """The KubeSchedulerConfiguration (v1, read by 1.31 and 1.37) the benchmark gives kube-scheduler."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {
            "kubeconfig": str(kubeconfig),
            "qps": qps,
            "burst": burst,
            "contentType": CONTENT_TYPES[wire],
        },
        "leaderElection": {"leaderElect": False},
    }


def scheduler_args(version: str, *, config: Path, port: int) -> list[str]:
    """kube-scheduler's flags besides the binary: the config file, DRA's gate where it is one, the port."""
    args = [f"--config={config}", "--bind-address=127.0.0.1", f"--secure-port={port}"]
    if release_of(version) == "1.31":
        args.append("--feature-gates=DynamicResourceAllocation=true")
    return args


def token_file_line(token: str) -> str:
    """The apiserver's ``--token-auth-file`` row (kube's CSV: token,user,uid) for kube-scheduler's user."""
    return f"{token},{USER},{USER}\n"


def write_config(workdir: Path, *, server: str, token: str, ca_file: Path, wire: str = "json") -> Path:
    """The kubeconfig and the KubeSchedulerConfiguration in ``workdir``; returns the configuration's path.

    The server is HTTPS: client-go reads a kubeconfig's credentials only for a
    TLS server (``clientcmd``'s ``ClientConfig``), so over plain HTTP
    kube-scheduler would be anonymous.
    """
    kubeconfig = workdir / "kube-scheduler.kubeconfig"
    cluster = {"server": server, "certificate-authority": str(ca_file)}
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "draplane", "cluster": cluster}],
        "users": [{"name": "kube-scheduler", "user": {"token": token}}],
        "contexts": [{"name": "bench", "context": {"cluster": "draplane", "user": "kube-scheduler"}}],
        "current-context": "bench",
    }
    kubeconfig.write_text(yaml.safe_dump(doc, sort_keys=False))
    config = workdir / "kube-scheduler.yaml"
    config.write_text(yaml.safe_dump(scheduler_config(kubeconfig, wire=wire), sort_keys=False))
    return config


async def wait_ready(port: int, *, timeout: float, alive: asyncio.subprocess.Process) -> None:
    """Until kube-scheduler's ``/readyz`` answers 200 (its informers synced); fails when it exits first."""
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE  # its self-signed serving certificate
    deadline = time.monotonic() + timeout
    last = "no answer"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http:
        while time.monotonic() < deadline:
            if alive.returncode is not None:
                raise RuntimeError(f"kube-scheduler exited with status {alive.returncode} before it was ready")
            try:
                async with http.get(f"https://127.0.0.1:{port}/readyz", ssl=insecure) as r:
                    if r.status == 200:
                        return
                    last = f"{r.status}: {(await r.text()).strip()[-300:]}"
            except (aiohttp.ClientError, TimeoutError) as exc:
                last = type(exc).__name__
            await asyncio.sleep(0.2)  # a readiness poll of another process, not a test's wait
    raise RuntimeError(f"kube-scheduler was not ready in {timeout:.0f} s (/readyz: {last})")


@dataclass(frozen=True)
class Figures:
    """What the comparison line reads from one run's result."""

    pods_per_s: float
    latency_p50_ms: float


def ratio(kube: float, draplane: float) -> float:
    """kube-scheduler's figure over draplane's (NaN when draplane's is zero or missing)."""
    if not draplane or math.isnan(draplane) or math.isnan(kube):
        return math.nan
    return kube / draplane


def comparison(title: str, *, kube: Figures, draplane: Figures, kube_label: str) -> str:
    """One run's ratio line: pods/s of both schedulers and kube-scheduler/draplane, with create→bound p50."""
    r = ratio(kube.pods_per_s, draplane.pods_per_s)
    shown = "n/a" if math.isnan(r) else f"{r:.2f}"
    return (
        f"{title}: {kube_label} / draplane = {shown} "
        f"({kube.pods_per_s:.1f} / {draplane.pods_per_s:.1f} pods/s; "
        f"create→bound p50 {kube.latency_p50_ms:.0f} / {draplane.latency_p50_ms:.0f} ms)"
    )


def label(version: str, *, wire: str = "json") -> str:
    """How the reports name this kube-scheduler and its client settings."""
    shown = "JSON" if wire == "json" else "protobuf"
    return f"kube-scheduler {version} ({shown}, client qps {CLIENT_QPS:g}/burst {CLIENT_BURST}, no leader election)"
