"""Decision records: one per scheduling attempt, on the ``decisions`` topic.

Why they exist: a FailedScheduling Event says *that* no node fit and counts the
reasons; a person debugging a pod (``draplane explain``) or a replay of the
scheduler (``draplane replay --scheduler``) needs *which* node each plugin
rejected and why, which node won, and which devices were allocated. The
scheduler writes one record per attempt — for a failed attempt right after its
scheduling cycle, for a successful one once its binding cycle has ended, so
the record says whether the pod was bound.

Records are keyed ``<namespace>/<name>`` of the pod, so every attempt of one
pod is easy to pick out, and carry the schema version ``v`` like the other
envelopes (``topics.envelope``). The body is the core's
``cycle.decision_record`` — with the rejected nodes grouped by verdict under
``rejected`` (``rejections.py``; for a scheduled pod, the nodes Filter passed
over; numbered nodes as a range expression, ``node_ranges.py``) — plus:

- ``time``: wall-clock time the attempt started (RFC 3339, milliseconds);
- ``podResourceVersion``: the pod version the attempt saw;
- ``cycle``: the scheduler's scheduling-cycle counter;
- ``objectsPosition``: the scheduler's position in ``objects`` when the
  attempt began — it had seen every record below that offset, and nothing
  else — so ``draplane replay --scheduler`` re-runs the attempt on exactly
  that state;
- ``startNodeIndex``: where the round-robin Filter pass began (it matters
  only when filtering stops early, on clusters of 100 nodes or more);
- ``binding``: ``{result: bound|failed, message?, node}`` for attempts that
  reached the binding cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from services.bus.port import BEGINNING, Bus, OutRecord
from services.kube.times import parse_time
from topics.declarations import DECISIONS
from topics.envelope import SCHEMA_VERSION, MalformedRecord

RESULT_SCHEDULED = "scheduled"
RESULT_UNSCHEDULABLE = "unschedulable"
RESULT_ERROR = "error"
RESULT_SKIPPED = "skipped"
BOUND = "bound"
BINDING_FAILED = "failed"
MAX_IDLE_POLLS = 20  # stop reading after 10 s without a record below the end seen at start


def decision_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def rfc3339_ms(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def attempt_started_ms(record: Mapping[str, Any]) -> int | None:
    """When the attempt a decision record tells of started (its ``time``, written by `rfc3339_ms`), in ms
    since the epoch; None when the record has no readable time."""
    moment = parse_time(record.get("time"))
    return None if moment is None else round(moment.timestamp() * 1000)


def with_context(
    record: Mapping[str, Any],
    *,
    started: datetime,
    pod_resource_version: str,
    cycle: int,
    objects_position: int | None = None,
    start_node_index: int | None = None,
    scheduler: str = "",
) -> dict[str, Any]:
    """The core's record plus when the attempt started, what it saw, and (with leader election) which
    scheduler made it: the holder identity of the Lease it led under."""
    out = dict(record)
    out["time"] = rfc3339_ms(started)
    out["podResourceVersion"] = pod_resource_version
    out["cycle"] = cycle
    if objects_position is not None:
        out["objectsPosition"] = objects_position
    if start_node_index is not None:
        out["startNodeIndex"] = start_node_index
    if scheduler:
        out["scheduler"] = scheduler
    return out


def with_binding(record: Mapping[str, Any], *, node: str, bound: bool, message: str = "") -> dict[str, Any]:
    """Add the outcome of the binding cycle; a failed binding makes the attempt's result a failure."""
    out = dict(record)
    binding: dict[str, Any] = {"result": BOUND if bound else BINDING_FAILED, "node": node}
    if message:
        binding["message"] = message
    out["binding"] = binding
    if not bound:
        out["message"] = message
    return out


def encode_decision(record: Mapping[str, Any]) -> bytes:
    return orjson.dumps({"v": SCHEMA_VERSION, **record})


def decision_record(record: Mapping[str, Any]) -> OutRecord:
    """The log record of a decision (key: the pod's ``namespace/name``)."""
    return OutRecord(DECISIONS, str(record.get("pod", "")).encode(), encode_decision(record))


def decode_decision(value: bytes | None) -> dict[str, Any]:
    if value is None:
        raise MalformedRecord("empty value")
    try:
        doc = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise MalformedRecord(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise MalformedRecord("decision is not a JSON object")
    if doc.get("v") != SCHEMA_VERSION:
        raise MalformedRecord(f"unsupported decision schema version {doc.get('v')!r}")
    if not isinstance(doc.get("pod"), str) or not isinstance(doc.get("result"), str):
        raise MalformedRecord("a decision needs a pod and a result")
    doc.pop("v")
    return doc


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision as read back, with where it sits in the log."""

    offset: int
    timestamp_ms: int
    record: dict[str, Any]

    @property
    def pod(self) -> str:
        return str(self.record.get("pod", ""))


async def read_decisions(
    bus: Bus,
    *,
    pod: str | None = None,
    since_ms: int | None = None,
    on_malformed: Callable[[int, str], None] | None = None,
) -> list[Decision]:
    """Every decision on the log up to its current end, optionally only one pod's (``namespace/name``)."""
    end = await bus.end_offset(DECISIONS)
    start: int | str = BEGINNING
    if since_ms is not None:
        found = await bus.offset_for_time(DECISIONS, since_ms)
        if found is None:
            return []
        start = found
    consumer = await bus.consumer(DECISIONS, start=start)
    wanted = pod.encode() if pod is not None else None
    out: list[Decision] = []
    idle_polls = 0
    try:
        while consumer.position() < end and idle_polls < MAX_IDLE_POLLS:
            records = await consumer.getmany(timeout_ms=500)
            idle_polls = 0 if records else idle_polls + 1
            for rec in records:
                if rec.offset >= end:
                    return out
                if wanted is not None and rec.key != wanted:
                    continue
                try:
                    body = decode_decision(rec.value)
                except MalformedRecord as exc:
                    if on_malformed is not None:
                        on_malformed(rec.offset, str(exc))
                    continue
                out.append(Decision(rec.offset, rec.timestamp_ms, body))
    finally:
        await consumer.close()
    return out
