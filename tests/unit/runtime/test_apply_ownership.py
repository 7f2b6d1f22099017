"""Server-side apply through the committer: which applies are writes and what managedFields they leave.

kube-apiserver stores an apply that changes no value but adds its manager to
managedFields (the oracle scenarios ssa-shared-ownership-same-value and
ssa2-dropped-shared-field-stays compare it with kube-apiserver 1.31), and
stores nothing for an apply that changes neither values nor ownership.
"""

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
KEY = "coordination.k8s.io/leases/default/lease"


def apply(manager: str, labels: dict[str, str] | None) -> Request:
    meta: dict[str, Any] = {"name": "lease"}
    if labels is not None:
        meta["labels"] = labels
    return Request(
        id=f"r{next(_ids)}", op="patch", group="coordination.k8s.io", resource="leases",  # type: ignore[arg-type]
        namespace="default", name="lease", user=ADMIN, reply_to="test", version="v1",
        patch={"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta},
        patch_type="apply", options={"fieldManager": manager},
    )



@pytest.fixture
def core() -> CommitterCore:
    core = wired_core(clock=lambda: datetime(2026, 11, 29, tzinfo=UTC))
    assert commit(core, Request(
        id="ns", op="create", group="", resource="namespaces", namespace="", name="default",  # type: ignore[arg-type]
        user=ADMIN, reply_to="test", version="v1", object={"metadata": {"name": "default"}},
    )).code == 201
    return core


def managers(core: CommitterCore) -> list[str]:
    entry = core.index.get(KEY)
    assert entry is not None
    return [m["manager"] for m in entry[1]["metadata"].get("managedFields") or []]


def test_a_second_manager_applying_the_same_value_becomes_a_co_owner(core: CommitterCore) -> None:
    assert commit(core, apply("alice", {"shared": "1"})).code == 201
    outcome = commit(core, apply("bob", {"shared": "1"}))
    assert outcome.code == 200 and outcome.writes, "ownership changed, so the object is written"
    # A no-op apply sets no time for its manager (managedfieldsupdater.go sets one only when the object
    # changed), and entries sort by time, an absent one first (managedfields.go sortEncodedManagedFields).
    assert managers(core) == ["bob", "alice"]
    entry = core.index.get(KEY)
    assert entry is not None and "time" not in entry[1]["metadata"]["managedFields"][0]
    # alice stops applying the label: bob still owns it, so it stays.
    commit(core, apply("alice", None))
    entry = core.index.get(KEY)
    assert entry is not None and entry[1]["metadata"]["labels"] == {"shared": "1"}
    assert managers(core) == ["bob"]


def test_the_same_apply_again_writes_nothing(core: CommitterCore) -> None:
    assert commit(core, apply("alice", {"a": "1"})).code == 201
    outcome = commit(core, apply("alice", {"a": "1"}))
    assert outcome.code == 200 and not outcome.writes
