"""Mutated request envelopes, straight to the committer's decisions: a 4xx Status, never a 500.

The REST layer checks what it sends, but `requests` is a topic anyone with
access to the log can write to (components, tools, a broken client). So the
committer itself must answer any envelope with a Kubernetes Status: either
`decode_request` refuses it (the committer replies 400, see tests/poison), or
`CommitterCore.process` decides it. A decision may succeed or fail with 4xx,
but a 500 — an exception escaping the decision logic — is a bug.

This runs the real core (admission, patching, decoding, managed fields)
without a log: writes are "committed" by giving them offsets, so later cases
see the objects earlier ones created.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.apiserver.admission_chain import build_admission
from services.apiserver.committer_hooks import wired_core
from services.runtime.committer_core import CommitterCore, Outcome
from tests.fuzz.fuzz_support import CASES, CODES, FIXTURE, NS, NS_OBJECT, RESOURCES, fuzz_settings, one_in
from tests.fuzz.mutations import JSON, base_manifest, dumps, mutate
from topics.envelope import MalformedRecord, Request, UserInfo, decode_request

ADMIN = UserInfo("fuzz-admin", ("system:masters", "system:authenticated"))
USERS = [
    {"name": "fuzz-admin", "groups": ["system:masters"]},
    {"name": "system:node:worker-1", "groups": ["system:nodes"]},
    {"name": "system:kube-scheduler", "groups": []},
    {"name": "system:kube-controller-manager", "groups": []},
    {"name": "bob", "groups": ["system:authenticated"]},
    {"name": "system:anonymous", "groups": ["system:unauthenticated"]},
]


class CommittingCore:
    """A committer core whose successful writes are applied at increasing offsets."""

    def __init__(self) -> None:
        self.core: CommitterCore = wired_core(admission=build_admission())
        self._offsets = itertools.count(1)

    def process(self, requests: list[Request]) -> list[Outcome]:
        outcomes = self.core.process(requests)
        writes = [w for o in outcomes for w in o.writes]
        for w in writes:
            w.offset = next(self._offsets)
        self.core.stamp(outcomes)
        self.core.advance(outcomes, (max(w.offset for w in writes) + 1) if writes else self.core.index.position)
        return outcomes


@pytest.fixture(scope="module")
def core() -> CommittingCore:
    committing = CommittingCore()
    seed = [Request(str(uuid.uuid4()), "create", "", "namespaces", "", ns, ADMIN, "", obj)
            for ns, obj in (("default", {"metadata": {"name": "default"}}), (NS, NS_OBJECT))]  # fmt: skip
    for rt in RESOURCES:
        name = f"{FIXTURE}-ns" if rt.kind == "Namespace" else FIXTURE
        seed.append(
            Request(
                str(uuid.uuid4()),
                "create",
                rt.group,
                rt.plural,
                NS if rt.namespaced else "",
                name,
                ADMIN,
                "",
                base_manifest(rt.kind, name),
                version=rt.version,
            )
        )
    for outcome in committing.process(seed):
        assert outcome.code == 201, outcome.status
    return committing


def mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value from ``valid``, or about one time in eight any JSON at all."""
    return st.tuples(one_in(8), valid, JSON).map(lambda t: t[2] if t[0] else t[1])


_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "dryRun": mostly(st.sampled_from([["All"], [], ["x"], None])),
        "fieldManager": mostly(st.sampled_from(["fuzz", "", "x" * 200])),
        "fieldValidation": mostly(st.sampled_from(["Strict", "Warn", "Ignore", "x"])),
        "force": mostly(st.booleans()),
        "subresource": mostly(st.sampled_from(["", "status", "binding", "scale", "x"])),
        "propagationPolicy": mostly(st.sampled_from(["Orphan", "Background", "Foreground", "x"])),
        "gracePeriodSeconds": mostly(st.sampled_from([0, 30, -1, 2**62])),
        "preconditions": mostly(
            st.fixed_dictionaries(
                {}, optional={"uid": st.none() | st.text(max_size=8), "resourceVersion": st.text(max_size=4)}
            )
        ),
    },
)


@st.composite
def envelopes(draw: st.DrawFn) -> bytes:
    rt = draw(st.sampled_from(RESOURCES), label="resource")
    op = draw(st.sampled_from(["create", "update", "update_status", "patch", "delete"]), label="op")
    fixture = f"{FIXTURE}-ns" if rt.kind == "Namespace" else FIXTURE
    target = base_manifest(rt.kind, None if op == "create" else fixture, with_status=op == "update_status")
    doc: dict[str, Any] = {
        "v": 1,
        "id": str(uuid.uuid4()),
        "op": op,
        "group": rt.group,
        "version": rt.version,
        "resource": rt.plural,
        "namespace": NS if rt.namespaced else "",
        "name": target["metadata"]["name"],
        "user": draw(st.sampled_from(USERS), label="user"),
        "replyTo": "fuzz",
        "object": target if op in ("create", "update", "update_status") else None,
        "patch": None,
        "patchType": None,
        "options": draw(_OPTIONS, label="options"),
    }
    if op == "patch":
        doc["patchType"] = draw(mostly(st.sampled_from(["merge", "strategic", "json", "apply", "x", ""])), label="type")
        doc["patch"] = draw(st.sampled_from([target, [{"op": "add", "path": "/metadata/labels", "value": {}}]]) | JSON)
    data = draw(st.data())
    return dumps(mutate(data, doc, at_most=2) if draw(st.booleans(), label="mutate envelope?") else doc)


@fuzz_settings(400)
@given(value=envelopes())
def test_any_request_envelope_gets_a_4xx_status_never_a_500(core: CommittingCore, value: bytes) -> None:
    CASES["committer: request envelope"] += 1
    try:
        request = decode_request(value)
    except MalformedRecord:
        CODES[("committer: request envelope", 400)] += 1
        return  # the committer answers these 400 (tests/poison)
    (outcome,) = core.process([request])
    CODES[("committer: request envelope", outcome.code)] += 1
    assert outcome.code < 500, outcome.status
    if outcome.code >= 400:
        status = outcome.status or {}
        assert status.get("kind") == "Status" and status.get("code") == outcome.code, status
        assert isinstance(status.get("message"), str) and status["message"], status
