"""Chained requests in the committer core: a write applied only if the one it follows succeeded."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import orjson
import pytest

from services.runtime.request_chains import Decision, Decisions
from tests.support.committing import commit_batch as commit
from tests.unit.runtime.test_committer_core import create_claim, make_core, pod, req
from topics.envelope import MalformedRecord, Request, decode_request, encode_request

CLAIMS = ("resource.k8s.io", "resourceclaims")
FINALIZER = "resource.kubernetes.io/delete-protection"


def with_finalizer(claim: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(claim)
    new["metadata"]["finalizers"] = [FINALIZER]
    return new


def with_allocation(claim: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(claim)
    new["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}
    return new


def finalizer_then_status(claim: dict[str, Any]) -> tuple[Request, Request]:
    """The scheduler's two claim writes: the finalizer (update), then the status on the version it wrote."""
    first = req("update", *CLAIMS, "default", "c", object=with_finalizer(claim))
    status = with_allocation(with_finalizer(claim))
    del status["metadata"]["resourceVersion"]
    second = req("update_status", *CLAIMS, "default", "c", object=status, after=first.id, after_version=True)
    return first, second


@pytest.mark.parametrize("one_batch", [True, False])
def test_a_chained_status_update_applies_on_the_version_its_predecessor_wrote(one_batch: bool) -> None:
    core = make_core()
    first, second = finalizer_then_status(create_claim(core))
    if one_batch:
        outcomes = commit(core, first, second)
    else:
        outcomes = [*commit(core, first), *commit(core, second)]
    assert [o.code for o in outcomes] == [200, 200], [o.status for o in outcomes]
    final = outcomes[1].object
    assert final is not None
    assert final["metadata"]["finalizers"] == [FINALIZER]
    assert final["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "u"}]
    assert int(final["metadata"]["resourceVersion"]) > int(outcomes[0].object["metadata"]["resourceVersion"])  # type: ignore[index]


def test_a_request_chained_to_a_failed_one_is_not_applied() -> None:
    core = make_core()
    claim = create_claim(core)
    first, second = finalizer_then_status(claim)
    stale = copy.deepcopy(first.object)
    assert stale is not None
    stale["metadata"]["resourceVersion"] = "1"  # not the claim's version: 409
    first = replace(first, object=stale)
    a, b = commit(core, first, second)
    assert a.code == 409
    assert b.code == 409 and not b.writes
    assert b.status is not None
    assert f"the request it was sent after ({first.id}) was not applied" in b.status["message"]
    assert core.index.get("resource.k8s.io/resourceclaims/default/c")[1].get("status") is None  # type: ignore[index]


def test_a_request_chained_to_an_unknown_one_is_not_applied() -> None:
    core = make_core()
    claim = create_claim(core)
    _, second = finalizer_then_status(claim)
    (b,) = commit(core, second)
    assert b.code == 409 and not b.writes
    assert b.status is not None and "is not known to the committer" in b.status["message"]


def test_after_version_refuses_an_object_changed_in_between() -> None:
    """Another write to the claim between the two: the chained one must not overwrite it blindly."""
    core = make_core()
    claim = create_claim(core)
    first, second = finalizer_then_status(claim)
    (a,) = commit(core, first)
    assert a.object is not None
    other = copy.deepcopy(a.object)
    other["metadata"]["labels"] = {"changed": "yes"}
    (o,) = commit(core, req("update", *CLAIMS, "default", "c", object=other))
    assert o.code == 200
    (b,) = commit(core, second)
    assert b.code == 409 and not b.writes
    assert b.status is not None and "the object has been modified" in b.status["message"]


def test_after_version_refuses_a_change_staged_earlier_in_the_same_batch() -> None:
    core = make_core()
    claim = create_claim(core)
    first, second = finalizer_then_status(claim)
    other = with_finalizer(claim)
    other["metadata"]["labels"] = {"changed": "yes"}
    del other["metadata"]["resourceVersion"]
    between = req("update", *CLAIMS, "default", "c", object=other)
    a, o, b = commit(core, first, between, second)
    assert (a.code, o.code, b.code) == (200, 200, 409)


def test_a_chain_without_after_version_only_needs_its_predecessor_to_succeed() -> None:
    """The claim controller's shape: create a claim, then write the pod's status naming it."""
    core = make_core()
    (p,) = commit(core, req("create", "", "pods", "default", "p", object=pod()))
    assert p.code == 201
    create = req("create", *CLAIMS, "default", "c", object=create_claim_body())
    assert p.object is not None
    named = copy.deepcopy(p.object)
    named["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "c"}]}
    status = req("update_status", "", "pods", "default", "p", object=named, after=create.id)
    a, b = commit(core, create, status)
    assert (a.code, b.code) == (201, 200), b.status
    again = req("create", *CLAIMS, "default", "c", object=create_claim_body())
    status2 = replace(status, id="other", after=again.id)  # (its resourceVersion is stale by now, too)
    a, b = commit(core, again, status2)
    assert (a.code, b.code) == (409, 409)
    assert a.status is not None and a.status["reason"] == "AlreadyExists"


def create_claim_body() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }


def test_a_retried_chain_replays_what_was_applied_and_applies_the_rest() -> None:
    core = make_core()
    first, second = finalizer_then_status(create_claim(core))
    (a,) = commit(core, first)
    assert a.code == 200 and a.writes
    a2, b = commit(core, first, second)  # the sender timed out and sent both again, same ids
    assert a2.code == 200 and not a2.writes
    assert b.code == 200 and b.writes


def test_an_aborted_batch_leaves_no_decision_behind() -> None:
    """Decisions are remembered when a batch is committed (advance), not while it is decided."""
    core = make_core()
    first, second = finalizer_then_status(create_claim(core))
    core.process([first])  # decided, never appended (the transaction failed): the committer decides it again
    (b,) = commit(core, second)
    assert b.code == 409


def test_decisions_forget_the_oldest_first() -> None:
    decisions = Decisions(window=2)
    for name in ("a", "b", "c"):
        decisions.remember(name, Decision(True))
    assert decisions.get("a") is None
    assert decisions.get("b") == Decision(True) and len(decisions) == 2


def test_the_envelope_carries_after_only_on_chained_requests() -> None:
    core_request = req("update", *CLAIMS, "default", "c", object={"metadata": {"name": "c"}})
    assert b'"after"' not in encode_request(core_request)
    chained = replace(core_request, after="r0", after_version=True)
    assert decode_request(encode_request(chained)) == chained


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"after": 7}, "request field 'after' must be a string"),
        ({"after": "r0", "afterVersion": "yes"}, "request field 'afterVersion' must be a boolean"),
        ({"afterVersion": True}, "request field 'afterVersion' needs 'after'"),
    ],
)
def test_malformed_chain_fields_are_refused(fields: dict[str, Any], message: str) -> None:
    doc = orjson.loads(encode_request(req("delete", *CLAIMS, "default", "c")))
    with pytest.raises(MalformedRecord, match=message.replace("(", r"\(")):
        decode_request(orjson.dumps({**doc, **fields}))

