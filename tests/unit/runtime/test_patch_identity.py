"""A patch that breaks the object's identity is refused as Kubernetes' patcher refuses it, and changes nothing."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest

from services.apiserver.committer_hooks import wired_core
from services.runtime.committer_core import CommitterCore
from tests.support.committing import commit_one as commit
from topics.envelope import Request, UserInfo

ADMIN = UserInfo("admin", ("system:masters",))
_ids = itertools.count()


def request(op: str, resource: str, namespace: str, name: str, **kw: Any) -> Request:
    return Request(
        id=f"r{next(_ids)}", op=op, group="", resource=resource, namespace=namespace, name=name,  # type: ignore[arg-type]
        user=ADMIN, reply_to="test", version="v1", **kw,
    )



@pytest.fixture
def core() -> CommitterCore:
    core = wired_core(clock=lambda: datetime(2026, 11, 29, tzinfo=UTC))
    assert commit(core, request("create", "namespaces", "", "default", object={"metadata": {"name": "default"}})).code == 201
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    assert commit(core, request("create", "pods", "default", "", object=pod)).code == 201
    return core


CANNOT_HANDLE = 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal {} into Go struct field Pod.metadata of type v1.ObjectMeta'
NAME_MISMATCH = "the name of the object ({}) does not match the name on the URL (web)"


@pytest.mark.parametrize(
    ("patch_type", "patch", "message"),
    [
        ("merge", {"metadata": 5}, CANNOT_HANDLE.format("number")),
        ("merge", {"metadata": "x"}, CANNOT_HANDLE.format("string")),
        ("merge", {"metadata": []}, CANNOT_HANDLE.format("array")),
        ("strategic", {"metadata": 5}, CANNOT_HANDLE.format("number")),
        ("json", [{"op": "replace", "path": "/metadata", "value": True}], CANNOT_HANDLE.format("bool")),
        ("merge", {"metadata": None}, NAME_MISMATCH.format("")),
        ("strategic", {"metadata": None}, NAME_MISMATCH.format("")),
        ("json", [{"op": "remove", "path": "/metadata"}], NAME_MISMATCH.format("")),
        ("merge", {"metadata": {"name": "other"}}, NAME_MISMATCH.format("other")),
        (
            "merge",
            {"metadata": {"namespace": "kube-system"}},
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
    ],
)
def test_a_patch_that_breaks_the_identity_is_a_400_and_the_pod_keeps_its_labels(
    core: CommitterCore, patch_type: str, patch: Any, message: str
) -> None:
    outcome = commit(core, request("patch", "pods", "default", "web", patch=patch, patch_type=patch_type))
    assert outcome.code == 400
    assert outcome.status is not None and outcome.status["reason"] == "BadRequest"
    assert outcome.status["message"] == message
    assert not outcome.writes
    entry = core.index.get("core/pods/default/web")
    assert entry is not None and entry[1]["metadata"]["labels"] == {"app": "web"}


def test_a_patch_naming_the_same_object_still_applies(core: CommitterCore) -> None:
    patch = {"metadata": {"name": "web", "namespace": "default", "labels": {"tier": "front"}}}
    outcome = commit(core, request("patch", "pods", "default", "web", patch=patch, patch_type="merge"))
    assert outcome.code == 200
    assert outcome.object is not None and outcome.object["metadata"]["labels"] == {"app": "web", "tier": "front"}


def test_an_apply_that_would_create_another_name_is_a_400_and_creates_nothing(core: CommitterCore) -> None:
    """kube's patcher checks the applied object's name against the URL before it creates (rest/patch.go checkName)."""
    applied = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other"}}
    outcome = commit(
        core,
        request("patch", "pods", "default", "new", patch=applied, patch_type="apply", options={"fieldManager": "a"}),
    )
    assert outcome.code == 400
    assert outcome.status is not None
    assert outcome.status["message"] == "the name of the object (other) does not match the name on the URL (new)"
    assert not outcome.writes
    assert core.index.get("core/pods/default/other") is None
