"""docker-compose.yml proven without Docker: its services as local processes, then a GPU demo through kubectl.

The runner (``python -m ops.compose``, what ``ops/compose/run-local`` runs)
starts every draplane service of the compose file — their own commands,
environment, volumes, healthchecks and depends_on conditions — against the
test broker, under a topic prefix of this test. Then, as a user following the
README: three Ready nodes with their ResourceSlices, the DeviceClass,
gpu-test1, both pods Running with claims allocated distinct GPUs on the node
each pod runs on, and the CDI spec in that node's state volume. Ctrl-C stops
everything with clean exits and leaves no process behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.eventually import eventually
from tests.support.kubectl import Kubectl
from tests.support.processes import alive

pytestmark = [pytest.mark.kafka, pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
NODES = ("node-1", "node-2", "node-3")
DRIVER = "gpu.example.com"
READY_TIMEOUT = 150.0
STOP_TIMEOUT = 60.0


@dataclass
class Runner:
    process: asyncio.subprocess.Process
    workdir: Path
    broker: str
    prefix: str
    output: list[str] = field(default_factory=list)
    drain: asyncio.Task[None] | None = None

    def services(self) -> dict[str, Any]:
        status: dict[str, Any] = json.loads((self.workdir / "services.json").read_text())
        return status

    def text(self) -> str:
        return "\n".join(self.output)

    def logs(self) -> str:
        parts = []
        for log in sorted((self.workdir / "logs").glob("*.log")):
            parts.append(f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-20:]))
        return "\n".join(parts)


async def read_until_ready(runner: Runner) -> None:
    assert runner.process.stdout is not None
    while True:
        raw = await runner.process.stdout.readline()
        if not raw:
            await runner.process.wait()
            pytest.fail(f"run-local exited ({runner.process.returncode}):\n{runner.text()}\n{runner.logs()}")
        line = raw.decode().rstrip()
        runner.output.append(line)
        if line.startswith("run-local: ready"):
            return


async def drain(runner: Runner) -> None:
    assert runner.process.stdout is not None
    async for raw in runner.process.stdout:
        runner.output.append(raw.decode().rstrip())


def processes_mentioning(text: str) -> list[int]:
    """Pids whose command line holds ``text`` (the test's unique topic prefix)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


async def stop(runner: Runner) -> int:
    if runner.process.returncode is None:
        runner.process.send_signal(signal.SIGINT)  # Ctrl-C
        try:
            await asyncio.wait_for(runner.process.wait(), STOP_TIMEOUT)
        except TimeoutError:
            runner.process.kill()
            await runner.process.wait()
    if runner.drain is not None:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(runner.drain, 10)
    return runner.process.returncode if runner.process.returncode is not None else -1


@pytest.fixture
async def compose_stack(kafka_bootstrap: str) -> AsyncIterator[Runner]:
    # A short path: the drivers' plugin sockets live under it (unix socket paths stop at 107 bytes).
    workdir = Path(tempfile.mkdtemp(prefix="dc-"))
    prefix = f"compose{uuid.uuid4().hex[:10]}-"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ops.compose",
        "--kafka",
        kafka_bootstrap,
        "--prefix",
        prefix,
        "--free-ports",
        "--workdir",
        str(workdir),
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    runner = Runner(process, workdir, kafka_bootstrap, prefix)
    try:
        yield runner
    finally:
        await stop(runner)
        for pid in processes_mentioning(prefix):  # only after a failure: our own leftovers
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)


async def slices_by_node(kubectl: Kubectl) -> dict[str, int]:
    result = await kubectl("get", "resourceslices", "-o", "json")
    found: dict[str, int] = {}
    for item in json.loads(result.out)["items"]:
        spec = item["spec"]
        if spec["driver"] == DRIVER:
            found[spec["nodeName"]] = found.get(spec["nodeName"], 0) + len(spec.get("devices") or [])
    return found


async def test_gpu_test1_on_the_compose_stack_run_as_local_processes(compose_stack: Runner) -> None:
    runner = compose_stack
    timings: dict[str, float] = {}
    began = time.monotonic()
    runner_ready = asyncio.wait_for(read_until_ready(runner), READY_TIMEOUT)
    try:
        await runner_ready
    except TimeoutError:
        pytest.fail(f"the stack was not up in {READY_TIMEOUT:g}s:\n{runner.text()}\n{runner.logs()}")
    runner.drain = asyncio.create_task(drain(runner))
    timings["services up (healthchecks pass)"] = time.monotonic() - began

    status = runner.services()
    assert set(status) == {
        "topic-init",
        "apiserver",
        "scheduler",
        "controller-manager",
        *(f"{role}-{i}" for role in ("driver", "nodeagent") for i in (1, 2, 3)),
    }
    assert status["topic-init"]["returncode"] == 0
    for name, service in status.items():
        argv = service["argv"]
        assert argv[0].endswith("/draplane"), name
        bus = argv[argv.index("--bus") + 1]
        assert bus == f"kafka://{runner.broker}?prefix={runner.prefix}", f"{name}: kafka://kafka:9092, localized"
        if name != "topic-init":
            assert service["running"] and service["health"] == "healthy", name

    kubectl = Kubectl(runner.workdir / "kubeconfig")
    await kubectl("wait", "--for=condition=Ready", *(f"node/{n}" for n in NODES), "--timeout=60s", timeout=90)
    nodes = json.loads((await kubectl("get", "nodes", "-o", "json")).out)["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == list(NODES)
    devices = await eventually(
        lambda: slices_by_node(kubectl),
        until=lambda found: set(found) >= set(NODES),
        timeout=60,
        interval=0.5,
        what="a ResourceSlice of every node",
    )
    assert devices == dict.fromkeys(NODES, 8), "each driver publishes its node's 8 simulated GPUs"
    timings["3 nodes Ready with ResourceSlices"] = time.monotonic() - began

    has_class = await kubectl("get", "deviceclass", DRIVER, ok=False)
    if has_class.code != 0:
        assert "NotFound" in has_class.err, has_class.err
        await kubectl("apply", "-f", str(EXAMPLES / "deviceclass.yaml"))
    await kubectl("apply", "-f", str(EXAMPLES / "gpu-test1.yaml"))
    await kubectl(
        "wait",
        "--for=jsonpath={.status.phase}=Running",
        "pod/pod0",
        "pod/pod1",
        "-n",
        "gpu-test1",
        "--timeout=90s",
        timeout=120,
    )
    await kubectl(
        "wait",
        f"--for=jsonpath={{.status.allocation.devices.results[0].driver}}={DRIVER}",
        "resourceclaims",
        "--all",
        "-n",
        "gpu-test1",
        "--timeout=30s",
        timeout=60,
    )
    timings["gpu-test1 pods Running"] = time.monotonic() - began

    pods = {
        p["metadata"]["name"]: p
        for p in json.loads((await kubectl("get", "pods", "-n", "gpu-test1", "-o", "json")).out)["items"]
    }
    claims = json.loads((await kubectl("get", "resourceclaims", "-n", "gpu-test1", "-o", "json")).out)["items"]
    assert sorted(pods) == ["pod0", "pod1"]
    assert len(claims) == 2, "one claim generated from the template per pod"
    taken: list[tuple[str, str]] = []
    for claim in claims:
        (owner,) = claim["status"]["reservedFor"]
        pod = pods[owner["name"]]
        assert owner["uid"] == pod["metadata"]["uid"]
        assert pod["status"]["resourceClaimStatuses"] == [
            {"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}
        ]
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        node = pod["spec"]["nodeName"]
        assert result["driver"] == DRIVER and result["pool"] == node, "a GPU of the node the pod runs on"
        taken.append((result["pool"], result["device"]))
        uid = claim["metadata"]["uid"]
        (container,) = pod["status"]["containerStatuses"]
        ids = [r["resourceID"] for e in container.get("allocatedResourcesStatus") or () for r in e["resources"]]
        assert f"k8s.{DRIVER}/gpu={uid}-{result['device']}" in ids
        # Prepared by that node's driver, in the node's state volume shared with its node agent.
        number = node.rsplit("-", 1)[1]
        spec = runner.workdir / "volumes" / f"node-{number}" / "node" / "cdi" / f"k8s.{DRIVER}-gpu_{uid}.yaml"
        assert spec.exists(), spec
    assert len(set(taken)) == 2, f"distinct GPUs: {taken}"

    status = runner.services()
    assert all(s["restarts"] == 0 for s in status.values()), {n: s["restarts"] for n, s in status.items()}

    stopping = time.monotonic()
    code = await stop(runner)
    timings["clean stop"] = time.monotonic() - stopping
    assert code == 0, runner.text()
    for name in status:
        if name != "topic-init":
            assert f"run-local: {name} stopped (0)" in runner.output, f"{name} did not exit cleanly:\n{runner.text()}"
    pids = [s["pid"] for s in runner.services().values()]
    assert not [p for p in pids if alive(p)], "a service process outlived the runner"
    assert processes_mentioning(runner.prefix) == [], "a stray process (a probe?) outlived the runner"
    print("\ncompose stack timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items()))
