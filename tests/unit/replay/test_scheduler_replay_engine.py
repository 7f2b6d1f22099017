"""The replayed scheduler fed hand-made log records: attempts redone, rolled back, and recorded assumptions held."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from services.bus.port import Record
from services.kube.feature_gates import FeatureGates
from services.replay.scheduler_diff import RecordedAttempt, Window
from services.replay.scheduler_replay import SchedulerReplayer, decisions_since, locate
from services.replay.scheduler_report import Comparison, NotReplayed
from services.scheduler.decisions import Decision
from services.scheduler.service import SchedulerConfig
from topics.declarations import OBJECTS
from topics.envelope import EventType, encode_event, object_key

RG = "resource.k8s.io"
V1A3 = "resource.k8s.io/v1alpha3"
DRIVER = "gpu.example.com"
T0 = 1_795_000_000_000


class Log:
    """``objects`` records as the committer writes them: one offset each, resourceVersion = offset."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self._uids = itertools.count(1)

    def write(self, group: str, plural: str, obj: dict[str, Any], type_: EventType = "ADDED") -> dict[str, Any]:
        meta = obj["metadata"]
        meta.setdefault("uid", f"uid-{next(self._uids)}")
        offset = len(self.records)
        key = object_key(group, plural, meta.get("namespace", ""), meta["name"])
        self.records.append(Record(OBJECTS, 0, offset, T0 + offset, key.encode(), encode_event(type_, obj)))
        return {**obj, "metadata": {**meta, "resourceVersion": str(offset)}}

    def raw(self, key: bytes | None, value: bytes | None) -> None:
        self.records.append(Record(OBJECTS, 0, len(self.records), T0, key, value))


def node(name: str) -> dict[str, Any]:
    resources = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": resources, "allocatable": resources},
    }


def device_class(expression: str = f'device.driver == "{DRIVER}"') -> dict[str, Any]:
    return {
        "apiVersion": V1A3,
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def resource_slice(node_name: str, devices: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": V1A3,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-gpus"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}", "basic": {}} for i in range(devices)],
        },
    }


def claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": V1A3,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": DRIVER}]}},
    }


def pod(name: str, claim_name: str = "", *, scheduler: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "ctr", "image": "pause"}]}
    if claim_name:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim_name}]
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def allocation(node_name: str, device: str) -> dict[str, Any]:
    return {
        "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node_name, "device": device}]},
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
        },
    }


def attempt(
    p: dict[str, Any], point: int, result: str, *, offset: int = 0, cycle: int = 1, **fields: Any
) -> RecordedAttempt:
    meta = p["metadata"]
    record = {
        "pod": f"default/{meta['name']}",
        "uid": meta["uid"],
        "attempt": 1,
        "result": result,
        "podResourceVersion": meta["resourceVersion"],
        "cycle": cycle,
        "objectsPosition": point,
        **fields,
    }
    return RecordedAttempt(offset, record, point, T0 + point)


def bound(p: dict[str, Any], point: int, node_name: str, claim_key: str, device: str, **kw: Any) -> RecordedAttempt:
    return attempt(
        p,
        point,
        "scheduled",
        node=node_name,
        plugins={"DynamicResources": {"node": node_name, "allocations": {claim_key: allocation(node_name, device)}}},
        binding={"result": "bound", "node": node_name},
        **kw,
    )


def race() -> tuple[Log, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """One node with one GPU, two pods with a claim each; returns the log, both pods and claim-a."""
    log = Log()
    log.write("", "nodes", node("node-1"))
    log.write(RG, "deviceclasses", device_class())
    log.write(RG, "resourceslices", resource_slice("node-1"))
    claim_a = log.write(RG, "resourceclaims", claim("claim-a"))
    log.write(RG, "resourceclaims", claim("claim-b"))
    pod_a = log.write("", "pods", pod("pod-a", "claim-a"))
    pod_b = log.write("", "pods", pod("pod-b", "claim-b"))
    return log, pod_a, pod_b, claim_a


def fed(log: Log, *attempts: RecordedAttempt, config: SchedulerConfig | None = None, **kw: Any) -> SchedulerReplayer:
    replayer = SchedulerReplayer(config, **kw)
    replayer.want_pod_versions(a.pod_resource_version for a in attempts)
    for record in log.records:
        replayer.apply(record)
    return replayer


async def test_an_attempt_is_redone_compared_and_rolled_back() -> None:
    log, pod_a, _, _ = race()
    won = bound(pod_a, 7, "node-1", "default/claim-a", "gpu-0")
    replayer = fed(log, won)

    outcome = await replayer.redo(won)

    assert isinstance(outcome, Comparison)
    assert outcome.differ == ()
    assert outcome.replayed.allocation == {"default/claim-a": ("gpu=gpu.example.com/node-1/gpu-0",)}
    assert replayer.core.cache.assumed_count() == 0
    assert replayer.dynamic_resources.claims.in_flight_count() == 0
    assert replayer.client.writes == []


async def test_a_recorded_bound_attempt_holds_its_pod_and_devices_until_the_log_shows_them() -> None:
    log, pod_a, pod_b, claim_a = race()
    won = bound(pod_a, 7, "node-1", "default/claim-a", "gpu-0", cycle=1)
    lost = attempt(pod_b, 7, "unschedulable", cycle=2, rejections={"node-1": {"plugin": "DynamicResources"}})
    replayer = fed(log, won, lost)

    assert isinstance(await replayer.redo(won), Comparison)
    replayer.assume_recorded(won)
    outcome = await replayer.redo(lost)

    assert isinstance(outcome, Comparison)
    assert outcome.differ == ()  # the device was still in flight for pod-a when pod-b was tried
    assert replayer.core.cache.assumed_count() == 1
    assert replayer.dynamic_resources.claims.in_flight_count() == 1

    # The live scheduler's writes arrive: the allocation, then the binding.
    allocated = {**claim_a, "status": {"allocation": allocation("node-1", "gpu-0")}}
    replayer.apply(log_record(log, RG, "resourceclaims", allocated, "MODIFIED"))
    assert replayer.dynamic_resources.claims.in_flight_count() == 0
    assert replayer.dynamic_resources.claims.allocated_devices().__contains__((DRIVER, "node-1", "gpu-0"))
    replayer.apply(log_record(log, "", "pods", {**pod_a, "spec": {**pod_a["spec"], "nodeName": "node-1"}}, "MODIFIED"))
    assert replayer.core.cache.assumed_count() == 0
    assert replayer.core.cache.pod_count() == 1


def log_record(log: Log, group: str, plural: str, obj: dict[str, Any], type_: EventType) -> Record:
    log.write(group, plural, obj, type_)
    return log.records[-1]


async def test_without_the_recorded_assumption_the_second_pod_would_get_the_device() -> None:
    log, _, pod_b, _ = race()
    lost = attempt(pod_b, 7, "unschedulable", rejections={"node-1": {"plugin": "DynamicResources"}})
    replayer = fed(log, lost)

    outcome = await replayer.redo(lost)

    assert isinstance(outcome, Comparison)
    assert outcome.differ == ("result", "node", "allocation", "rejections")
    assert outcome.replayed.node == "node-1"


async def test_a_failed_binding_leaves_nothing_assumed() -> None:
    log, pod_a, _, _ = race()
    failed = bound(pod_a, 7, "node-1", "default/claim-a", "gpu-0")
    failed.record["binding"] = {"result": "failed", "node": "node-1", "message": "conflict"}
    replayer = fed(log, failed)

    replayer.assume_recorded(failed)

    assert replayer.core.cache.assumed_count() == 0
    assert replayer.dynamic_resources.claims.in_flight_count() == 0


async def test_a_rewrite_changes_what_the_replayed_scheduler_sees() -> None:
    log, pod_a, _, _ = race()
    won = bound(pod_a, 7, "node-1", "default/claim-a", "gpu-0")

    def no_devices(group: str, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
        return device_class('device.driver == "other"') if plural == "deviceclasses" else obj

    outcome = await fed(log, won, rewrite=no_devices).redo(won)

    assert isinstance(outcome, Comparison)
    assert outcome.replayed.result == "unschedulable"
    assert outcome.replayed.rejections == {"node-1": "DynamicResources"}


async def test_gates_decide_what_the_replayed_scheduler_watches_and_runs() -> None:
    log, pod_a, _, _ = race()
    won = bound(pod_a, 7, "node-1", "default/claim-a", "gpu-0")
    # DRA off: only at 1.31 (the seeds' release); 1.37 locks it on.
    config = SchedulerConfig(gates=FeatureGates.parse("DynamicResourceAllocation=false", release="1.31"))
    replayer = fed(log, won, config=config)

    outcome = await replayer.redo(won)

    assert isinstance(outcome, Comparison)
    assert outcome.differ == ("allocation",)
    assert len(replayer.dynamic_resources.claims.list()) == 0  # claims are not even watched


async def test_deletions_and_tombstones_are_replayed_and_malformed_records_skipped() -> None:
    log = Log()
    gone = log.write("", "nodes", node("node-0"))
    log.write("", "nodes", node("node-1"))
    log.write("", "nodes", gone, "DELETED")
    log.raw(object_key("", "nodes", "", "node-0").encode(), None)
    log.raw(b"not a key", b"{}")
    log.raw(object_key("", "nodes", "", "node-2").encode(), b"not json")
    p = log.write("", "pods", pod("web"))
    web = attempt(p, 7, "scheduled", node="node-1")
    replayer = fed(log, web)

    outcome = await replayer.redo(web)

    assert isinstance(outcome, Comparison)
    assert outcome.differ == ()
    assert [offset for offset, _ in replayer.skipped] == [4, 5]
    assert replayer.position == 7


async def test_terminal_pods_are_invisible_to_the_replayed_scheduler() -> None:
    log = Log()
    log.write("", "nodes", node("node-1"))
    done = pod("done")
    done["spec"]["nodeName"] = "node-1"
    done["status"] = {"phase": "Succeeded"}
    log.write("", "pods", done)
    replayer = fed(log)
    assert replayer.core.cache.pod_count() == 0


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda r: r.pop("podResourceVersion"), "the record names no pod resourceVersion"),
        (lambda r: r.update(podResourceVersion="4"), "pod version 4 is not in the objects log"),
        (lambda r: r.update(podResourceVersion="9"), "pod version 9 lies after the attempt's point 7"),
        (lambda r: r.update(uid="someone-else"), "the pod at version 5 has uid"),
    ],
)
async def test_attempts_that_cannot_be_replayed_say_why(change: Any, reason: str) -> None:
    log, pod_a, _, _ = race()
    a = attempt(pod_a, 7, "unschedulable")
    change(a.record)
    replayer = fed(log, a)
    replayer.want_pod_versions([4])

    outcome = await replayer.redo(a)

    assert isinstance(outcome, NotReplayed)
    assert outcome.reason.startswith(reason)


async def test_a_pod_of_another_scheduler_is_not_replayed() -> None:
    log = Log()
    log.write("", "nodes", node("node-1"))
    p = log.write("", "pods", pod("custom", scheduler="my-scheduler"))
    a = attempt(p, 2, "scheduled", node="node-1")
    outcome = await fed(log, a).redo(a)
    assert isinstance(outcome, NotReplayed)
    assert outcome.reason == "no profile for scheduler 'my-scheduler'"


async def test_the_recorded_start_node_index_is_where_filtering_starts() -> None:
    log = Log()
    for i in range(3):
        log.write("", "nodes", node(f"node-{i}"))
    p = log.write("", "pods", pod("web"))
    replayer = fed(log, attempt(p, 4, "scheduled"))
    outcomes = []
    for start in (0, 1, 2):
        a = attempt(p, 4, "scheduled", node="node-0", startNodeIndex=start)
        outcome = await replayer.redo(a)
        assert isinstance(outcome, Comparison)
        outcomes.append(outcome.replayed.node)
    # Equal scores: the first node filtered wins, and filtering starts at the recorded index.
    assert outcomes == ["node-0", "node-1", "node-2"]


class TimeBus:
    """The one bus call `locate` makes for records without objectsPosition."""

    def __init__(self, first_after: int | None) -> None:
        self.first_after = first_after
        self.asked: list[int] = []

    async def offset_for_time(self, topic: str, timestamp_ms: int, partition: int = 0) -> int | None:
        self.asked.append(timestamp_ms)
        return self.first_after


async def test_an_attempt_without_a_recorded_position_is_placed_by_its_time() -> None:
    record = {"pod": "default/a", "result": "scheduled", "podResourceVersion": "3", "time": "2026-11-29T12:00:00.250Z"}
    bus = TimeBus(first_after=12)
    located = await locate(bus, Decision(9, T0, record), log_end=40)  # type: ignore[arg-type]
    assert (located.point, located.exact, located.time_ms) == (12, False, 1_795_953_600_250)
    assert bus.asked == [1_795_953_600_251]  # records of the attempt's own millisecond count as seen
    assert (await locate(TimeBus(None), Decision(9, T0, record), log_end=40)).point == 40  # type: ignore[arg-type]
    recorded = await locate(bus, Decision(9, T0, {**record, "objectsPosition": 5}), log_end=40)  # type: ignore[arg-type]
    assert (recorded.point, recorded.exact) == (5, True)


async def test_decisions_are_read_from_a_little_before_the_window() -> None:
    assert await decisions_since(TimeBus(None), Window()) is None  # type: ignore[arg-type]
    since = await decisions_since(TimeBus(None), Window(start=("time", T0)), horizon_ms=1000)  # type: ignore[arg-type]
    assert since == T0 - 1000
