"""DynamicResources with 1.37's gates (FeatureGates(release="1.37")): shared capacity, taint rules, subrequests.

The scheduler core runs over a fake API as in ``test_dra_scheduling``; the
allocator's own cases are in ``tests/unit/allocator``. Here: that the plugin
hands the allocator what allocated claims hold (shared devices and their
consumed capacity, in-flight allocations included) and the DeviceTaintRules'
taints, and that its bookkeeping (memo, queueing hints) follows them.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

from prometheus_client import CollectorRegistry

from services.kube.feature_gates import FeatureGates
from services.kube.structured import Features
from services.scheduler.client import PODS, RESOURCE_CLAIMS
from services.scheduler.cluster_events import Resource
from services.scheduler.dra.assume_cache import ClaimAssumeCache
from services.scheduler.dra.stores import ObjectStore
from services.scheduler.framework import QueueingHint
from services.scheduler.metrics import SchedulerMetrics
from services.scheduler.plugins.default_binder import DefaultBinder
from services.scheduler.plugins.dynamic_resources import DynamicResources
from services.scheduler.profile import Profile, default_plugins
from services.scheduler.queue import ACTIVE_Q, UNSCHEDULABLE_PODS
from services.scheduler.scheduler import SchedulerCore
from services.scheduler.service import SchedulerConfig, build_core, watched_resources

from .builders import FakeClock, make_pod
from .dra_fixtures import CLASS_NAME, DEVICE_CLASS, DRIVER, NODE_NAME, WORKER_NODE, no_sleep
from .fake_client import FakeClient

Obj = dict[str, Any]
GATES = FeatureGates(release="1.37")
NIC = "nic-0"


class World:
    """A 1.37 scheduler core with DynamicResources and a DeviceTaintRule store; ``apply`` plays an informer."""

    def __init__(self) -> None:
        self.client = FakeClient()
        self.clock = FakeClock()
        self.dra = DynamicResources(
            client=self.client,
            classes=ObjectStore(),
            slices=ObjectStore(),
            taint_rules=ObjectStore(),
            features=Features.from_gates(GATES),
            conflict_retry_delays=(0.0,) * 4,
            sleep=no_sleep,
        )
        profile = Profile(default_plugins(binder=DefaultBinder(self.client), dynamic_resources=self.dra))
        self.core = SchedulerCore(profiles=[profile], clock=self.clock, metrics=SchedulerMetrics(CollectorRegistry()))
        self.apply(Resource.NODE, None, WORKER_NODE)
        self.apply(Resource.DEVICE_CLASS, None, DEVICE_CLASS)

    def apply(self, resource: str, old: Obj | None, new: Obj | None) -> None:
        self.core.on_object_change(resource, old, new)

    def add_pod_with_claim(self, name: str, claim_spec: Obj) -> Obj:
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"claim-{name}", "namespace": "default", "uid": f"uid-claim-{name}"},
            "spec": claim_spec,
        }
        self.apply(Resource.RESOURCE_CLAIM, None, self.client.put(RESOURCE_CLAIMS, claim))
        pod = make_pod(name, uid=f"uid-{name}", resource_claims=[{"name": "r", "resourceClaimName": f"claim-{name}"}])
        stored = self.client.put(PODS, pod)
        self.apply(Resource.POD, None, stored)
        return stored

    def claim(self, name: str) -> Obj:
        stored = self.client.stored(RESOURCE_CLAIMS, f"claim-{name}", "default")
        assert stored is not None
        return stored

    async def schedule_and_bind(self) -> Any:
        attempt = await self.core.schedule_one()
        assert attempt is not None
        if attempt.succeeded:
            assert (await self.core.bind(attempt)).succeeded
        return attempt


def nic_slice(*, devices: list[Obj] | None = None) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{NODE_NAME}-{DRIVER}", "resourceVersion": "1"},
        "spec": {
            "driver": DRIVER,
            "nodeName": NODE_NAME,
            "pool": {"name": NODE_NAME, "generation": 1, "resourceSliceCount": 1},
            "devices": devices
            or [
                {
                    "name": NIC,
                    "basic": {"allowMultipleAllocations": True, "capacity": {"bandwidth": {"value": "10Gi"}}},
                }
            ],
        },
    }


def gpu_slice(*names: str) -> Obj:
    """GPUs whose ``model`` attribute is their name."""
    return nic_slice(devices=[{"name": n, "basic": {"attributes": {"model": {"string": n}}}} for n in names])


def request(name: str = "req", **fields: Any) -> Obj:
    return {"name": name, "deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": 1, **fields}


def bandwidth(value: str) -> Obj:
    return {"devices": {"requests": [request(capacity={"requests": {"bandwidth": value}})]}}


def taint_rule(name: str = "rule", *, device: str = "gpu-0", effect: str = "NoSchedule") -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {
            "deviceSelector": {"driver": DRIVER, "pool": NODE_NAME, "device": device},
            "taint": {"key": "example.com/broken", "value": "yes", "effect": effect},
        },
    }


def results(claim: Obj) -> list[Obj]:
    return list(claim["status"]["allocation"]["devices"]["results"])


# ------------------------------------------------------------- assume cache


def shared_claim(name: str, share: str, amount: str) -> Obj:
    result = {
        "request": "req",
        "driver": DRIVER,
        "pool": NODE_NAME,
        "device": NIC,
        "shareID": share,
        "consumedCapacity": {"bandwidth": amount},
    }
    return {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "1"},
        "status": {"allocation": {"devices": {"results": [result]}}},
    }


def test_assume_cache_sums_shared_capacity_and_leaves_shared_devices_free() -> None:
    cache = ClaimAssumeCache()
    changed: list[tuple[str, str]] = []
    cache.on_pool_change(changed.append)
    nic = (DRIVER, NODE_NAME, NIC)
    cache.on_add(shared_claim("a", "s-a", "4Gi"))
    pending = shared_claim("b", "s-b", "4Gi")
    cache.on_add({**pending, "status": {}})
    cache.add_in_flight(pending)  # reserved, not yet written: counts the same
    assert nic not in cache.allocated_devices()
    assert nic in cache.shared_devices()
    assert cache.allocated_capacity() == {nic: {"bandwidth": Fraction(8 << 30)}}
    assert changed == [(DRIVER, NODE_NAME)] * 2
    cache.remove_in_flight("uid-b")
    assert cache.allocated_capacity() == {nic: {"bandwidth": Fraction(4 << 30)}}
    cache.on_delete(shared_claim("a", "s-a", "4Gi"))
    assert cache.allocated_capacity() == {} and nic not in cache.shared_devices()
    assert len(changed) == 4


# ------------------------------------------------------ scheduling, 1.37


async def test_two_claims_share_a_device_and_a_third_no_longer_fits() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, nic_slice())
    for name in ("a", "b", "c"):
        w.add_pod_with_claim(name, bandwidth("4Gi"))
    first = await w.core.schedule_one()
    second = await w.core.schedule_one()  # while the first is in flight: its 4Gi count
    assert first is not None and first.succeeded and second is not None and second.succeeded
    assert (await w.core.bind(first)).succeeded and (await w.core.bind(second)).succeeded
    shares = {r["shareID"] for name in ("a", "b") for r in results(w.claim(name))}
    assert len(shares) == 2
    assert all(r["device"] == NIC and r["consumedCapacity"] == {"bandwidth": "4Gi"} for r in results(w.claim("a")))
    third = await w.schedule_and_bind()
    assert not third.succeeded
    assert third.message.startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    pod_c = w.client.stored(PODS, "c", "default")
    assert w.core.queue.where(pod_c) == UNSCHEDULABLE_PODS

    # Claim a is deallocated: the freed bandwidth wakes pod c, which then fits.
    before = copy.deepcopy(w.claim("a"))
    w.apply(Resource.RESOURCE_CLAIM, None, before)
    freed = copy.deepcopy(before)
    freed["status"] = {}
    w.client.put(RESOURCE_CLAIMS, freed)
    w.clock.step(2)
    w.apply(Resource.RESOURCE_CLAIM, before, w.claim("a"))
    assert w.core.queue.where(pod_c) == ACTIVE_Q
    assert (await w.schedule_and_bind()).succeeded


async def test_a_taint_rule_keeps_a_device_out_and_its_deletion_wakes_the_pod() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    rule = taint_rule()
    w.apply(Resource.DEVICE_TAINT_RULE, None, rule)
    pod = w.add_pod_with_claim("a", {"devices": {"requests": [request()]}})
    attempt = await w.schedule_and_bind()
    assert not attempt.succeeded
    assert attempt.message.startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    assert w.core.queue.where(pod) == UNSCHEDULABLE_PODS
    # An unrelated rule (None effect) changes nothing for the pod.
    w.apply(Resource.DEVICE_TAINT_RULE, None, taint_rule("info", effect="None"))
    assert w.core.queue.where(pod) == UNSCHEDULABLE_PODS
    w.clock.step(2)  # past the pod's backoff
    w.apply(Resource.DEVICE_TAINT_RULE, rule, None)
    assert w.core.queue.where(pod) == ACTIVE_Q
    attempt = await w.schedule_and_bind()
    assert attempt.succeeded
    assert [r["device"] for r in results(w.claim("a"))] == ["gpu-0"]


async def test_a_tolerated_taint_rule_does_not_keep_the_device_out() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    w.apply(Resource.DEVICE_TAINT_RULE, None, taint_rule())
    toleration = {"key": "example.com/broken", "operator": "Exists", "effect": "NoSchedule"}
    w.add_pod_with_claim("a", {"devices": {"requests": [request(tolerations=[toleration])]}})
    assert (await w.schedule_and_bind()).succeeded


def hint(w: World, pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
    return w.dra.is_schedulable_after_device_taint_rule_change(pod, old, new)


def test_taint_rule_hint_wakes_exactly_the_pods_that_could_use_a_freed_device() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0", "gpu-1"))
    only_gpu1 = {
        "devices": {
            "requests": [
                request(selectors=[{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "gpu-1"'}}])
            ]
        }
    }
    pod_any = w.add_pod_with_claim("any", {"devices": {"requests": [request()]}})
    pod_gpu1 = w.add_pod_with_claim("gpu1", only_gpu1)
    rule = taint_rule(device="gpu-0")
    untainted = copy.deepcopy(rule)
    untainted["spec"]["taint"]["effect"] = "None"
    moved = copy.deepcopy(rule)
    moved["spec"]["deviceSelector"]["device"] = "gpu-1"
    cases = [
        ("add", None, rule, pod_any, QueueingHint.QUEUE_SKIP),  # a new taint only takes devices away
        ("delete", rule, None, pod_any, QueueingHint.QUEUE),
        ("delete, pod cannot use gpu-0", rule, None, pod_gpu1, QueueingHint.QUEUE_SKIP),
        ("effect to None", rule, untainted, pod_any, QueueingHint.QUEUE),
        (
            "metadata only",
            rule,
            {**rule, "metadata": {"name": "rule", "resourceVersion": "2"}},
            pod_any,
            QueueingHint.QUEUE_SKIP,
        ),
        ("moved to gpu-1", rule, moved, pod_any, QueueingHint.QUEUE),
        ("None rule deleted", untainted, None, pod_any, QueueingHint.QUEUE_SKIP),
    ]
    for name, old, new, pod, want in cases:
        assert hint(w, pod, old, new) == want, name


async def test_taint_rule_hint_skips_pods_whose_claims_are_allocated() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0", "gpu-1"))
    pod = w.add_pod_with_claim("a", {"devices": {"requests": [request()]}})
    assert (await w.schedule_and_bind()).succeeded
    w.apply(Resource.RESOURCE_CLAIM, None, w.claim("a"))
    assert hint(w, pod, taint_rule(), None) == QueueingHint.QUEUE_SKIP


async def test_a_prioritized_list_falls_back_to_its_second_subrequest() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    big = {"name": "big", "deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": 2}
    small = {"name": "small", "deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": 1}
    w.add_pod_with_claim("a", {"devices": {"requests": [{"name": "req", "firstAvailable": [big, small]}]}})
    assert (await w.schedule_and_bind()).succeeded
    assert [(r["request"], r["device"]) for r in results(w.claim("a"))] == [("req/small", "gpu-0")]


async def test_a_subrequest_naming_a_missing_class_is_unschedulable() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    sub = {"name": "x", "deviceClassName": "nope", "allocationMode": "ExactCount", "count": 1}
    w.add_pod_with_claim("a", {"devices": {"requests": [{"name": "req", "firstAvailable": [sub]}]}})
    attempt = await w.schedule_and_bind()
    assert not attempt.succeeded
    assert attempt.message.startswith("0/1 nodes are available: request req/x: device class nope does not exist.")


async def test_the_memo_does_not_reuse_an_outcome_across_a_taint_rule_change() -> None:
    w = World()
    w.apply(Resource.RESOURCE_SLICE, None, gpu_slice("gpu-0"))
    w.add_pod_with_claim("a", {"devices": {"requests": [request()]}})
    w.add_pod_with_claim("b", {"devices": {"requests": [request()]}})
    w.apply(Resource.DEVICE_TAINT_RULE, None, taint_rule())
    assert not (await w.schedule_and_bind()).succeeded  # remembers "no solution" for these claims
    w.apply(Resource.DEVICE_TAINT_RULE, taint_rule(), None)
    assert (await w.schedule_and_bind()).succeeded


# ------------------------------------------------------------------ wiring


def test_the_scheduler_watches_device_taint_rules_only_where_their_gates_are_on() -> None:
    cases = [
        ("1.31", FeatureGates(release="1.31"), False),
        ("1.37", GATES, True),
        ("1.37, rules off", FeatureGates.parse("DRADeviceTaintRules=false", release="1.37"), False),
    ]
    for name, gates, want in cases:
        plurals = [plural for _, plural, _ in watched_resources(gates)]
        assert ("devicetaintrules" in plurals) is want, name
        if want:  # before the claims, after the slices the rules apply to
            assert plurals.index("resourceslices") < plurals.index("devicetaintrules") < plurals.index("resourceclaims")
        _, dra = build_core(SchedulerConfig(gates=gates), api=FakeClient(), clock=FakeClock())
        assert (dra.taint_rules is not None) is want, name
        registered = {e.event.resource for e in dra.events_to_register()}
        assert (Resource.DEVICE_TAINT_RULE in registered) is want, name
