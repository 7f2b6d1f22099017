"""managedFields for ordinary writes: what create, update and patch record, as Kubernetes records it."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from services.api.machinery.patch.dispatch import patch_object
from services.api.machinery.patch.managed_fields import (
    ManagedFieldsError,
    decode_managed_fields,
    encode_managed_fields,
    manager_identifier,
    track_update,
)

from .test_patch_fieldpath import KUBECTL_CREATE_FIELDS_V1

LA = "kubectl.kubernetes.io/last-applied-configuration"
T0, T1, T2 = "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", "2024-05-01T10:02:00Z"

# A Pod as `kubectl apply` creates it, after decoding and defaulting
NGINX: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "nginx",
        "namespace": "default",
        "labels": {"app": "nginx"},
        "annotations": {LA: '{"apiVersion":"v1","kind":"Pod",...}\n'},
    },
    "spec": {
        "containers": [{
            "name": "nginx",
            "image": "nginx:1.25",
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent",
        }],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "enableServiceLinks": True,
    },
    "status": {},
}


def created() -> dict[str, Any]:
    obj = track_update(None, NGINX, manager="kubectl-client-side-apply", api_version="v1", now=T0)
    obj["metadata"].update(uid="6a1c", resourceVersion="10", creationTimestamp=T0)
    return obj


def fields_of(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    (entry,) = [e for e in obj["metadata"]["managedFields"] if e["manager"] == manager]
    return entry["fieldsV1"]


def test_create_records_the_creator_exactly_as_kubernetes() -> None:
    obj = created()
    assert obj["metadata"]["managedFields"] == [{
        "manager": "kubectl-client-side-apply",
        "operation": "Update",
        "apiVersion": "v1",
        "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": orjson.loads(KUBECTL_CREATE_FIELDS_V1),
    }]
    # the entry serializes with Kubernetes' key order
    assert orjson.dumps(obj["metadata"]["managedFields"][0]["fieldsV1"]).decode() == KUBECTL_CREATE_FIELDS_V1
    assert list(obj["metadata"]["managedFields"][0]) == [
        "manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]


def test_a_write_that_changes_nothing_keeps_entries_and_times() -> None:
    obj = created()
    again = track_update(obj, copy.deepcopy(obj), manager="kubectl-client-side-apply", api_version="v1", now=T2)
    assert again["metadata"]["managedFields"] == obj["metadata"]["managedFields"]
    other = track_update(obj, copy.deepcopy(obj), manager="someone-else", api_version="v1", now=T2)
    assert other["metadata"]["managedFields"] == obj["metadata"]["managedFields"]


def test_kubectl_label_takes_the_label_it_changes() -> None:
    # kubectl label pod nginx app=web env=prod --overwrite: a merge patch with fieldManager=kubectl-label
    obj = patch_object(created(), b'{"metadata":{"labels":{"app":"web","env":"prod"}}}', patch_type="merge",
                       manager="kubectl-label", api_version="v1", kind="Pod", now=T1)
    assert obj["metadata"]["labels"] == {"app": "web", "env": "prod"}
    assert fields_of(obj, "kubectl-label") == {"f:metadata": {"f:labels": {"f:app": {}, "f:env": {}}}}
    # the creator keeps the labels map itself but no longer the label it did not write last
    assert fields_of(obj, "kubectl-client-side-apply")["f:metadata"]["f:labels"] == {}
    assert [e["manager"] for e in obj["metadata"]["managedFields"]] == ["kubectl-client-side-apply", "kubectl-label"]


def test_kubectl_annotate_on_an_object_without_annotations() -> None:
    obj = copy.deepcopy(created())
    del obj["metadata"]["annotations"]
    obj["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"].pop("f:annotations")
    out = patch_object(obj, {"metadata": {"annotations": {"note": "hi"}}}, patch_type="merge",
                       manager="kubectl-annotate", api_version="v1", kind="Pod", now=T1)
    assert fields_of(out, "kubectl-annotate") == {"f:metadata": {"f:annotations": {".": {}, "f:note": {}}}}


def test_removed_fields_leave_every_manager() -> None:
    obj = patch_object(created(), {"metadata": {"labels": {"app": None}}}, patch_type="merge",
                       manager="kubectl-label", api_version="v1", kind="Pod", now=T1)
    assert "kubectl-label" not in [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert "f:app" not in fields_of(obj, "kubectl-client-side-apply")["f:metadata"]["f:labels"]


def test_kubectl_patch_strategic_on_containers() -> None:
    obj = patch_object(created(), b'{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}',
                       patch_type="strategic", manager="kubectl-patch", api_version="v1", kind="Pod", now=T1)
    assert obj["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert fields_of(obj, "kubectl-patch") == {
        "f:spec": {"f:containers": {'k:{"name":"nginx"}': {"f:image": {}}}}}
    csa = fields_of(obj, "kubectl-client-side-apply")["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert "f:image" not in csa and "f:name" in csa


def test_status_writes_record_the_subresource_and_ignore_spec() -> None:
    obj = created()
    new = copy.deepcopy(obj)
    new["status"] = {"phase": "Running", "podIP": "10.0.0.5"}
    new["spec"]["activeDeadlineSeconds"] = 5  # the status strategy resets spec: never owned here
    out = track_update(obj, new, manager="kubelet", api_version="v1", now=T1, subresource="status")
    (entry,) = [e for e in out["metadata"]["managedFields"] if e["manager"] == "kubelet"]
    assert entry == {
        "manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {"f:phase": {}, "f:podIP": {}}}, "subresource": "status",
    }


def test_main_resource_writes_never_own_status() -> None:
    new = copy.deepcopy(NGINX)
    new["status"] = {"phase": "Pending"}
    out = track_update(None, new, manager="creator", api_version="v1", now=T0)
    assert "f:status" not in out["metadata"]["managedFields"][0]["fieldsV1"]


def test_objects_without_managed_fields_are_not_tracked_on_update() -> None:
    obj = copy.deepcopy(NGINX)
    obj["metadata"]["uid"] = "6a1c"
    new = copy.deepcopy(obj)
    new["metadata"]["labels"]["x"] = "y"
    assert "managedFields" not in track_update(obj, new, manager="m", api_version="v1", now=T1)["metadata"]


@pytest.mark.parametrize("reset", [[], [{}]])
def test_a_request_can_clear_managed_fields(reset: list[Any]) -> None:
    obj = created()
    new = copy.deepcopy(obj)
    new["metadata"]["managedFields"] = reset
    assert "managedFields" not in track_update(obj, new, manager="m", api_version="v1", now=T1)["metadata"]


def test_an_update_may_rewrite_entries_but_a_status_update_may_not() -> None:
    obj = created()
    new = copy.deepcopy(obj)
    new["metadata"]["managedFields"][0]["manager"] = "renamed"
    out = track_update(obj, new, manager="m", api_version="v1", now=T1)
    assert [e["manager"] for e in out["metadata"]["managedFields"]] == ["renamed"]
    out = track_update(obj, new, manager="m", api_version="v1", now=T1, subresource="status")
    assert [e["manager"] for e in out["metadata"]["managedFields"]] == ["kubectl-client-side-apply"]


def test_invalid_managed_fields_in_a_request_fall_back_to_the_stored_ones() -> None:
    obj = created()
    new = copy.deepcopy(obj)
    new["metadata"]["managedFields"] = [{"manager": "x", "operation": "Bogus"}]
    out = track_update(obj, new, manager="m", api_version="v1", now=T1)
    assert out["metadata"]["managedFields"] == obj["metadata"]["managedFields"]


def test_at_most_ten_update_managers_the_oldest_become_ancient_changes() -> None:
    obj = created()
    obj["metadata"]["managedFields"] = []
    obj["metadata"]["labels"] = {}
    entries = [{
        "manager": f"m{i:02d}", "operation": "Update", "apiVersion": "v1", "time": f"2024-05-01T10:{i:02d}:00Z",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {f"f:l{i}": {}}}},
    } for i in range(1, 11)]
    obj["metadata"]["managedFields"] = entries
    obj["metadata"]["labels"] = {f"l{i}": "x" for i in range(1, 11)}
    new = copy.deepcopy(obj)
    new["metadata"]["labels"]["l11"] = "x"
    out = track_update(obj, new, manager="m11", api_version="v1", now="2024-05-01T10:11:00Z")
    managed = out["metadata"]["managedFields"]
    assert len(managed) == 10
    assert managed[0] == {
        "manager": "ancient-changes", "operation": "Update", "apiVersion": "v1", "time": "2024-05-01T10:02:00Z",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:l1": {}, "f:l2": {}}}},
    }
    assert [e["manager"] for e in managed[1:]] == [f"m{i:02d}" for i in range(3, 12)]


def test_empty_manager_name_is_unknown_and_ids_follow_kubernetes() -> None:
    out = track_update(None, NGINX, manager="", api_version="v1", now=T0)
    assert out["metadata"]["managedFields"][0]["manager"] == "unknown"
    assert manager_identifier("kubectl", "Apply", "v1") == '{"manager":"kubectl","operation":"Apply"}'
    assert manager_identifier("kubelet", "Update", "v1", "status") == (
        '{"manager":"kubelet","operation":"Update","apiVersion":"v1","subresource":"status"}')


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"manager": "a", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"},
         "operation must be `Apply` or `Update`"),
        ({"manager": "a", "operation": "Update", "fieldsType": "FieldsV1"}, "apiVersion must not be empty"),
        ({"manager": "a", "operation": "Update", "apiVersion": "v1"}, "missing fieldsType in managed fields entry 0"),
        ({"manager": "a", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"},
         'invalid fieldsType "FieldsV2" in managed fields entry 0'),
    ],
)
def test_decode_errors(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ManagedFieldsError, match=message):
        decode_managed_fields([entry])


def test_entries_sort_apply_first_then_by_time() -> None:
    entries = [
        {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": T0, "fieldsType": "FieldsV1",
         "fieldsV1": {"f:a": {}}},
        {"manager": "z", "operation": "Apply", "apiVersion": "v1", "time": T2, "fieldsType": "FieldsV1",
         "fieldsV1": {"f:b": {}}},
        {"manager": "a", "operation": "Update", "apiVersion": "v1", "time": T0, "fieldsType": "FieldsV1",
         "fieldsV1": {"f:c": {}}},
        {"manager": "c", "operation": "Update", "apiVersion": "v1", "time": "2024-05-01T09:00:00+00:00",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:d": {}}},
    ]
    encoded = encode_managed_fields(decode_managed_fields(entries))
    assert encoded is not None
    assert [(e["manager"], e.get("time")) for e in encoded] == [
        ("z", T2), ("c", "2024-05-01T09:00:00Z"), ("a", T0), ("b", T0)]
