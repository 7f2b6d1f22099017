"""kubectl's commands that reach into a node, and ``cluster-info``, against a running stack.

``logs``, ``exec``, ``attach`` and ``port-forward`` go through the pod's
subresources, which kube-apiserver proxies to the kubelet. draplane's nodes
are simulated, so these answer 400 with a message saying so, and kubectl
prints it (for a missing pod: the pod's 404, as before). ``cluster-info``
lists ``services`` in ``kube-system`` first (seen with ``-v=8``: ``GET
/api/v1/namespaces/kube-system/services?labelSelector=kubernetes.io%2Fcluster-service%3Dtrue``),
which draplane serves empty.
"""

from __future__ import annotations

import uuid

import pytest

from tests.e2e.conftest import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

SIMULATED = "draplane's nodes are simulated and run no containers"


async def running_pod(stack: Stack) -> tuple[str, str]:
    """A namespace and a pod bound to node-1 and reported Running (as its node agent would)."""
    ns = f"t-{uuid.uuid4().hex[:8]}"
    k = stack.kubectl
    await k("create", "namespace", ns)
    pod = f"""apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: {ns}}}
spec:
  nodeName: node-1
  containers: [{{name: ctr0, image: busybox:1.36}}]
"""
    await k("apply", "-f", "-", stdin=pod)
    await k(
        "patch", "pod", "web", "-n", ns, "--subresource=status", "--type=merge", "-p", '{"status":{"phase":"Running"}}'
    )
    return ns, "web"


async def test_logs_exec_attach_and_port_forward_say_the_nodes_are_simulated(stack: Stack) -> None:
    ns, pod = await running_pod(stack)
    k = stack.kubectl
    never_ran = f"{SIMULATED}: container ctr0 of pod {pod} on node node-1 never ran"

    logs = await k("logs", "-n", ns, pod, ok=False)
    assert (logs.code, logs.out, logs.err) == (
        1,
        "",
        f"Error from server (BadRequest): {never_ran}, so it has no logs\n",
    )

    exec_ = await k("exec", "-n", ns, pod, "--", "nvidia-smi", "-L", ok=False)
    assert exec_.code == 1 and exec_.out == ""
    assert exec_.err.strip().splitlines()[-1] == (
        f"Error from server (BadRequest): {never_ran}, so nothing can be executed in it"
    )

    attach = await k("attach", "-n", ns, pod, ok=False)
    assert attach.code == 1
    assert f"{never_ran}, so there is nothing to attach to" in attach.err

    forward = await k("port-forward", "-n", ns, f"pod/{pod}", "0:80", ok=False)
    assert forward.code == 1
    assert forward.err.strip().splitlines()[-1] == (
        f"error: error upgrading connection: {SIMULATED}: pod {pod} on node node-1 runs nothing, "
        "so there is no port to forward to"
    )


async def test_logs_of_a_missing_pod_are_its_404(stack: Stack) -> None:
    ns = f"t-{uuid.uuid4().hex[:8]}"
    await stack.kubectl("create", "namespace", ns)
    logs = await stack.kubectl("logs", "-n", ns, "nope", ok=False)
    assert (logs.code, logs.err) == (
        1,
        f'error: error from server (NotFound): pods "nope" not found in namespace "{ns}"\n',
    )


async def test_cluster_info_prints_the_control_plane(stack: Stack) -> None:
    info = await stack.kubectl("cluster-info", ok=False)
    assert (info.code, info.err) == (0, "")
    lines = [line for line in info.out.splitlines() if line.strip()]
    # kubectl colours the line; the words and the address are what a user reads.
    assert "Kubernetes control plane" in lines[0] and stack.url in lines[0], lines
    assert lines[-1] == "To further debug and diagnose cluster problems, use 'kubectl cluster-info dump'."
    services = await stack.kubectl("get", "services", "-A")
    assert services.out == "" and "No resources found" in services.err
