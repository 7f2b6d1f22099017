"""Server-side apply: merge, ownership, pruning, conflicts and kubectl's client-side migration."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from services.api.machinery.patch.apply import LAST_APPLIED, build_last_applied, parse_apply_patch, server_side_apply
from services.api.machinery.patch.managed_fields import track_update
from services.api.machinery.status import StatusError

T0, T1, T2, T3 = (f"2024-05-01T10:0{i}:00Z" for i in range(4))


def pod_config(*, image: str = "nginx:1.25", labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": labels if labels is not None else {"app": "web"}},
        "spec": {"containers": [{"name": "nginx", "image": image}], **spec},
    }


def apply(live: dict[str, Any] | None, config: dict[str, Any], manager: str, now: str, *, force: bool = False,
          api_version: str = "v1", kind: str = "Pod", subresource: str = "") -> dict[str, Any]:
    before = copy.deepcopy(live)
    out = server_side_apply(live, config, manager=manager, force=force, api_version=api_version, kind=kind,
                            now=now, subresource=subresource)
    assert live == before  # pure
    if live is None:
        out["metadata"].update(uid="6a1c", resourceVersion="1", creationTimestamp=now)  # what the committer adds
    return out


def entry(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    (found,) = [e for e in obj["metadata"]["managedFields"] if e["manager"] == manager]
    return found


def conflict(exc: pytest.ExceptionInfo[StatusError]) -> tuple[int, str, list[dict[str, str]]]:
    status = exc.value.status
    return status["code"], status["message"], status["details"]["causes"]


def test_apply_creates_the_object_with_one_apply_entry() -> None:
    obj = apply(None, pod_config(), "kubectl", T0)
    assert list(obj)[:3] == ["apiVersion", "kind", "metadata"]
    assert obj["spec"] == {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert "creationTimestamp" in obj["metadata"]  # set by the committer above, never null from the zero object
    assert obj["metadata"]["managedFields"] == [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": T0, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}},
                     "f:spec": {"f:containers": {'k:{"name":"nginx"}': {".": {}, "f:image": {}, "f:name": {}}}}},
    }]


def test_reapplying_the_same_configuration_changes_nothing() -> None:
    obj = apply(None, pod_config(), "kubectl", T0)
    again = apply(obj, pod_config(), "kubectl", T1)
    assert again == obj  # same object, same time: nothing changed


def test_fields_dropped_from_the_configuration_are_removed() -> None:
    obj = apply(None, pod_config(labels={"app": "web", "tier": "fe"}, restartPolicy="Never"), "ctl", T0)
    obj = apply(obj, pod_config(labels={"app": "web"}), "ctl", T1)
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert "restartPolicy" not in obj["spec"]
    assert entry(obj, "ctl")["fieldsV1"]["f:metadata"] == {"f:labels": {"f:app": {}}}


def test_a_field_another_manager_also_applies_is_not_removed() -> None:
    obj = apply(None, pod_config(labels={"app": "web", "shared": "1"}), "a", T0)
    obj = apply(obj, pod_config(labels={"shared": "1"}), "b", T1)  # same value: shared ownership, no conflict
    assert "time" not in entry(obj, "b")  # the object did not change, so Kubernetes stamps no time
    obj = apply(obj, pod_config(labels={"app": "web"}), "a", T2)
    assert obj["metadata"]["labels"] == {"app": "web", "shared": "1"}
    obj = apply(obj, pod_config(labels={}), "b", T3)
    assert obj["metadata"]["labels"] == {"app": "web"}


def test_conflict_with_an_applier() -> None:
    obj = apply(None, pod_config(), "a", T0)
    with pytest.raises(StatusError) as info:
        apply(obj, pod_config(image="nginx:2"), "b", T1)
    assert conflict(info) == (
        409,
        'Apply failed with 1 conflict: conflict with "a": .spec.containers[name="nginx"].image',
        [{"reason": "FieldManagerConflict", "message": 'conflict with "a"',
          "field": '.spec.containers[name="nginx"].image'}],
    )
    assert info.value.status["reason"] == "Conflict"
    assert set(info.value.status["details"]) == {"causes"}


def test_conflicts_with_several_managers_are_grouped() -> None:
    obj = apply(None, pod_config(labels={"app": "web", "tier": "fe"}), "a", T0)
    obj = track_update(obj, {**obj, "spec": {**obj["spec"], "restartPolicy": "Always"}},
                       manager="kubectl-edit", api_version="v1", now=T1)
    with pytest.raises(StatusError) as info:
        apply(obj, pod_config(image="nginx:2", labels={"app": "api", "tier": "fe"}, restartPolicy="Never"), "b", T2)
    code, message, causes = conflict(info)
    assert code == 409
    assert message == (
        "Apply failed with 3 conflicts: conflicts with \"a\":\n"
        "- .metadata.labels.app\n"
        "- .spec.containers[name=\"nginx\"].image\n"
        "conflicts with \"kubectl-edit\" using v1:\n"
        "- .spec.restartPolicy"
    )
    assert [c["message"] for c in causes] == ['conflict with "a"'] * 2 + ['conflict with "kubectl-edit" using v1']


def test_force_takes_ownership() -> None:
    obj = apply(None, pod_config(), "a", T0)
    obj = apply(obj, pod_config(image="nginx:2"), "b", T1, force=True)
    assert obj["spec"]["containers"][0]["image"] == "nginx:2"
    assert entry(obj, "a")["fieldsV1"]["f:spec"] == {"f:containers": {'k:{"name":"nginx"}': {".": {}, "f:name": {}}}}
    assert entry(obj, "b")["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"nginx"}'] == {
        ".": {}, "f:image": {}, "f:name": {}}
    # a dropping the image from its configuration does not remove it: b owns it now
    without_image = pod_config()
    del without_image["spec"]["containers"][0]["image"]
    again = apply(obj, without_image, "a", T2)
    assert again["spec"]["containers"][0]["image"] == "nginx:2"
    # and a setting it back is now the conflict
    with pytest.raises(StatusError) as info:
        apply(obj, pod_config(), "a", T2)
    assert conflict(info)[1].endswith('conflict with "b": .spec.containers[name="nginx"].image')


def test_map_lists_merge_by_key_and_keep_live_only_elements() -> None:
    obj = track_update(None, {**pod_config(), "spec": {"containers": [
        {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}, manager="creator", api_version="v1", now=T0)
    obj["metadata"]["uid"] = "6a1c"
    config = {**pod_config(), "spec": {"containers": [{"name": "b", "image": "b:1"}, {"name": "c", "image": "c:1"}]}}
    out = apply(obj, config, "ctl", T1)
    assert [c["name"] for c in out["spec"]["containers"]] == ["a", "b", "c"]


def test_applying_to_an_untracked_object_records_before_first_apply() -> None:
    live = {**pod_config(), "metadata": {**pod_config()["metadata"], "uid": "6a1c", "resourceVersion": "3"}}
    with pytest.raises(StatusError) as info:
        apply(live, pod_config(image="nginx:2"), "ctl", T1)
    assert conflict(info)[1] == (
        'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: '
        '.spec.containers[name="nginx"].image'
    )
    out = apply(live, pod_config(), "ctl", T1)
    assert [(e["manager"], e["operation"]) for e in out["metadata"]["managedFields"]] == [
        ("ctl", "Apply"), ("before-first-apply", "Update")]


def test_kubectl_server_side_takes_over_from_client_side_apply_without_conflicts() -> None:
    config = pod_config()
    created = track_update(None, {**config, "metadata": {**config["metadata"], "annotations": {
        LAST_APPLIED: build_last_applied(config)}}}, manager="kubectl-client-side-apply", api_version="v1", now=T0)
    created["metadata"]["uid"] = "6a1c"
    # kubectl apply --server-side: fieldManager=kubectl
    new_config = pod_config(image="nginx:2")
    out = apply(created, new_config, "kubectl", T1)
    assert out["spec"]["containers"][0]["image"] == "nginx:2"
    assert out["metadata"]["annotations"][LAST_APPLIED] == build_last_applied(new_config)
    assert out["metadata"]["annotations"][LAST_APPLIED].startswith('{"apiVersion":"v1","kind":"Pod","metadata":')
    assert "f:image" not in orjson.dumps(entry(out, "kubectl-client-side-apply")["fieldsV1"]).decode()
    # another manager gets no such grace
    with pytest.raises(StatusError):
        apply(created, new_config, "helm", T1)


def test_kubectl_still_conflicts_where_live_no_longer_matches_last_applied() -> None:
    config = pod_config()
    created = track_update(None, {**config, "metadata": {**config["metadata"], "annotations": {
        LAST_APPLIED: build_last_applied(config)}}}, manager="kubectl-client-side-apply", api_version="v1", now=T0)
    created["metadata"]["uid"] = "6a1c"
    edited = copy.deepcopy(created)
    edited["spec"]["containers"][0]["image"] = "nginx:edited"
    edited = track_update(created, edited, manager="kubectl-set", api_version="v1", now=T1)
    with pytest.raises(StatusError) as info:
        apply(edited, pod_config(image="nginx:2"), "kubectl", T2)
    assert 'conflict with "kubectl-set" using v1' in conflict(info)[1]


def test_status_apply_through_the_subresource() -> None:
    claim = apply(None, {
        "apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default", "finalizers": ["resource.kubernetes.io/delete-protection"]},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }, "user", T0, api_version="resource.k8s.io/v1alpha3", kind="ResourceClaim")
    assert entry(claim, "user")["fieldsV1"] == {
        "f:metadata": {"f:finalizers": {'v:"resource.kubernetes.io/delete-protection"': {}}},
        "f:spec": {"f:devices": {"f:requests": {}}},
    }
    status = {
        "apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": []}},  # ignored through /status
        "status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]},
    }
    out = apply(claim, status, "scheduler", T1, api_version="resource.k8s.io/v1alpha3", kind="ResourceClaim",
                subresource="status")
    assert entry(out, "scheduler") == {
        "manager": "scheduler", "operation": "Apply", "apiVersion": "resource.k8s.io/v1alpha3", "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {"f:reservedFor": {'k:{"uid":"1"}': {
            ".": {}, "f:name": {}, "f:resource": {}, "f:uid": {}}}}},
        "subresource": "status",
    }


@pytest.mark.parametrize(
    ("config", "code", "message"),
    [
        ({**pod_config(), "metadata": {"name": "web", "namespace": "default", "managedFields": []}}, 400,
         "metadata.managedFields must be nil"),
        ({**pod_config(), "kind": "Node"}, 400, "invalid object type: /v1, Kind=Node"),
        ({**pod_config(), "apiVersion": "resource.k8s.io/v1alpha3"}, 400,
         "invalid object type: resource.k8s.io/v1alpha3, Kind=Pod"),
        ({k: v for k, v in pod_config().items() if k != "apiVersion"}, 400, "invalid object type: /, Kind=Pod"),
        ({**pod_config(), "spec": {"containers": [{"name": "nginx"}, {"name": "nginx", "image": "x"}]}}, 400,
         'failed to create typed patch object (default/web; /v1, Kind=Pod): .spec.containers: '
         'duplicate entries for key [name="nginx"]'),
        ({**pod_config(), "spec": {"containers": [{"name": "c", "ports": [{"name": "http"}]}, {"image": "x"}]}}, 400,
         "failed to create typed patch object (default/web; /v1, Kind=Pod): errors:\n"
         '  .spec.containers[name="c"].ports: element 0: associative list with keys has an element that omits key '
         'field "containerPort" (and doesn\'t have default value)\n'
         '  .spec.containers: element 1: associative list with keys has an element that omits key field "name" '
         "(and doesn't have default value)"),
    ],
)
def test_invalid_configurations(config: dict[str, Any], code: int, message: str) -> None:
    with pytest.raises(StatusError) as info:
        apply(None, config, "ctl", T0)
    assert (info.value.code, info.value.status["message"]) == (code, message)


def test_port_protocol_defaults_to_tcp_in_keys() -> None:
    obj = apply(None, {**pod_config(), "spec": {"containers": [
        {"name": "nginx", "image": "x", "ports": [{"containerPort": 80}]}]}}, "ctl", T0)
    container = entry(obj, "ctl")["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert container["f:ports"] == {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"apiVersion":"v1","kind":"Pod"}', {"apiVersion": "v1", "kind": "Pod"}),
        # YAML 1.1 as sigs.k8s.io/yaml reads it: timestamps stay strings, `on`/`yes` are booleans even as keys
        (b"apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:\n    when: 2024-05-01\n    on: yes\n",
         {"apiVersion": "v1", "kind": "Pod", "metadata": {"annotations": {"when": "2024-05-01", "true": True}}}),
        (b"", {}),
    ],
)
def test_parse_apply_bodies(body: bytes, expected: dict[str, Any]) -> None:
    assert parse_apply_patch(body) == expected


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"- a\n- b\n", "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal "
                        "array into Go value of type map[string]interface {}"),
        (b"a: [", None),
    ],
)
def test_parse_apply_errors(body: bytes, message: str | None) -> None:
    with pytest.raises(StatusError) as info:
        parse_apply_patch(body)
    assert info.value.code == 400
    if message is not None:
        assert info.value.status["message"] == message
    else:
        assert info.value.status["message"].startswith("error decoding YAML: ")


def test_service_ports_are_owned_entry_by_entry_with_protocol_defaulted() -> None:
    """Service ports are a map list keyed by port and protocol (protocol defaults to TCP): two managers each
    own their port; one dropping it removes only that entry. Oracle ssa2-map-list-entries-owned-apart."""

    def svc(ports: list[dict[str, Any]] | None) -> dict[str, Any]:
        spec: dict[str, Any] = {"clusterIP": "None"}
        if ports is not None:
            spec["ports"] = ports
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"}, "spec": spec}

    obj = apply(None, svc([{"name": "http", "port": 80}]), "alice", T0, kind="Service")
    obj = apply(obj, {**svc(None), "spec": {"ports": [{"name": "https", "port": 443}]}}, "bob", T1, kind="Service")
    assert [p["port"] for p in obj["spec"]["ports"]] == [80, 443]
    assert entry(obj, "bob")["fieldsV1"]["f:spec"]["f:ports"] == {
        'k:{"port":443,"protocol":"TCP"}': {".": {}, "f:name": {}, "f:port": {}},
    }
    obj = apply(obj, svc(None), "alice", T2, kind="Service")
    assert [p["port"] for p in obj["spec"]["ports"]] == [443]
