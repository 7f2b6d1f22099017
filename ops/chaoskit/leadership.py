"""What a chaos run with replicated components (``--replicas 2``) checks about their leaders.

Why this module exists: with two replicas of the scheduler and of the
controller-manager, one of each acts, chosen by a ``kube-system`` Lease
(docs/decisions/leader-election.md), and the run kills the Lease holders on
purpose. Three promises follow, checked here with pure functions (no I/O)
that unit tests feed hand-made inputs; the run (``ops.chaoskit.run``)
gathers what they read:

- `check_scheduler_acts_alone` (``scheduler-acts-alone``): exactly one
  scheduler acts at a time. Every decision record names the scheduler that
  made it (its Lease holder identity, the ``scheduler`` field); in the
  ``decisions`` log each identity's records form one unbroken run. A
  scheduler that decides again after another one decided means two acted at
  once (a killed replica comes back under a new identity, so an old name
  never legitimately returns).
- `check_claims_created_once` (``claims-created-once``): no ResourceClaim is
  generated twice for one claim of one pod (owner pod uid plus the
  ``resource.kubernetes.io/pod-claim-name`` annotation), whichever
  controller-manager was acting.
- `check_leaders_replaced` (``leaders-replaced``): every killed leader is
  replaced — another holder shows in its Lease within leaseDuration plus a
  slack (`Handover`, measured by the run from the SIGKILL to the first
  record naming a new holder).

``leader_status`` reads the ``leader_election_master_status`` gauge from a
process's ``/metrics`` text: that is how the run finds the replica to kill.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ops.chaoskit.invariants import Violation, controller_owner
from ops.chaoskit.records import LogRecord, key_parts
from services.kube.resourceclaim import POD_CLAIM_NAME_ANNOTATION

SCHEDULER_ACTS_ALONE = "scheduler-acts-alone"
CLAIMS_CREATED_ONCE = "claims-created-once"
LEADERS_REPLACED = "leaders-replaced"
LEADERSHIP_INVARIANTS: tuple[str, ...] = (SCHEDULER_ACTS_ALONE, CLAIMS_CREATED_ONCE, LEADERS_REPLACED)

MASTER_STATUS = "leader_election_master_status"


class Decided(NamedTuple):
    """One decision record as the check needs it: its offset in ``decisions``, its pod and its scheduler."""

    offset: int
    pod: str
    scheduler: str  # "" when the record names none


@dataclass(frozen=True, slots=True)
class Handover:
    """A killed Lease holder and how long until its Lease named another holder (None: not seen)."""

    lease: str
    killed: str  # the process killed
    holder: str  # its holder identity at the kill
    seconds: float | None


def leader_status(metrics: str, lease: str) -> float | None:
    """``leader_election_master_status{name="<lease>"}`` in a Prometheus text exposition, None if absent."""
    for line in metrics.splitlines():
        if not line.startswith(MASTER_STATUS + "{"):
            continue
        labels, _, value = line.rpartition("}")
        if f'name="{lease}"' not in labels:
            continue
        try:
            return float(value.split()[0])
        except (IndexError, ValueError):
            return None
    return None


def check_scheduler_acts_alone(decided: Sequence[Decided], *, require_name: bool = True) -> list[Violation]:
    """Each scheduler identity's decisions form one unbroken run in offset order; every record names one."""
    found: list[Violation] = []
    finished: dict[str, int] = {}  # identity -> offset of its last record before another scheduler decided
    current: tuple[str, int] | None = None  # (identity, offset of its latest record)
    for d in sorted(decided, key=lambda d: d.offset):
        if not d.scheduler:
            if require_name:
                why = f"the decision on {d.pod} names no scheduler"
                found.append(Violation(SCHEDULER_ACTS_ALONE, why, (d.offset,)))
            continue
        if current is not None and current[0] != d.scheduler:
            finished[current[0]] = current[1]
        if d.scheduler in finished:
            other = current[0] if current is not None else "?"
            found.append(
                Violation(
                    SCHEDULER_ACTS_ALONE,
                    f"scheduler {d.scheduler} decided on {d.pod} after {other} had decided "
                    f"(its previous decision was at offset {finished[d.scheduler]}): two schedulers acted at once",
                    (finished[d.scheduler], d.offset),
                )
            )
            del finished[d.scheduler]
        current = (d.scheduler, d.offset)
    return found


def check_claims_created_once(records: Iterable[LogRecord]) -> list[Violation]:
    """At most one claim is ever ADDED for one pod (uid) and one of its claims (pod-claim-name)."""
    found: list[Violation] = []
    first: dict[tuple[str, str], tuple[str, int]] = {}  # (pod uid, pod claim name) -> (claim, offset)
    for r in records:
        if r.type != "ADDED" or r.object is None or key_parts(r.key)[:2] != ("resource.k8s.io", "resourceclaims"):
            continue
        owner = controller_owner(r.object)
        meta: dict[str, Any] = r.object.get("metadata") or {}
        if owner is None or owner.get("kind") != "Pod":
            continue
        pod_claim = str((meta.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION, ""))
        at = (str(owner.get("uid", "")), pod_claim)
        name = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        if at in first:
            earlier, offset = first[at]
            found.append(
                Violation(
                    CLAIMS_CREATED_ONCE,
                    f"claim {name} generated for pod {owner.get('name')} (uid {at[0]}) claim {pod_claim!r}, "
                    f"which already had {earlier}",
                    (offset, r.offset),
                )
            )
            continue
        first[at] = (name, r.offset)
    return found


def check_leaders_replaced(handovers: Iterable[Handover], *, within: float) -> list[Violation]:
    """Every killed leader's Lease named another holder within ``within`` seconds of the kill."""
    found: list[Violation] = []
    for h in handovers:
        if h.seconds is None:
            found.append(Violation(LEADERS_REPLACED, f"{h.lease}: no holder replaced {h.holder} (killed {h.killed})"))
        elif h.seconds > within:
            found.append(
                Violation(
                    LEADERS_REPLACED,
                    f"{h.lease}: {h.holder} (killed {h.killed}) was replaced after {h.seconds:.1f}s, "
                    f"more than {within:g}s",
                )
            )
    return found
