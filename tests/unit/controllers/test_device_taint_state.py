"""The device-taint-eviction decisions, case by case as upstream's ``device_taint_eviction_test.go`` (TestController).

Each case builds a known state, feeds handler events (in every order, as
upstream does, unless the events are one fixed sequence), and checks the
claims' eviction times and reasons, the pods' deletion times, the work queue
(ready now / later, with delays) and the Events. Some cases then process the
queue like the controller's workers (delete due pods, write rule status) and
advance the fake clock, checking each rule's ``EvictionInProgress``
condition: the expectations are upstream's, names included. PodGroup cases
(DRAWorkloadResourceClaims, alpha) are not modelled.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from services.controllers.device_taint_state import (
    EVENT_CANCEL,
    EVENT_DELETE,
    RULE_STATUS_PERIOD,
    EvictionState,
    PodEvent,
    PodRef,
    RuleRef,
    WorkItem,
    eviction_condition,
    pod_ref,
    rule_ref,
)
from services.kube.times import time_text

Obj = dict[str, Any]

NODE, NODE2, DRIVER = "worker", "worker-2", "some-driver"
POD, POD_UID, NS = "my-pod", "1234", "default"
CLAIM = f"{POD}-my-resource"
TAINT_KEY, TAINT_VALUE = "example.com/taint", "something"
T0: float = datetime(2000, 1, 1, tzinfo=UTC).timestamp()
TAINT_TIME = "2000-01-01T00:00:00Z"
TOLERATION = 3600  # "A test may run for an hour without reaching the end of this period."


def taint(effect: str = "NoExecute", *, key: str = TAINT_KEY, value: str = "", added: str | None = TAINT_TIME) -> Obj:
    out: Obj = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    if added:
        out["timeAdded"] = added
    return out


def device(name: str, *taints: Obj) -> Obj:
    basic: Obj = {}
    if taints:
        basic["taints"] = list(taints)
    return {"name": name, "basic": basic}


def make_slice(name: str, pool: str, devices: list[Obj], *, generation: int = 1) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": pool, "generation": generation},
            "nodeName": pool,
            "devices": devices,
        },
    }


SIMPLE_SLICE = make_slice(f"{NODE}-{DRIVER}", NODE, [device("instance")])
SLICE = make_slice(
    f"{NODE}-{DRIVER}",
    NODE,
    [
        device("instance"),
        device("instance-no-schedule", taint("NoSchedule", added=None)),
        device("instance-no-execute", taint("None"), taint("NoExecute")),
    ],
)


def variant(base: Obj, edit: Any) -> Obj:
    out = copy.deepcopy(base)
    edit(out)
    return out


def _set_taints(index: int, *taints: Obj) -> Any:
    def edit(s: Obj) -> None:
        s["spec"]["devices"][index]["basic"]["taints"] = list(taints)

    return edit


def _all_effects(effect: str) -> Any:
    def edit(s: Obj) -> None:
        for d in s["spec"]["devices"]:
            for t in d["basic"].get("taints") or ():
                t["effect"] = effect

    return edit


SLICE_TAINTED = variant(SLICE, _set_taints(0, taint(value=TAINT_VALUE)))
SLICE_TAINTED_EXTENDED = variant(
    SLICE_TAINTED,
    lambda s: s["spec"]["devices"].append({**copy.deepcopy(s["spec"]["devices"][0]), "name": "instance-other"}),
)
SLICE_TAINTED_NONE = variant(SLICE_TAINTED, _all_effects("None"))
SLICE_TAINTED_UNKNOWN = variant(SLICE_TAINTED, _all_effects("unknown-effect"))
SLICE_TAINTED_NO_SCHEDULE = variant(SLICE_TAINTED, _all_effects("NoSchedule"))
SLICE_TAINTED_VALUE_OTHER = variant(SLICE_TAINTED, _set_taints(0, taint(value=TAINT_VALUE + "-other")))
SLICE_TAINTED_TWICE = variant(SLICE, _set_taints(0, taint(), taint(key=TAINT_KEY + "-other")))
SLICE_UNTAINTED = variant(SLICE, lambda s: [s["spec"]["devices"][i]["basic"].pop("taints") for i in (1, 2)])
SLICE_OTHER_DEVICES = variant(SLICE, lambda s: [d.update(name=d["name"] + "-other") for d in s["spec"]["devices"]])


def _replaced(s: Obj) -> None:
    s["metadata"]["name"] += "-updated"
    s["spec"]["pool"]["generation"] += 1


SLICE_REPLACED = variant(SLICE, _replaced)


def _slice2(s: Obj) -> None:
    s["metadata"]["name"] += "-2"
    s["spec"]["nodeName"] = NODE2
    s["spec"]["pool"] = {"name": NODE2, "generation": 2}


SLICE2 = variant(SLICE, _slice2)


def rule(
    name: str,
    uid: str,
    *,
    effect: str = "NoExecute",
    device_name: str | None = None,
    driver: bool = True,
    added: str = TAINT_TIME,
) -> Obj:
    selector: Obj = {}
    if driver:
        selector["driver"] = DRIVER
    if device_name:
        selector["device"] = device_name
    return {
        "metadata": {"name": name, "uid": uid, "generation": 1},
        "spec": {
            "deviceSelector": selector,
            "taint": {"key": TAINT_KEY, "value": TAINT_VALUE, "effect": effect, "timeAdded": added},
        },
    }


RULE_EVICT = rule("evict", "1234")
RULE_EVICT_INSTANCE1 = rule("evict-instance", "1234", device_name="instance")
RULE_EVICT_INSTANCE2_LATER = rule(
    "evict-instance-no-execute", "5678", device_name="instance-no-execute", added="2000-01-01T00:00:40Z"
)
RULE_NONE = rule("evict", "1234", effect="None")
RULE_EVICT_OTHER = rule("evict-other", "1234-other", device_name="instance", driver=False)


def result(device_name: str, *tolerations: Obj) -> Obj:
    out: Obj = {"driver": DRIVER, "pool": NODE, "device": device_name, "request": "req-1"}
    if tolerations:
        out["tolerations"] = list(tolerations)
    return out


def claim(
    *,
    name: str = CLAIM,
    namespace: str = NS,
    uid: str = "claim-uid",
    owner: tuple[str, str] = (POD, POD_UID),
    results: list[Obj] | None = None,
    reserved: list[tuple[str, str]] | None = None,
) -> Obj:
    obj: Obj = {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": owner[0], "uid": owner[1], "controller": True}
            ],
        },
        "spec": {"devices": {"requests": [{"name": "req-1", "deviceClassName": "my-resource-class"}]}},
        "status": {},
    }
    if results is not None:
        obj["status"]["allocation"] = {"devices": {"results": results}}
        obj["status"]["reservedFor"] = [{"resource": "pods", "name": n, "uid": u} for n, u in reserved or [owner]]
    return obj


def tolerate(*, key: str = TAINT_KEY, value: str | None = TAINT_VALUE, seconds: int | None = TOLERATION) -> Obj:
    out: Obj = {"effect": "NoExecute", "operator": "Equal" if value is not None else "Exists"}
    if key:
        out["key"] = key
    if value is not None:
        out["value"] = value
    if seconds is not None:
        out["tolerationSeconds"] = seconds
    return out


CLAIM_UNALLOCATED = claim()
IN_USE = claim(results=[result("instance")])
OTHER_DEVICES = [result("instance-no-schedule"), result("instance-no-execute")]
IN_USE_OTHER_NS = claim(namespace=NS + "-other", owner=(POD, POD_UID + "-2"), results=OTHER_DEVICES)
IN_USE_OTHER_NAME = claim(name=CLAIM + "-other", owner=(POD + "-other", POD_UID + "-3"), results=OTHER_DEVICES)
IN_USE_OTHER_NAME_SHARED = claim(
    name=CLAIM + "-other",
    owner=(POD + "-other", POD_UID + "-3"),
    results=OTHER_DEVICES,
    reserved=[(POD, POD_UID), (POD + "-other", POD_UID + "-3")],
)
IN_USE_WITH_TOLERATION = claim(results=[result("instance", tolerate())])
IN_USE_OLD = claim(uid="other", owner=(POD, POD_UID + "-other"), results=[result("instance")])


def in_use_with(*tolerations: Obj) -> Obj:
    return claim(results=[result("instance", *tolerations)])


def pod(
    *,
    name: str = POD,
    namespace: str = NS,
    uid: str = POD_UID,
    node: str = NODE,
    claims: list[str] | None = None,
    template: bool = False,
    status_claim: str | bool | None = False,
    extended: str | None = None,
) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "i"}]}
    if node:
        spec["nodeName"] = node
    pod_claims = []
    for i, claim_name in enumerate(claims or ()):
        entry: Obj = {"name": "my-resource" + ("" if i == 0 else "-other")}
        entry["resourceClaimTemplateName" if template else "resourceClaimName"] = claim_name
        pod_claims.append(entry)
    if pod_claims:
        spec["resourceClaims"] = pod_claims
    status: Obj = {}
    if status_claim is not False:
        status["resourceClaimStatuses"] = [{"name": "my-resource", "resourceClaimName": status_claim}]
    if extended:
        status["extendedResourceClaimStatus"] = {"resourceClaimName": extended}
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid}, "spec": spec, "status": status}


UNSCHEDULED_POD = pod(node="", claims=[CLAIM])
POD_WITH_CLAIM = pod(claims=[CLAIM])
POD_TWO_CLAIMS = pod(claims=[CLAIM, CLAIM + "-other"])
POD_OTHER_UID = pod(uid=POD_UID + "-other", claims=[CLAIM])
POD_OTHER_NS = pod(namespace=NS + "-other", uid=POD_UID + "-2", claims=[CLAIM])
POD_OTHER_NAME = pod(name=POD + "-other", uid=POD_UID + "-3", claims=[CLAIM + "-other"])
POD_TEMPLATE = pod(claims=[CLAIM], template=True)
POD_TEMPLATE_IN_STATUS = pod(claims=[CLAIM], template=True, status_claim=CLAIM)
POD_TEMPLATE_NO_CLAIM_IN_STATUS = pod(claims=[CLAIM], template=True, status_claim=None)
POD_NO_CLAIMS = pod()
POD_EXTENDED = pod(extended=CLAIM)


# -- the harness -------------------------------------------------------------------


class FakePods:
    def __init__(self) -> None:
        self.objs: dict[tuple[str, str], Obj] = {}

    def get(self, namespace: str, name: str) -> Obj | None:
        return self.objs.get((namespace, name))

    def list(self, namespace: str | None = None) -> list[Obj]:
        return [o for (ns, _), o in sorted(self.objs.items()) if namespace is None or ns == namespace]


@dataclass
class FakeQueue:
    clock: list[float]
    ready: list[WorkItem] = field(default_factory=list)
    later: set[tuple[WorkItem, float]] = field(default_factory=set)

    def add(self, item: WorkItem) -> None:
        if item not in self.ready:
            self.ready.append(item)

    def add_after(self, item: WorkItem, delay: float) -> None:
        if delay <= 0:
            self.add(item)
        else:
            # client-go's delaying queue keeps one entry per item, at the earliest time asked for.
            due = self.clock[0] + delay
            for queued, at in list(self.later):
                if queued == item:
                    if at <= due:
                        return
                    self.later.discard((queued, at))
            self.later.add((item, due))

    def state(self) -> tuple[set[WorkItem], set[tuple[WorkItem, float]]]:
        return set(self.ready), {(item, due - self.clock[0]) for item, due in self.later}

    def advance(self, seconds: float) -> None:
        self.clock[0] += seconds
        for item, due in sorted(self.later, key=lambda e: e[1]):
            if due <= self.clock[0]:
                self.later.discard((item, due))
                self.add(item)


class Harness:
    def __init__(self) -> None:
        self.clock = [T0]
        self.pods = FakePods()
        self.queue = FakeQueue(self.clock)
        self.rules: dict[str, Obj] = {}
        self.state = EvictionState(pods=self.pods, queue=self.queue, clock=lambda: self.clock[0])

    def apply(self, old: Obj | None, new: Obj | None) -> None:
        obj = new if new is not None else old
        assert obj is not None
        if "taint" in obj.get("spec", {}):
            self.state.handle_rule_change(old, new)
            if new is None:
                self.rules.pop(obj["metadata"]["name"], None)
            else:
                self.rules[new["metadata"]["name"]] = copy.deepcopy(new)
        elif "driver" in obj.get("spec", {}):
            self.state.handle_slice_change(old, new)
        elif "containers" in obj.get("spec", {}):
            meta = obj["metadata"]
            if new is None:
                self.pods.objs.pop((meta["namespace"], meta["name"]), None)
            else:
                self.pods.objs[(meta["namespace"], meta["name"])] = new
            self.state.handle_pod_change(old, new)
        else:
            self.state.handle_claim_change(old, new)

    def process(self) -> None:
        """Handle every ready item like the controller's workers; delays go back to ``later``."""
        while self.queue.ready:
            item = self.queue.ready.pop(0)
            if isinstance(item, PodRef):
                delay, eviction = self.state.pod_due(item)
                if eviction is None:
                    continue
                if delay > 0:
                    self.queue.add_after(item, delay)
                    continue
                gone = self.pods.objs.pop((item.namespace, item.name), None)
                if gone is not None:
                    self.state.events.append(PodEvent(item, EVENT_DELETE))
                self.state.pod_done(item, eviction, evicted=gone is not None)
                if gone is not None:
                    self.state.handle_pod_change(gone, None)
            else:
                current = self.rules.get(item.name)
                if current is None:
                    continue
                decision = self.state.rule_status(current)
                if decision.condition is not None:
                    current.setdefault("status", {})["conditions"] = [decision.condition]
                if decision.delay > 0:
                    self.queue.add_after(item, decision.delay)


def add(obj: Obj) -> tuple[Obj | None, Obj | None]:
    return (None, obj)


def remove(obj: Obj) -> tuple[Obj | None, Obj | None]:
    return (obj, None)


def update(old: Obj, new: Obj) -> tuple[Obj | None, Obj | None]:
    return (old, new)


def slice_reason(s: Obj, device_name: str, index: int) -> str:
    return f"ResourceSlice {s['metadata']['name']} {DRIVER}/{s['spec']['pool']['name']}/{device_name} taint #{index}"


def rule_reason(r: Obj) -> str:
    return f"DeviceTaintRule {r['metadata']['name']}"


def ev(offset: float, *reasons: str) -> tuple[float, tuple[str, ...]]:
    """An expected eviction: seconds after the taint time, and its reasons in upstream's order."""
    return (offset, reasons)


def cond(r: Obj, status: bool, reason: str, message: str, at: float) -> tuple[str, str, str, str, str]:
    stamp = time_text(datetime.fromtimestamp(T0 + at, UTC))
    return (r["metadata"]["name"], "True" if status else "False", reason, message, stamp)


@dataclass
class Step:
    rules: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    pods: list[str] | None = None  # names of the pods still there
    advance: float = 0.0


@dataclass
class Case:
    events: list[Any]
    initial: list[Obj] = field(default_factory=list)
    claims: dict[str, tuple[float, tuple[str, ...]] | None] = field(default_factory=dict)
    delete_pod_at: dict[tuple[str, str], tuple[float, tuple[str, ...]]] = field(default_factory=dict)
    ready: set[WorkItem] = field(default_factory=set)
    later: set[tuple[WorkItem, float]] = field(default_factory=set)
    events_out: list[tuple[str, str]] = field(default_factory=list)
    process: list[Step] = field(default_factory=list)
    fixed_order: bool = False


def P(p: Obj) -> PodRef:
    return pod_ref(p)


def R(r: Obj) -> RuleRef:
    return rule_ref(r)


SLICE_EVICT = ev(0, slice_reason(SLICE_TAINTED, "instance", 0))
DELETE = (NS, POD)

CASES: dict[str, Case] = {
    "empty": Case(events=[]),
    "populate-pools": Case(events=[add(SLICE), add(SLICE2)]),
    "untainted-claim": Case(events=[add(SLICE), add(SLICE2), add(IN_USE)], claims={CLAIM: None}),
    "tainted-claim-through-resourceslice": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE)], claims={CLAIM: SLICE_EVICT}
    ),
    "rule-status": Case(
        events=[add(RULE_EVICT)],
        ready={R(RULE_EVICT)},
        process=[Step(rules=[cond(RULE_EVICT, False, "NotStarted", "", 0)])],
    ),
    "tainted-claim-through-rule": Case(
        events=[add(RULE_EVICT), add(IN_USE)],
        claims={CLAIM: ev(0, rule_reason(RULE_EVICT))},
        ready={R(RULE_EVICT)},
        process=[Step(rules=[cond(RULE_EVICT, False, "NotStarted", "", 0)])],
    ),
    "evict-pod-resourceclaim": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE), add(POD_WITH_CLAIM)],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_WITH_CLAIM)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "evict-pod-rule": Case(
        events=[add(IN_USE), add(POD_WITH_CLAIM), add(RULE_EVICT)],
        claims={CLAIM: ev(0, rule_reason(RULE_EVICT))},
        delete_pod_at={DELETE: ev(0, rule_reason(RULE_EVICT))},
        ready={R(RULE_EVICT), P(POD_WITH_CLAIM)},
        later={(R(RULE_EVICT), RULE_STATUS_PERIOD)},
        events_out=[(POD, EVENT_DELETE)],
        process=[
            Step(
                stats={"1234": 1},
                rules=[cond(RULE_EVICT, True, "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.", 0)],
                advance=RULE_STATUS_PERIOD,
            ),
            Step(
                stats={"1234": 1},
                rules=[
                    cond(
                        RULE_EVICT,
                        False,
                        "Completed",
                        "1 pod evicted since starting the controller.",
                        RULE_STATUS_PERIOD,
                    )
                ],
            ),
        ],
    ),
    "evict-pod-rule-later": Case(
        events=[add(IN_USE_WITH_TOLERATION), add(POD_WITH_CLAIM), add(RULE_EVICT)],
        claims={CLAIM: ev(TOLERATION, rule_reason(RULE_EVICT))},
        delete_pod_at={DELETE: ev(TOLERATION, rule_reason(RULE_EVICT))},
        ready={R(RULE_EVICT)},
        later={(P(POD_WITH_CLAIM), TOLERATION), (R(RULE_EVICT), RULE_STATUS_PERIOD)},
        events_out=[(POD, EVENT_DELETE)],
        process=[
            Step(
                pods=[POD],
                rules=[cond(RULE_EVICT, True, "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.", 0)],
                advance=RULE_STATUS_PERIOD,
            ),
            # Upstream's table shows a second write here (lastTransitionTime +10s) only because its rule lister
            # never sees the first write; with the write visible, an unchanged condition is not written again.
            Step(
                pods=[POD],
                rules=[cond(RULE_EVICT, True, "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.", 0)],
                advance=TOLERATION - RULE_STATUS_PERIOD,
            ),
            Step(
                pods=[],
                stats={"1234": 1},
                rules=[cond(RULE_EVICT, True, "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.", 0)],
                advance=RULE_STATUS_PERIOD,
            ),
            Step(
                stats={"1234": 1},
                rules=[
                    cond(
                        RULE_EVICT,
                        False,
                        "Completed",
                        "1 pod evicted since starting the controller.",
                        TOLERATION + RULE_STATUS_PERIOD,
                    )
                ],
            ),
        ],
    ),
    "evict-many-pods-many-namespaces": Case(
        events=[add(IN_USE), add(POD_WITH_CLAIM), add(IN_USE_OTHER_NS), add(POD_OTHER_NS), add(RULE_EVICT)],
        claims={CLAIM: ev(0, rule_reason(RULE_EVICT))},
        delete_pod_at={DELETE: ev(0, rule_reason(RULE_EVICT)), (NS + "-other", POD): ev(0, rule_reason(RULE_EVICT))},
        ready={R(RULE_EVICT), P(POD_WITH_CLAIM), P(POD_OTHER_NS)},
        later={(R(RULE_EVICT), RULE_STATUS_PERIOD)},
        events_out=[(POD, EVENT_DELETE), (POD, EVENT_DELETE)],
        process=[
            Step(
                stats={"1234": 2},
                rules=[
                    cond(
                        RULE_EVICT,
                        True,
                        "PodsPendingEviction",
                        "2 pods need to be evicted in 2 different namespaces.",
                        0,
                    )
                ],
                advance=RULE_STATUS_PERIOD,
            ),
            Step(
                stats={"1234": 2},
                rules=[
                    cond(
                        RULE_EVICT,
                        False,
                        "Completed",
                        "2 pods evicted since starting the controller.",
                        RULE_STATUS_PERIOD,
                    )
                ],
            ),
        ],
    ),
    "evict-many-pods-same-namespace": Case(
        events=[add(IN_USE), add(POD_WITH_CLAIM), add(IN_USE_OTHER_NAME), add(POD_OTHER_NAME), add(RULE_EVICT)],
        claims={CLAIM: ev(0, rule_reason(RULE_EVICT)), CLAIM + "-other": ev(0, rule_reason(RULE_EVICT))},
        delete_pod_at={DELETE: ev(0, rule_reason(RULE_EVICT)), (NS, POD + "-other"): ev(0, rule_reason(RULE_EVICT))},
        ready={R(RULE_EVICT), P(POD_WITH_CLAIM), P(POD_OTHER_NAME)},
        later={(R(RULE_EVICT), RULE_STATUS_PERIOD)},
        events_out=[(POD, EVENT_DELETE), (POD + "-other", EVENT_DELETE)],
        process=[
            Step(
                stats={"1234": 2},
                rules=[cond(RULE_EVICT, True, "PodsPendingEviction", "2 pods need to be evicted in 1 namespace.", 0)],
            ),
        ],
    ),
    "none-pod-rule": Case(
        events=[add(SLICE), add(IN_USE), add(POD_WITH_CLAIM), add(RULE_NONE)],
        claims={CLAIM: None},
        ready={R(RULE_NONE)},
        process=[
            Step(
                pods=[POD],
                rules=[
                    cond(
                        RULE_NONE,
                        False,
                        "NoEffect",
                        "3 published devices selected. 1 allocated device selected. 1 pod would be evicted in 1 "
                        "namespace if the effect was NoExecute. This information will not be updated again. "
                        "Recreate the DeviceTaintRule to trigger an update.",
                        0,
                    )
                ],
            )
        ],
    ),
    "none-many-pods-many-namespaces": Case(
        events=[add(IN_USE), add(POD_WITH_CLAIM), add(IN_USE_OTHER_NS), add(POD_OTHER_NS), add(RULE_NONE)],
        claims={CLAIM: None},
        ready={R(RULE_NONE)},
        process=[
            Step(
                pods=[POD, POD],
                rules=[
                    cond(
                        RULE_NONE,
                        False,
                        "NoEffect",
                        "0 published devices selected. 3 allocated devices selected. 2 pods would be evicted in 2 "
                        "different namespaces if the effect was NoExecute. This information will not be updated "
                        "again. Recreate the DeviceTaintRule to trigger an update.",
                        0,
                    )
                ],
            )
        ],
    ),
    "multiple-claims-same-rule": Case(
        events=[add(IN_USE), add(IN_USE_OTHER_NAME_SHARED), add(POD_TWO_CLAIMS), add(RULE_EVICT)],
        claims={CLAIM: ev(0, rule_reason(RULE_EVICT)), CLAIM + "-other": ev(0, rule_reason(RULE_EVICT))},
        delete_pod_at={DELETE: ev(0, rule_reason(RULE_EVICT))},
        ready={R(RULE_EVICT), P(POD_TWO_CLAIMS)},
        later={(R(RULE_EVICT), RULE_STATUS_PERIOD)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "multiple-claims-different-rules-order-1": Case(
        fixed_order=True,
        events=[
            add(IN_USE),
            add(IN_USE_OTHER_NAME_SHARED),
            add(POD_TWO_CLAIMS),
            add(RULE_EVICT_INSTANCE1),
            add(RULE_EVICT_INSTANCE2_LATER),
        ],
        claims={
            CLAIM: ev(0, rule_reason(RULE_EVICT_INSTANCE1)),
            CLAIM + "-other": ev(40, rule_reason(RULE_EVICT_INSTANCE2_LATER)),
        },
        delete_pod_at={DELETE: ev(0, rule_reason(RULE_EVICT_INSTANCE1), rule_reason(RULE_EVICT_INSTANCE2_LATER))},
        ready={R(RULE_EVICT_INSTANCE1), R(RULE_EVICT_INSTANCE2_LATER), P(POD_TWO_CLAIMS)},
        later={(R(RULE_EVICT_INSTANCE1), RULE_STATUS_PERIOD), (R(RULE_EVICT_INSTANCE2_LATER), RULE_STATUS_PERIOD)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "multiple-claims-different-rules-order-2": Case(
        fixed_order=True,
        events=[
            add(IN_USE),
            add(IN_USE_OTHER_NAME_SHARED),
            add(POD_TWO_CLAIMS),
            add(RULE_EVICT_INSTANCE2_LATER),
            add(RULE_EVICT_INSTANCE1),
        ],
        claims={
            CLAIM: ev(0, rule_reason(RULE_EVICT_INSTANCE1)),
            CLAIM + "-other": ev(40, rule_reason(RULE_EVICT_INSTANCE2_LATER)),
        },
        delete_pod_at={DELETE: ev(0, rule_reason(RULE_EVICT_INSTANCE1), rule_reason(RULE_EVICT_INSTANCE2_LATER))},
        ready={R(RULE_EVICT_INSTANCE1), R(RULE_EVICT_INSTANCE2_LATER), P(POD_TWO_CLAIMS)},
        later={
            (P(POD_TWO_CLAIMS), 40),
            (R(RULE_EVICT_INSTANCE2_LATER), RULE_STATUS_PERIOD),
            (R(RULE_EVICT_INSTANCE1), RULE_STATUS_PERIOD),
        },
        events_out=[(POD, EVENT_DELETE)],
    ),
    "evict-pod-resourceclaim-again": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_WITH_CLAIM],
        fixed_order=True,
        events=[remove(SLICE_TAINTED), add(SLICE_TAINTED)],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_WITH_CLAIM)},
        events_out=[(POD, EVENT_CANCEL), (POD, EVENT_DELETE)],
    ),
    "evict-pod-after-scheduling": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, UNSCHEDULED_POD],
        events=[update(UNSCHEDULED_POD, POD_WITH_CLAIM)],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_WITH_CLAIM)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "evict-pod-resourceclaim-unrelated-changes": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_WITH_CLAIM],
        events=[
            update(SLICE_TAINTED, SLICE_TAINTED_EXTENDED),
            update(IN_USE, IN_USE),
            update(POD_WITH_CLAIM, POD_WITH_CLAIM),
        ],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_WITH_CLAIM)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "evict-pod-resourceclaimtemplate": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE), add(POD_TEMPLATE_IN_STATUS)],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_TEMPLATE_IN_STATUS)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "evict-pod-extended-resourceclaim": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE), add(POD_EXTENDED)],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_EXTENDED)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "evict-pod-extended-resourceclaim-status-update": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_NO_CLAIMS],
        events=[update(POD_NO_CLAIMS, POD_EXTENDED)],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_EXTENDED)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "no-evict-extended-resourceclaim-wrong-owner": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE_OLD), add(POD_EXTENDED)], claims={CLAIM: SLICE_EVICT}
    ),
    "evict-pod-later": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE_WITH_TOLERATION), add(POD_WITH_CLAIM)],
        claims={CLAIM: ev(TOLERATION, slice_reason(SLICE_TAINTED, "instance", 0))},
        delete_pod_at={DELETE: ev(TOLERATION, slice_reason(SLICE_TAINTED, "instance", 0))},
        later={(P(POD_WITH_CLAIM), TOLERATION)},
        events_out=[(POD, EVENT_DELETE)],
        process=[Step(pods=[POD], advance=TOLERATION), Step(pods=[])],
    ),
    "evict-pod-later-many": Case(
        events=[
            add(SLICE_TAINTED),
            add(SLICE2),
            add(
                in_use_with(
                    tolerate(key=TAINT_KEY + "-other", seconds=20),
                    tolerate(key="", value=None, seconds=60),
                    tolerate(key="", value=None, seconds=30),
                )
            ),
            add(POD_WITH_CLAIM),
        ],
        claims={CLAIM: ev(30, slice_reason(SLICE_TAINTED, "instance", 0))},
        delete_pod_at={DELETE: ev(30, slice_reason(SLICE_TAINTED, "instance", 0))},
        later={(P(POD_WITH_CLAIM), 30)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "evict-pod-toleration-mismatch": Case(
        events=[
            add(SLICE_TAINTED),
            add(SLICE2),
            add(in_use_with(tolerate(key=TAINT_KEY + "-other", seconds=60))),
            add(POD_WITH_CLAIM),
        ],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_WITH_CLAIM)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "no-evict-pod-toleration-forever": Case(
        events=[
            add(SLICE_TAINTED),
            add(SLICE2),
            add(in_use_with(tolerate(key="", value=None, seconds=None))),
            add(POD_WITH_CLAIM),
        ],
        claims={CLAIM: None},
    ),
    "no-evict-pod-toleration-forever-many": Case(
        events=[
            add(SLICE_TAINTED),
            add(SLICE2),
            add(in_use_with(tolerate(key="", value=None, seconds=60), tolerate(key="", value=None, seconds=None))),
            add(POD_WITH_CLAIM),
        ],
        claims={CLAIM: None},
    ),
    "evict-pod-partial-toleration": Case(
        events=[
            add(SLICE_TAINTED_TWICE),
            add(SLICE2),
            add(in_use_with(tolerate(value=None, seconds=None))),
            add(POD_WITH_CLAIM),
        ],
        claims={CLAIM: ev(0, slice_reason(SLICE_TAINTED_TWICE, "instance", 1))},
        delete_pod_at={DELETE: ev(0, slice_reason(SLICE_TAINTED_TWICE, "instance", 1))},
        ready={P(POD_WITH_CLAIM)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "evict-pod-many-taints": Case(
        events=[
            add(RULE_EVICT),
            add(RULE_EVICT_OTHER),
            add(SLICE_TAINTED_TWICE),
            add(SLICE2),
            add(
                in_use_with(
                    tolerate(value=None, seconds=60), tolerate(key=TAINT_KEY + "-other", value=None, seconds=30)
                )
            ),
            add(POD_WITH_CLAIM),
        ],
        claims={
            CLAIM: ev(
                30,
                rule_reason(RULE_EVICT),
                rule_reason(RULE_EVICT_OTHER),
                slice_reason(SLICE_TAINTED_TWICE, "instance", 0),
                slice_reason(SLICE_TAINTED_TWICE, "instance", 1),
            )
        },
        delete_pod_at={
            DELETE: ev(
                30,
                rule_reason(RULE_EVICT),
                rule_reason(RULE_EVICT_OTHER),
                slice_reason(SLICE_TAINTED_TWICE, "instance", 0),
                slice_reason(SLICE_TAINTED_TWICE, "instance", 1),
            )
        },
        ready={R(RULE_EVICT), R(RULE_EVICT_OTHER)},
        later={(P(POD_WITH_CLAIM), 30), (R(RULE_EVICT), RULE_STATUS_PERIOD), (R(RULE_EVICT_OTHER), RULE_STATUS_PERIOD)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "no-evict-pod-not-scheduled": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE), add(pod(node="", claims=[CLAIM]))],
        claims={CLAIM: SLICE_EVICT},
    ),
    "no-evict-no-taint": Case(events=[add(SIMPLE_SLICE), add(IN_USE), add(POD_WITH_CLAIM)], claims={CLAIM: None}),
    "no-evict-no-taint-update": Case(
        initial=[SIMPLE_SLICE, IN_USE, POD_WITH_CLAIM],
        events=[update(SIMPLE_SLICE, SIMPLE_SLICE)],
        claims={CLAIM: None},
    ),
    "no-evict-pod-resourceclaimtemplate-no-status": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE), add(POD_TEMPLATE)], claims={CLAIM: SLICE_EVICT}
    ),
    "no-evict-pod-resourceclaimtemplate-no-claim": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE), add(POD_TEMPLATE_NO_CLAIM_IN_STATUS)],
        claims={CLAIM: SLICE_EVICT},
    ),
    "no-evict-other-device": Case(
        events=[add(SLICE_OTHER_DEVICES), add(SLICE2), add(IN_USE), add(POD_TEMPLATE_IN_STATUS)], claims={CLAIM: None}
    ),
    "no-evict-wrong-pod": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE), add(POD_OTHER_UID)], claims={CLAIM: SLICE_EVICT}
    ),
    "evict-wrong-pod-replaced": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_OTHER_UID],
        fixed_order=True,
        events=[remove(POD_OTHER_UID), add(POD_WITH_CLAIM)],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_WITH_CLAIM)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "cancel-eviction-remove-taint": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_TEMPLATE_IN_STATUS],
        events=[update(SLICE_TAINTED, SLICE)],
        claims={CLAIM: None},
        events_out=[(POD, EVENT_CANCEL)],
    ),
    "cancel-eviction-reduce-taint": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_TEMPLATE_IN_STATUS],
        events=[update(SLICE_TAINTED, SLICE_TAINTED_NO_SCHEDULE)],
        claims={CLAIM: None},
        events_out=[(POD, EVENT_CANCEL)],
    ),
    "ignore-none-effect": Case(
        initial=[SLICE_TAINTED_NONE, SLICE2, IN_USE, POD_TEMPLATE_IN_STATUS], events=[], claims={CLAIM: None}
    ),
    "ignore-unknown-effect": Case(
        initial=[SLICE_TAINTED_UNKNOWN, SLICE2, IN_USE, POD_TEMPLATE_IN_STATUS], events=[], claims={CLAIM: None}
    ),
    "eviction-change-taint": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE_WITH_TOLERATION, POD_TEMPLATE_IN_STATUS],
        events=[update(SLICE_TAINTED, SLICE_TAINTED_VALUE_OTHER)],
        claims={CLAIM: ev(0, slice_reason(SLICE_TAINTED_VALUE_OTHER, "instance", 0))},
        delete_pod_at={DELETE: ev(0, slice_reason(SLICE_TAINTED_VALUE_OTHER, "instance", 0))},
        ready={P(POD_WITH_CLAIM)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "cancel-eviction-remove-taint-in-new-slice": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_TEMPLATE_IN_STATUS],
        events=[remove(SLICE_TAINTED), add(SLICE_REPLACED)],
        claims={CLAIM: None},
        events_out=[(POD, EVENT_CANCEL)],
    ),
    "cancel-eviction-remove-slice": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_TEMPLATE_IN_STATUS],
        events=[remove(SLICE_TAINTED)],
        claims={CLAIM: None},
        events_out=[(POD, EVENT_CANCEL)],
    ),
    "cancel-eviction-pod-deletion": Case(
        initial=[SLICE_TAINTED, SLICE2, in_use_with(tolerate(key="", value=None, seconds=60)), POD_WITH_CLAIM],
        events=[remove(POD_WITH_CLAIM)],
        claims={CLAIM: ev(60, slice_reason(SLICE_TAINTED, "instance", 0))},
    ),
    "no-evict-wrong-resourceclaim": Case(
        events=[add(SLICE_TAINTED), add(SLICE2), add(IN_USE_OLD), add(POD_TEMPLATE_IN_STATUS)],
        claims={CLAIM: SLICE_EVICT},
    ),
    "evict-wrong-resourceclaim-replaced": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE_OLD, POD_TEMPLATE_IN_STATUS],
        events=[update(IN_USE_OLD, IN_USE)],
        claims={CLAIM: SLICE_EVICT},
        delete_pod_at={DELETE: SLICE_EVICT},
        ready={P(POD_TEMPLATE_IN_STATUS)},
        events_out=[(POD, EVENT_DELETE)],
    ),
    "no-evict-resourceclaim-deallocated": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_TEMPLATE_IN_STATUS],
        events=[update(IN_USE, CLAIM_UNALLOCATED)],
        events_out=[(POD, EVENT_CANCEL)],
    ),
    "no-evict-resourceclaim-deleted": Case(
        initial=[SLICE_TAINTED, SLICE2, IN_USE, POD_TEMPLATE_IN_STATUS],
        events=[remove(IN_USE)],
        events_out=[(POD, EVENT_CANCEL)],
    ),
}


def _orders(case: Case) -> list[list[Any]]:
    if case.fixed_order or len(case.events) <= 1:
        return [case.events]
    return [list(p) for p in itertools.permutations(case.events)]


def _described(eviction: Any) -> tuple[float, tuple[str, ...]] | None:
    if eviction is None:
        return None
    return (eviction.when - T0, tuple(r.describe() for r in eviction.reasons))


@pytest.mark.parametrize("name", list(CASES))
def test_controller(name: str) -> None:
    case = CASES[name]
    for order in _orders(case):
        h = Harness()
        for obj in case.initial:
            h.apply(None, obj)
        h.queue.ready.clear()
        h.queue.later.clear()
        h.state.drain_events()
        for old, new in order:
            h.apply(old, new)

        for claim_name, want in case.claims.items():
            known = h.state.allocated_claims.get((NS, claim_name))
            assert known is not None, (name, claim_name)
            assert _described(known.eviction) == want, (name, claim_name)
        if not case.claims:
            assert all(c.claim["metadata"]["name"] != CLAIM for c in h.state.allocated_claims.values()) or name in (
                "empty",
                "populate-pools",
            )
        got_delete = {(ref.namespace, ref.name): _described(e) for ref, e in h.state.delete_pod_at.items()}
        assert got_delete == case.delete_pod_at, name
        ready, later = h.queue.state()
        assert ready == case.ready, name
        assert later == case.later, name
        events = [(e.pod.name, e.message) for e in h.state.drain_events()]
        want_events = [e for e in case.events_out if e[1] == EVENT_CANCEL]
        for step in case.process:
            h.process()
            if step.pods is not None:
                assert [p["metadata"]["name"] for p in h.pods.list()] == step.pods, name
            got_rules = [
                (r["metadata"]["name"], c["status"], c["reason"], c["message"], c["lastTransitionTime"])
                for r in h.rules.values()
                for c in (r.get("status") or {}).get("conditions") or ()
            ]
            assert sorted(got_rules) == sorted(step.rules), name
            if step.stats:
                assert h.state.rule_stats == step.stats, name
            h.queue.advance(step.advance)
        if case.process:
            events += [(e.pod.name, e.message) for e in h.state.drain_events()]
            want_events = case.events_out
        assert sorted(events) == sorted(want_events), name


def test_eviction_condition_other_effect() -> None:
    """``NoSchedule``: upstream's OtherEffect reason and message, counted evictions appended."""
    condition = eviction_condition("NoSchedule", generation=2, pending_pods=0, pending_namespaces=0, evicted_pods=1)
    assert condition == {
        "type": "EvictionInProgress",
        "status": "False",
        "reason": "OtherEffect",
        "message": "Eviction only happens for the NoExecute effect. 1 pod evicted since starting the controller.",
        "observedGeneration": 2,
    }


def test_rule_status_waits_for_the_period_then_follows_generation() -> None:
    h = Harness()
    h.apply(None, RULE_EVICT)
    h.process()
    first = h.rules["evict"]["status"]["conditions"][0]
    assert first["reason"] == "NotStarted"
    assert h.state.rule_status(h.rules["evict"]).delay == RULE_STATUS_PERIOD
    bumped = copy.deepcopy(h.rules["evict"])
    bumped["metadata"]["generation"] = 2
    decision = h.state.rule_status(bumped)
    assert decision.condition is not None and decision.condition["observedGeneration"] == 2


def test_taint_without_time_added_counts_from_first_sighting() -> None:
    """The apiserver here does not default ``timeAdded``: the state stamps it once and keeps the stamp."""
    h = Harness()
    untimed = variant(SLICE, _set_taints(0, taint(value=TAINT_VALUE, added=None)))
    h.clock[0] = T0 + 100
    h.apply(None, untimed)
    h.apply(None, IN_USE_WITH_TOLERATION)
    h.clock[0] = T0 + 150
    h.apply(update(untimed, copy.deepcopy(untimed))[0], copy.deepcopy(untimed))
    known = h.state.allocated_claims[(NS, CLAIM)]
    assert known.eviction is not None and known.eviction.when == T0 + 100 + TOLERATION
