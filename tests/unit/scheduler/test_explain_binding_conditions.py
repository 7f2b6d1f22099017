"""``draplane explain`` on binding conditions: pending or failed now (the log's state), failed at an attempt (records)."""

from __future__ import annotations

from typing import Any

from services.replay.pending import explain_pending, render
from services.scheduler.explain import render_attempt

Obj = dict[str, Any]
RG = "resource.k8s.io"


class State:
    """The two reads `explain_pending` makes of an ObjectState."""

    def __init__(self, *objs: tuple[str, str, Obj]) -> None:
        self.objs = objs

    def get(self, group: str, resource: str, namespace: str, name: str) -> Obj | None:
        for g, r, obj in self.objs:
            meta = obj["metadata"]
            if (g, r, meta.get("namespace", ""), meta["name"]) == (group, resource, namespace, name):
                return obj
        return None

    def list(self, group: str, resource: str, namespace: str | None = None) -> list[Obj]:
        return [obj for g, r, obj in self.objs if (g, r) == (group, resource)]


def pod() -> Obj:
    return {
        "metadata": {"name": "p", "namespace": "default", "uid": "u"},
        "spec": {"resourceClaims": [{"name": "fabric", "resourceClaimName": "c"}]},
    }


def claim(conditions: list[tuple[str, str]] | None) -> Obj:
    result = {
        "request": "fabric",
        "driver": "d",
        "pool": "node-1",
        "device": "fabric-0",
        "bindingConditions": ["attached"],
        "bindingFailureConditions": ["failed"],
    }
    status: Obj = {
        "allocation": {"devices": {"results": [result]}, "allocationTimestamp": "2026-12-02T07:00:00Z"},
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}],
    }
    if conditions is not None:
        status["devices"] = [
            {
                "driver": "d",
                "pool": "node-1",
                "device": "fabric-0",
                "conditions": [{"type": t, "status": s} for t, s in conditions],
            }
        ]
    return {"metadata": {"name": "c", "namespace": "default"}, "status": status}


def explain_now(claim_obj: Obj) -> list[str]:
    state = State(("", "pods", pod()), (RG, "resourceclaims", claim_obj))
    pending = explain_pending(state, "default", "p")  # type: ignore[arg-type]
    assert pending is not None
    return render(pending)


def test_a_pod_waiting_for_a_binding_condition_says_which() -> None:
    assert explain_now(claim(None)) == [
        "Pod default/p is not scheduled.",
        "  claim default/c: allocated: d/node-1/fabric-0",
        "  claim default/c: binding condition pending: <driver=d, pool=node-1> fabric-0 pending=[attached]",
    ]


def test_a_failed_binding_condition_says_failed() -> None:
    assert explain_now(claim([("attached", "False"), ("failed", "True")]))[-1] == (
        "  claim default/c: binding condition failed: <driver=d, pool=node-1> fabric-0 failed=[failed] "
        "pending=[attached]"
    )


def test_conditions_all_true_add_nothing() -> None:
    assert explain_now(claim([("attached", "True")]))[-1] == "  claim default/c: allocated: d/node-1/fabric-0"


def test_an_attempt_whose_binding_timed_out_says_the_binding_condition_failed() -> None:
    message = 'running PreBind plugin "DynamicResources": device binding timeout: context deadline exceeded'
    record = {
        "attempt": 1,
        "result": "error",
        "node": "node-1",
        "message": message,
        "binding": {"result": "failed", "node": "node-1", "message": message},
    }
    lines = render_attempt(record)
    assert f"  message: {message}" in lines
    assert lines[-1] == "  binding condition failed: not all True within bindingTimeout"
