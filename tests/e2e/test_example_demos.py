"""dra-example-driver's demos (examples/demos) applied with kubectl on running stacks, each checked for its promise.

Each demo needs the driver deployed the way it says (examples/README.md), as
the example driver's helm values do: a stack per driver profile, started as
``draplane up --driver-profile ...`` starts it. The plain-GPU stack and the
net stack run on the embedded log and on Kafka; the others on the embedded log.
What is checked is what each demo promises: which devices each container got
(``allocatedResourcesStatus``, the claim's results), partitions from one GPU's
counter set, one shared device with a share per claim and its capacity, the
environment in the CDI spec files the driver wrote, ``status.devices``
(Ready, data, networkData), taints keeping pods off, NoExecute evictions and
their timing (the device-taint-eviction controller, the node agent
unpreparing), and the scheduler's PreBind wait for a binding condition the
driver sets. Orders kubectl cannot show (unbound while waiting, evicted at
once before evicted after a toleration) are read from the stack's log, in log
order, never from the wall clock. What the real kubectl shows of
``status.devices`` and ``allocatedResourcesStatus`` is checked on the
partitions demo. Extended resources: the scheduler's claim per pod and its CDI env.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml

from services.apiserver.kubeconfig import write_kubeconfig
from services.driver.profiles import DriverProfile, parse_profile_spec
from services.runtime.informer import Change
from services.stack import LocalStack, StackConfig
from tests.support.eventually import eventually
from tests.support.kubectl import Kubectl

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

DEMOS = Path(__file__).resolve().parents[2] / "examples" / "demos"
GPU_DEMOS = [
    "admin-access",
    "basic-multiple-requests",
    "basic-resourceclaim-opaque-config",
    "basic-resourceclaimtemplate",
    "basic-shared-claim-across-containers",
    "basic-shared-claim-across-pods",
    "cel-selector",
    "initcontainer-shared-gpu",
    "prioritized-alternatives",
]


@dataclass
class Cluster:
    stack: LocalStack
    kubectl: Kubectl

    def record(self) -> list[Change]:
        """Every record the stack applies from now on, in log order (the order kubectl cannot show)."""
        changes: list[Change] = []
        assert self.stack.informer is not None
        self.stack.informer.add_listener(changes.append)
        return changes

    async def json(self, *args: str) -> Any:
        return json.loads((await self.kubectl("get", *args, "-o", "json")).out)

    async def apply(self, name: str) -> None:
        await self.kubectl("apply", "-f", str(DEMOS / name))

    async def wait_running(self, ns: str, *pods: str, timeout: int = 120) -> list[dict[str, Any]]:
        which = list(pods) or ["--all"]
        await self.kubectl(
            "wait",
            "pod",
            *which,
            "-n",
            ns,
            "--for=jsonpath={.status.phase}=Running",
            f"--timeout={timeout}s",
            timeout=timeout + 30,
        )
        items: list[dict[str, Any]] = (await self.json("pods", "-n", ns))["items"]
        return [p for p in items if not pods or p["metadata"]["name"] in pods]

    async def claims(self, ns: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = (await self.json("resourceclaims", "-n", ns))["items"]
        return items

    async def claim_of(self, ns: str, pod: dict[str, Any], pod_claim: str) -> dict[str, Any]:
        (entry,) = [s for s in pod["status"].get("resourceClaimStatuses") or () if s["name"] == pod_claim] or [
            {"resourceClaimName": ref.get("resourceClaimName")}
            for ref in pod["spec"]["resourceClaims"]
            if ref["name"] == pod_claim
        ]
        claim: dict[str, Any] = await self.json("resourceclaim", "-n", ns, entry["resourceClaimName"])
        return claim

    def cdi_env(self, claim: dict[str, Any]) -> dict[str, list[str]]:
        """The environment per CDI device of the claim's spec file, on the node the claim was prepared on."""
        uid = claim["metadata"]["uid"]
        found: dict[str, list[str]] = {}
        for path in (self.stack.config.data_dir / "nodes").glob(f"*/cdi/*_{uid}.yaml"):
            spec = yaml.safe_load(path.read_text())
            found.update({d["name"]: d["containerEdits"]["env"] for d in spec["devices"]})
        return found


def results(claim: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = claim["status"]["allocation"]["devices"]["results"]
    return out


def resource_ids(pod: dict[str, Any], container: str) -> list[str]:
    (status,) = [s for s in pod["status"]["containerStatuses"] if s["name"] == container]
    return [r["resourceID"] for e in status.get("allocatedResourcesStatus") or () for r in e["resources"]]


def condition_of(claim: dict[str, Any], kind: str) -> str | None:
    """The status of the condition ``kind`` of the claim's first status.devices entry that has it."""
    for entry in (claim.get("status") or {}).get("devices") or ():
        for c in entry.get("conditions") or ():
            if c["type"] == kind:
                found: str = c["status"]
                return found
    return None


def ready(claim: dict[str, Any]) -> list[str]:
    """The devices whose status.devices entry says Ready True."""
    return [
        e["device"]
        for e in (claim.get("status") or {}).get("devices") or ()
        if any(c["type"] == "Ready" and c["status"] == "True" for c in e.get("conditions") or ())
    ]


@contextlib.asynccontextmanager
async def cluster(
    root: Path, bus: str, *, profiles: tuple[tuple[str, DriverProfile], ...] = (), nodes: int = 1
) -> AsyncIterator[Cluster]:
    stack = LocalStack(
        StackConfig(
            bus_url=bus, data_dir=root / "data", port=0, nodes=max(nodes, len(profiles)), node_profiles=profiles
        )
    )
    await stack.start()
    try:
        await stack.wait_ready()
        kubectl = Kubectl(write_kubeconfig(root / "kubeconfig", stack.url))
        await kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=60s", timeout=90)
        yield Cluster(stack, kubectl)
    finally:
        await stack.stop()


def bus_for(request: pytest.FixtureRequest, backend: str, root: Path) -> str:
    if backend == "kafka":
        return f"kafka://{request.getfixturevalue('kafka_bootstrap')}?prefix=ex{uuid.uuid4().hex[:10]}-"
    return f"sqlite://{root / 'bus.db'}"


def profiles(*specs: str) -> tuple[tuple[str, DriverProfile], ...]:
    return tuple(parse_profile_spec(s) for s in specs)


UNHEALTHY_PARTITION = "gpu-0-partition-0"
BACKENDS = ["embedded", pytest.param("kafka", marks=pytest.mark.kafka)]


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=BACKENDS)
async def gpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    """Two nodes of eight plain GPUs (the default driver), every plain demo applied at once."""
    root = tmp_path_factory.mktemp(f"gpus-{request.param}")
    async with cluster(root, bus_for(request, request.param, root), nodes=2) as c:
        for name in GPU_DEMOS:
            await c.apply(f"{name}.yaml")
        yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=BACKENDS)
async def nics(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    root = tmp_path_factory.mktemp(f"net-{request.param}")
    async with cluster(root, bus_for(request, request.param, root), profiles=profiles("net")) as c:
        await c.apply("net-consumable-capacity.yaml")
        yield c


async def one_profile(root: Path, spec: str, demo: str) -> AsyncIterator[Cluster]:
    async with cluster(root, f"sqlite://{root / 'bus.db'}", profiles=profiles(spec)) as c:
        await c.apply(demo)
        yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def partitions(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    # One partition reported Unhealthy by the driver: the container's allocatedResourcesStatus shows it.
    spec = f"gpu,partitions=4,health={UNHEALTHY_PARTITION}=Unhealthy"
    async for c in one_profile(tmp_path_factory.mktemp("partitions"), spec, "partitionable-devices.yaml"):
        yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    async for c in one_profile(tmp_path_factory.mktemp("shared"), "gpu,shared", "gpu-allow-multiple-allocations.yaml"):
        yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_partitions(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    root = tmp_path_factory.mktemp("shared-partitions")
    async for c in one_profile(root, "gpu,partitions=4,shared", "gpu-allow-multiple-allocations-partitionable.yaml"):
        yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def binding(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    """The demo is applied by the test, after it starts recording the log."""
    root = tmp_path_factory.mktemp("binding")
    async with cluster(root, f"sqlite://{root / 'bus.db'}", profiles=profiles("gpu,binding-conditions")) as c:
        yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def taints(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    root = tmp_path_factory.mktemp("taints")
    async with cluster(root, f"sqlite://{root / 'bus.db'}", nodes=1) as c:
        yield c


# -- plain GPUs ----------------------------------------------------------------------------------


async def test_admin_access_sees_every_gpu_of_the_node_with_dra_admin_access_true(gpus: Cluster) -> None:
    (pod,) = await gpus.wait_running("admin-access")
    claim = await gpus.claim_of("admin-access", pod, "gpu")
    got = results(claim)
    assert len(got) == 8 and len({r["pool"] for r in got}) == 1  # allocationMode All: the node's eight GPUs
    assert all(r["adminAccess"] is True for r in got)
    env = gpus.cdi_env(claim)
    assert len(env) == 8 and all("DRA_ADMIN_ACCESS=true" in e for e in env.values())


async def test_multiple_requests_give_the_container_both_gpus(gpus: Cluster) -> None:
    (pod,) = await gpus.wait_running("basic-multiple-requests")
    claim = await gpus.claim_of("basic-multiple-requests", pod, "gpu")
    assert sorted(r["request"] for r in results(claim)) == ["gpu-1", "gpu-2"]
    assert len({r["device"] for r in results(claim)}) == 2
    assert len(resource_ids(pod, "ctr0")) == 2


async def test_opaque_config_per_request_reaches_each_containers_gpu(gpus: Cluster) -> None:
    (pod,) = await gpus.wait_running("basic-resourceclaim-opaque-config")
    claim = await gpus.claim_of("basic-resourceclaim-opaque-config", pod, "gpus")
    by_request = {r["request"]: r["device"] for r in results(claim)}
    env = gpus.cdi_env(claim)
    uid = claim["metadata"]["uid"]
    ts, sp = by_request["ts-gpu"], by_request["sp-gpu"]
    assert f"GPU_DEVICE_{ts[4:]}_TIMESLICE_INTERVAL=Long" in env[f"{uid}-{ts}"]
    assert f"GPU_DEVICE_{sp[4:]}_PARTITION_COUNT=10" in env[f"{uid}-{sp}"]
    assert resource_ids(pod, "ts-ctr") == [f"k8s.gpu.example.com/gpu={uid}-{ts}"]
    assert resource_ids(pod, "sp-ctr") == [f"k8s.gpu.example.com/gpu={uid}-{sp}"]


async def test_claim_template_gives_each_pod_its_own_gpu(gpus: Cluster) -> None:
    pods = await gpus.wait_running("basic-resourceclaimtemplate")
    claims = [await gpus.claim_of("basic-resourceclaimtemplate", p, "gpu") for p in pods]
    devices = {(r["pool"], r["device"]) for c in claims for r in results(c)}
    assert len(pods) == 2 and len(devices) == 2


async def test_claim_shared_across_containers_is_one_device_for_both(gpus: Cluster) -> None:
    (pod,) = await gpus.wait_running("basic-shared-claim-across-containers")
    assert resource_ids(pod, "ctr0") == resource_ids(pod, "ctr1") != []


async def test_claim_shared_across_pods_is_reserved_for_both(gpus: Cluster) -> None:
    pods = await gpus.wait_running("basic-shared-claim-across-pods")
    (claim,) = await gpus.claims("basic-shared-claim-across-pods")
    assert {e["uid"] for e in claim["status"]["reservedFor"]} == {p["metadata"]["uid"] for p in pods}
    assert len(results(claim)) == 1 and len({p["spec"]["nodeName"] for p in pods}) == 1


async def test_cel_selector_claim_is_allocated_and_reported_ready_and_healthy(gpus: Cluster) -> None:
    (pod,) = await gpus.wait_running("cel-selector")
    claim = await gpus.claim_of("cel-selector", pod, "gpu")
    (result,) = results(claim)
    claim = await eventually(
        lambda: gpus.claim_of("cel-selector", pod, "gpu"), until=lambda c: bool(ready(c)), what="status.devices"
    )
    assert ready(claim) == [result["device"]]
    (entry,) = claim["status"]["devices"]
    assert entry["data"]["model"] == {"string": "LATEST-GPU-MODEL"}
    (status,) = pod["status"]["containerStatuses"]
    (resources,) = status["allocatedResourcesStatus"]
    assert resources["name"] == "claim:gpu"
    assert [r["health"] for r in resources["resources"]] == ["Healthy"]


async def test_init_container_and_main_container_share_the_claim(gpus: Cluster) -> None:
    (pod,) = await gpus.wait_running("initcontainer-shared-gpu")
    claim = await gpus.claim_of("initcontainer-shared-gpu", pod, "shared-gpu")
    (result,) = results(claim)
    assert [s["name"] for s in pod["status"]["initContainerStatuses"]] == ["init0"]
    assert resource_ids(pod, "ctr0") == [f"k8s.gpu.example.com/gpu={claim['metadata']['uid']}-{result['device']}"]
    assert len(gpus.cdi_env(claim)) == 1  # prepared once


async def test_prioritized_alternatives_pick_the_first_subrequest_that_fits(gpus: Cluster) -> None:
    pods = {p["metadata"]["name"]: p for p in await gpus.wait_running("prioritized-alternatives")}
    fallback = await gpus.claim_of("prioritized-alternatives", pods["pod0"], "gpu")
    preferred = await gpus.claim_of("prioritized-alternatives", pods["pod1"], "gpu")
    assert [r["request"] for r in results(fallback)] == ["gpu/older-gpu"]
    assert [r["request"] for r in results(preferred)] == ["gpu/latest-gpu"]


# -- profiles ------------------------------------------------------------------------------------


async def test_partitions_come_from_one_gpus_counter_set(partitions: Cluster) -> None:
    (pod,) = await partitions.wait_running("partitionable-devices")
    claim = await partitions.claim_of("partitionable-devices", pod, "gpu-partitions")
    devices = sorted(r["device"] for r in results(claim))
    assert len(devices) == 2 and all("-partition-" in d for d in devices)
    assert len({d.split("-partition-")[0] for d in devices}) == 1  # both from one GPU
    slices = (await partitions.json("resourceslices"))["items"]
    counters = [s for s in slices if s["spec"].get("sharedCounters")]
    assert len(counters) == 1 and len(slices) == 2
    gpu = devices[0].split("-partition-")[0]
    by_name = {d["name"]: d for s in slices for d in s["spec"].get("devices") or ()}
    assert {by_name[d]["consumesCounters"][0]["counterSet"] for d in devices} == {f"{gpu}-counters"}
    uid = claim["metadata"]["uid"]
    (status,) = pod["status"]["containerStatuses"]
    (entry,) = status["allocatedResourcesStatus"]
    health = {r["resourceID"]: r["health"] for r in entry["resources"]}
    assert health == {
        f"k8s.gpu.example.com/gpu={uid}-{d}": "Unhealthy" if d == UNHEALTHY_PARTITION else "Healthy" for d in devices
    }


async def test_shared_gpu_serves_both_claims_with_their_capacity(shared: Cluster) -> None:
    pods = await shared.wait_running("gpu-allow-multiple-allocations")
    claims = [await shared.claim_of("gpu-allow-multiple-allocations", p, "gpu") for p in pods]
    got = [r for c in claims for r in results(c)]
    assert len(got) == 2 and len({(r["pool"], r["device"]) for r in got}) == 1
    assert len({r["shareID"] for r in got}) == 2
    assert all(r["consumedCapacity"] == {"memory": "16Gi", "compute": "20"} for r in got)
    for claim in claims:
        (env,) = shared.cdi_env(claim).values()
        assert "GPU_DEVICE_0_MEMORY=16Gi" in env and "GPU_DEVICE_0_COMPUTE=20" in env


async def test_shared_partition_serves_both_claims(shared_partitions: Cluster) -> None:
    pods = await shared_partitions.wait_running("gpu-allow-multiple-allocations-partitionable")
    claims = [await shared_partitions.claim_of("gpu-allow-multiple-allocations-partitionable", p, "gpu") for p in pods]
    got = [r for c in claims for r in results(c)]
    assert len({r["device"] for r in got}) == 1 and "-partition-" in got[0]["device"]
    assert all(r["consumedCapacity"] == {"memory": "8Gi", "compute": "10"} for r in got)


async def test_nic_bandwidth_is_shared_and_network_data_reported(nics: Cluster) -> None:
    pods = await nics.wait_running("net-consumable-capacity")
    claims = {p["metadata"]["name"]: await nics.claim_of("net-consumable-capacity", p, "nic") for p in pods}
    got = {name: results(c)[0] for name, c in claims.items()}
    assert len({r["device"] for r in got.values()}) == 1  # one NIC, shared
    assert got["pod0"]["consumedCapacity"]["ingressBandwidth"] == "10G"
    assert got["pod1"]["consumedCapacity"]["ingressBandwidth"] == "5G"
    for name, claim in claims.items():
        claim = await eventually(
            lambda pod=pods[0] if name == "pod0" else pods[1]: nics.claim_of("net-consumable-capacity", pod, "nic"),
            until=lambda c: bool(ready(c)),
            what="status.devices",
        )
        (entry,) = claim["status"]["devices"]
        assert entry["shareID"] == got[name]["shareID"]
        assert entry["networkData"]["interfaceName"].startswith("net")
        (env,) = nics.cdi_env(claim).values()
        rate = {"pod0": 10, "pod1": 5}[name] * 10**9
        assert f"NET_DEVICE_{got[name]['device'][4:]}_INGRESS_RATE={rate}" in env


async def test_the_pod_binds_only_after_the_driver_sets_the_binding_condition_true(binding: Cluster) -> None:
    """The scheduler allocates, waits in PreBind (the BindingConditionsPending Event) while the pod is unbound,
    and binds it once the driver's controller side has set the condition True; read in log order."""
    changes = binding.record()
    await binding.apply("binding-conditions.yaml")
    (pod,) = await binding.wait_running("binding-conditions")
    claim = await eventually(
        lambda: binding.claim_of("binding-conditions", pod, "gpu"), until=lambda c: bool(ready(c)), what="Ready"
    )
    (result,) = results(claim)
    assert result["bindingConditions"] == ["BindingConditions"]
    assert result["bindingFailureConditions"] == ["BindingFailureConditions"]
    (entry,) = claim["status"]["devices"]
    assert {c["type"]: c["status"] for c in entry["conditions"]} == {"BindingConditions": "True", "Ready": "True"}

    name = claim["metadata"]["name"]
    claim_changes = [c for c in changes if c.resource == "resourceclaims" and c.name == name]
    allocated_at = min(c.offset for c in claim_changes if (c.object.get("status") or {}).get("allocation"))
    true_at = min(c.offset for c in claim_changes if condition_of(c.object, "BindingConditions") == "True")
    bound_at = min(
        c.offset
        for c in changes
        if c.resource == "pods"
        and c.name == "pod0"
        and c.namespace == "binding-conditions"
        and c.object["spec"].get("nodeName")
    )
    assert allocated_at < true_at < bound_at  # allocated, unbound while waiting, bound after the condition
    assert claim["status"]["allocation"].get("allocationTimestamp")  # PreBind's stamp for bindingTimeout
    events = await binding.json(
        "events",
        "-n",
        "binding-conditions",
        "--field-selector",
        "involvedObject.name=pod0,reason=BindingConditionsPending",
    )
    assert [e["message"] for e in events["items"]] == ["waiting for binding conditions for device on node node-1"]


async def test_noschedule_rule_keeps_new_pods_off_and_a_toleration_lets_them_on(taints: Cluster) -> None:
    await taints.apply("device-taints/noschedule/1-pod-keeps-running.yaml")
    await taints.wait_running("device-taint-noschedule", "pod-keeps-running")
    await taints.apply("device-taints/noschedule/2-device-taint-rule.yaml")
    await taints.apply("device-taints/noschedule/3-pod-not-scheduled.yaml")
    events = await eventually(
        lambda: taints.json(
            "events", "-n", "device-taint-noschedule", "--field-selector", "involvedObject.name=pod-not-scheduled"
        ),
        until=lambda e: any(x["reason"] == "FailedScheduling" for x in e["items"]),
        what="FailedScheduling",
    )
    assert events["items"]
    pods = {p["metadata"]["name"]: p for p in (await taints.json("pods", "-n", "device-taint-noschedule"))["items"]}
    assert pods["pod-keeps-running"]["status"]["phase"] == "Running"
    assert not pods["pod-not-scheduled"]["spec"].get("nodeName")
    await taints.kubectl("delete", "-f", str(DEMOS / "device-taints/noschedule/2-device-taint-rule.yaml"))
    await taints.wait_running("device-taint-noschedule", "pod-not-scheduled")

    await taints.apply("device-taints/toleration/1-device-taint-rule.yaml")
    await taints.apply("device-taints/toleration/2-pods.yaml")
    await taints.wait_running("device-taint-toleration", "pod-with-toleration")
    pods = {p["metadata"]["name"]: p for p in (await taints.json("pods", "-n", "device-taint-toleration"))["items"]}
    assert not pods["pod-without-toleration"]["spec"].get("nodeName")


TAINT_DEMOS = DEMOS / "device-taints"
TOLERATION_SECONDS = 5  # the eviction-time demo's 300 s, shortened so the test waits seconds


def has_disruption_target(obj: dict[str, Any]) -> bool:
    return any(
        (c.get("type"), c.get("reason")) == ("DisruptionTarget", "DeletionByDeviceTaintManager")
        for c in (obj.get("status") or {}).get("conditions") or ()
    )


def pod_changes(changes: list[Change], ns: str, name: str) -> list[Change]:
    return [c for c in changes if c.resource == "pods" and c.namespace == ns and c.name == name]


def deleted_at(changes: list[Change], ns: str, name: str) -> int:
    """The offset at which the pod was marked for deletion (or deleted)."""
    return min(
        c.offset
        for c in pod_changes(changes, ns, name)
        if c.type == "DELETED" or c.object["metadata"].get("deletionTimestamp")
    )


def eviction_in_progress(rule: dict[str, Any]) -> dict[str, Any] | None:
    for c in (rule.get("status") or {}).get("conditions") or ():
        if c["type"] == "EvictionInProgress":
            found: dict[str, Any] = c
            return found
    return None


async def clear_taint_demos(c: Cluster) -> None:
    """The other taint demos' rules and namespaces off the node's GPUs, so each taint test starts from none."""
    rules = ["noschedule/2-device-taint-rule.yaml", "toleration/1-device-taint-rule.yaml"]
    rules += ["noexecute/2-device-taint-rule.yaml", "eviction-time/2-device-taint-rule.yaml"]
    for rule in rules:
        await c.kubectl("delete", "--ignore-not-found", "-f", str(TAINT_DEMOS / rule))
    namespaces = ["noschedule", "toleration", "noexecute", "eviction-time"]
    await c.kubectl(
        "delete", "namespace", "--ignore-not-found", *(f"device-taint-{n}" for n in namespaces), timeout=120
    )


async def completed_rule(c: Cluster, name: str) -> dict[str, Any]:
    rule: dict[str, Any] = await eventually(
        lambda: c.json("devicetaintrule", name),
        until=lambda r: (eviction_in_progress(r) or {}).get("reason") == "Completed",
        timeout=60,
        interval=0.5,
        what=f"{name} Completed",
    )
    return rule


async def test_noexecute_rule_evicts_the_running_pod_and_the_node_agent_unprepares_it(taints: Cluster) -> None:
    ns = "device-taint-noexecute"
    await clear_taint_demos(taints)
    try:
        await taints.apply("device-taints/noexecute/1-pod-to-be-evicted.yaml")
        (pod,) = await taints.wait_running(ns, "pod-to-be-evicted")
        claim = await taints.claim_of(ns, pod, "gpu")
        assert len(taints.cdi_env(claim)) == 1  # prepared on the node
        changes = taints.record()
        await taints.apply("device-taints/noexecute/2-device-taint-rule.yaml")
        await taints.kubectl("wait", "pod/pod-to-be-evicted", "-n", ns, "--for=delete", "--timeout=60s", timeout=90)

        conditioned = [c for c in pod_changes(changes, ns, "pod-to-be-evicted") if has_disruption_target(c.object)]
        assert conditioned, "the pod never got the DisruptionTarget condition"
        assert conditioned[0].offset < deleted_at(changes, ns, "pod-to-be-evicted")
        await eventually(lambda: not taints.cdi_env(claim), what="the claim unprepared (CDI spec removed)")
        uid = claim["metadata"]["uid"]
        await eventually(
            lambda: taints.claims(ns),
            until=lambda cs: not any(x["metadata"]["uid"] == uid and x.get("status", {}).get("allocation") for x in cs),
            interval=0.5,
            what="the claim deallocated",
        )
        rule = await completed_rule(taints, "gpu-noexecute")
        condition = eviction_in_progress(rule)
        assert condition is not None
        assert (condition["status"], condition["message"]) == ("False", "1 pod evicted since starting the controller.")

        await taints.apply("device-taints/noexecute/3-pod-no-execute.yaml")  # NoExecute keeps new pods off too
        await eventually(
            lambda: taints.json("events", "-n", ns, "--field-selector", "involvedObject.name=pod-no-execute"),
            until=lambda e: any(x["reason"] == "FailedScheduling" for x in e["items"]),
            interval=0.5,
            what="FailedScheduling",
        )
        assert not (await taints.json("pod", "-n", ns, "pod-no-execute"))["spec"].get("nodeName")
    finally:
        await clear_taint_demos(taints)


async def test_eviction_time_evicts_at_once_after_the_toleration_or_never(taints: Cluster) -> None:
    ns = "device-taint-eviction-time"
    await clear_taint_demos(taints)
    try:
        docs = list(yaml.safe_load_all((TAINT_DEMOS / "eviction-time/1-pods.yaml").read_text()))
        for doc in docs:
            if doc and doc["kind"] == "ResourceClaimTemplate" and doc["metadata"]["name"] == "with-300s-toleration":
                (request,) = doc["spec"]["spec"]["devices"]["requests"]
                (toleration,) = request["exactly"]["tolerations"]
                assert toleration["tolerationSeconds"] == 300
                toleration["tolerationSeconds"] = TOLERATION_SECONDS
        await taints.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([d for d in docs if d]))
        await taints.wait_running(ns)
        changes = taints.record()
        await taints.apply("device-taints/eviction-time/2-device-taint-rule.yaml")
        await taints.kubectl(
            "wait", "pod/pod-with-300s-toleration", "-n", ns, "--for=delete", "--timeout=90s", timeout=120
        )
        await taints.kubectl("wait", "pod/pod-no-toleration", "-n", ns, "--for=delete", "--timeout=60s", timeout=90)

        # In log order: the untolerating pod goes at once, the rule says PodsPendingEviction while the
        # tolerating-for-a-while pod still runs, then that one goes; the pod tolerating forever stays.
        at_once = deleted_at(changes, ns, "pod-no-toleration")
        later = deleted_at(changes, ns, "pod-with-300s-toleration")
        pending = [
            c.offset
            for c in changes
            if c.resource == "devicetaintrules"
            and (eviction_in_progress(c.object) or {}).get("reason") == "PodsPendingEviction"
        ]
        assert at_once < later and pending and min(pending) < later
        for name in ("pod-no-toleration", "pod-with-300s-toleration"):
            assert any(has_disruption_target(c.object) for c in pod_changes(changes, ns, name))
        assert not any(has_disruption_target(c.object) for c in pod_changes(changes, ns, "pod-with-toleration"))
        (staying,) = (await taints.json("pods", "-n", ns))["items"]
        assert (staying["metadata"]["name"], staying["status"]["phase"]) == ("pod-with-toleration", "Running")
        condition = eviction_in_progress(await completed_rule(taints, "gpu-eviction-time"))
        assert condition is not None
        assert (condition["status"], condition["message"]) == ("False", "2 pods evicted since starting the controller.")
    finally:
        await clear_taint_demos(taints)


async def test_kubectl_shows_device_status_and_allocated_resources_status(partitions: Cluster) -> None:
    """The real kubectl (1.32) on the partitions demo: -o yaml carries status.devices and
    allocatedResourcesStatus under 1.37's names; describe prints the claim's status generically, and
    1.32's pod describer, which predates allocatedResourcesStatus, prints nothing of it."""
    ns = "partitionable-devices"
    (pod,) = await partitions.wait_running(ns)
    claim = await partitions.claim_of(ns, pod, "gpu-partitions")
    name = claim["metadata"]["name"]
    await eventually(lambda: partitions.claim_of(ns, pod, "gpu-partitions"), until=lambda c: len(ready(c)) == 2)
    devices = sorted(r["device"] for r in results(claim))

    claim_yaml = (await partitions.kubectl("get", "resourceclaim", "-n", ns, name, "-o", "yaml")).out
    status = yaml.safe_load(claim_yaml)["status"]
    assert [sorted(e) for e in status["devices"]] == [["conditions", "data", "device", "driver", "pool"]] * 2
    assert sorted(e["device"] for e in status["devices"]) == devices
    (condition,) = status["devices"][0]["conditions"]
    # A ResourceClaim has no metadata.generation (kube's claim strategy sets none), so the condition carries no
    # observedGeneration (omitempty), as the example driver's does.
    assert sorted(condition) == ["lastTransitionTime", "message", "reason", "status", "type"]
    assert (condition["type"], condition["status"], condition["reason"]) == ("Ready", "True", "DevicePrepared")
    assert sorted(status["devices"][0]["data"]) == ["driverVersion", "model", "uuid"]

    pod_yaml = (await partitions.kubectl("get", "pod", "-n", ns, "pod0", "-o", "yaml")).out
    (container,) = yaml.safe_load(pod_yaml)["status"]["containerStatuses"]
    (entry,) = container["allocatedResourcesStatus"]
    assert entry["name"] == "claim:gpu-partitions"
    uid = claim["metadata"]["uid"]
    assert entry["resources"] == [
        {
            "resourceID": f"k8s.gpu.example.com/gpu={uid}-{d}",
            "health": "Unhealthy" if d == UNHEALTHY_PARTITION else "Healthy",
        }
        for d in devices
    ]

    described = (await partitions.kubectl("describe", "pod", "-n", ns, "pod0")).out
    assert "Status:       Running" in described and "Node:         node-1/" in described
    assert "    State:          Running" in described and "    Ready:          True" in described
    assert "Successfully assigned partitionable-devices/pod0 to node-1" in described
    # kubectl 1.32's pod describer has no line for allocatedResourcesStatus (seen by running it): none of it shows.
    assert "Unhealthy" not in described and "k8s.gpu.example.com/gpu=" not in described
    assert "allocated" not in described.lower()

    described = (await partitions.kubectl("describe", "resourceclaim", "-n", ns, name)).out
    # No describer for ResourceClaim in 1.32: the generic one prints every field, status.devices included.
    status_part = described[described.index("\nStatus:\n") :]
    assert "\n  Devices:\n    Conditions:\n" in status_part
    assert "      Reason:                DevicePrepared\n" in status_part
    assert "      Type:                  Ready\n" in status_part
    for d in devices:
        assert f"    Device:      {d}\n" in status_part


async def test_extended_resource_requests_get_a_claim_from_the_scheduler(taints: Cluster) -> None:
    """Pods asking for example.com/gpu (a DeviceClass's extendedResourceName) and for the implicit
    deviceclass.resource.kubernetes.io/gpu.example.com in limits: the scheduler creates a claim per pod, with
    the extended-resource-claim annotation, records it in status.extendedResourceClaimStatus, and the
    container runs with the device's CDI env. On the taints stack, after clearing the taint demos."""
    ns = "extended-resource-request"
    await clear_taint_demos(taints)
    try:
        await taints.apply("extended-resource-request.yaml")
        pods = {p["metadata"]["name"]: p for p in await taints.wait_running(ns)}
        assert set(pods) == {"pod0", "pod1"}
        claims = {c["metadata"]["name"]: c for c in await taints.claims(ns)}
        devices: set[str] = set()
        for name, resource in (
            ("pod0", "deviceclass.resource.kubernetes.io/gpu.example.com"),
            ("pod1", "example.com/gpu"),
        ):
            status = pods[name]["status"]["extendedResourceClaimStatus"]
            claim = claims[status["resourceClaimName"]]
            assert claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"
            (owner,) = claim["metadata"]["ownerReferences"]
            assert (owner["kind"], owner["name"], owner["controller"]) == ("Pod", name, True)
            (mapping,) = status["requestMappings"]
            assert (mapping["containerName"], mapping["resourceName"]) == ("ctr0", resource)
            (result,) = results(claim)
            assert result["request"] == mapping["requestName"]
            devices.add(result["device"])
            env = await eventually(lambda claim=claim: taints.cdi_env(claim), what=f"{name}'s CDI spec")
            uid = claim["metadata"]["uid"]
            assert f"GPU_DEVICE_{result['device'][4:]}={result['device']}" in env[f"{uid}-{result['device']}"]
        assert len(devices) == 2
    finally:
        await taints.kubectl("delete", "namespace", "--ignore-not-found", ns, timeout=120)
        await taints.kubectl("delete", "--ignore-not-found", "deviceclass", "gpu-extended.example.com", timeout=60)
