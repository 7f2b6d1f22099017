"""pods/log, exec, attach, portforward and the empty ``services``: kube-apiserver's checks, then why nothing streams.

The checks, their order and their wording are kube-apiserver's
(``pkg/registry/core/pod/strategy.go``: ``validateContainer``, ``LogLocation``,
``streamLocation``, ``PortForwardLocation``): the pod must exist (404), a named
container must be the pod's and an unnamed one must be the only container
(400), and a pod without a node has an empty log (200) or nothing to connect
to (400 ``does not have a host assigned``). Where kube-apiserver would proxy to
the kubelet, draplane says its nodes are simulated (400).
"""

from __future__ import annotations

from typing import Any

import pytest

from services.api.types.registry import by_resource
from services.apiserver.http.connect import SIMULATED

PODS_RT = by_resource("", "pods")
BASE = "/api/v1/namespaces/ns/pods"
NEVER_RAN = f"{SIMULATED}: container ctr0 of pod running on node node-1 never ran"


def seed(backend: Any, name: str, *, node: str = "", containers: tuple[str, ...] = ("ctr0",), init: str = "") -> None:
    spec: dict[str, Any] = {"containers": [{"name": c, "image": "busybox"} for c in containers], "nodeName": node}
    if init:
        spec["initContainers"] = [{"name": init, "image": "busybox"}]
    backend.seed(PODS_RT, {"metadata": {"name": name, "namespace": "ns"}, "spec": spec})


@pytest.mark.parametrize(
    ("method", "path", "code", "message"),
    [
        # On a node: where kube-apiserver proxies to the kubelet.
        ("GET", "running/log", 400, f"{NEVER_RAN}, so it has no logs"),
        ("GET", "running/log?container=ctr0&follow=true", 400, f"{NEVER_RAN}, so it has no logs"),
        ("POST", "running/exec?command=ls&stdout=1", 400, f"{NEVER_RAN}, so nothing can be executed in it"),
        ("GET", "running/exec?command=ls&container=ctr0", 400, f"{NEVER_RAN}, so nothing can be executed in it"),
        ("POST", "running/attach?stdout=1", 400, f"{NEVER_RAN}, so there is nothing to attach to"),
        (
            "POST",
            "running/portforward?ports=80",
            400,
            f"{SIMULATED}: pod running on node node-1 runs nothing, so there is no port to forward to",
        ),
        # kube-apiserver's own checks come first.
        ("GET", "running/log?container=nope", 400, "container nope is not valid for pod running"),
        ("POST", "running/exec?container=nope", 400, "container nope is not valid for pod running"),
        ("GET", "two/log", 400, "a container name must be specified for pod two, choose one of: [setup a b]"),
        (
            "GET",
            "two/log?container=setup",
            400,
            f"{SIMULATED}: container setup of pod two on node node-1 never ran, so it has no logs",
        ),
        ("POST", "pending/exec?command=ls", 400, "pod pending does not have a host assigned"),
        ("POST", "pending/attach", 400, "pod pending does not have a host assigned"),
        ("POST", "pending/portforward?ports=80", 400, "pod pending does not have a host assigned"),
        ("GET", "missing/log", 404, 'pods "missing" not found'),
        ("POST", "missing/exec", 404, 'pods "missing" not found'),
        ("GET", "missing/portforward", 404, 'pods "missing" not found'),
        # Methods kube-apiserver does not register for these subresources.
        ("POST", "running/log", 405, "the server does not allow this method on the requested resource"),
        ("DELETE", "running/exec", 405, "the server does not allow this method on the requested resource"),
    ],
)
async def test_connect_subresources(client: Any, backend: Any, method: str, path: str, code: int, message: str) -> None:
    seed(backend, "running", node="node-1")
    seed(backend, "two", node="node-1", containers=("a", "b"), init="setup")
    seed(backend, "pending")
    r = await client.request(method, f"{BASE}/{path}")
    status = await r.json()
    assert (r.status, status["kind"], status["code"], status["message"]) == (code, "Status", code, message)
    assert status["reason"] == {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed"}[code]


async def test_the_log_of_a_pod_without_a_node_is_empty(client: Any, backend: Any) -> None:
    """kube-apiserver's LogLocation: "If pod has not been assigned a host, return an empty location"."""
    seed(backend, "pending")
    r = await client.get(f"{BASE}/pending/log")
    assert r.status == 200 and await r.read() == b""


async def test_services_list_empty_and_have_no_deletecollection(client: Any, backend: Any) -> None:
    """kubectl cluster-info's list of cluster services answers an empty list; Services are stored now
    (docs/decisions/upstream-kinds.md) but, as in kube-apiserver, have no deletecollection."""
    r = await client.get("/api/v1/namespaces/kube-system/services?labelSelector=kubernetes.io%2Fcluster-service%3Dtrue")
    assert r.status == 200
    assert await r.json() == {
        "kind": "ServiceList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(backend.rv)},
        "items": [],
    }
    r = await client.get("/api/v1/namespaces/default/services/kubernetes")
    assert r.status == 404 and (await r.json())["message"] == 'services "kubernetes" not found'
    r = await client.request("DELETE", "/api/v1/namespaces/default/services", data=b"{}")
    assert (r.status, (await r.json())["reason"]) == (405, "MethodNotAllowed")
