"""The real kubectl against a running stack, on the embedded log and on Kafka."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from tests.e2e.conftest import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def ns_manifest(name: str) -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n"


def pod_manifest(ns: str, name: str = "web", image: str = "nginx:1.27") -> str:
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {ns}
  labels: {{app: web}}
spec:
  containers:
  - name: c
    image: {image}
    env:
    - {{name: A, value: "1"}}
"""


TEMPLATE = """apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaimTemplate
metadata:
  name: gpu
  namespace: {ns}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.example.com
"""


async def fresh_namespace(stack: Stack) -> str:
    ns = f"t-{uuid.uuid4().hex[:8]}"
    await stack.kubectl("apply", "-f", "-", stdin=ns_manifest(ns))
    return ns


async def test_apply_create_unchanged_configured_and_server_side(stack: Stack) -> None:
    ns = f"t-{uuid.uuid4().hex[:8]}"
    k = stack.kubectl
    assert (await k("apply", "-f", "-", stdin=ns_manifest(ns))).out.strip() == f"namespace/{ns} created"
    assert (await k("apply", "-f", "-", stdin=ns_manifest(ns))).out.strip() == f"namespace/{ns} unchanged"
    assert (await k("apply", "-f", "-", stdin=pod_manifest(ns))).out.strip() == "pod/web created"
    assert (await k("apply", "-f", "-", stdin=pod_manifest(ns))).out.strip() == "pod/web unchanged"
    changed = pod_manifest(ns).replace("labels: {app: web}", "labels: {app: web, tier: front}")
    assert (await k("apply", "-f", "-", stdin=changed)).out.strip() == "pod/web configured"
    out = (await k("get", "pod", "web", "-n", ns, "-o", "jsonpath={.metadata.labels.tier}")).out
    assert out == "front"
    tmpl = TEMPLATE.format(ns=ns)
    assert (await k("apply", "--server-side", "-f", "-", stdin=tmpl)).out.strip() == (
        "resourceclaimtemplate.resource.k8s.io/gpu serverside-applied"
    )
    managers = json.loads(
        (await k("get", "resourceclaimtemplate", "gpu", "-n", ns, "-o", "json", "--show-managed-fields")).out
    )
    assert [m["manager"] for m in managers["metadata"]["managedFields"]] == ["kubectl"]
    assert managers["metadata"]["managedFields"][0]["operation"] == "Apply"


async def test_get_formats(stack: Stack) -> None:
    ns = await fresh_namespace(stack)
    k = stack.kubectl
    await k("apply", "-f", "-", stdin=pod_manifest(ns))
    table = (await k("get", "pods", "-n", ns)).out.splitlines()
    assert table[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert table[1].split()[:4] == ["web", "0/1", "Pending", "0"]
    wide = (await k("get", "pods", "-n", ns, "-o", "wide")).out.splitlines()
    assert wide[0].split()[5:7] == ["IP", "NODE"]
    as_yaml = (await k("get", "pod", "web", "-n", ns, "-o", "yaml")).out
    assert "kind: Pod" in as_yaml and f"namespace: {ns}" in as_yaml
    as_json = json.loads((await k("get", "pod", "web", "-n", ns, "-o", "json")).out)
    assert int(as_json["metadata"]["resourceVersion"]) > 0
    assert (await k("get", "pods", "-n", ns, "-o", "name")).out.strip() == "pod/web"
    image = (await k("get", "pod", "web", "-n", ns, "-o", "jsonpath={.spec.containers[0].image}")).out
    assert image == "nginx:1.27"


async def test_get_watch_sees_a_later_update(stack: Stack) -> None:
    ns = await fresh_namespace(stack)
    k = stack.kubectl
    await k("apply", "-f", "-", stdin=pod_manifest(ns))
    await k("label", "pod", "web", "-n", ns, "stage=one")
    proc = await k.spawn("get", "pod", "web", "-n", ns, "-w", "-o", 'jsonpath={.metadata.labels.stage}{"\\n"}')
    try:
        assert proc.stdout is not None
        # kubectl prints the pod as it lists it, then watches from that list's resourceVersion:
        # once "one" is printed, a later change can only arrive through the watch.
        async with asyncio.timeout(30):
            first = (await proc.stdout.readline()).decode().strip()
        assert first == "one"
        await k("label", "pod", "web", "-n", ns, "stage=two", "--overwrite")
        async with asyncio.timeout(30):
            second = (await proc.stdout.readline()).decode().strip()
        assert second == "two"
    finally:
        proc.kill()
        await proc.wait()


async def test_describe_pod_shows_events(stack: Stack) -> None:
    ns = await fresh_namespace(stack)
    k = stack.kubectl
    await k("apply", "-f", "-", stdin=pod_manifest(ns))
    uid = (await k("get", "pod", "web", "-n", ns, "-o", "jsonpath={.metadata.uid}")).out
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.1", "namespace": ns},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": "web", "uid": uid, "apiVersion": "v1"},
        "reason": "FailedScheduling",
        "message": "0/2 nodes are available: 2 Insufficient cpu.",
        "type": "Warning",
        "source": {"component": "default-scheduler"},
        "count": 1,
        "firstTimestamp": "2026-11-29T10:00:00Z",
        "lastTimestamp": "2026-11-29T10:00:00Z",
    }
    await k("create", "-f", "-", stdin=json.dumps(event))
    out = (await k("describe", "pod", "web", "-n", ns)).out
    assert "Events:" in out
    assert "FailedScheduling" in out and "0/2 nodes are available: 2 Insufficient cpu." in out


async def test_patch_label_annotate_wait_delete(stack: Stack) -> None:
    ns = await fresh_namespace(stack)
    k = stack.kubectl
    await k("apply", "-f", "-", stdin=pod_manifest(ns))
    await k("patch", "pod", "web", "-n", ns, "--type", "merge", "-p", '{"metadata":{"labels":{"m":"1"}}}')
    await k(
        "patch",
        "pod",
        "web",
        "-n",
        ns,
        "--type",
        "json",
        "-p",
        '[{"op":"add","path":"/metadata/labels/j","value":"2"}]',
    )
    await k(
        "patch",
        "pod",
        "web",
        "-n",
        ns,
        "--type",
        "strategic",
        "-p",
        '{"spec":{"containers":[{"name":"c","image":"nginx:1.28"}]}}',
    )
    await k("label", "pod", "web", "-n", ns, "l=3")
    await k("annotate", "pod", "web", "-n", ns, "note=hello")
    pod = json.loads((await k("get", "pod", "web", "-n", ns, "-o", "json")).out)
    assert {"m": "1", "j": "2", "l": "3"}.items() <= pod["metadata"]["labels"].items()
    assert pod["metadata"]["annotations"]["note"] == "hello"
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.28"
    assert pod["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}], "strategic merge kept env"
    await k("wait", "pod/web", "-n", ns, "--for=jsonpath={.metadata.annotations.note}=hello", "--timeout=30s")
    assert (await k("delete", "pod", "web", "-n", ns)).out.strip() == 'pod "web" deleted'
    gone = await k("get", "pod", "web", "-n", ns, ok=False)
    assert gone.code != 0 and 'pods "web" not found' in gone.err


async def test_api_resources_lists_the_dra_kinds(stack: Stack) -> None:
    out = (await stack.kubectl("api-resources", "--api-group=resource.k8s.io", "-o", "name")).out.split()
    assert sorted(out) == sorted(
        f"{r}.resource.k8s.io"
        for r in (
            "deviceclasses",
            "devicetaintrules",
            "podschedulingcontexts",
            "resourceclaims",
            "resourceclaimtemplates",
            "resourceslices",
        )
    )


async def test_create_invalid_claim_prints_kubernetes_invalid_message(stack: Stack) -> None:
    ns = await fresh_namespace(stack)
    bad = f"""apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaim
metadata:
  name: bad
  namespace: {ns}
spec:
  devices:
    requests:
    - name: gpu
"""
    result = await stack.kubectl("create", "-f", "-", stdin=bad, ok=False)
    assert result.code != 0
    assert 'The ResourceClaim "bad" is invalid: spec.devices.requests[0].deviceClassName: Required value' in result.err


async def test_explain_prints_kubernetes_descriptions(stack: Stack) -> None:
    # The descriptions are Kubernetes 1.31's own (the kubernetes-validate schemas); they were empty before.
    spec = (await stack.kubectl("explain", "resourceclaim.spec")).out
    assert "Spec describes what is being requested and how to configure it." in spec
    assert "Devices defines how to request devices." in spec
    # v1 is the preferred version: a request's fields sit under `exactly` there, flat in 1.31's v1alpha3.
    requests = (await stack.kubectl("explain", "resourceclaim.spec.devices.requests")).out
    assert "Requests represent individual requests for distinct devices" in requests
    assert "exactly" in requests and "firstAvailable" in requests
    requests = (
        await stack.kubectl("explain", "resourceclaim.spec.devices.requests", "--api-version=resource.k8s.io/v1alpha3")
    ).out
    assert "deviceClassName" in requests and "DeviceClassName references a specific DeviceClass" in requests
    pod = (await stack.kubectl("explain", "pods.spec.containers.ports")).out
    assert "List of ports to expose from the container." in pod
