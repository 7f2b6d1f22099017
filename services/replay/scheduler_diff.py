"""What ``draplane replay --scheduler`` compares: recorded attempts, where they happened, and how two differ.

Pure: decision records in (`services.scheduler.decisions`), plain values out.

*Where an attempt happened.* An attempt saw every ``objects`` record below
the scheduler's position when it began, recorded as ``objectsPosition``.
Records written before that field existed have no position; their point is
estimated as the first record appended after the attempt's start time (and
after the pod version it saw), and the comparison says so (``exact=False``).
The state an attempt saw is therefore the state at resourceVersion
``point - 1``, the same state ``draplane replay --at <point - 1> get`` shows.

*What is compared.* Four aspects of the scheduling cycle, in this order:

- ``result``: scheduled, unschedulable, error or skipped. A recorded attempt
  whose binding then failed still *scheduled* in its cycle (the replay does
  not bind), so it counts as scheduled;
- ``node``: the node chosen;
- ``allocation``: the devices allocated per claim;
- ``rejections``: which plugin rejected which node.

Messages and scores are shown, not compared: the four aspects are what the
scheduler decided, the rest is how it said so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from services.scheduler import decisions, rejections

Point = tuple[str, int]  # ("offset", n) or ("time", ms); see selection.parse_point
ASPECTS = ("result", "node", "allocation", "rejections")
DRA_PLUGIN = "DynamicResources"


def attempt_time_ms(record: Mapping[str, Any], fallback_ms: int) -> int:
    """When the attempt began (the record's ``time``), else ``fallback_ms`` (the record's log time)."""
    started = decisions.attempt_started_ms(record)
    return fallback_ms if started is None else started


def pod_resource_version(record: Mapping[str, Any]) -> int | None:
    text = str(record.get("podResourceVersion") or "")
    return int(text) if text.isdigit() else None


def recorded_position(record: Mapping[str, Any]) -> int | None:
    value = record.get("objectsPosition")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def estimated_point(record: Mapping[str, Any], first_offset_after_start: int) -> int:
    """The point of an attempt without ``objectsPosition``: after its pod version, before later records."""
    pod_rv = pod_resource_version(record)
    return max(first_offset_after_start, pod_rv + 1 if pod_rv is not None else 0)


@dataclass(frozen=True, slots=True)
class RecordedAttempt:
    """One recorded attempt and the point in ``objects`` where it happened."""

    decision_offset: int
    record: dict[str, Any]
    point: int  # the attempt saw every objects record below this offset
    time_ms: int
    exact: bool = True  # the point was recorded, not estimated

    @property
    def pod(self) -> str:
        return str(self.record.get("pod", ""))

    @property
    def uid(self) -> str:
        return str(self.record.get("uid", ""))

    @property
    def cycle(self) -> int:
        value = self.record.get("cycle")
        return value if isinstance(value, int) else -1

    @property
    def attempt(self) -> int:
        value = self.record.get("attempt")
        return value if isinstance(value, int) else 0

    @property
    def pod_resource_version(self) -> int | None:
        return pod_resource_version(self.record)

    @property
    def seen(self) -> int:
        """The resourceVersion of the state the attempt saw (the last record below the point)."""
        return self.point - 1

    def sort_key(self) -> tuple[int, int, int, int]:
        """Attempts in the order they ran: by point, then start time, then cycle (a restart resets cycles)."""
        return (self.point, self.time_ms, self.cycle, self.decision_offset)


@dataclass(frozen=True, slots=True)
class Window:
    """Which attempts ``--from``/``--until`` (inclusive) and ``-n``/``--name`` select.

    An offset bound applies to the state the attempt saw (`RecordedAttempt.seen`),
    a time bound to when it began.
    """

    start: Point | None = None
    until: Point | None = None
    namespace: str | None = None
    name: str | None = None

    def contains(self, attempt: RecordedAttempt) -> bool:
        namespace, _, name = attempt.pod.partition("/")
        if self.namespace is not None and namespace != self.namespace:
            return False
        if self.name is not None and name != self.name:
            return False
        if self.start is not None and _value(self.start, attempt) < self.start[1]:
            return False
        return self.until is None or _value(self.until, attempt) <= self.until[1]


def _value(bound: Point, attempt: RecordedAttempt) -> int:
    return attempt.seen if bound[0] == "offset" else attempt.time_ms


# ------------------------------------------------------------------ views


Device = str  # "<request>=<driver>/<pool>/<device>", with " (admin access)" when so


@dataclass(frozen=True, slots=True)
class AttemptView:
    """The decided part of one attempt, comparable between recorded and replayed."""

    result: str
    node: str = ""
    allocation: Mapping[str, tuple[Device, ...]] = field(default_factory=dict)  # claim -> devices
    # node -> rejecting plugin; None: the record does not say (a scheduled attempt recorded before
    # scheduled attempts listed the nodes Filter passed over)
    rejections: Mapping[str, str] | None = field(default_factory=dict)
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"result": self.result}
        if self.node:
            out["node"] = self.node
        if self.allocation:
            out["allocation"] = {claim: list(devices) for claim, devices in self.allocation.items()}
        if self.rejections:
            out["rejections"] = dict(self.rejections)
        if self.message:
            out["message"] = self.message
        return out


def cycle_result(record: Mapping[str, Any]) -> str:
    """The scheduling cycle's result: a record with a binding outcome was scheduled, whatever binding did."""
    if record.get("binding"):
        return decisions.RESULT_SCHEDULED
    return str(record.get("result", ""))


def devices(allocation: Mapping[str, Any]) -> tuple[Device, ...]:
    out = []
    for result in (allocation.get("devices") or {}).get("results") or ():
        device = f"{result.get('request', '')}={result.get('driver', '')}/{result.get('pool', '')}/"
        device += str(result.get("device", ""))
        if result.get("adminAccess"):
            device += " (admin access)"
        out.append(device)
    return tuple(sorted(out))


def view(record: Mapping[str, Any]) -> AttemptView:
    """The comparable part of a decision record (recorded, or the replayed core's ``decision_record``)."""
    result = cycle_result(record)
    node = ""
    allocation: dict[str, tuple[Device, ...]] = {}
    if result == decisions.RESULT_SCHEDULED:
        node = str(record.get("node") or (record.get("binding") or {}).get("node") or "")
        published = ((record.get("plugins") or {}).get(DRA_PLUGIN) or {}).get("allocations") or {}
        allocation = {str(claim): devices(alloc) for claim, alloc in sorted(published.items())}
    rejected: dict[str, str] | None = {
        node_name: str(rejection.get("plugin") or "")
        for node_name, rejection in sorted(rejections.by_node(record).items())
    }
    if result == decisions.RESULT_SCHEDULED and not rejections.listed(record):
        rejected = None
    message = "" if result == decisions.RESULT_SCHEDULED else str(record.get("message") or "")
    return AttemptView(result, node, allocation, rejected, message)


def compare(recorded: AttemptView, replayed: AttemptView) -> tuple[str, ...]:
    """The aspects (`ASPECTS`) in which two attempts differ; empty when they decided alike."""
    differ = []
    if recorded.result != replayed.result:
        differ.append("result")
    if recorded.node != replayed.node:
        differ.append("node")
    if dict(recorded.allocation) != dict(replayed.allocation):
        differ.append("allocation")
    if (
        recorded.rejections is not None
        and replayed.rejections is not None
        and dict(recorded.rejections) != dict(replayed.rejections)
    ):
        differ.append("rejections")
    return tuple(differ)
