"""Helpers for the controller integration tests: objects, a fault-injecting writer, polling, controllers.

Every test runs on its own embedded log (`LogHarness` on a SQLite file) with a
leading committer; the controllers under test write as
``system:kube-controller-manager`` through the committer's admission chain.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.api.machinery import status as st
from services.controllers.garbage_collector import GarbageCollector
from services.controllers.manager import CONTROLLER_MANAGER_USER
from services.controllers.metrics import ControllerMetrics
from services.controllers.ports import Writer
from services.controllers.resourceclaim import ResourceClaimController
from services.runtime.client import Client
from services.runtime.informer import Informer
from services.testing.harness import LogHarness
from topics.envelope import Op, Request

RG = "resource.k8s.io"
NS = "default"

ALLOCATION: dict[str, Any] = {
    "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]},
    "nodeSelector": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]
    },
}
DEVICES: dict[str, Any] = {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}


async def allow_admin_access(admin: Client) -> None:
    """Label NS ``resource.kubernetes.io/admin-access: "true"``: at 1.37 (the log's gates) admin access needs it."""
    ns = admin.get("", "namespaces", "", NS) or {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    labels = {**(ns["metadata"].get("labels") or {}), "resource.kubernetes.io/admin-access": "true"}
    labelled = {**ns, "metadata": {**ns["metadata"], "labels": labels}}
    if "resourceVersion" in ns["metadata"]:
        await admin.update("", "namespaces", labelled)
    else:
        await admin.create("", "namespaces", labelled)


def template(name: str = "gpu-template", *, admin_access: bool = False, labels: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {"name": "gpu", "deviceClassName": "gpu.example.com"}
    if admin_access:
        request["adminAccess"] = True
    spec_meta: dict[str, Any] = {"labels": labels} if labels else {}
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"metadata": spec_meta, "spec": {"devices": {"requests": [request]}}},
    }


def pod(
    name: str,
    *claims: dict[str, Any],
    node: str = "",
    finalizers: list[str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "ctr", "image": "registry.k8s.io/pause:3.10"}],
        "resourceClaims": list(claims),
    }
    if node:
        spec["nodeName"] = node
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def from_template(pod_claim: str = "gpu", tmpl: str = "gpu-template") -> dict[str, Any]:
    return {"name": pod_claim, "resourceClaimTemplateName": tmpl}


def by_name(pod_claim: str, claim: str) -> dict[str, Any]:
    return {"name": pod_claim, "resourceClaimName": claim}


def claim(
    name: str,
    *,
    controller: str = "",
    owner: dict[str, Any] | None = None,
    block: bool = True,
    annotations: dict[str, str] | None = None,
    finalizers: list[str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": block,
            }
        ]
    if annotations:
        meta["annotations"] = annotations
    if finalizers:
        meta["finalizers"] = finalizers
    spec: dict[str, Any] = {"devices": DEVICES}
    if controller:
        spec["controller"] = controller
    return {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim", "metadata": meta, "spec": spec}


def consumer(p: dict[str, Any]) -> dict[str, str]:
    return {"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}


async def allocate(
    admin: Client,
    c: dict[str, Any],
    *,
    reserved_for: Sequence[Mapping[str, Any]] = (),
    controller: str = "",
) -> dict[str, Any]:
    """Allocate a claim as the scheduler would (structured: with the delete-protection finalizer)."""
    current = admin.get(RG, "resourceclaims", NS, c["metadata"]["name"])
    assert current is not None
    if not controller:
        current = {
            **current,
            "metadata": {**current["metadata"], "finalizers": ["resource.kubernetes.io/delete-protection"]},
        }
        current = await admin.update(RG, "resourceclaims", current)
    allocation = {**ALLOCATION, **({"controller": controller} if controller else {})}
    status: dict[str, Any] = {"allocation": allocation}
    if reserved_for:
        status["reservedFor"] = [dict(r) for r in reserved_for]
    return await admin.update_status(RG, "resourceclaims", {**current, "status": status})


def claims_of(admin: Client, p: dict[str, Any]) -> list[dict[str, Any]]:
    """Claims controlled by the pod (by uid)."""
    uid = p["metadata"]["uid"]
    return [
        c
        for c in admin.list(RG, "resourceclaims", NS)
        if any(r.get("uid") == uid and r.get("controller") for r in c["metadata"].get("ownerReferences") or ())
    ]


def recorded_names(admin: Client, name: str) -> dict[str, str | None] | None:
    """pod claim -> recorded claim name, or None while the pod status records nothing."""
    p = admin.get("", "pods", NS, name)
    statuses = (p or {}).get("status", {}).get("resourceClaimStatuses")
    if not statuses:
        return None
    return {s["name"]: s.get("resourceClaimName") for s in statuses}


# -- fault injection ---------------------------------------------------------------


def injected(message: str) -> st.StatusError:
    return st.StatusError(st.make_status(500, "InternalError", f"injected fault: {message}"))


@dataclass
class FaultyWriter:
    """Wraps a `Writer` and fails or blocks chosen writes, sent alone or in a chain (`Writer.write_chain`).

    - ``fail_creates``: the next N claim creates fail (nothing is written);
    - ``fail_pod_status``: the next N pod-status writes fail (nothing is written);
    - ``hang_after_create``: a successful claim create never returns, as if the
      process died right after it; ``created`` is set when that happens.

    In a chain, the requests before the failing one are sent (as a chain), the
    failing one gets the injected error and the ones after it the committer's
    409 "not applied" — as if the committer had refused it; with
    ``hang_after_create``, the requests up to the last claim create are sent
    and the rest never are.
    """

    inner: Writer
    fail_creates: int = 0
    fail_pod_status: int = 0
    hang_after_create: bool = False
    created: asyncio.Event = field(default_factory=asyncio.Event)
    creates: int = 0
    pod_status_writes: int = 0

    def _claim_create(self) -> None:
        self.creates += 1
        if self.fail_creates > 0:
            self.fail_creates -= 1
            raise injected("claim create failed")

    async def create(
        self, group: str, resource: str, obj: dict[str, Any], *, namespace: str = "", **options: Any
    ) -> Any:
        if resource == "resourceclaims":
            self._claim_create()
        result = await self.inner.create(group, resource, obj, namespace=namespace, **options)
        if resource == "resourceclaims" and self.hang_after_create:
            self.created.set()
            await asyncio.Event().wait()  # killed here: cancelled by the test
        return result

    async def update(self, group: str, resource: str, obj: dict[str, Any], **options: Any) -> Any:
        return await self.inner.update(group, resource, obj, **options)

    def _pod_status_write(self) -> None:
        self.pod_status_writes += 1
        if self.fail_pod_status > 0:
            self.fail_pod_status -= 1
            raise injected("pod status write failed")

    async def update_status(self, group: str, resource: str, obj: dict[str, Any], **options: Any) -> Any:
        if resource == "pods":
            self._pod_status_write()
        return await self.inner.update_status(group, resource, obj, **options)

    async def patch(
        self,
        group: str,
        resource: str,
        namespace: str,
        name: str,
        patch: Any,
        *,
        patch_type: str = "merge",
        subresource: str = "",
        **options: Any,
    ) -> Any:
        if resource == "pods" and subresource == "status":
            self._pod_status_write()
        return await self.inner.patch(
            group, resource, namespace, name, patch, patch_type=patch_type, subresource=subresource, **options
        )

    async def delete(self, group: str, resource: str, namespace: str, name: str, **options: Any) -> Any:
        return await self.inner.delete(group, resource, namespace, name, **options)

    def request(self, op: Op, group: str, resource: str, namespace: str, name: str, **kwargs: Any) -> Request:
        return self.inner.request(op, group, resource, namespace, name, **kwargs)

    async def write_chain(self, requests: Sequence[Request]) -> list[dict[str, Any] | st.StatusError]:
        for i, request in enumerate(requests):
            try:
                if request.op == "create" and request.resource == "resourceclaims":
                    self._claim_create()
                elif request.resource == "pods" and (
                    request.op == "update_status" or request.options.get("subresource") == "status"
                ):
                    self._pod_status_write()
            except st.StatusError as err:
                sent = await self.inner.write_chain(requests[:i]) if i else []
                refused = [
                    st.conflict(
                        r.group,
                        r.resource,
                        r.name,
                        f"not applied: the request it was sent after ({p.id}) was not applied",
                    )
                    for p, r in itertools.pairwise(requests[i:])
                ]
                return [*sent, err, *refused]
        creates = [i for i, r in enumerate(requests) if r.op == "create" and r.resource == "resourceclaims"]
        if creates and self.hang_after_create:
            await self.inner.write_chain(requests[: creates[-1] + 1])
            self.created.set()
            await asyncio.Event().wait()  # killed here: cancelled by the test
        return await self.inner.write_chain(requests)


# -- running controllers --------------------------------------------------------------


@dataclass
class Running:
    controller: Any
    task: asyncio.Task[None]
    metrics: ControllerMetrics
    writer: Any

    def sample(self, name: str, **labels: str) -> float:
        return self.metrics.registry.get_sample_value(name, labels) or 0.0

    async def stop(self) -> None:
        """Kill it: cancel the task (workers die wherever they are)."""
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def manager_client(log: LogHarness, informer: Informer | None = None, *, wait: bool = True) -> Client:
    """A client writing as the controller-manager; ``wait=False`` does not wait for its own informer."""
    informer = informer or await log.informer()
    client = Client(log.bus, user=CONTROLLER_MANAGER_USER, informer=informer if wait else None)
    await client.start()
    log.clients.append(client)
    return client


@contextlib.asynccontextmanager
async def claim_controller(
    log: LogHarness,
    *,
    informer: Informer | None = None,
    wrap: Callable[[Writer], Any] | None = None,
    wait: bool = True,
    **kwargs: Any,
) -> AsyncIterator[Running]:
    informer = informer or await log.informer()
    client = await manager_client(log, informer, wait=wait)
    writer = wrap(client) if wrap else client
    metrics = ControllerMetrics()
    controller = ResourceClaimController(informer, writer, metrics=metrics, **kwargs)
    running = Running(controller, asyncio.create_task(controller.run()), metrics, writer)
    try:
        yield running
    finally:
        await running.stop()


@contextlib.asynccontextmanager
async def garbage_collector(log: LogHarness, **kwargs: Any) -> AsyncIterator[Running]:
    informer = await log.informer()
    client = await manager_client(log, informer)
    metrics = ControllerMetrics()
    gc = GarbageCollector(informer, client, metrics=metrics, **kwargs)
    running = Running(gc, asyncio.create_task(gc.run()), metrics, client)
    try:
        yield running
    finally:
        await running.stop()
