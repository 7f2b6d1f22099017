"""``pods/log``, ``pods/exec``, ``pods/attach``, ``pods/portforward`` on nodes that run nothing.

kube-apiserver checks such a request against the pod and then proxies it to
the kubelet of the pod's node (``pkg/registry/core/pod/strategy.go``:
``LogLocation``, ``streamLocation``, ``PortForwardLocation``). draplane's nodes
are simulated: no kubelet, no container behind a Running pod. So the checks
are kube-apiserver's, in its order and words (the pod exists — else the pod's
404; the container is the pod's; the pod has a node), and where it would
proxy, draplane answers with a Status that says why nothing can come back.

The code is 400 BadRequest: what kube-apiserver answers for a pod it cannot
stream from (``pod X does not have a host assigned``, ``container X is not
valid for pod Y``, and the kubelet's ``container … is waiting to start``). A
5xx would be wrong twice: nothing failed, and client-go retries some of them
while waiting would change nothing. kubectl prints the message:
``Error from server (BadRequest): …`` for ``logs``, and through the failed
connection upgrade for ``exec``, ``attach`` and ``port-forward``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from services.api.machinery.status import bad_request, method_not_allowed
from services.apiserver.http.scope import Scope

SIMULATED = "draplane's nodes are simulated and run no containers"

# The subresources and their methods, as kube-apiserver registers them (log is read; the others are
# "connect" verbs, reached by GET or POST with a connection upgrade).
METHODS: dict[str, frozenset[str]] = {
    "log": frozenset({"GET"}),
    "exec": frozenset({"GET", "POST"}),
    "attach": frozenset({"GET", "POST"}),
    "portforward": frozenset({"GET", "POST"}),
}


async def connect(scope: Scope) -> web.Response:
    route = scope.route
    sub = route.subresource
    assert sub in METHODS and route.name is not None
    if scope.request.method not in METHODS[sub]:
        raise method_not_allowed()
    pod = await scope.backend.get(route.rt, route.namespace or "", route.name)
    container = "" if sub == "portforward" else valid_container(scope.query.get("container", ""), pod)
    node = (pod.get("spec") or {}).get("nodeName") or ""
    if not node:
        if sub == "log":
            # kube-apiserver: "If pod has not been assigned a host, return an empty location" — an empty log.
            return web.Response(body=b"", content_type="text/plain")
        raise bad_request(f"pod {route.name} does not have a host assigned")
    raise bad_request(f"{SIMULATED}: {_what(sub, pod=route.name, container=container, node=node)}")


def valid_container(container: str, pod: dict[str, Any]) -> str:
    """The container a request is for (the only one when none is named), or kube-apiserver's 400."""
    name = (pod.get("metadata") or {}).get("name", "")
    names = container_names(pod)
    spec = pod.get("spec") or {}
    if not container:
        regular = spec.get("containers") or []
        if len(regular) == 1:
            return str(regular[0].get("name", ""))
        if not regular:
            raise bad_request(f"a container name must be specified for pod {name}")
        # Go's %s of a []string: "[a b c]".
        raise bad_request(f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]")
    if container not in names:
        raise bad_request(f"container {container} is not valid for pod {name}")
    return container


def container_names(pod: dict[str, Any]) -> list[str]:
    """Init containers, containers, ephemeral containers: the order of kube's ``VisitContainers``."""
    spec = pod.get("spec") or {}
    return [
        str(c.get("name", ""))
        for key in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(key) or []
    ]


def _what(sub: str, *, pod: str, container: str, node: str) -> str:
    if sub == "portforward":
        return f"pod {pod} on node {node} runs nothing, so there is no port to forward to"
    ran = f"container {container} of pod {pod} on node {node} never ran"
    if sub == "log":
        return f"{ran}, so it has no logs"
    if sub == "exec":
        return f"{ran}, so nothing can be executed in it"
    return f"{ran}, so there is nothing to attach to"
