"""The committer's entry point, driven through the requests kubectl 1.32 makes."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from services.api.machinery.patch import CONTENT_TYPES, decode_patch, patch_object, track_update
from services.api.machinery.patch.apply import LAST_APPLIED
from services.api.machinery.status import StatusError

T0, T1, T2 = "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", "2024-05-01T10:02:00Z"

CONFIG: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Namespace",
    "metadata": {"annotations": {}, "labels": {"team": "a"}, "name": "dra"},
}


def last_applied(config: dict[str, Any]) -> str:
    return orjson.dumps(config, option=orjson.OPT_SORT_KEYS).decode() + "\n"


def created_namespace() -> dict[str, Any]:
    # kubectl apply (create): POST ?fieldManager=kubectl-client-side-apply with the annotation in the body
    body = copy.deepcopy(CONFIG)
    body["metadata"]["annotations"] = {LAST_APPLIED: last_applied(CONFIG)}
    body["spec"] = {"finalizers": ["kubernetes"]}  # defaulted
    obj = track_update(None, body, manager="kubectl-client-side-apply", api_version="v1", now=T0)
    obj["metadata"].update(uid="u", resourceVersion="5", creationTimestamp=T0)
    obj["status"] = {"phase": "Active"}
    return obj


def test_content_types() -> None:
    assert CONTENT_TYPES["application/strategic-merge-patch+json"] == "strategic"
    assert CONTENT_TYPES["application/apply-patch+yaml"] == "apply"


def test_kubectl_apply_create_configured_unchanged() -> None:
    live = created_namespace()
    assert live["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:metadata": {"f:annotations": {".": {}, f"f:{LAST_APPLIED}": {}}, "f:labels": {".": {}, "f:team": {}}},
        "f:spec": {"f:finalizers": {}},
    }
    # unchanged: kubectl computes "{}" and sends nothing; were it sent, nothing would change
    assert patch_object(live, b"{}", patch_type="strategic", manager="kubectl-client-side-apply",
                        api_version="v1", kind="Namespace", now=T1) == live
    # configured: a new label, the annotation rewritten
    config = copy.deepcopy(CONFIG)
    config["metadata"]["labels"]["env"] = "prod"
    body = orjson.dumps({"metadata": {"annotations": {LAST_APPLIED: last_applied(config)}, "labels": {"env": "prod"}}})
    out = patch_object(live, body, patch_type="strategic", manager="kubectl-client-side-apply",
                       api_version="v1", kind="Namespace", now=T1)
    assert out["metadata"]["labels"] == {"team": "a", "env": "prod"}
    assert out["metadata"]["annotations"][LAST_APPLIED] == last_applied(config)
    (entry,) = out["metadata"]["managedFields"]
    assert entry["time"] == T1
    assert entry["fieldsV1"]["f:metadata"]["f:labels"] == {".": {}, "f:env": {}, "f:team": {}}


def test_json_patch_records_its_manager() -> None:
    body = orjson.dumps([{"op": "add", "path": "/metadata/labels/owner", "value": "x"},
                         {"op": "test", "path": "/metadata/name", "value": "dra"}])
    out = patch_object(created_namespace(), body, patch_type="json", manager="kubectl-patch", api_version="v1",
                       kind="Namespace", now=T1)
    assert out["metadata"]["labels"]["owner"] == "x"
    assert out["metadata"]["managedFields"][-1]["manager"] == "kubectl-patch"
    assert out["metadata"]["managedFields"][-1]["fieldsV1"] == {"f:metadata": {"f:labels": {"f:owner": {}}}}


def test_track_false_leaves_managed_fields_to_the_caller() -> None:
    live = created_namespace()
    out = patch_object(live, {"metadata": {"labels": {"x": "y"}}}, patch_type="merge", manager="m",
                       api_version="v1", kind="Namespace", now=T1, track=False)
    assert out["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_server_side_apply_create_then_update() -> None:
    body = b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dra\n  labels:\n    team: a\n"
    created = patch_object(None, body, patch_type="apply", manager="kubectl", api_version="v1", kind="Namespace",
                           now=T0)
    assert created["metadata"]["labels"] == {"team": "a"}
    assert created["metadata"]["managedFields"][0]["operation"] == "Apply"
    created["metadata"]["uid"] = "u"
    updated = patch_object(created, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dra"}},
                           patch_type="apply", manager="kubectl", api_version="v1", kind="Namespace", now=T1)
    assert "labels" not in updated["metadata"]  # no longer applied, nobody else owns it
    assert "managedFields" not in updated["metadata"]  # kubectl owns nothing but identity metadata now


def test_status_patch_through_the_subresource() -> None:
    out = patch_object(created_namespace(), {"status": {"phase": "Terminating"}}, patch_type="merge",
                       manager="namespace-controller", api_version="v1", kind="Namespace", now=T2,
                       subresource="status")
    assert out["metadata"]["managedFields"][-1] == {
        "manager": "namespace-controller", "operation": "Update", "apiVersion": "v1", "time": T2,
        "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:phase": {}}}, "subresource": "status",
    }


@pytest.mark.parametrize(
    ("patch_type", "body", "code"),
    [("json", b"{}", 400), ("merge", b"null", 400), ("strategic", b"[1]", 400), ("apply", b"- x", 400)],
)
def test_bad_bodies(patch_type: str, body: bytes, code: int) -> None:
    with pytest.raises(StatusError) as info:
        decode_patch(body, patch_type)
    assert info.value.code == code
    with pytest.raises(StatusError):
        patch_object(created_namespace(), body, patch_type=patch_type, manager="m", api_version="v1",
                     kind="Namespace", now=T1)


def test_non_apply_patches_need_the_object() -> None:
    with pytest.raises(ValueError, match="needs the current object"):
        patch_object(None, {}, patch_type="merge", manager="m", api_version="v1", kind="Namespace", now=T1)
    with pytest.raises(ValueError, match="unknown patch type"):
        decode_patch(b"{}", "xml")
