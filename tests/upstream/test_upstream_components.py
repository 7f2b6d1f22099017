"""Unmodified kube-scheduler and kube-controller-manager 1.31.14 run draplane's GPU examples.

The stack is draplane's apiserver (with its committer) at emulated version
1.31, its example driver and node agent on two nodes — and neither
draplane's scheduler nor its controller-manager: the upstream binaries
(ops/upstreamkit, built from the Go module proxy) replace them, started with
their default flags (leader election on) plus only ``--kubeconfig``, the DRA
feature gate and loopback ports. gpu-test1 … gpu-test5 (examples/) are
applied with kubectl and must end Running, bound by ``default-scheduler``,
their claims generated from templates by kube-controller-manager's
resourceclaim controller; the whole log is then checked with the invariants
the chaos run uses (ops/chaoskit/invariants.py). Deleting a pod must get its
generated claim deleted (kube-controller-manager again).

They speak protobuf, their default content type (``ops/upstream components
--content-type application/json`` runs them on JSON instead, by hand).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from ops.chaoskit.invariants import check_all
from ops.chaoskit.records import read_objects
from ops.upstreamkit.build import Target
from ops.upstreamkit.run import KubeComponents, kube_components
from ops.upstreamkit.versions import DEFAULT_KUBE_VERSION
from services.apiserver.kubeconfig import write_kubeconfig
from services.kube.emulated_version import parse_emulated_version
from services.kube.feature_gates import FeatureGates
from services.stack import LocalStack, StackConfig
from tests.support.eventually import eventually
from tests.support.kubectl import Kubectl
from tests.support.upstream import UPSTREAM_TIMEOUT, require_upstream_async

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(UPSTREAM_TIMEOUT), pytest.mark.asyncio(loop_scope="module")]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEMOS = ["gpu-test1", "gpu-test2", "gpu-test3", "gpu-test4", "gpu-test5"]
COMPONENTS: tuple[Target, ...] = (
    ("kube-scheduler", DEFAULT_KUBE_VERSION),
    ("kube-controller-manager", DEFAULT_KUBE_VERSION),
)


@dataclass
class Cluster:
    stack: LocalStack
    kubectl: Kubectl
    components: KubeComponents

    async def json(self, *args: str) -> Any:
        self.components.check_alive()
        return json.loads((await self.kubectl("get", *args, "-o", "json")).out)

    async def holder(self, lease: str) -> str | None:
        """The holder of a kube-system Lease, None while there is none."""
        found = await self.kubectl("get", "lease", "-n", "kube-system", lease, "-o", "json", ok=False)
        self.components.check_alive()
        if found.code != 0:
            return None
        holder: str | None = json.loads(found.out)["spec"].get("holderIdentity")
        return holder

    async def pods(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = (await self.json("pods", "-A"))["items"]
        return [p for p in items if p["metadata"]["namespace"] in DEMOS]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    await require_upstream_async(COMPONENTS)
    root = tmp_path_factory.mktemp("upstream")
    stack = LocalStack(
        StackConfig(
            bus_url=f"sqlite://{root / 'bus.db'}",
            data_dir=root / "data",
            port=0,
            nodes=2,
            gates=FeatureGates.parse("", release=parse_emulated_version("1.31")),
            controller_manager=False,
            scheduler=False,
        )
    )
    await stack.start()
    try:
        await stack.wait_ready()
        assert stack.scheduler is None and stack.controller_manager is None
        kubeconfig = write_kubeconfig(root / "kubeconfig", stack.url)
        kubectl = Kubectl(kubeconfig)
        await kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=60s", timeout=90)
        async with kube_components(kubeconfig, root / "upstream") as components:
            cluster = Cluster(stack, kubectl, components)
            # Leader election is on (their default): nothing is scheduled or reconciled before both lead.
            for name in ("kube-scheduler", "kube-controller-manager"):
                await eventually(
                    lambda name=name: cluster.holder(name), timeout=90, interval=1, what=f"{name} holds its Lease"
                )
            for name in DEMOS:
                await kubectl("apply", "-f", str(EXAMPLES / f"{name}.yaml"))
            yield cluster
    finally:
        await stack.stop()


def allocated_devices(claim: dict[str, Any]) -> list[tuple[str, str, str]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return [(r["driver"], r["pool"], r["device"]) for r in allocation.get("devices", {}).get("results", [])]


async def test_the_gpu_examples_run_under_kube_scheduler_and_controller_manager(cluster: Cluster) -> None:
    pods = await eventually(
        cluster.pods,
        until=lambda pods: len(pods) > 0 and all(p["status"].get("phase") == "Running" for p in pods),
        timeout=240,
        interval=1,
        what="every gpu-test pod Running",
    )
    assert {p["metadata"]["namespace"] for p in pods} == set(DEMOS)
    claims = [c for c in (await cluster.json("resourceclaims", "-A"))["items"] if c["metadata"]["namespace"] in DEMOS]
    for pod in pods:
        assert pod["spec"].get("nodeName"), pod["metadata"]["name"]
        for status in pod["status"].get("resourceClaimStatuses") or ():
            (claim,) = [
                c
                for c in claims
                if c["metadata"]["namespace"] == pod["metadata"]["namespace"]
                and c["metadata"]["name"] == status["resourceClaimName"]
            ]
            assert allocated_devices(claim), claim["metadata"]["name"]
            assert pod["metadata"]["uid"] in {r["uid"] for r in claim["status"].get("reservedFor") or ()}
    # kube-controller-manager's resourceclaim controller made the claims of the templates.
    generated = [
        c for c in claims if (c["metadata"].get("annotations") or {}).get("resource.kubernetes.io/pod-claim-name")
    ]
    assert generated, "no claim was generated from a template"

    assert cluster.stack.bus is not None
    violations = check_all(await read_objects(cluster.stack.bus))
    assert violations == [], "\n".join(map(str, violations))


async def test_kube_scheduler_bound_the_pods_and_both_hold_their_leases(cluster: Cluster) -> None:
    events = (await cluster.json("events.events.k8s.io", "-A"))["items"]
    scheduled = {
        (e["regarding"]["namespace"], e["regarding"]["name"])
        for e in events
        if e.get("reason") == "Scheduled" and e.get("reportingController") == "default-scheduler"
    }
    pods = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in await cluster.pods()}
    assert pods <= scheduled
    for name in ("kube-scheduler", "kube-controller-manager"):
        assert await cluster.holder(name)


async def test_a_deleted_pods_generated_claim_is_deleted(cluster: Cluster) -> None:
    ns = "gpu-test1"
    pods = [p for p in await cluster.pods() if p["metadata"]["namespace"] == ns]
    pod = pods[0]
    (status, *_) = pod["status"]["resourceClaimStatuses"]
    await cluster.kubectl("delete", "pod", "-n", ns, pod["metadata"]["name"], "--wait=true", timeout=120)

    async def claim_gone() -> bool:
        names = {c["metadata"]["name"] for c in (await cluster.json("resourceclaims", "-n", ns))["items"]}
        return status["resourceClaimName"] not in names

    await eventually(claim_gone, timeout=120, interval=1, what=f"{ns}'s generated claim deleted")
    assert cluster.stack.bus is not None
    violations = check_all(await read_objects(cluster.stack.bus))
    assert violations == [], "\n".join(map(str, violations))
