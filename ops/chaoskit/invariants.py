"""The invariants a chaos run must keep, checked from the `objects` log afterwards.

Why this module exists: whatever was killed or restarted, the log is the
truth, so every promise is checked against it, record by record, with pure
functions (no I/O, no awaits) that unit tests feed hand-made sequences.
Each check folds the records in offset order and returns `Violation`s that
name the offsets involved:

- `check_objects_kept` (``objects-kept``): every object the workload was told
  it created is in the log, and at the end it is present or was deleted by a
  request. Every key follows ADDED → MODIFIED* → DELETED → tombstone; a
  tombstone on a live key (compaction would drop the object), a DELETED
  record without a request id, or an ADDED over a live object is a lost write.
- `check_devices_exclusive` (``devices-exclusive``): at no offset is a device
  (driver, pool, device) in the allocations of two claims (admin-access
  requests excepted, as the allocator excepts them).
- `check_pods_bound_once` (``pods-bound-once``): a pod (by uid) gets a node
  once and keeps it; when it is bound, each of its claims exists, belongs to
  it (generated claims), is allocated, is reserved for it, and its
  allocation's node selector allows the node.
- `check_reserved_for` (``reserved-for``): a claim is allocated whenever its
  reservedFor is non-empty; an entry names a pod that existed with that uid
  and uses the claim; at the end, entries name only live, unfinished pods
  that use the claim. (A reservation added for a pod deleted a moment
  earlier is a race Kubernetes accepts and the claim controller cleans up,
  so only the end state must be clean.)
- `check_pods_settled` (``pods-settled``): at the end every pod is Running or
  Succeeded, none is stuck terminating, and none that was deleted by request
  is still there.
- `check_claims_released` (``claims-released``): at the end no claim
  generated for a pod outlives that pod's run (the resourceclaim controller
  deletes it once the pod is done, the garbage collector once it is gone).
- `check_requests_once` (``requests-once``): no request id appears on two
  records (the DELETED record and the tombstone after it are one write).
- `check_records_well_formed` (``records-well-formed``): every record of
  `objects` decodes (components skip one that does not, so whatever it wrote
  is lost to them); each malformed one is named with its topic and offset.
- `check_acks_kept` (``acks-kept``): every record a producer had
  acknowledged (``acks=all``) on the probe topic is read back at its offset
  with its value — Kafka's own promise, checked below the API, which matters
  when brokers of a cluster are killed (`ops.chaoskit.acks`).
- `check_view` (``views-agree``): a list an apiserver serves at a
  resourceVersion shows exactly the log folded up to that offset (its
  materialized view survived its restarts). `check_views` runs it over every
  list taken, and a list that failed is a violation too: a check that could
  not look has not passed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from ops.chaoskit.records import MALFORMED, TOMBSTONE, LogRecord, key_parts
from services.kube.node_selectors import node_selector_matches
from topics.declarations import OBJECTS
from topics.envelope import object_key

Obj = dict[str, Any]

OBJECTS_KEPT = "objects-kept"
DEVICES_EXCLUSIVE = "devices-exclusive"
PODS_BOUND_ONCE = "pods-bound-once"
RESERVED_FOR = "reserved-for"
PODS_SETTLED = "pods-settled"
CLAIMS_RELEASED = "claims-released"
REQUESTS_ONCE = "requests-once"
RECORDS_WELL_FORMED = "records-well-formed"
VIEWS_AGREE = "views-agree"
INVARIANTS: tuple[str, ...] = (
    OBJECTS_KEPT,
    DEVICES_EXCLUSIVE,
    PODS_BOUND_ONCE,
    RESERVED_FOR,
    PODS_SETTLED,
    CLAIMS_RELEASED,
    REQUESTS_ONCE,
    RECORDS_WELL_FORMED,
    VIEWS_AGREE,
)
ACKS_KEPT = "acks-kept"  # checked on the probe topic, not on `objects` (a run on the embedded log skips it)

RESOURCE_GROUP = "resource.k8s.io"
SETTLED_PHASES = frozenset({"Running", "Succeeded"})
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken promise: which invariant, what happened, and the offsets of the records involved."""

    invariant: str
    message: str
    offsets: tuple[int, ...] = ()

    def __str__(self) -> str:
        where = f" [offsets {', '.join(str(o) for o in self.offsets)}]" if self.offsets else ""
        return f"{self.invariant}: {self.message}{where}"


@dataclass(frozen=True, slots=True)
class Acknowledged:
    """A write the workload got a success answer for.

    ``req`` is the request id when the write went through the log with a
    stable id (it then appears on the record it wrote); ``uid`` is the object's
    uid when the answer carried it.
    """

    op: Literal["create", "delete"]
    key: str
    uid: str | None = None
    req: str | None = None


class Device(NamedTuple):
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


class PodClaim(NamedTuple):
    """One entry of a pod's spec.resourceClaims, resolved as far as the pod says."""

    name: str  # the pod's name for it
    claim: str | None  # the ResourceClaim's name; None when it needs none, or is not recorded yet
    generated: bool  # from a template
    recorded: bool  # a generated claim's name is in status.resourceClaimStatuses


# -- small accessors ------------------------------------------------------------------


def _meta(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("metadata") or {}


def _uid(obj: Mapping[str, Any] | None) -> str:
    return str(_meta(obj).get("uid") or "")


def _offset(obj: Mapping[str, Any] | None) -> int:
    try:
        return int(_meta(obj).get("resourceVersion") or -1)
    except ValueError:
        return -1


def _is(record: LogRecord, group: str, resource: str) -> bool:
    parts = key_parts(record.key)
    return parts[0] == group and parts[1] == resource


def _phase(pod: Mapping[str, Any] | None) -> str:
    return str(((pod or {}).get("status") or {}).get("phase") or "")


def _node(pod: Mapping[str, Any] | None) -> str:
    return str(((pod or {}).get("spec") or {}).get("nodeName") or "")


def _ref(key: str) -> str:
    _, resource, namespace, name = key_parts(key)
    return f"{resource}/{namespace}/{name}" if namespace else f"{resource}/{name}"


def claim_key(namespace: str, name: str) -> str:
    return object_key(RESOURCE_GROUP, "resourceclaims", namespace, name)


def pod_key(namespace: str, name: str) -> str:
    return object_key("", "pods", namespace, name)


def node_key(name: str) -> str:
    return object_key("", "nodes", "", name)


def pod_claims(pod: Mapping[str, Any]) -> list[PodClaim]:
    """The pod's claims: direct references, and generated ones as far as its status records them."""
    recorded = {
        str(s.get("name")): s.get("resourceClaimName")
        for s in ((pod.get("status") or {}).get("resourceClaimStatuses") or ())
        if isinstance(s, Mapping)
    }
    found = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        name = str(entry.get("name", ""))
        if entry.get("resourceClaimName"):
            found.append(PodClaim(name, str(entry["resourceClaimName"]), False, True))
        elif entry.get("resourceClaimTemplateName"):
            if name in recorded:
                claim = recorded[name]
                found.append(PodClaim(name, str(claim) if claim else None, True, True))
            else:
                found.append(PodClaim(name, None, True, False))
    return found


def claims_used(pod: Mapping[str, Any]) -> set[str]:
    return {c.claim for c in pod_claims(pod) if c.claim}


def claim_devices(claim: Mapping[str, Any]) -> list[Device]:
    """The devices a claim's allocation holds (admin-access requests left out), duplicates kept."""
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        return []
    admin = {
        str(r.get("name"))
        for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ()
        if r.get("adminAccess")
    }
    return [
        Device(str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", "")))
        for r in (allocation.get("devices") or {}).get("results") or ()
        if str(r.get("request")) not in admin
    ]


def reserved_uids(claim: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(resource, name, uid) of each reservedFor entry."""
    return [
        (str(r.get("resource", "")), str(r.get("name", "")), str(r.get("uid", "")))
        for r in ((claim.get("status") or {}).get("reservedFor") or ())
    ]


def controller_owner(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in _meta(obj).get("ownerReferences") or ():
        if ref.get("controller"):
            owner: Mapping[str, Any] = ref
            return owner
    return None


def _objects(records: Iterable[LogRecord]) -> Iterable[LogRecord]:
    """Records that carry an object (no tombstones, nothing malformed)."""
    return (r for r in records if r.type not in (TOMBSTONE, MALFORMED) and r.object is not None)


def final_state(records: Iterable[LogRecord]) -> dict[str, Obj]:
    """Key → object after the last record (the log folded)."""
    live: dict[str, Obj] = {}
    for r in _objects(records):
        if r.type == "DELETED":
            live.pop(r.key, None)
        else:
            assert r.object is not None
            live[r.key] = r.object
    return live


# -- objects-kept -------------------------------------------------------------------------


def check_objects_kept(records: Sequence[LogRecord], acknowledged: Sequence[Acknowledged] = ()) -> list[Violation]:
    found: list[Violation] = []
    live: dict[str, tuple[int, str]] = {}  # key -> (offset, uid)
    deleted: dict[str, int] = {}  # uid -> offset of its DELETED record
    added_by_req: dict[str, LogRecord] = {}
    added_by_uid: dict[str, LogRecord] = {}
    for r in records:
        if r.type == MALFORMED:
            continue
        if r.type == TOMBSTONE:
            if r.key in live:
                at, uid = live[r.key]
                found.append(
                    Violation(
                        OBJECTS_KEPT,
                        f"tombstone for live {_ref(r.key)} (uid {uid}): compaction would drop it",
                        (at, r.offset),
                    )
                )
            continue
        uid = _uid(r.object)
        prev = live.get(r.key)
        if r.type == "ADDED":
            if prev is not None:
                found.append(
                    Violation(
                        OBJECTS_KEPT,
                        f"ADDED {_ref(r.key)} (uid {uid}) over the live object (uid {prev[1]}) without a delete",
                        (prev[0], r.offset),
                    )
                )
            live[r.key] = (r.offset, uid)
            if r.req:
                added_by_req.setdefault(r.req, r)
            if uid:
                added_by_uid.setdefault(uid, r)
        elif r.type == "MODIFIED":
            if prev is None:
                found.append(Violation(OBJECTS_KEPT, f"MODIFIED {_ref(r.key)}, which does not exist", (r.offset,)))
            elif prev[1] != uid:
                found.append(
                    Violation(
                        OBJECTS_KEPT,
                        f"{_ref(r.key)} changed uid from {prev[1]} to {uid} without a delete",
                        (prev[0], r.offset),
                    )
                )
            live[r.key] = (r.offset, uid)
        elif r.type == "DELETED":
            if prev is None:
                found.append(Violation(OBJECTS_KEPT, f"DELETED {_ref(r.key)}, which does not exist", (r.offset,)))
            if not r.req:
                found.append(Violation(OBJECTS_KEPT, f"{_ref(r.key)} deleted without a request id", (r.offset,)))
            live.pop(r.key, None)
            if uid:
                deleted[uid] = r.offset
    for ack in acknowledged:
        if ack.op != "create":
            continue
        record = added_by_req.get(ack.req) if ack.req else added_by_uid.get(ack.uid or "")
        what = f"acknowledged create of {_ref(ack.key)}" + (f" (request {ack.req})" if ack.req else "")
        if record is None or record.key != ack.key or (ack.uid and _uid(record.object) != ack.uid):
            found.append(Violation(OBJECTS_KEPT, f"{what} (uid {ack.uid}) is not in the log"))
            continue
        uid = ack.uid or _uid(record.object)
        now = live.get(ack.key)
        if (now is None or now[1] != uid) and uid not in deleted:
            found.append(
                Violation(OBJECTS_KEPT, f"{_ref(ack.key)} (uid {uid}) disappeared without a delete", (record.offset,))
            )
    return found


# -- devices-exclusive ----------------------------------------------------------------------


def check_devices_exclusive(records: Sequence[LogRecord]) -> list[Violation]:
    found: list[Violation] = []
    holders: dict[Device, dict[str, int]] = {}  # device -> claim key -> offset it was allocated at
    held: dict[str, set[Device]] = {}
    for r in _objects(records):
        if not _is(r, RESOURCE_GROUP, "resourceclaims"):
            continue
        assert r.object is not None
        devices = [] if r.type == "DELETED" else claim_devices(r.object)
        new = set(devices)
        if len(new) != len(devices):
            twice = sorted(str(d) for d in new if devices.count(d) > 1)
            found.append(
                Violation(
                    DEVICES_EXCLUSIVE, f"{_ref(r.key)} holds {', '.join(twice)} twice in one allocation", (r.offset,)
                )
            )
        old = held.get(r.key, set())
        for device in old - new:
            holders.get(device, {}).pop(r.key, None)
        for device in sorted(new - old):
            others = holders.setdefault(device, {})
            for other, since in others.items():
                found.append(
                    Violation(
                        DEVICES_EXCLUSIVE,
                        f"device {device} allocated to {_ref(r.key)} while {_ref(other)} holds it "
                        f"(allocated at offset {since})",
                        (since, r.offset),
                    )
                )
            others[r.key] = r.offset
        held[r.key] = new
    return found


# -- pods-bound-once --------------------------------------------------------------------------


def check_pods_bound_once(records: Sequence[LogRecord]) -> list[Violation]:
    found: list[Violation] = []
    state: dict[str, Obj] = {}
    bound: dict[str, tuple[str, int]] = {}  # pod uid -> (node, offset of the binding)
    for r in _objects(records):
        obj = r.object
        assert obj is not None
        if _is(r, "", "pods") and r.type != "DELETED":
            uid = _uid(obj)
            prev = state.get(r.key)
            before = _node(prev) if prev is not None and _uid(prev) == uid else ""
            after = _node(obj)
            ref = _ref(r.key)
            if before and after != before:
                at = bound.get(uid, (before, -1))[1]
                found.append(
                    Violation(
                        PODS_BOUND_ONCE, f"{ref} (uid {uid}) moved from node {before!r} to {after!r}", (at, r.offset)
                    )
                )
            elif not before and after:
                if uid in bound:
                    node, at = bound[uid]
                    found.append(
                        Violation(
                            PODS_BOUND_ONCE,
                            f"{ref} (uid {uid}) bound again to {after!r} (first bound to {node!r})",
                            (at, r.offset),
                        )
                    )
                else:
                    bound[uid] = (after, r.offset)
                    found.extend(_binding_allowed(obj, after, state, r.offset))
        if r.type == "DELETED":
            state.pop(r.key, None)
        else:
            state[r.key] = obj
    return found


def _binding_allowed(pod: Obj, node_name: str, state: Mapping[str, Obj], offset: int) -> list[Violation]:
    """Why binding ``pod`` to ``node_name`` at ``offset`` was not allowed by its claims (none: it was)."""
    found: list[Violation] = []
    meta = _meta(pod)
    namespace, uid = str(meta.get("namespace", "")), _uid(pod)
    ref = f"pods/{namespace}/{meta.get('name', '')}"

    def broken(message: str, *offsets: int) -> None:
        found.append(
            Violation(PODS_BOUND_ONCE, f"{ref} bound to {node_name!r}: {message}", (*sorted(set(offsets)), offset))
        )

    for entry in pod_claims(pod):
        if entry.generated and not entry.recorded:
            broken(f"the claim for {entry.name!r} was not created (not in status.resourceClaimStatuses)")
            continue
        if entry.claim is None:
            continue  # the pod needs no claim for this entry
        claim = state.get(claim_key(namespace, entry.claim))
        if claim is None:
            broken(f"claim {entry.claim} does not exist")
            continue
        at = _offset(claim)
        owner = controller_owner(claim)
        if entry.generated and (owner is None or str(owner.get("uid")) != uid):
            broken(f"claim {entry.claim} was not generated for this pod (owner {owner and owner.get('uid')})", at)
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            broken(f"claim {entry.claim} is not allocated", at)
            continue
        if uid not in {u for _, _, u in reserved_uids(claim)}:
            broken(f"claim {entry.claim} is not reserved for it", at)
        selector = allocation.get("nodeSelector")
        if selector:
            node = state.get(node_key(node_name))
            if node is None:
                broken("the node does not exist", at)
            elif not node_selector_matches(selector, node):
                broken(f"the allocation of claim {entry.claim} does not allow that node", at, _offset(node))
    return found


# -- reserved-for ---------------------------------------------------------------------------------


def check_reserved_for(records: Sequence[LogRecord]) -> list[Violation]:
    found: list[Violation] = []
    state: dict[str, Obj] = {}
    pods_seen: dict[str, tuple[str, str, set[str]]] = {}  # uid -> (namespace, name, claims it ever used)
    for r in _objects(records):
        obj = r.object
        assert obj is not None
        if _is(r, "", "pods"):
            meta = _meta(obj)
            seen = pods_seen.setdefault(_uid(obj), (str(meta.get("namespace", "")), str(meta.get("name", "")), set()))
            seen[2].update(claims_used(obj))
        elif _is(r, RESOURCE_GROUP, "resourceclaims") and r.type != "DELETED":
            found.extend(_reservations(r, obj, state.get(r.key), pods_seen))
        if r.type == "DELETED":
            state.pop(r.key, None)
        else:
            state[r.key] = obj
    for key, claim in state.items():
        if key_parts(key)[:2] != (RESOURCE_GROUP, "resourceclaims"):
            continue
        namespace, name = str(_meta(claim).get("namespace", "")), str(_meta(claim).get("name", ""))
        for resource, pod_name, uid in reserved_uids(claim):
            if resource != "pods":
                continue
            pod = state.get(pod_key(namespace, pod_name))
            why = ""
            if pod is None or _uid(pod) != uid:
                why = "which is gone"
            elif _phase(pod) in TERMINAL_PHASES:
                why = f"which is {_phase(pod)}"
            elif name not in claims_used(pod):
                why = "which does not use it"
            if why:
                offsets = (_offset(claim),) if pod is None else (_offset(claim), _offset(pod))
                found.append(
                    Violation(
                        RESERVED_FOR,
                        f"at the end {_ref(key)} is still reserved for pod {pod_name} (uid {uid}), {why}",
                        tuple(sorted(offsets)),
                    )
                )
    return found


def _reservations(
    r: LogRecord, claim: Obj, prev: Obj | None, pods_seen: Mapping[str, tuple[str, str, set[str]]]
) -> list[Violation]:
    found: list[Violation] = []
    entries = reserved_uids(claim)
    if not entries:
        return found
    ref = _ref(r.key)
    if not (claim.get("status") or {}).get("allocation"):
        found.append(Violation(RESERVED_FOR, f"{ref} is reserved but not allocated", (r.offset,)))
    uids = [u for _, _, u in entries]
    if len(set(uids)) != len(uids):
        found.append(Violation(RESERVED_FOR, f"{ref} lists a consumer twice in reservedFor", (r.offset,)))
    before = {u for _, _, u in reserved_uids(prev)} if prev is not None and _uid(prev) == _uid(claim) else set()
    namespace, name = str(_meta(claim).get("namespace", "")), str(_meta(claim).get("name", ""))
    for resource, pod_name, uid in entries:
        if resource != "pods" or uid in before:
            continue
        seen = pods_seen.get(uid)
        if seen is None:
            found.append(
                Violation(
                    RESERVED_FOR, f"{ref} reserved for pod {pod_name} (uid {uid}), which never existed", (r.offset,)
                )
            )
        elif (seen[0], seen[1]) != (namespace, pod_name):
            found.append(
                Violation(
                    RESERVED_FOR, f"{ref} reserved for {pod_name} with the uid of pod {seen[0]}/{seen[1]}", (r.offset,)
                )
            )
        elif name not in seen[2]:
            found.append(
                Violation(
                    RESERVED_FOR, f"{ref} reserved for pod {pod_name} (uid {uid}), which does not use it", (r.offset,)
                )
            )
    return found


# -- pods-settled and claims-released (end state) ----------------------------------------------------


def check_pods_settled(records: Sequence[LogRecord], acknowledged: Sequence[Acknowledged] = ()) -> list[Violation]:
    found: list[Violation] = []
    state = final_state(records)
    for key, obj in state.items():
        if key_parts(key)[:2] != ("", "pods"):
            continue
        if _meta(obj).get("deletionTimestamp"):
            found.append(Violation(PODS_SETTLED, f"{_ref(key)} is still terminating at the end", (_offset(obj),)))
        elif _phase(obj) not in SETTLED_PHASES:
            found.append(
                Violation(
                    PODS_SETTLED,
                    f"{_ref(key)} ended {_phase(obj) or 'without a phase'} on node {_node(obj) or '(none)'}",
                    (_offset(obj),),
                )
            )
    for ack in acknowledged:
        if ack.op != "delete":
            continue
        left = state.get(ack.key)
        if left is not None and (ack.uid is None or _uid(left) == ack.uid) and not _meta(left).get("deletionTimestamp"):
            found.append(
                Violation(PODS_SETTLED, f"{_ref(ack.key)} was deleted by request but is still there", (_offset(left),))
            )
    return found


def check_claims_released(records: Sequence[LogRecord]) -> list[Violation]:
    found: list[Violation] = []
    state = final_state(records)
    for key, claim in state.items():
        if key_parts(key)[:2] != (RESOURCE_GROUP, "resourceclaims"):
            continue
        owner = controller_owner(claim)
        if owner is None or owner.get("kind") != "Pod":
            continue
        namespace = str(_meta(claim).get("namespace", ""))
        pod = state.get(pod_key(namespace, str(owner.get("name", ""))))
        if pod is not None and _uid(pod) == str(owner.get("uid")) and _phase(pod) not in TERMINAL_PHASES:
            continue
        why = "is gone" if pod is None or _uid(pod) != str(owner.get("uid")) else f"is {_phase(pod)}"
        offsets = (_offset(claim),) if pod is None else tuple(sorted((_offset(claim), _offset(pod))))
        found.append(
            Violation(
                CLAIMS_RELEASED,
                f"{_ref(key)} outlives its pod {owner.get('name')} (uid {owner.get('uid')}), which {why}",
                offsets,
            )
        )
    return found


# -- requests-once ----------------------------------------------------------------------------------


def check_requests_once(records: Sequence[LogRecord]) -> list[Violation]:
    found: list[Violation] = []
    first: dict[str, LogRecord] = {}
    for r in records:
        if not r.req or r.type == MALFORMED:
            continue
        prev = first.get(r.req)
        if prev is None:
            first[r.req] = r
        elif not (prev.type == "DELETED" and r.type == TOMBSTONE and prev.key == r.key):
            found.append(
                Violation(
                    REQUESTS_ONCE,
                    f"request {r.req} committed twice: {prev.type} {_ref(prev.key)} and {r.type} {_ref(r.key)}",
                    (prev.offset, r.offset),
                )
            )
    return found


# -- acks-kept -------------------------------------------------------------------------------------


def check_acks_kept(acked: Mapping[int, bytes], read: Mapping[int, bytes | None]) -> list[Violation]:
    """Every acknowledged (offset, value) of the probe topic is in what was read back, unchanged."""
    found: list[Violation] = []
    for offset, value in sorted(acked.items()):
        if offset not in read:
            found.append(Violation(ACKS_KEPT, f"acknowledged write {value!r} is missing from the log", (offset,)))
        elif read[offset] != value:
            found.append(
                Violation(
                    ACKS_KEPT,
                    f"acknowledged write {value!r} reads back as {read[offset]!r}",
                    (offset,),
                )
            )
    return found


# -- records-well-formed ---------------------------------------------------------------------------


def check_records_well_formed(records: Sequence[LogRecord]) -> list[Violation]:
    return [
        Violation(
            RECORDS_WELL_FORMED,
            f"record of topic {OBJECTS} at offset {r.offset} (key {r.key!r}) is malformed: {r.error or 'undecodable'}",
            (r.offset,),
        )
        for r in records
        if r.type == MALFORMED
    ]


# -- views-agree ------------------------------------------------------------------------------------


def state_at(records: Iterable[LogRecord], offset: int) -> dict[str, Obj]:
    """Key → object after every record at or before ``offset`` (what a list at that resourceVersion shows)."""
    return final_state(r for r in records if r.offset <= offset)


def check_view(
    records: Sequence[LogRecord],
    *,
    view: str,
    group: str,
    resource: str,
    resource_version: int,
    items: Sequence[Mapping[str, Any]],
) -> list[Violation]:
    """A list served by ``view`` at ``resource_version`` shows exactly the log folded up to that offset."""
    found: list[Violation] = []
    wanted = {
        (str(_meta(o).get("namespace", "")), str(_meta(o).get("name", ""))): o
        for key, o in state_at(records, resource_version).items()
        if key_parts(key)[:2] == (group, resource)
    }
    served = {(str(_meta(o).get("namespace", "")), str(_meta(o).get("name", ""))): o for o in items}
    what = f"{view} listed {resource} at resourceVersion {resource_version}"
    for ref in sorted(wanted.keys() | served.keys()):
        name = "/".join(p for p in ref if p)
        log_obj, view_obj = wanted.get(ref), served.get(ref)
        if view_obj is None:
            assert log_obj is not None
            found.append(Violation(VIEWS_AGREE, f"{what} without {name}", (_offset(log_obj),)))
        elif log_obj is None:
            found.append(
                Violation(VIEWS_AGREE, f"{what} with {name} (rv {_offset(view_obj)}), which the log does not have")
            )
        elif (_uid(view_obj), _offset(view_obj)) != (_uid(log_obj), _offset(log_obj)):
            found.append(
                Violation(
                    VIEWS_AGREE,
                    f"{what} with {name} at rv {_offset(view_obj)} (uid {_uid(view_obj)}); the log has rv "
                    f"{_offset(log_obj)} (uid {_uid(log_obj)})",
                    tuple(sorted({_offset(log_obj), _offset(view_obj)} - {-1})),
                )
            )
    return found


@dataclass(frozen=True, slots=True)
class Listed:
    """What one apiserver answered to a list of a resource: items at a resourceVersion, or why it failed."""

    view: str
    group: str
    resource: str
    resource_version: int = 0
    items: Sequence[Mapping[str, Any]] = ()
    error: str | None = None


def check_views(records: Sequence[LogRecord], lists: Iterable[Listed]) -> list[Violation]:
    """`check_view` over every list; a list that failed is a violation (the view went unchecked)."""
    found: list[Violation] = []
    for listed in lists:
        if listed.error is not None:
            found.append(
                Violation(
                    VIEWS_AGREE,
                    f"{listed.view} did not list {listed.resource}, so its view went unchecked: {listed.error}",
                )
            )
            continue
        found += check_view(
            records,
            view=listed.view,
            group=listed.group,
            resource=listed.resource,
            resource_version=listed.resource_version,
            items=listed.items,
        )
    return found


# -- all of them ----------------------------------------------------------------------------------------


def check_all(records: Sequence[LogRecord], acknowledged: Sequence[Acknowledged] = ()) -> list[Violation]:
    """Every invariant, violations in the order of the first offset they name."""
    found = [
        *check_objects_kept(records, acknowledged),
        *check_devices_exclusive(records),
        *check_pods_bound_once(records),
        *check_reserved_for(records),
        *check_pods_settled(records, acknowledged),
        *check_claims_released(records),
        *check_requests_once(records),
        *check_records_well_formed(records),
    ]
    return sorted(found, key=lambda v: (v.offsets[0] if v.offsets else -1, INVARIANTS.index(v.invariant)))
