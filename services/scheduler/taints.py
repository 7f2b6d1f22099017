"""Taints and tolerations, matched as ``v1helper`` (k8s.io/api core/v1 helpers) does.

Shared by TaintToleration (filter and scoring) and NodeUnschedulable (which
treats ``spec.unschedulable`` as the ``node.kubernetes.io/unschedulable``
NoSchedule taint a pod may tolerate).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

Taint = Mapping[str, Any]
Toleration = Mapping[str, Any]


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Toleration.ToleratesTaint: effect, key, then operator (empty means Equal)."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def do_not_schedule(taint: Taint) -> bool:
    return taint.get("effect") in (NO_SCHEDULE, NO_EXECUTE)


def find_matching_untolerated_taint(
    taints: Iterable[Taint], tolerations: Iterable[Toleration], taint_filter: Callable[[Taint], bool] | None = None
) -> Taint | None:
    """The first taint passing ``taint_filter`` that no toleration tolerates."""
    tolerations = list(tolerations)
    for taint in taints:
        if taint_filter is not None and not taint_filter(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


def pod_tolerations(pod: Mapping[str, Any]) -> list[Toleration]:
    return list((pod.get("spec") or {}).get("tolerations") or ())


def node_taints(node: Mapping[str, Any] | None) -> list[Taint]:
    if not node:
        return []
    return list((node.get("spec") or {}).get("taints") or ())
