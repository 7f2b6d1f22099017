"""The chaos invariants against hand-made `objects` logs: a clean history passes, each broken one is caught."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ops.chaoskit import invariants as inv
from ops.chaoskit.invariants import Acknowledged, check_all
from ops.chaoskit.records import MALFORMED, TOMBSTONE, LogRecord, decode
from services.bus.port import Record

NS = "chaos"
DRIVER = "gpu.example.com"
POD_UID = "uid-pod-p"
CLAIM_UID = "uid-claim-c"
POD_KEY = inv.pod_key(NS, "p")
CLAIM_KEY = inv.claim_key(NS, "p-gpu-abcde")
NODE_KEY = inv.node_key("node-1")
Obj = dict[str, Any]


def node(name: str = "node-1") -> Obj:
    return {
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {"kubernetes.io/hostname": name}},
    }


def pod(
    *,
    name: str = "p",
    uid: str = POD_UID,
    node_name: str = "",
    phase: str = "Pending",
    recorded: str | None = None,
    deleting: bool = False,
) -> Obj:
    obj: Obj = {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": uid},
        "spec": {
            "containers": [{"name": "c"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
        },
        "status": {"phase": phase},
    }
    if node_name:
        obj["spec"]["nodeName"] = node_name
    if recorded:
        obj["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": recorded}]
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return obj


def claim(
    *,
    name: str = "p-gpu-abcde",
    uid: str = CLAIM_UID,
    owner: str | None = POD_UID,
    owner_name: str = "p",
    devices: tuple[str, ...] = (),
    node_name: str = "node-1",
    reserved: tuple[tuple[str, str], ...] = (),
    admin: bool = False,
) -> Obj:
    obj: Obj = {
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS, "uid": uid},
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "deviceClassName": DRIVER, **({"adminAccess": True} if admin else {})}]
            }
        },
        "status": {},
    }
    if owner:
        obj["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": owner_name, "uid": owner, "controller": True}
        ]
    if devices:
        obj["status"]["allocation"] = {
            "devices": {
                "results": [{"request": "gpu", "driver": DRIVER, "pool": node_name, "device": d} for d in devices]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            },
        }
    if reserved:
        obj["status"]["reservedFor"] = [{"resource": "pods", "name": n, "uid": u} for n, u in reserved]
    return obj


Entry = tuple[str, str, Obj | None] | tuple[str, str, Obj | None, str]


def log(*entries: Entry, start: int = 0) -> list[LogRecord]:
    """Records at offsets start, start + 1, ... each with its own request id unless one is given."""
    records = []
    for offset, entry in enumerate(entries, start):
        type_, key, obj = entry[0], entry[1], entry[2]
        req = entry[3] if len(entry) > 3 else (None if type_ == TOMBSTONE else f"req-{offset}")  # type: ignore[misc]
        if obj is not None:
            obj = copy.deepcopy(obj)
            obj["metadata"]["resourceVersion"] = str(offset)
        records.append(LogRecord(offset, key, type_, obj, req))
    return records


def clean_history() -> list[LogRecord]:
    """A pod from creation to completion, its generated claim from creation to deletion."""
    return log(
        ("ADDED", NODE_KEY, node()),
        ("ADDED", POD_KEY, pod()),
        ("ADDED", CLAIM_KEY, claim()),
        ("MODIFIED", POD_KEY, pod(recorded="p-gpu-abcde")),
        ("MODIFIED", CLAIM_KEY, claim(devices=("gpu-0",))),
        ("MODIFIED", CLAIM_KEY, claim(devices=("gpu-0",), reserved=(("p", POD_UID),))),
        ("MODIFIED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-1")),
        ("MODIFIED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-1", phase="Running")),
        ("MODIFIED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-1", phase="Succeeded")),
        ("MODIFIED", CLAIM_KEY, claim(devices=("gpu-0",))),
        ("MODIFIED", CLAIM_KEY, claim()),
        ("DELETED", CLAIM_KEY, claim()),
        (TOMBSTONE, CLAIM_KEY, None),
    )


def second_claim(**kwargs: Any) -> Obj:
    return claim(name="q-gpu-fghij", uid="uid-claim-q", owner="uid-pod-q", owner_name="q", **kwargs)


Q_CLAIM = inv.claim_key(NS, "q-gpu-fghij")
Q_POD = inv.pod_key(NS, "q")


def test_a_clean_history_keeps_every_invariant() -> None:
    acks = [Acknowledged("create", POD_KEY, uid=POD_UID, req="req-1")]
    assert check_all(clean_history(), acks) == []


def test_two_claims_may_use_one_device_one_after_the_other() -> None:
    records = clean_history()
    records += log(
        ("ADDED", Q_CLAIM, second_claim()),
        ("MODIFIED", Q_CLAIM, second_claim(devices=("gpu-0",))),
        start=len(records),
    )
    assert inv.check_devices_exclusive(records) == []


# Each case: a history that breaks exactly one invariant, the offsets the violation must name, and the
# writes the workload was told succeeded.
BROKEN: list[tuple[str, list[LogRecord], str, tuple[int, ...], list[Acknowledged]]] = [
    (
        "tombstone on a live key",
        log(("ADDED", POD_KEY, pod()), (TOMBSTONE, POD_KEY, None)),
        inv.OBJECTS_KEPT,
        (0, 1),
        [],
    ),
    (
        "ADDED over a live object",
        log(("ADDED", POD_KEY, pod()), ("ADDED", POD_KEY, pod(uid="other"))),
        inv.OBJECTS_KEPT,
        (0, 1),
        [],
    ),
    (
        "acknowledged create missing from the log",
        log(("ADDED", NODE_KEY, node())),
        inv.OBJECTS_KEPT,
        (),
        [Acknowledged("create", POD_KEY, uid=POD_UID, req="req-lost")],
    ),
    (
        "deleted without a request id",
        log(("ADDED", POD_KEY, pod()), ("DELETED", POD_KEY, pod(), "")),
        inv.OBJECTS_KEPT,
        (1,),
        [],
    ),
    (
        "device in two allocations",
        log(
            ("ADDED", CLAIM_KEY, claim(devices=("gpu-0",))),
            ("ADDED", Q_CLAIM, second_claim(devices=("gpu-0",))),
        ),
        inv.DEVICES_EXCLUSIVE,
        (0, 1),
        [],
    ),
    (
        "device twice in one allocation",
        log(("ADDED", CLAIM_KEY, claim(devices=("gpu-0", "gpu-0")))),
        inv.DEVICES_EXCLUSIVE,
        (0,),
        [],
    ),
    (
        "pod bound twice",
        log(
            ("ADDED", NODE_KEY, node()),
            ("ADDED", POD_KEY, pod(recorded="p-gpu-abcde")),
            ("ADDED", CLAIM_KEY, claim(devices=("gpu-0",), reserved=(("p", POD_UID),))),
            ("MODIFIED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-1")),
            ("MODIFIED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-2")),
        ),
        inv.PODS_BOUND_ONCE,
        (3, 4),
        [],
    ),
    (
        "pod bound to a node its claim's allocation does not allow",
        log(
            ("ADDED", inv.node_key("node-2"), node("node-2")),
            ("ADDED", POD_KEY, pod(recorded="p-gpu-abcde")),
            ("ADDED", CLAIM_KEY, claim(devices=("gpu-0",), reserved=(("p", POD_UID),))),
            ("MODIFIED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-2")),
        ),
        inv.PODS_BOUND_ONCE,
        (0, 2, 3),
        [],
    ),
    (
        "pod bound before its claim was allocated",
        log(
            ("ADDED", NODE_KEY, node()),
            ("ADDED", CLAIM_KEY, claim()),
            ("ADDED", POD_KEY, pod(recorded="p-gpu-abcde")),
            ("MODIFIED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-1")),
        ),
        inv.PODS_BOUND_ONCE,
        (1, 3),
        [],
    ),
    (
        "reserved but not allocated",
        log(("ADDED", POD_KEY, pod(recorded="p-gpu-abcde")), ("ADDED", CLAIM_KEY, claim(reserved=(("p", POD_UID),)))),
        inv.RESERVED_FOR,
        (1,),
        [],
    ),
    (
        "reserved for a pod that never existed",
        log(
            ("ADDED", CLAIM_KEY, claim(devices=("gpu-0",), reserved=(("ghost", "uid-ghost"),))),
            ("MODIFIED", CLAIM_KEY, claim(devices=("gpu-0",))),
        ),
        inv.RESERVED_FOR,
        (0,),
        [],
    ),
    (
        "reserved for a pod that does not use the claim",
        log(
            ("ADDED", Q_POD, pod(name="q", uid="uid-pod-q", phase="Running")),
            ("ADDED", CLAIM_KEY, claim(devices=("gpu-0",), reserved=(("q", "uid-pod-q"),))),
            ("MODIFIED", CLAIM_KEY, claim(devices=("gpu-0",))),
        ),
        inv.RESERVED_FOR,
        (1,),
        [],
    ),
    (
        "still reserved for a finished pod at the end",
        log(
            ("ADDED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-1", phase="Running")),
            ("ADDED", CLAIM_KEY, claim(owner=None, devices=("gpu-0",), reserved=(("p", POD_UID),))),
            ("MODIFIED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-1", phase="Succeeded")),
        ),
        inv.RESERVED_FOR,
        (1, 2),
        [],
    ),
    (
        "pod ends Pending",
        log(("ADDED", POD_KEY, pod())),
        inv.PODS_SETTLED,
        (0,),
        [],
    ),
    (
        "pod stuck terminating",
        log(("ADDED", POD_KEY, pod(phase="Running", node_name="node-1", deleting=True))),
        inv.PODS_SETTLED,
        (0,),
        [],
    ),
    (
        "generated claim outlives its finished pod",
        log(
            ("ADDED", POD_KEY, pod(recorded="p-gpu-abcde", node_name="node-1", phase="Succeeded")),
            ("ADDED", CLAIM_KEY, claim()),
        ),
        inv.CLAIMS_RELEASED,
        (0, 1),
        [],
    ),
    (
        "one request committed twice",
        log(("ADDED", POD_KEY, pod(phase="Running"), "req-x"), ("MODIFIED", POD_KEY, pod(phase="Running"), "req-x")),
        inv.REQUESTS_ONCE,
        (0, 1),
        [],
    ),
]


@pytest.mark.parametrize(("case", "records", "invariant", "offsets", "acks"), BROKEN, ids=[c[0] for c in BROKEN])
def test_each_broken_history_is_caught(
    case: str, records: list[LogRecord], invariant: str, offsets: tuple[int, ...], acks: list[Acknowledged]
) -> None:
    # Short histories leave other loose ends (a pod that never ran, say); the case is about one invariant.
    found = [v for v in check_all(records, acks) if v.invariant == invariant]
    assert len(found) == 1, [str(v) for v in found]
    assert found[0].offsets == offsets
    assert str(found[0]).startswith(f"{invariant}: ")


def test_a_deleted_record_and_its_tombstone_are_one_write() -> None:
    records = [
        LogRecord(0, POD_KEY, "ADDED", pod(phase="Running"), "r0"),
        LogRecord(1, POD_KEY, "DELETED", pod(phase="Running"), "r1"),
        LogRecord(2, POD_KEY, TOMBSTONE, None, "r1"),
    ]
    assert inv.check_requests_once(records) == []
    assert inv.check_objects_kept(records) == []


def test_a_create_and_its_status_writes_have_their_own_request_ids() -> None:
    records = clean_history()
    assert len({r.req for r in records if r.req}) == len([r for r in records if r.req])
    assert inv.check_requests_once(records) == []


def test_an_acknowledged_delete_must_take_effect() -> None:
    records = log(("ADDED", POD_KEY, pod(phase="Running", node_name="node-1")))
    found = inv.check_pods_settled(records, [Acknowledged("delete", POD_KEY, uid=POD_UID)])
    assert [v.message for v in found] == [f"pods/{NS}/p was deleted by request but is still there"]


def test_an_acknowledged_create_that_was_deleted_later_is_kept() -> None:
    records = log(("ADDED", POD_KEY, pod()), ("DELETED", POD_KEY, pod()), (TOMBSTONE, POD_KEY, None))
    assert inv.check_objects_kept(records, [Acknowledged("create", POD_KEY, uid=POD_UID)]) == []


def test_admin_access_requests_may_share_a_device() -> None:
    records = log(
        ("ADDED", CLAIM_KEY, claim(devices=("gpu-0",))),
        ("ADDED", Q_CLAIM, second_claim(devices=("gpu-0",), admin=True)),
    )
    assert inv.check_devices_exclusive(records) == []


def test_a_pod_recreated_under_the_same_name_may_be_bound_again() -> None:
    records = log(
        ("ADDED", POD_KEY, pod(phase="Running", node_name="node-1")),
        ("DELETED", POD_KEY, pod(phase="Running", node_name="node-1")),
        ("ADDED", POD_KEY, pod(uid="uid-2", phase="Pending")),
        ("MODIFIED", POD_KEY, pod(uid="uid-2", node_name="node-1", phase="Pending")),
    )
    found = inv.check_pods_bound_once(records)
    # Both pods have a template claim without a recorded name; nothing says "bound twice".
    assert [v.offsets for v in found] == [(0,), (3,)]
    assert all("the claim for 'gpu' was not created" in v.message for v in found)


def test_a_view_that_matches_the_log_at_its_resource_version() -> None:
    records = clean_history()
    at = 7  # the pod Running, the claim allocated and reserved
    items = [r.object for r in records if r.offset in (2, 5)]  # the claim as of offset 5 is the latest by 7
    pods = [r.object for r in records if r.offset == 7]
    assert inv.check_view(records, view="a", group="", resource="pods", resource_version=at, items=pods) == []
    found = inv.check_view(
        records, view="a", group="resource.k8s.io", resource="resourceclaims", resource_version=at, items=items[1:]
    )
    assert found == []


def test_a_view_that_lost_or_kept_an_object_or_is_behind() -> None:
    records = clean_history()
    stale_pod = [r.object for r in records if r.offset == 6]
    found = inv.check_view(records, view="a", group="", resource="pods", resource_version=7, items=stale_pod)
    assert [(v.invariant, v.offsets) for v in found] == [(inv.VIEWS_AGREE, (6, 7))]
    found = inv.check_view(records, view="a", group="", resource="pods", resource_version=7, items=[])
    assert [(v.invariant, v.offsets) for v in found] == [(inv.VIEWS_AGREE, (7,))]
    gone_claim = [r.object for r in records if r.offset == 10]
    found = inv.check_view(
        records, view="a", group="resource.k8s.io", resource="resourceclaims", resource_version=12, items=gone_claim
    )
    assert [v.invariant for v in found] == [inv.VIEWS_AGREE]
    assert "which the log does not have" in found[0].message


def test_a_malformed_record_is_a_violation_with_its_topic_and_offset() -> None:
    # Decoded from a raw record as the run reads it: the decoding error travels with the record.
    raw = Record(topic="objects", partition=0, offset=13, timestamp_ms=0, key=CLAIM_KEY.encode(), value=b"{not json")
    bad = decode(raw)
    assert (bad.type, bad.offset) == (MALFORMED, 13) and bad.error
    found = check_all([*clean_history(), bad])
    assert [(v.invariant, v.offsets) for v in found] == [(inv.RECORDS_WELL_FORMED, (13,))]
    assert "topic objects at offset 13" in found[0].message and bad.error in found[0].message


def test_a_list_that_failed_is_a_violation_not_a_skipped_check() -> None:
    records = clean_history()
    pods = [r.object for r in records if r.offset == 7]
    lists = [
        inv.Listed("apiserver-1", "", "pods", resource_version=7, items=pods),
        inv.Listed("apiserver-2", "", "pods", error="GET /api/v1/pods: 10 attempts, the last answered 503"),
    ]
    found = inv.check_views(records, lists)
    assert [v.invariant for v in found] == [inv.VIEWS_AGREE]
    assert found[0].message.startswith("apiserver-2 did not list pods") and "503" in found[0].message
    assert inv.check_views(records, lists[:1]) == []
