"""The real kubectl against the HTTP layer (in-memory backend): does it speak kubectl's dialect?

Each test serves the app on a random loopback port and runs ``kubectl`` with
a kubeconfig pointing at it. ``/usr/bin/kubectl`` on these machines is a
dispatcher that picks the client matching the server's minor version (1.31
for draplane); the 1.32 binary next to it is run directly as well.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.api.types.registry import by_resource
from services.apiserver.kubeconfig import write_kubeconfig

DISPATCHER = "/usr/bin/kubectl"
KUBECTL_132 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32"
BINARIES = [b for b in (DISPATCHER, KUBECTL_132) if os.path.exists(b)]

pytestmark = pytest.mark.skipif(not BINARIES, reason="kubectl is not installed")

NS = """apiVersion: v1
kind: Namespace
metadata:
  name: demo
"""
TEMPLATE = """apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaimTemplate
metadata:
  name: gpu
  namespace: demo
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.example.com
"""
POD = """apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: demo
  labels: {app: web}
spec:
  containers:
  - name: c
    image: nginx
    env:
    - {name: A, value: "1"}
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpu
"""


class Kubectl:
    def __init__(self, binary: str, kubeconfig: Path, home: Path) -> None:
        self.binary = binary
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(home)}

    async def __call__(
        self, *args: str, stdin: str | None = None, ok: bool = True, timeout: float = 60
    ) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            self.binary,
            *args,
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), timeout)
        code = proc.returncode or 0
        if ok and code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({code}): {err.decode()}")
        return code, out.decode(), err.decode()

    async def spawn(self, *args: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            self.binary, *args, env=self.env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )


@pytest.fixture(params=BINARIES, ids=lambda b: os.path.basename(b))
async def kubectl(request: Any, client: Any, tmp_path: Path) -> Kubectl:
    server = f"http://127.0.0.1:{client.server.port}"
    config = write_kubeconfig(tmp_path / "kubeconfig", server)
    home = tmp_path / "home"
    home.mkdir()
    return Kubectl(request.param, config, home)


async def test_discovery_and_api_resources(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl("api-resources")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["resourceclaims"][1:] == ["resource.k8s.io/v1", "true", "ResourceClaim"]
    assert rows["pods"][1:] == ["po", "v1", "true", "Pod"]
    assert rows["resourceslices"][1:] == ["resource.k8s.io/v1", "false", "ResourceSlice"]
    _, out, _ = await kubectl("version", "-o", "json")
    assert '"gitVersion": "v1.37.0-draplane"' in out


async def test_apply_flow(kubectl: Kubectl, backend: Any, tmp_path: Path) -> None:
    manifest = tmp_path / "all.yaml"
    manifest.write_text(NS + "---\n" + TEMPLATE + "---\n" + POD)
    _, out, err = await kubectl("apply", "-f", str(manifest))
    assert out.splitlines() == [
        "namespace/demo created",
        "resourceclaimtemplate.resource.k8s.io/gpu created",
        "pod/web created",
    ], err
    creates = [r for r in backend.requests if r.op == "create"]
    # OpenAPI v3 told kubectl that the server validates fields: it asks for Strict.
    assert all(r.options["fieldValidation"] == "Strict" for r in creates)
    assert all(r.options["fieldManager"] == "kubectl-client-side-apply" for r in creates)
    _, out, _ = await kubectl("apply", "-f", str(manifest))
    assert out.splitlines()[-1] == "pod/web unchanged"
    manifest.write_text(POD.replace('value: "1"', 'value: "2"'))
    _, out, err = await kubectl("apply", "-f", str(manifest))
    assert out.strip() == "pod/web configured", err
    assert "warning" not in err.lower()
    patch = backend.requests[-1]
    assert patch.op == "patch" and patch.patch_type == "strategic"
    assert patch.patch["spec"]["containers"][0]["env"] == [{"name": "A", "value": "2"}]
    # a list with a merge key is patched by key, as kubectl computes from the OpenAPI markers
    assert "$setElementOrder/containers" in patch.patch["spec"]


async def test_apply_unknown_field_is_refused_by_server(kubectl: Kubectl, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        POD.replace("namespace: demo", "namespace: default").replace(
            "    image: nginx\n", "    image: nginx\n    imagee: typo\n"
        )
    )
    code, _, err = await kubectl("apply", "-f", str(bad), ok=False)
    assert code != 0
    assert 'strict decoding error: unknown field "spec.containers[0].imagee"' in err


async def test_get_output_formats(kubectl: Kubectl, backend: Any) -> None:
    pods = by_resource("", "pods")
    backend.seed(
        pods,
        {
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "n1"},
            "status": {
                "phase": "Running",
                "podIPs": [{"ip": "10.1.2.3"}],
                "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "state": {"running": {}}}],
            },
        },
    )
    _, out, _ = await kubectl("get", "pods")
    header, row = out.splitlines()
    assert header.split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert row.split()[:4] == ["web", "1/1", "Running", "0"]
    _, out, _ = await kubectl("get", "pods", "-o", "wide")
    header, row = out.splitlines()
    assert "NOMINATED NODE" in header and "READINESS GATES" in header
    assert row.split()[5:7] == ["10.1.2.3", "n1"]
    _, out, _ = await kubectl("get", "pod", "web", "-o", "yaml")
    doc = yaml.safe_load(out)
    assert doc["kind"] == "Pod" and doc["spec"]["nodeName"] == "n1"
    _, out, _ = await kubectl("get", "pods", "-o", "name")
    assert out.strip() == "pod/web"
    _, out, _ = await kubectl("get", "pod", "web", "-o", "jsonpath={.status.podIPs[0].ip}")
    assert out == "10.1.2.3"
    _, out, _ = await kubectl("get", "pods", "-l", "app=web", "-A")
    assert out.splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]
    code, _, err = await kubectl("get", "pods", "--field-selector", "spec.bogus=1", ok=False)
    assert code != 0 and "field label not supported: spec.bogus" in err


async def test_dra_tables(kubectl: Kubectl, backend: Any) -> None:
    claims = by_resource("resource.k8s.io", "resourceclaims")
    slices = by_resource("resource.k8s.io", "resourceslices")
    backend.seed(claims, {"metadata": {"name": "c1", "namespace": "default"}})
    backend.seed(
        claims,
        {
            "metadata": {"name": "c2", "namespace": "default"},
            "status": {"allocation": {"devices": {}}, "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]},
        },
    )
    backend.seed(
        slices,
        {
            "metadata": {"name": "n1-gpu"},
            "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1"}},
        },
    )
    _, out, _ = await kubectl("get", "resourceclaims")
    lines = [line.split() for line in out.splitlines()]
    assert lines[0] == ["NAME", "STATE", "AGE"]
    assert [line[:2] for line in lines[1:]] == [["c1", "pending"], ["c2", "allocated,reserved"]]
    _, out, _ = await kubectl("get", "resourceslices")
    lines = [line.split() for line in out.splitlines()]
    assert lines[0] == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert lines[1][:4] == ["n1-gpu", "n1", "gpu.example.com", "n1"]


async def test_watch_patch_label_wait_delete(kubectl: Kubectl, backend: Any) -> None:
    pods = by_resource("", "pods")
    backend.seed(
        pods,
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    )
    watcher = await kubectl.spawn("get", "pods", "-w", "--request-timeout=20s")
    assert watcher.stdout is not None
    header = await asyncio.wait_for(watcher.stdout.readline(), 20)
    assert header.split()[:2] == [b"NAME", b"READY"]
    first = await asyncio.wait_for(watcher.stdout.readline(), 20)
    assert first.split()[0] == b"web"
    await kubectl("label", "pod", "web", "tier=front")
    update = await asyncio.wait_for(watcher.stdout.readline(), 20)
    assert update.split()[0] == b"web"
    watcher.kill()
    await watcher.wait()
    await kubectl("annotate", "pod", "web", "note=hi")
    await kubectl("patch", "pod", "web", "--type", "merge", "-p", '{"metadata":{"labels":{"m":"1"}}}')
    await kubectl(
        "patch", "pod", "web", "--type", "json", "-p", '[{"op":"add","path":"/metadata/labels/j","value":"2"}]'
    )
    await kubectl("patch", "pod", "web", "-p", '{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}')
    assert backend.requests[-1].patch_type == "strategic"
    obj = await backend.get(pods, "default", "web")
    assert obj["metadata"]["labels"] == {"tier": "front", "m": "1", "j": "2"}
    assert obj["metadata"]["annotations"] == {"note": "hi"}
    assert obj["spec"]["containers"][0]["image"] == "nginx:2"

    opened = backend.watches_opened

    async def later() -> None:
        await backend.wait_for_watches(opened + 1, timeout=20)  # kubectl wait is watching: the change comes through it
        await kubectl(
            "patch", "pod", "web", "--subresource=status", "--type", "merge", "-p", '{"status":{"phase":"Running"}}'
        )

    task = asyncio.create_task(later())
    _, out, _ = await kubectl("wait", "--for=jsonpath={.status.phase}=Running", "pod/web", "--timeout=20s")
    await task
    assert "condition met" in out
    _, out, _ = await kubectl("delete", "pod", "web", "--wait=false")
    assert out.strip() == 'pod "web" deleted'
    code, _, err = await kubectl("get", "pod", "web", ok=False)
    assert code != 0 and 'pods "web" not found' in err


async def test_describe_shows_events(kubectl: Kubectl, backend: Any) -> None:
    pods, events = by_resource("", "pods"), by_resource("", "events")
    pod = backend.seed(
        pods,
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    )
    backend.seed(
        events,
        {
            "metadata": {"name": "web.1", "namespace": "default"},
            "type": "Warning",
            "reason": "FailedScheduling",
            "message": "0/1 nodes are available",
            "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "uid": pod["metadata"]["uid"]},
            "source": {"component": "default-scheduler"},
            "count": 1,
            "firstTimestamp": pod["metadata"]["creationTimestamp"],
            "lastTimestamp": pod["metadata"]["creationTimestamp"],
        },
    )
    _, out, _ = await kubectl("describe", "pod", "web")
    assert "FailedScheduling" in out and "0/1 nodes are available" in out
    _, out, _ = await kubectl("get", "events")
    assert out.splitlines()[0].split()[:4] == ["LAST", "SEEN", "TYPE", "REASON"]


async def test_server_side_apply_and_explain(kubectl: Kubectl, backend: Any, tmp_path: Path) -> None:
    manifest = tmp_path / "t.yaml"
    manifest.write_text(TEMPLATE.replace("namespace: demo", "namespace: default"))
    _, out, _ = await kubectl("apply", "--server-side", "-f", str(manifest))
    assert "serverside-applied" in out
    req = backend.requests[-1]
    assert req.patch_type == "apply" and req.options["fieldManager"] == "kubectl" and req.options["force"] is False
    if shutil.which("true"):
        _, out, _ = await kubectl("explain", "resourceclaims.spec.devices")
        assert "requests" in out
