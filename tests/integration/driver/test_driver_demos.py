"""dra-example-driver's gpu-test1 … gpu-test5 (examples/) and their outcomes, on the embedded log and on Kafka.

The manifests are written in resource.k8s.io/v1 (and one copy in v1beta1);
each document goes to the committer in the version it is written in, as
kubectl sends it, and is stored in the one storage form the components read.
The claim controller (controller-manager) generates claims from templates,
a stand-in scheduler (`demo_scheduler`) allocates and binds, and the driver
and node agent of node-a prepare the claims and run the pods. The end-to-end
suite (tests/e2e/test_demos.py) runs the same manifests through kubectl
against the real scheduler, on both backends.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from demo_scheduler import demo_scheduler
from driver_fixtures import RG, running, running_agent, running_driver

from services.api.types import registry
from services.controllers.manager import ControllerManager
from services.runtime.client import Client
from services.testing.harness import LogHarness
from tests.conftest import BusUrl
from tests.support.eventually import eventually
from topics.envelope import Request

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def manifests(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


async def apply(admin: Client, path: Path) -> list[dict[str, Any]]:
    """Create every document in the version its ``apiVersion`` names (the admin client writes the storage form)."""
    created = []
    for doc in manifests(path):
        rt = registry.by_api_version_kind(doc["apiVersion"], doc["kind"])
        assert rt is not None, doc["kind"]
        meta = doc["metadata"]
        request = Request(
            id=uuid.uuid4().hex,
            op="create",
            group=rt.group,
            version=doc["apiVersion"].rpartition("/")[2],
            resource=rt.plural,
            namespace=meta.get("namespace", "") if rt.namespaced else "",
            name=meta["name"],
            user=admin.user,
            reply_to=admin.requester_id,
            object=doc,
        )
        reply = await admin.submit(request)
        assert reply.code == 201 and reply.object is not None, reply.status
        await admin.wait_visible(reply.object)
        created.append(reply.object)
    return created


@pytest.fixture
async def log(bus_url: BusUrl) -> AsyncIterator[LogHarness]:
    """This module's log on each backend (the driver tests' own ``log`` is the embedded one)."""
    async with LogHarness.running(bus_url()) as harness:
        yield harness


@pytest.fixture
async def cluster(log: LogHarness, admin: Client, state_dir: Path) -> AsyncIterator[Client]:
    """node-a with its driver and node agent, the claim controller, and the stand-in scheduler."""
    await apply(admin, EXAMPLES / "deviceclass.yaml")
    manager = ControllerManager(log.bus, garbage_collector=False)
    async with (
        running_driver(log, "node-a", state_dir),
        running_agent(log, "node-a", state_dir),
        running(manager.run, manager.ready, name="controller-manager"),
        demo_scheduler(admin, "node-a"),
    ):
        await eventually(lambda: admin.list(RG, "resourceslices"), what="node-a's GPUs published")
        yield admin


def running_pods(admin: Client, namespace: str, count: int) -> list[dict[str, Any]] | None:
    pods = sorted(admin.list("", "pods", namespace), key=lambda p: p["metadata"]["name"])
    if len(pods) == count and all(p["status"].get("phase") == "Running" for p in pods):
        return pods
    return None


def claims_in(admin: Client, namespace: str) -> list[dict[str, Any]]:
    return sorted(admin.list(RG, "resourceclaims", namespace), key=lambda c: c["metadata"]["name"])


def devices_of(claim: dict[str, Any]) -> list[str]:
    return [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]]


def cdi_ids(pod: dict[str, Any], container: str) -> list[str]:
    (status,) = [s for s in pod["status"]["containerStatuses"] if s["name"] == container]
    return [r["resourceID"] for entry in status.get("allocatedResourcesStatus") or () for r in entry["resources"]]


def spec_env(state_dir: Path, claim: dict[str, Any]) -> dict[str, list[str]]:
    uid = claim["metadata"]["uid"]
    spec = yaml.safe_load((state_dir / "cdi" / f"k8s.gpu.example.com-gpu_{uid}.yaml").read_text())
    return {d["name"].removeprefix(f"{uid}-"): d["containerEdits"]["env"] for d in spec["devices"]}


async def test_gpu_test1_two_pods_get_distinct_gpus(cluster: Client) -> None:
    await apply(cluster, EXAMPLES / "gpu-test1.yaml")
    pods = await eventually(lambda: running_pods(cluster, "gpu-test1", 2), what="both pods running")
    claims = claims_in(cluster, "gpu-test1")
    assert len(claims) == 2, "one claim generated per pod"
    first, second = (devices_of(c) for c in claims)
    assert len(first) == len(second) == 1 and first != second
    assert cdi_ids(pods[0], "ctr0") != cdi_ids(pods[1], "ctr0")


async def test_gpu_test1_in_v1beta1_two_pods_get_distinct_gpus(cluster: Client) -> None:
    """The v1beta1 copy (flat request fields) is allocated as the v1 manifest is."""
    ns = "gpu-test1-v1beta1"
    (_namespace, template, *_pods) = await apply(cluster, EXAMPLES / "v1beta1" / "gpu-test1.yaml")
    assert template["apiVersion"] == "resource.k8s.io/v1beta1"
    assert template["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}
    ]
    pods = await eventually(lambda: running_pods(cluster, ns, 2), what="both pods running")
    claims = claims_in(cluster, ns)
    assert len(claims) == 2, "one claim generated per pod"
    first, second = (devices_of(c) for c in claims)
    assert len(first) == len(second) == 1 and first != second
    assert cdi_ids(pods[0], "ctr0") != cdi_ids(pods[1], "ctr0")


async def test_gpu_test2_one_container_gets_two_gpus(cluster: Client) -> None:
    await apply(cluster, EXAMPLES / "gpu-test2.yaml")
    (pod,) = await eventually(lambda: running_pods(cluster, "gpu-test2", 1), what="the pod running")
    (claim,) = claims_in(cluster, "gpu-test2")
    assert len(set(devices_of(claim))) == 2
    uid = claim["metadata"]["uid"]
    assert sorted(i for i in cdi_ids(pod, "ctr0") if not i.endswith("=common")) == sorted(
        f"k8s.gpu.example.com/gpu={uid}-{d}" for d in devices_of(claim)
    )


async def test_gpu_test3_one_claim_shared_by_two_containers(cluster: Client) -> None:
    await apply(cluster, EXAMPLES / "gpu-test3.yaml")
    (pod,) = await eventually(lambda: running_pods(cluster, "gpu-test3", 1), what="the pod running")
    (claim,) = claims_in(cluster, "gpu-test3")
    assert len(devices_of(claim)) == 1
    assert cdi_ids(pod, "ctr0") == cdi_ids(pod, "ctr1") != []


async def test_gpu_test4_one_claim_shared_by_two_pods(cluster: Client) -> None:
    await apply(cluster, EXAMPLES / "gpu-test4.yaml")
    pods = await eventually(lambda: running_pods(cluster, "gpu-test4", 2), what="both pods running")
    (claim,) = claims_in(cluster, "gpu-test4")
    assert sorted(r["uid"] for r in claim["status"]["reservedFor"]) == sorted(p["metadata"]["uid"] for p in pods)
    assert len(claim["status"]["reservedFor"]) == 2
    assert cdi_ids(pods[0], "ctr0") == cdi_ids(pods[1], "ctr0") != []


async def test_gpu_test5_per_request_configs(cluster: Client, state_dir: Path) -> None:
    await apply(cluster, EXAMPLES / "gpu-test5.yaml")
    (pod,) = await eventually(lambda: running_pods(cluster, "gpu-test5", 1), what="the pod running")
    (claim,) = claims_in(cluster, "gpu-test5")
    by_request = {r["request"]: r["device"] for r in claim["status"]["allocation"]["devices"]["results"]}
    ts, sp = by_request["ts-gpu"], by_request["sp-gpu"]
    env = spec_env(state_dir, claim)
    ts_n, sp_n = ts.removeprefix("gpu-"), sp.removeprefix("gpu-")
    assert f"GPU_DEVICE_{ts_n}_SHARING_STRATEGY=TimeSlicing" in env[ts]
    assert f"GPU_DEVICE_{ts_n}_TIMESLICE_INTERVAL=Long" in env[ts]
    assert f"GPU_DEVICE_{sp_n}_SHARING_STRATEGY=SpacePartitioning" in env[sp]
    assert f"GPU_DEVICE_{sp_n}_PARTITION_COUNT=10" in env[sp]
    uid = claim["metadata"]["uid"]
    for container, device in (("ts-ctr0", ts), ("ts-ctr1", ts), ("sp-ctr0", sp), ("sp-ctr1", sp)):
        assert [i for i in cdi_ids(pod, container) if not i.endswith("=common")] == [
            f"k8s.gpu.example.com/gpu={uid}-{device}"
        ]
