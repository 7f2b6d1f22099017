"""Objects and a run harness mirroring kube's dynamicresources_test.go (1.31)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from services.kube.resourceclaim import FINALIZER
from services.scheduler.client import POD_SCHEDULING_CONTEXTS, RESOURCE_CLAIMS
from services.scheduler.dra.assume_cache import ClaimAssumeCache
from services.scheduler.dra.stores import ObjectStore
from services.scheduler.framework import CycleState
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins.dynamic_resources import DynamicResources
from services.scheduler.status import Code, Status

from .builders import make_node, make_pod
from .fake_client import FakeClient

Obj = dict[str, Any]

NODE_NAME = "worker"
NODE2_NAME = "worker-2"
DRIVER = "some-driver"
POD_NAME = "my-pod"
POD_UID = "1234"
RESOURCE_NAME = "my-resource"
RESOURCE_NAME2 = RESOURCE_NAME + "-2"
CLAIM_NAME = POD_NAME + "-" + RESOURCE_NAME
CLAIM_NAME2 = CLAIM_NAME + "-2"
CLASS_NAME = "my-resource-class"
NAMESPACE = "default"

DEVICE_CLASS: Obj = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceClass", "metadata": {"name": CLASS_NAME}}

POD_WITH_CLAIM_NAME = make_pod(
    POD_NAME, uid=POD_UID, resource_claims=[{"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}]
)
POD_WITH_CLAIM_TEMPLATE = make_pod(
    POD_NAME, uid=POD_UID, resource_claims=[{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME}]
)
POD_WITH_CLAIM_TEMPLATE_IN_STATUS = make_pod(
    POD_NAME,
    uid=POD_UID,
    resource_claims=[{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME}],
    resource_claim_statuses=[{"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}],
)
POD_WITH_TWO_CLAIM_NAMES = make_pod(
    POD_NAME,
    uid=POD_UID,
    resource_claims=[
        {"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME},
        {"name": RESOURCE_NAME2, "resourceClaimName": CLAIM_NAME2},
    ],
)

WORKER_NODE = make_node(NODE_NAME, labels={"kubernetes.io/hostname": NODE_NAME})
WORKER_NODE2 = make_node(NODE2_NAME, labels={"kubernetes.io/hostname": NODE2_NAME})


def resource_slice(node: str, *devices: str, driver: str = DRIVER, name: str | None = None) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node}-{driver}", "resourceVersion": "1"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": d, "basic": {}} for d in devices],
        },
    }


WORKER_NODE_SLICE = resource_slice(NODE_NAME, "instance-1")


def make_claim(name: str = CLAIM_NAME, *, selectors: list[str] | None = None, controller: str = "") -> Obj:
    request: Obj = {"name": "req-1", "deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": 1}
    if selectors:
        request["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    spec: Obj = {"devices": {"requests": [request]}}
    if controller:
        spec["controller"] = controller
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}"},
        "spec": spec,
    }


def owned(claim: Obj, pod_uid: str = POD_UID) -> Obj:
    claim = copy.deepcopy(claim)
    claim["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": pod_uid, "controller": True}
    ]
    return claim


def node_selector_fields(node: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}


ALLOCATION_RESULT: Obj = {
    "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": NODE_NAME, "device": "instance-1"}]},
    "nodeSelector": node_selector_fields(NODE_NAME),
}


def with_allocation(claim: Obj, alloc: Mapping[str, Any] | None = ALLOCATION_RESULT, finalizer: bool = True) -> Obj:
    claim = copy.deepcopy(claim)
    status = claim.setdefault("status", {})
    if alloc is None:
        status.pop("allocation", None)
    else:
        status["allocation"] = copy.deepcopy(dict(alloc))
    if finalizer and alloc is not None:
        claim["metadata"]["finalizers"] = [FINALIZER]
    return claim


def reserved(claim: Obj, *pods: tuple[str, str]) -> Obj:
    claim = copy.deepcopy(claim)
    claim.setdefault("status", {})["reservedFor"] = [{"resource": "pods", "name": n, "uid": u} for n, u in pods]
    return claim


PENDING_CLAIM = owned(make_claim())
PENDING_CLAIM2 = owned(make_claim(CLAIM_NAME2))
ALLOCATED_CLAIM = with_allocation(PENDING_CLAIM)
IN_USE_CLAIM = reserved(ALLOCATED_CLAIM, (POD_NAME, POD_UID))
OTHER_CLAIM = make_claim("not-my-claim")
OTHER_ALLOCATED_CLAIM = with_allocation(make_claim("not-my-claim"))
ALLOCATED_CLAIM_WITH_WRONG_TOPOLOGY = with_allocation(
    PENDING_CLAIM,
    {
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}
            ]
        }
    },
)
ALLOCATED_CLAIM_WITH_GOOD_TOPOLOGY = with_allocation(
    PENDING_CLAIM,
    {
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE_NAME]}]}
            ]
        }
    },
)

# Classic DRA objects.
CLASSIC_CLAIM = owned(make_claim(controller=DRIVER))
CLASSIC_CLAIM2 = owned(make_claim(CLAIM_NAME2, controller=DRIVER))
CLASSIC_ALLOCATED_CLAIM = with_allocation(CLASSIC_CLAIM, {"controller": DRIVER})


def scheduling_context(
    *, potential: list[str] | None = None, selected: str = "", infos: list[Obj] | None = None, owner_uid: str = POD_UID
) -> Obj:
    spec: Obj = {}
    if potential is not None:
        spec["potentialNodes"] = potential
    if selected:
        spec["selectedNode"] = selected
    obj: Obj = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "PodSchedulingContext",
        "metadata": {
            "name": POD_NAME,
            "namespace": NAMESPACE,
            "uid": "psc-uid",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": owner_uid, "controller": True}
            ],
        },
        "spec": spec,
    }
    if infos is not None:
        obj["status"] = {"resourceClaims": infos}
    return obj


SCHEDULING = scheduling_context()
SCHEDULING_INFO = scheduling_context(potential=[NODE_NAME], infos=[{"name": RESOURCE_NAME}, {"name": RESOURCE_NAME2}])


async def no_sleep(_: float) -> None:
    return None


@dataclass
class Step:
    status: Status | None
    calls: list[str]


@dataclass
class Harness:
    """The plugin over a fake API, with claims both stored and in the assume cache."""

    claims: list[Obj] = field(default_factory=list)
    classes: list[Obj] = field(default_factory=list)
    slices: list[Obj] = field(default_factory=list)
    schedulings: list[Obj] = field(default_factory=list)
    gate: bool = False
    enabled: bool = True

    def __post_init__(self) -> None:
        self.client = FakeClient()
        self.cache = ClaimAssumeCache()
        for claim in self.claims:
            self.cache.on_add(self.client.put(RESOURCE_CLAIMS, claim))
        self.scheduling_store = ObjectStore()
        for ctx in self.schedulings:
            self.scheduling_store.put(self.client.put(POD_SCHEDULING_CONTEXTS, ctx))
        self.plugin = DynamicResources(
            client=self.client,
            classes=ObjectStore(self.classes),
            slices=ObjectStore(self.slices),
            claims=self.cache,
            scheduling_contexts=self.scheduling_store,
            control_plane_controller=self.gate,
            enabled=self.enabled,
            conflict_retry_delays=(0.0, 0.0, 0.0, 0.0),
            sleep=no_sleep,
        )
        self.state = CycleState()

    def stored_claim(self, name: str = CLAIM_NAME) -> Obj | None:
        return self.client.stored(RESOURCE_CLAIMS, name, NAMESPACE)

    def stored_scheduling(self) -> Obj | None:
        return self.client.stored(POD_SCHEDULING_CONTEXTS, POD_NAME, NAMESPACE)

    def in_flight(self) -> list[str]:
        return sorted(c["metadata"]["name"] for c in self.cache._in_flight.values())

    def assumed(self) -> list[str]:
        return sorted(key.split("/")[1] for key in self.cache._assumed)


@dataclass
class Run:
    """Statuses of each extension point the kube test flow reached."""

    preenqueue: Status | None = None
    prefilter: Status | None = None
    filter: dict[str, Status | None] = field(default_factory=dict)
    prescore: Status | None = None
    reserve: Status | None = None
    prebind: Status | None = None
    postfilter: Status | None = None
    reached: list[str] = field(default_factory=list)


def ok(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


async def run_plugin(
    h: Harness,
    pod: Obj,
    *,
    nodes: list[Obj] | None = None,
    before_prebind: Callable[[Harness], None] | None = None,
    unreserve_before_prebind: bool = False,
    unreserve_after_prebind: bool = False,
) -> Run:
    """The flow of kube's TestPlugin: PreEnqueue → PreFilter → Filter → PreScore → Reserve → PreBind/PostBind."""
    run = Run()
    p = h.plugin
    run.preenqueue = p.pre_enqueue(pod)
    run.reached.append("preenqueue")
    if not ok(run.preenqueue):
        return run
    _, run.prefilter = p.pre_filter(h.state, pod, [])
    run.reached.append("prefilter")
    if run.prefilter is not None and run.prefilter.code == Code.SKIP:
        return run
    unschedulable = not ok(run.prefilter)
    infos = [NodeInfo(n) for n in (nodes or [WORKER_NODE])]
    potential: list[NodeInfo] = []
    if not unschedulable:
        for info in infos:
            status = p.filter(h.state, pod, info)
            run.filter[info.name] = status
            if ok(status):
                potential.append(info)
            else:
                unschedulable = True
        run.reached.append("filter")
    if not unschedulable and potential:
        run.prescore = p.pre_score(h.state, pod, potential)
        run.reached.append("prescore")
        if run.prescore is not None and run.prescore.code == Code.SKIP:
            run.prescore = None  # Score has nothing to rank (no prioritized list); the framework skips it
        unschedulable = not ok(run.prescore)
    selected = potential[0].name if potential and not unschedulable else ""
    if selected:
        run.reserve = p.reserve(h.state, pod, selected)
        run.reached.append("reserve")
        if not ok(run.reserve):
            await p.unreserve(h.state, pod, selected)
            run.reached.append("unreserve")
            return run
        if unreserve_before_prebind:
            await p.unreserve(h.state, pod, selected)
            run.reached.append("unreserve")
            return run
        if before_prebind is not None:
            before_prebind(h)
        run.prebind = await p.pre_bind(h.state, pod, selected)
        run.reached.append("prebind")
        if unreserve_after_prebind:
            await p.unreserve(h.state, pod, selected)
            run.reached.append("unreserve")
        elif ok(run.prebind):
            await p.post_bind(h.state, pod, selected)
            run.reached.append("postbind")
    else:
        _, run.postfilter = await p.post_filter(h.state, pod, {}, len(infos))
        run.reached.append("postfilter")
    return run
