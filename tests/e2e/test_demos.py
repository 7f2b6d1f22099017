"""dra-example-driver's demos through kubectl on a whole running stack.

Two configurations, as Kubernetes' CI splits its DRA jobs:

- ``dra``: DRAControlPlaneController off in the scheduler, controller-manager
  and drivers. The apiserver still accepts the alpha field — a cluster part-way
  through turning the gate off, which is what makes the seed's scheduler
  message reachable: a claim that names a control-plane controller.
- ``classic-dra``: the gate on everywhere, with the driver's classic
  control-plane controller.

Each runs on the embedded log and on Kafka. All demos are applied when the
stack starts, so they schedule side by side; each test checks one outcome.
gpu-test1 … gpu-test5 are written in resource.k8s.io/v1, gpu-test1's copy in
v1beta1 and the classic demo in 1.31's v1alpha3 (examples/README.md).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from services.apiserver.kubeconfig import write_kubeconfig
from services.kube.feature_gates import FeatureGates
from services.stack import LocalStack, StackConfig
from tests.support.kubectl import Kubectl

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEMOS = ["gpu-test1", "gpu-test2", "gpu-test3", "gpu-test4", "gpu-test5"]
CLASSIC = "gpu-test-classic"
V1BETA1_COPY, V1BETA1_NS = "v1beta1/gpu-test1", "gpu-test1-v1beta1"
DISABLED_MESSAGE = "resourceclaim depends on disabled DRAControlPlaneController feature"


@dataclass
class Demo:
    config: str
    kubectl: Kubectl

    async def json(self, *args: str) -> Any:
        return json.loads((await self.kubectl("get", *args, "-o", "json")).out)

    async def wait_running(self, ns: str, timeout: int = 120) -> list[dict[str, Any]]:
        await self.kubectl(
            "wait",
            "pod",
            "--all",
            "-n",
            ns,
            "--for=jsonpath={.status.phase}=Running",
            f"--timeout={timeout}s",
            timeout=timeout + 30,
        )
        pods: list[dict[str, Any]] = (await self.json("pods", "-n", ns))["items"]
        return pods

    async def claims(self, ns: str, *, resource: str = "resourceclaims") -> list[dict[str, Any]]:
        claims: list[dict[str, Any]] = (await self.json(resource, "-n", ns))["items"]
        return claims


def devices_of(claim: dict[str, Any]) -> list[tuple[str, str, str]]:
    results = claim["status"]["allocation"]["devices"]["results"]
    return [(r["driver"], r["pool"], r["device"]) for r in results]


def cdi_ids(pod: dict[str, Any], container: str) -> list[str]:
    """The per-device CDI ids a container got (the driver's shared ``common`` device left out)."""
    for status in pod["status"]["containerStatuses"]:
        if status["name"] == container:
            ids = [
                r["resourceID"] for entry in status.get("allocatedResourcesStatus") or [] for r in entry["resources"]
            ]
            return [i for i in ids if not i.endswith("=common")]
    raise AssertionError(f"no status for container {container}")


@pytest_asyncio.fixture(
    scope="module",
    loop_scope="module",
    params=[
        ("embedded", "dra"),
        ("embedded", "classic-dra"),
        pytest.param(("kafka", "dra"), marks=pytest.mark.kafka),
        pytest.param(("kafka", "classic-dra"), marks=pytest.mark.kafka),
    ],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
async def demo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Demo]:
    backend, config = request.param
    root = tmp_path_factory.mktemp(f"demo-{backend}-{config}")
    if backend == "kafka":
        bus = f"kafka://{request.getfixturevalue('kafka_bootstrap')}?prefix=demo{uuid.uuid4().hex[:10]}-"
    else:
        bus = f"sqlite://{root / 'bus.db'}"
    classic = config == "classic-dra"
    gates = FeatureGates.parse(f"DRAControlPlaneController={str(classic).lower()}")
    stack = LocalStack(
        StackConfig(
            bus_url=bus,
            data_dir=root / "data",
            port=0,
            nodes=2,
            gates=gates,
            apiserver_gates=FeatureGates.parse("DRAControlPlaneController=true"),
        )
    )
    await stack.start()
    try:
        await stack.wait_ready()  # the node agents registered their nodes (kubectl wait --all fails on none)
        kubeconfig = write_kubeconfig(root / "kubeconfig", stack.url)
        kubectl = Kubectl(kubeconfig)
        await kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=60s", timeout=90)
        for name in [*DEMOS, V1BETA1_COPY, CLASSIC]:
            await kubectl("apply", "-f", str(EXAMPLES / f"{name}.yaml"))
        yield Demo(config, kubectl)
    finally:
        await stack.stop()


async def test_gpu_test1_two_pods_get_distinct_gpus(demo: Demo) -> None:
    pods = await demo.wait_running("gpu-test1")
    assert len(pods) == 2
    claims = await demo.claims("gpu-test1")
    assert len(claims) == 2
    devices = [d for c in claims for d in devices_of(c)]
    assert len(devices) == 2 and len(set(devices)) == 2


async def test_gpu_test1_v1beta1_copy_runs_and_reads_back_in_both_versions(demo: Demo) -> None:
    pods = await demo.wait_running(V1BETA1_NS)
    claims = await demo.claims(V1BETA1_NS)
    assert len(pods) == 2 and len(claims) == 2
    devices = [d for c in claims for d in devices_of(c)]
    assert len(devices) == 2 and len(set(devices)) == 2
    # Written in v1beta1 (flat request fields), read in v1 (under `exactly`) and in v1beta1 as written.
    (v1,) = (await demo.json("resourceclaimtemplates", "-n", V1BETA1_NS))["items"]
    (beta,) = (await demo.json("resourceclaimtemplates.v1beta1.resource.k8s.io", "-n", V1BETA1_NS))["items"]
    assert v1["apiVersion"] == "resource.k8s.io/v1"
    assert v1["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"
    assert beta["apiVersion"] == "resource.k8s.io/v1beta1"
    assert beta["spec"]["spec"]["devices"]["requests"][0]["deviceClassName"] == "gpu.example.com"


async def test_gpu_test2_count_two(demo: Demo) -> None:
    (pod,) = await demo.wait_running("gpu-test2")
    (claim,) = await demo.claims("gpu-test2")
    assert claim["apiVersion"] == "resource.k8s.io/v1"
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2
    assert len(set(devices_of(claim))) == 2
    assert len(cdi_ids(pod, pod["spec"]["containers"][0]["name"])) == 2


async def test_gpu_test3_one_claim_shared_across_containers(demo: Demo) -> None:
    (pod,) = await demo.wait_running("gpu-test3")
    (claim,) = await demo.claims("gpu-test3")
    assert len(devices_of(claim)) == 1
    names = [c["name"] for c in pod["spec"]["containers"]]
    assert len(names) == 2
    assert cdi_ids(pod, names[0]) == cdi_ids(pod, names[1]) != []


async def test_gpu_test4_one_claim_shared_across_pods(demo: Demo) -> None:
    pods = await demo.wait_running("gpu-test4")
    assert len(pods) == 2
    (claim,) = await demo.claims("gpu-test4")
    reserved = {entry["uid"] for entry in claim["status"]["reservedFor"]}
    assert reserved == {p["metadata"]["uid"] for p in pods}
    assert len(devices_of(claim)) == 1


async def test_gpu_test5_per_request_configs(demo: Demo) -> None:
    pods = await demo.wait_running("gpu-test5")
    (claim,) = await demo.claims("gpu-test5")
    configs = claim["status"]["allocation"]["devices"].get("config") or []
    by_request = {tuple(c.get("requests") or []): c["opaque"]["parameters"]["sharing"]["strategy"] for c in configs}
    assert "TimeSlicing" in by_request.values() and "SpacePartitioning" in by_request.values()
    assert len(devices_of(claim)) == 2
    assert pods


async def test_classic_claims_follow_the_gate(demo: Demo) -> None:
    if demo.config == "classic-dra":
        pods = await demo.wait_running(CLASSIC)
        # Classic DRA's fields exist only in 1.31's v1alpha3 (`kubectl get resourceclaims` reads v1).
        claims = await demo.claims(CLASSIC, resource="resourceclaims.v1alpha3.resource.k8s.io")
        assert len(pods) == 2 and len(claims) == 2
        assert {c["status"]["allocation"].get("controller") for c in claims} == {"gpu.example.com"}
        devices = [d for c in claims for d in devices_of(c)]
        assert len(set(devices)) == 2
        return
    message = ""
    async with asyncio.timeout(60):
        while DISABLED_MESSAGE not in message:
            events = await demo.json("events", "-n", CLASSIC, "--field-selector", "reason=FailedScheduling")
            message = " ".join(e["message"] for e in events["items"])
            await asyncio.sleep(0.5)
    assert (
        "0/2 nodes are available: resourceclaim depends on disabled DRAControlPlaneController feature. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    ) in message
    pods = (await demo.json("pods", "-n", CLASSIC))["items"]
    assert all(p["status"].get("phase") == "Pending" and not p["spec"].get("nodeName") for p in pods)
