"""Deleting a namespace on a running stack frees its devices, as in Kubernetes, even across a controller-manager kill.

One node with the example driver's 8 GPUs. A ``filler`` namespace holds 6 of
them for the whole module, so each test's gpu-test1 (two pods, one GPU each)
takes the last two and a pod in another namespace waits, unschedulable. When
the gpu-test1 namespace is deleted, all of its objects must go, its devices
must be free again and the waiting pod must get one of them.

The controller-manager runs apart from the stack (``controller_manager=False``)
so a test can stop it, start it again, or kill it half-way through, as a
separate process would be.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from services.apiserver.kubeconfig import write_kubeconfig
from services.controllers.manager import ControllerManager
from services.controllers.ports import Writer
from services.runtime.client import Client
from services.stack import LocalStack, StackConfig
from tests.support.eventually import eventually
from tests.support.kubectl import Kubectl

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Device = tuple[str, str, str]

FILLER = """
apiVersion: v1
kind: Namespace
metadata: {name: filler}
---
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaim
metadata: {namespace: filler, name: six}
spec:
  devices:
    requests:
    - {name: gpus, deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 6}
---
apiVersion: v1
kind: Pod
metadata: {namespace: filler, name: holder}
spec:
  containers:
  - {name: ctr, image: busybox:1.36, resources: {claims: [{name: gpus}]}}
  resourceClaims:
  - {name: gpus, resourceClaimName: six}
"""

WAITER = """
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaim
metadata: {namespace: NS, name: one}
spec:
  devices:
    requests:
    - {name: gpu, deviceClassName: gpu.example.com}
---
apiVersion: v1
kind: Pod
metadata: {namespace: NS, name: waiter}
spec:
  containers:
  - {name: ctr, image: busybox:1.36, resources: {claims: [{name: gpu}]}}
  resourceClaims:
  - {name: gpu, resourceClaimName: one}
"""


def devices_of(claim: dict[str, Any]) -> list[Device]:
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        return []
    return [(r["driver"], r["pool"], r["device"]) for r in allocation["devices"]["results"]]


class HoldClaimDeletes:
    """A controller-manager writer whose ResourceClaim deletes never return: the kill comes while they wait."""

    def __init__(self, client: Client, held: asyncio.Event) -> None:
        self.client = client
        self.held = held

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def delete(self, group: str, resource: str, namespace: str, name: str, **options: Any) -> dict[str, Any]:
        if resource == "resourceclaims":
            self.held.set()
            await asyncio.Event().wait()
        return await self.client.delete(group, resource, namespace, name, **options)


@dataclass
class Cluster:
    stack: LocalStack
    kubectl: Kubectl
    manager: ControllerManager | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    async def start_controller_manager(self, wrap: Callable[[Client], Writer] | None = None) -> None:
        assert self.task is None and self.stack.bus is not None
        self.manager = ControllerManager(self.stack.bus, wrap_writer=wrap)
        self.task = asyncio.create_task(self.manager.run())
        await asyncio.wait(
            {self.task, asyncio.ensure_future(self.manager.ready.wait())},
            timeout=60,
            return_when=asyncio.FIRST_COMPLETED,
        )
        assert self.manager.ready.is_set(), "the controller-manager did not get ready"

    async def kill_controller_manager(self) -> None:
        assert self.task is not None
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        self.task = self.manager = None

    async def json(self, *args: str) -> Any:
        return json.loads((await self.kubectl("get", *args, "-o", "json")).out)

    async def claims(self, namespace: str | None = None) -> list[dict[str, Any]]:
        scope = ["-A"] if namespace is None else ["-n", namespace]
        items: list[dict[str, Any]] = (await self.json("resourceclaims", *scope))["items"]
        return items

    async def apply(self, manifest: str) -> None:
        await self.kubectl("apply", "-f", "-", stdin=manifest)

    async def wait_running(self, namespace: str, pod: str = "--all") -> None:
        target = ["pod", pod] if pod != "--all" else ["pod", "--all"]
        await self.kubectl(
            "wait", *target, "-n", namespace, "--for=jsonpath={.status.phase}=Running", "--timeout=90s", timeout=120
        )

    async def phase(self, namespace: str) -> str | None:
        result = await self.kubectl("get", "ns", namespace, "-o", "jsonpath={.status.phase}", ok=False)
        return result.out if result.code == 0 else None

    async def workload(self, namespace: str) -> set[Device]:
        """gpu-test1 in ``namespace``, running; the two devices its claims hold."""
        await self.apply((EXAMPLES / "gpu-test1.yaml").read_text().replace("gpu-test1", namespace))
        await self.wait_running(namespace)
        devices = {d for c in await self.claims(namespace) for d in devices_of(c)}
        assert len(devices) == 2
        return devices

    async def waiter(self, namespace: str) -> None:
        """A pod in ``namespace`` that finds no free GPU."""
        await self.apply(WAITER.replace("NS", namespace))
        await self.kubectl(
            "wait", "pod/waiter", "-n", namespace, "--for=condition=PodScheduled=false", "--timeout=60s", timeout=90
        )

    async def assert_gone_and_freed(self, namespace: str, freed: set[Device], waiter: str) -> None:
        await self.kubectl("wait", "--for=delete", f"namespace/{namespace}", "--timeout=90s", timeout=120)
        for kind in ("pods", "resourceclaims", "resourceclaimtemplates"):
            assert (await self.json(kind, "-n", namespace))["items"] == [], kind
        await self.wait_running(waiter, "waiter")
        (claim,) = await self.claims(waiter)
        (got,) = devices_of(claim)
        assert got in freed
        allocated = [d for c in await self.claims() for d in devices_of(c)]
        assert len(allocated) == len(set(allocated)) == 7  # filler's 6 and the waiter's 1: the other freed GPU is free
        assert not (freed - {got}) & set(allocated)
        # The waiter's namespace goes too, giving its GPU back for the next test.
        await self.kubectl("delete", "ns", waiter, "--timeout=90s", timeout=120)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    root = tmp_path_factory.mktemp("namespace-deletion")
    stack = LocalStack(
        StackConfig(
            bus_url=f"sqlite://{root / 'bus.db'}", data_dir=root / "data", port=0, nodes=1, controller_manager=False
        )
    )
    await stack.start()
    cluster = Cluster(stack, Kubectl(write_kubeconfig(root / "kubeconfig", stack.url)))
    try:
        await stack.wait_ready()
        await cluster.start_controller_manager()
        await cluster.kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=60s", timeout=90)
        await cluster.apply(FILLER)
        await cluster.wait_running("filler")
        yield cluster
    finally:
        if cluster.task is not None:
            await cluster.kill_controller_manager()
        await stack.stop()


async def test_deleting_a_namespace_frees_its_devices_for_another_namespace(cluster: Cluster) -> None:
    freed = await cluster.workload("gpu-test1")
    await cluster.waiter("waiting-1")
    await cluster.kubectl("delete", "ns", "gpu-test1", "--wait=false")
    await cluster.assert_gone_and_freed("gpu-test1", freed, "waiting-1")


async def test_a_namespace_deleted_while_the_controller_manager_is_down_is_emptied_when_it_starts(
    cluster: Cluster,
) -> None:
    freed = await cluster.workload("gpu-test1b")
    await cluster.waiter("waiting-2")
    await cluster.kill_controller_manager()
    await cluster.kubectl("delete", "ns", "gpu-test1b", "--wait=false")
    namespace = await cluster.json("ns", "gpu-test1b")
    assert namespace["status"]["phase"] == "Terminating"
    assert namespace["spec"]["finalizers"] == ["kubernetes"]
    # Nothing empties it while no controller-manager runs: the pods still run, their claims hold the GPUs.
    pods = (await cluster.json("pods", "-n", "gpu-test1b"))["items"]
    assert [p["status"]["phase"] for p in pods] == ["Running", "Running"]
    assert {d for c in await cluster.claims("gpu-test1b") for d in devices_of(c)} == freed
    await cluster.start_controller_manager()
    await cluster.assert_gone_and_freed("gpu-test1b", freed, "waiting-2")


async def test_a_controller_manager_killed_half_way_through_is_finished_by_the_next(cluster: Cluster) -> None:
    freed = await cluster.workload("gpu-test1c")
    await cluster.waiter("waiting-3")
    await cluster.kill_controller_manager()
    held = asyncio.Event()
    await cluster.start_controller_manager(wrap=lambda client: HoldClaimDeletes(client, held))  # type: ignore[arg-type,return-value]
    await cluster.kubectl("delete", "ns", "gpu-test1c", "--wait=false")
    await asyncio.wait_for(held.wait(), 60)  # pods gone; the first claim delete is under way
    assert (await cluster.json("pods", "-n", "gpu-test1c"))["items"] == []
    assert await cluster.claims("gpu-test1c") != []
    await cluster.kill_controller_manager()
    assert await cluster.phase("gpu-test1c") == "Terminating"
    await cluster.start_controller_manager()
    await cluster.assert_gone_and_freed("gpu-test1c", freed, "waiting-3")


async def test_kubectl_delete_ns_shows_terminating_then_the_namespace_is_gone(cluster: Cluster) -> None:
    await cluster.apply(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: held}\n---\n"
        "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourceClaimTemplate\n"
        "metadata: {namespace: held, name: t, finalizers: [example.com/hold]}\n"
        "spec: {spec: {devices: {requests: [{name: gpu, deviceClassName: gpu.example.com}]}}}\n"
    )
    result = await cluster.kubectl("delete", "ns", "held", "--wait=false")
    assert result.out.strip() == 'namespace "held" deleted'
    # The finalizer holds the template, so the namespace stays Terminating and says why.
    namespace = await eventually(
        lambda: cluster.json("ns", "held"),
        until=lambda ns: any(
            c["type"] == "NamespaceFinalizersRemaining" and c["status"] == "True"
            for c in ns["status"].get("conditions") or []
        ),
        what="the NamespaceFinalizersRemaining condition",
        interval=0.2,
    )
    conditions = {c["type"]: c for c in namespace["status"]["conditions"]}
    assert conditions["NamespaceFinalizersRemaining"]["message"] == (
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    )
    assert conditions["NamespaceContentRemaining"]["message"] == (
        "Some resources are remaining: resourceclaimtemplates.resource.k8s.io has 1 resource instances"
    )
    assert conditions["NamespaceDeletionContentFailure"]["status"] == "False"
    table = (await cluster.kubectl("get", "ns", "held", "--no-headers")).out.split()
    assert table[:2] == ["held", "Terminating"]
    created = await cluster.kubectl("run", "late", "-n", "held", "--image=busybox:1.36", ok=False)
    assert created.code != 0
    assert (
        'pods "late" is forbidden: unable to create new content in namespace held because it is being terminated'
        in created.err
    ), created.err
    await cluster.kubectl(
        "patch", "resourceclaimtemplate", "t", "-n", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}'
    )
    await cluster.kubectl("wait", "--for=delete", "namespace/held", "--timeout=60s", timeout=90)
    gone = await cluster.kubectl("get", "ns", "held", ok=False)
    assert 'namespaces "held" not found' in gone.err


async def test_kubectl_delete_ns_waits_until_the_namespace_is_gone(cluster: Cluster) -> None:
    await cluster.kubectl("create", "ns", "short-lived")
    await cluster.apply(
        "apiVersion: v1\nkind: Pod\nmetadata: {namespace: short-lived, name: p}\n"
        "spec: {containers: [{name: c, image: busybox:1.36}]}\n"
    )
    await cluster.wait_running("short-lived")
    result = await cluster.kubectl("delete", "ns", "short-lived", "--timeout=90s", timeout=120)
    assert result.out.strip() == 'namespace "short-lived" deleted'
    assert (await cluster.kubectl("get", "ns", "short-lived", ok=False)).code != 0


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
async def test_kubectl_cannot_delete_the_immortal_namespaces(cluster: Cluster, name: str) -> None:
    result = await cluster.kubectl("delete", "ns", name, ok=False)
    assert result.code != 0
    assert f'namespaces "{name}" is forbidden: this namespace may not be deleted' in result.err
    assert await cluster.phase(name) == "Active"


async def test_finalize_through_kubectl_replace_raw_and_a_delete_of_a_finalized_namespace(cluster: Cluster) -> None:
    # Kubernetes' storage.go: the first DELETE only marks a namespace, even one whose spec.finalizers
    # were emptied through namespaces/finalize; the namespace controller leaves a finalized namespace
    # alone, and the next DELETE removes it.
    await cluster.kubectl("create", "ns", "finalized")
    namespace = await cluster.json("ns", "finalized")
    assert namespace["spec"]["finalizers"] == ["kubernetes"]
    namespace["spec"]["finalizers"] = []
    out = await cluster.kubectl(
        "replace", "--raw", "/api/v1/namespaces/finalized/finalize", "-f", "-", stdin=json.dumps(namespace)
    )
    assert json.loads(out.out)["spec"]["finalizers"] == []
    get = await cluster.kubectl("get", "--raw", "/api/v1/namespaces/finalized/finalize", ok=False)
    # FinalizeREST serves only update: any other verb is a 405.
    assert "Error from server (MethodNotAllowed)" in get.err, get.err
    await cluster.kubectl("delete", "ns", "finalized", "--wait=false")
    assert await cluster.phase("finalized") == "Terminating"
    await cluster.kubectl("delete", "ns", "finalized", "--wait=false")
    await cluster.kubectl("wait", "--for=delete", "namespace/finalized", "--timeout=30s", timeout=60)


async def test_discovery_lists_namespaces_finalize_for_update(cluster: Cluster) -> None:
    resources = json.loads((await cluster.kubectl("get", "--raw", "/api/v1")).out)["resources"]
    (finalize,) = [r for r in resources if r["name"] == "namespaces/finalize"]
    assert finalize["verbs"] == ["update"] and finalize["kind"] == "Namespace"
