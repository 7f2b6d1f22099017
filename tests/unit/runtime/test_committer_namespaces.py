"""The committer's namespace lifecycle, as kube-apiserver's namespace registry and NamespaceLifecycle decide it.

Expectations are read from Kubernetes 1.37: pkg/registry/core/namespace
(strategy.go: PrepareForCreate adds ``kubernetes`` to spec.finalizers, a main
update keeps spec.finalizers and status, ``finalize`` keeps status;
storage/storage.go: the first DELETE sets deletionTimestamp and phase
Terminating, later ones return the namespace while spec.finalizers is not
empty; ShouldDeleteNamespaceDuringUpdate) and
k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle (immortal
namespaces, the 403 and its NamespaceTerminating cause, the 404).
"""

from __future__ import annotations

import copy
import itertools
from datetime import UTC, datetime
from typing import Any

import pytest

from services.api.admission.chain import AdmissionChain
from services.api.admission.namespace_lifecycle import NamespaceLifecycle
from services.runtime.committer_core import CommitterCore, Outcome
from tests.support.committing import commit_batch as commit
from topics.envelope import Request, UserInfo

USER = UserInfo("admin", ("system:masters",))
NOW = datetime(2026, 12, 2, 4, 0, 0, tzinfo=UTC)
_ids = itertools.count()


def req(op: str, resource: str, namespace: str, name: str, **kw: Any) -> Request:
    return Request(
        id=f"ns{next(_ids)}",
        op=op,
        group="",
        resource=resource,  # type: ignore[arg-type]
        namespace=namespace,
        name=name,
        user=USER,
        reply_to="test",
        **kw,
    )



def one(core: CommitterCore, request: Request) -> Outcome:
    (o,) = commit(core, request)
    return o


def make_core() -> CommitterCore:
    uids = (f"uid-{i}" for i in itertools.count())
    core = CommitterCore(
        clock=lambda: NOW, new_uid=lambda: next(uids), admission=AdmissionChain([NamespaceLifecycle()])
    )
    for name in ("default", "kube-system", "kube-public", "kube-node-lease", "t"):
        assert one(core, req("create", "namespaces", "", name, object={"metadata": {"name": name}})).code == 201
    return core


def namespace(core: CommitterCore, name: str = "t") -> dict[str, Any]:
    entry = core.index.get(f"core/namespaces//{name}")
    assert entry is not None
    return copy.deepcopy(entry[1])


def pod(name: str = "p", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "t", **meta},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


def terminate(core: CommitterCore, name: str = "t", **options: Any) -> Outcome:
    o = one(core, req("delete", "namespaces", "", name, options=options))
    assert o.code == 200, o.status
    return o


def finalize(core: CommitterCore, finalizers: list[str], name: str = "t") -> Outcome:
    body = {**namespace(core, name), "spec": {"finalizers": finalizers}}
    return one(core, req("update", "namespaces", "", name, object=body, options={"subresource": "finalize"}))


@pytest.mark.parametrize(
    ("spec", "finalizers"),
    [
        (None, ["kubernetes"]),
        ({"finalizers": ["example.com/x"]}, ["example.com/x", "kubernetes"]),
        ({"finalizers": ["kubernetes"]}, ["kubernetes"]),
    ],
)
def test_a_new_namespace_is_active_with_the_kubernetes_finalizer(
    spec: dict[str, Any] | None, finalizers: list[str]
) -> None:
    core = make_core()
    body: dict[str, Any] = {"metadata": {"name": "n"}, "status": {"phase": "Terminating"}}
    if spec is not None:
        body["spec"] = spec
    o = one(core, req("create", "namespaces", "", "n", object=body))
    assert o.object is not None
    assert o.object["spec"] == {"finalizers": finalizers}
    assert o.object["status"] == {"phase": "Active"}


def test_the_first_delete_marks_the_namespace_terminating_and_keeps_it() -> None:
    core = make_core()
    o = terminate(core)
    assert [w.type for w in o.writes] == ["MODIFIED"]
    assert o.object is not None and not o.return_status
    meta = o.object["metadata"]
    assert meta["deletionTimestamp"] == "2026-12-02T04:00:00Z"
    assert "deletionGracePeriodSeconds" not in meta and "finalizers" not in meta
    assert o.object["status"]["phase"] == "Terminating"
    assert o.object["spec"]["finalizers"] == ["kubernetes"]


def test_a_delete_while_spec_finalizers_remain_answers_the_namespace_and_writes_nothing() -> None:
    core = make_core()
    terminate(core)
    o = terminate(core)
    assert o.writes == [] and o.object is not None
    assert o.object["status"]["phase"] == "Terminating"


@pytest.mark.parametrize(
    ("options", "finalizers"),
    [
        ({}, None),
        ({"propagationPolicy": "Background"}, None),
        ({"propagationPolicy": "Orphan"}, ["orphan"]),
        ({"propagationPolicy": "Foreground"}, ["foregroundDeletion"]),
        ({"orphanDependents": True, "propagationPolicy": "Foreground"}, ["orphan"]),
    ],
)
def test_the_first_delete_sets_the_propagation_finalizers(
    options: dict[str, Any], finalizers: list[str] | None
) -> None:
    core = make_core()
    o = terminate(core, **options)
    assert o.object is not None
    assert o.object["metadata"].get("finalizers") == finalizers


def test_finalize_with_no_finalizer_left_deletes_the_terminating_namespace() -> None:
    core = make_core()
    terminate(core)
    o = finalize(core, [])
    assert o.code == 200 and [w.type for w in o.writes] == ["DELETED"]
    assert core.index.get("core/namespaces//t") is None


def test_finalize_of_an_active_namespace_only_updates_spec() -> None:
    core = make_core()
    o = finalize(core, [])
    assert [w.type for w in o.writes] == ["MODIFIED"]
    assert namespace(core)["spec"]["finalizers"] == []
    assert namespace(core)["status"]["phase"] == "Active"


def test_metadata_finalizers_keep_a_finalized_namespace_until_they_are_gone() -> None:
    core = make_core()
    terminate(core, propagationPolicy="Orphan")
    assert [w.type for w in finalize(core, []).writes] == ["MODIFIED"]
    body = namespace(core)
    body["metadata"] = {k: v for k, v in body["metadata"].items() if k != "finalizers"}
    o = one(core, req("update", "namespaces", "", "t", object=body))
    assert [w.type for w in o.writes] == ["DELETED"]


def test_a_main_update_keeps_spec_finalizers_and_status() -> None:
    core = make_core()
    body = {**namespace(core), "spec": {"finalizers": []}, "status": {"phase": "Terminating"}}
    body["metadata"] = {**body["metadata"], "labels": {"a": "b"}}
    o = one(core, req("update", "namespaces", "", "t", object=body))
    assert o.object is not None
    assert o.object["spec"] == {"finalizers": ["kubernetes"]}
    assert o.object["status"] == {"phase": "Active"}
    assert o.object["metadata"]["labels"] == {"a": "b"}


def test_a_namespace_with_spec_finalizers_survives_a_delete_after_its_metadata_finalizers_go() -> None:
    core = make_core()
    terminate(core, propagationPolicy="Orphan")
    body = namespace(core)
    body["metadata"] = {k: v for k, v in body["metadata"].items() if k != "finalizers"}
    o = one(core, req("update", "namespaces", "", "t", object=body))
    assert [w.type for w in o.writes] == ["MODIFIED"]
    assert namespace(core)["spec"]["finalizers"] == ["kubernetes"]


@pytest.mark.parametrize(
    ("meta", "message", "details"),
    [
        (
            {},
            'pods "p" is forbidden: unable to create new content in namespace t because it is being terminated',
            {"name": "p", "kind": "pods"},
        ),
        (
            # generateName: admission sees no name yet, so the message names none.
            {"name": "", "generateName": "p-"},
            "pods is forbidden: unable to create new content in namespace t because it is being terminated",
            {"kind": "pods"},
        ),
    ],
)
def test_no_content_may_be_created_in_a_terminating_namespace(
    meta: dict[str, Any], message: str, details: dict[str, Any]
) -> None:
    core = make_core()
    terminate(core)
    o = one(core, req("create", "pods", "t", "", object=pod(**meta)))
    assert o.code == 403 and o.status is not None and o.writes == []
    assert o.status["reason"] == "Forbidden"
    assert o.status["message"] == message
    assert o.status["details"] == {
        **details,
        "causes": [
            {
                "reason": "NamespaceTerminating",
                "message": "namespace t is being terminated",
                "field": "metadata.namespace",
            }
        ],
    }


def test_a_pod_in_a_terminating_namespace_cannot_be_bound() -> None:
    core = make_core()
    assert one(core, req("create", "pods", "t", "p", object=pod())).code == 201
    terminate(core)
    o = one(
        core, req("create", "pods", "t", "p", object={"target": {"name": "n1"}}, options={"subresource": "binding"})
    )
    assert o.code == 403 and o.status is not None
    assert o.status["message"].startswith('pods "p" is forbidden: unable to create new content in namespace t')


def test_content_in_a_missing_namespace_is_not_found() -> None:
    core = make_core()
    body = pod()
    body["metadata"]["namespace"] = "gone"
    o = one(core, req("create", "pods", "gone", "p", object=body))
    assert o.code == 404 and o.status is not None
    assert o.status["message"] == 'namespaces "gone" not found'


def test_updates_and_deletes_of_content_go_on_in_a_terminating_namespace() -> None:
    core = make_core()
    assert one(core, req("create", "pods", "t", "p", object=pod())).code == 201
    terminate(core)
    o = one(core, req("delete", "pods", "t", "p"))
    assert o.code == 200 and [w.type for w in o.writes] == ["DELETED"]


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_the_immortal_namespaces_may_not_be_deleted(name: str) -> None:
    core = make_core()
    o = one(core, req("delete", "namespaces", "", name))
    assert o.code == 403 and o.status is not None and o.writes == []
    assert o.status["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    assert o.status["details"] == {"name": name, "kind": "namespaces"}


def test_kube_node_lease_is_not_immortal() -> None:
    # NamespaceLifecycle's immortal set is default, kube-system and kube-public only.
    core = make_core()
    o = terminate(core, "kube-node-lease")
    assert o.object is not None and o.object["status"]["phase"] == "Terminating"
