"""Strategic merge patch: per-field merge keys, directives and kubectl's patch bodies."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from services.api.machinery.patch.strategic_merge import parse_strategic_merge_patch, strategic_merge_patch
from services.api.machinery.status import StatusError

LA = "kubectl.kubernetes.io/last-applied-configuration"

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web",
        "namespace": "default",
        "labels": {"app": "web", "tier": "fe"},
        "finalizers": ["a.example.com/f", "b.example.com/f"],
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1"}],
    },
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "app:1",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
            },
            {"name": "sidecar", "image": "side:1"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "a", "operator": "Exists"}],
    },
    "status": {
        "phase": "Running",
        "podIPs": [{"ip": "10.0.0.1"}],
        "hostIPs": [{"ip": "192.168.0.1"}],
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


def at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


def pod_patch(patch: dict[str, Any]) -> dict[str, Any]:
    before = copy.deepcopy(POD)
    result = strategic_merge_patch(POD, patch, api_version="v1", kind="Pod")
    assert before == POD  # pure
    return result


@pytest.mark.parametrize(
    ("name", "patch", "path", "expected"),
    [
        # kubectl patch --type strategic -p '{"spec":{"containers":[{"name":"app","image":"app:2"}]}}'
        ("merge container by name", {"spec": {"containers": [{"name": "app", "image": "app:2"}]}},
         "spec.containers", [{**POD["spec"]["containers"][0], "image": "app:2"}, POD["spec"]["containers"][1]]),
        # a new element of a merged list goes first when no $setElementOrder fixes the order
        ("new container goes first", {"spec": {"containers": [{"name": "new", "image": "n:1"}]}},
         "spec.containers", [{"name": "new", "image": "n:1"}, *POD["spec"]["containers"]]),
        ("delete element", {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}},
         "spec.containers", [POD["spec"]["containers"][0]]),
        ("replace list", {"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "o"}]}},
         "spec.containers", [{"name": "only", "image": "o"}]),
        ("set element order", {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]}},
         "spec.containers.0.name", "sidecar"),
        ("nested merge: env by name",
         {"spec": {"containers": [{"name": "app", "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}]}},
         "spec.containers.0.env",  # patch order is kept, live-only elements stay before their live successors
         [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}]),
        ("ports merge by containerPort",
         {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80, "name": "http"}]}]}},
         "spec.containers.0.ports", [{"containerPort": 80, "protocol": "TCP", "name": "http"}]),
        ("finalizers merge as a set, new first", {"metadata": {"finalizers": ["c.example.com/f", "a.example.com/f"]}},
         "metadata.finalizers", ["c.example.com/f", "a.example.com/f", "b.example.com/f"]),
        ("delete from primitive list", {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/f"]}},
         "metadata.finalizers", ["b.example.com/f"]),
        ("ownerReferences merge by uid",
         {"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u2"}]}},
         "metadata.ownerReferences",
         [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u2"}, *POD["metadata"]["ownerReferences"]]),
        ("retainKeys switches the volume source",
         {"spec": {"volumes": [{"$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}, "name": "data"}]}},
         "spec.volumes", [{"name": "data", "configMap": {"name": "cm"}}]),
        ("without retainKeys both sources stay",
         {"spec": {"volumes": [{"configMap": {"name": "cm"}, "name": "data"}]}},
         "spec.volumes", [{"name": "data", "emptyDir": {}, "configMap": {"name": "cm"}}]),
        ("atomic list is replaced", {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
         "spec.tolerations", [{"key": "b", "operator": "Exists"}]),
        ("podIPs merge by ip", {"status": {"podIPs": [{"ip": "fd00::1"}]}},
         "status.podIPs", [{"ip": "fd00::1"}, {"ip": "10.0.0.1"}]),
        ("hostIPs merge by ip (listType=atomic only matters to apply)", {"status": {"hostIPs": [{"ip": "fd00::2"}]}},
         "status.hostIPs", [{"ip": "fd00::2"}, {"ip": "192.168.0.1"}]),
        ("conditions merge by type", {"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
         "status.conditions", [{"type": "Ready", "status": "False"}]),
        ("replace a map", {"metadata": {"labels": {"$patch": "replace", "only": "x"}}},
         "metadata.labels", {"only": "x"}),
        ("delete a map", {"metadata": {"labels": {"$patch": "delete"}}}, "metadata.labels", {}),
        ("null deletes a member", {"metadata": {"labels": {"tier": None, "env": "prod"}}},
         "metadata.labels", {"app": "web", "env": "prod"}),
        ("new member's nulls are dropped", {"spec": {"nodeSelector": {"a": "b", "c": None}}},
         "spec.nodeSelector", {"a": "b"}),
    ],
    ids=lambda v: v if isinstance(v, str) and " " in v else "",
)
def test_pod_patches(name: str, patch: dict[str, Any], path: str, expected: Any) -> None:
    assert at(pod_patch(patch), path) == expected


def test_null_deletes_a_list() -> None:
    assert "tolerations" not in pod_patch({"spec": {"tolerations": None}})["spec"]


def test_new_element_directives_are_resolved() -> None:
    result = pod_patch(
        {"spec": {"containers": [{"name": "new", "$setElementOrder/env": [{"name": "X"}], "env": [{"name": "X"}]}]}}
    )
    assert result["spec"]["containers"][0] == {"name": "new", "env": [{"name": "X"}]}


# ---------------------------------------------------------------- kubectl apply (client-side)


def last_applied(obj: dict[str, Any]) -> str:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode() + "\n"


CONFIG_V1: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"annotations": {}, "labels": {"app": "web", "tier": "fe"}, "name": "web", "namespace": "default"},
    "spec": {"containers": [{"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "image": "nginx:1.25",
                             "name": "nginx"}]},
}
LIVE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"annotations": {LA: last_applied(CONFIG_V1)}, "labels": {"app": "web", "tier": "fe"},
                 "name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
    "spec": {
        "containers": [{"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "image": "nginx:1.25",
                        "imagePullPolicy": "IfNotPresent", "name": "nginx", "resources": {},
                        "terminationMessagePath": "/dev/termination-log"}],
        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "nodeName": "node-1",
    },
    "status": {"phase": "Running"},
}


def test_kubectl_apply_configured_image_change() -> None:
    config = copy.deepcopy(CONFIG_V1)
    config["spec"]["containers"][0]["image"] = "nginx:1.26"
    # what kubectl 1.32 sends (CreateThreeWayMergePatch with OpenAPI v3 patch metadata)
    body = orjson.dumps({
        "metadata": {"annotations": {LA: last_applied(config)}},
        "spec": {"$setElementOrder/containers": [{"name": "nginx"}],
                 "containers": [{"image": "nginx:1.26", "name": "nginx"}]},
    })
    result = strategic_merge_patch(LIVE, parse_strategic_merge_patch(body), api_version="v1", kind="Pod")
    expected = copy.deepcopy(LIVE)
    expected["spec"]["containers"][0]["image"] = "nginx:1.26"
    expected["metadata"]["annotations"][LA] = last_applied(config)
    assert result == expected


def test_kubectl_apply_configured_removes_env_and_label() -> None:
    config = copy.deepcopy(CONFIG_V1)
    config["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    config["metadata"]["labels"] = {"app": "web", "env": "prod"}
    body = orjson.dumps({
        "metadata": {"annotations": {LA: last_applied(config)}, "labels": {"env": "prod", "tier": None}},
        "spec": {"$setElementOrder/containers": [{"name": "nginx"}],
                 "containers": [{"$setElementOrder/env": [{"name": "A"}],
                                 "env": [{"$patch": "delete", "name": "B"}], "name": "nginx"}]},
    })
    result = strategic_merge_patch(LIVE, parse_strategic_merge_patch(body), api_version="v1", kind="Pod")
    assert result["metadata"]["labels"] == {"app": "web", "env": "prod"}
    assert result["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]
    assert result["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"  # server-side fields survive


def test_kubectl_apply_adds_container_in_configured_order() -> None:
    body = {
        "spec": {"$setElementOrder/containers": [{"name": "init"}, {"name": "nginx"}, {"name": "log"}],
                 "containers": [{"image": "busybox", "name": "init"}, {"image": "fluentd", "name": "log"}]},
    }
    result = strategic_merge_patch(LIVE, body, api_version="v1", kind="Pod")
    assert [c["name"] for c in result["spec"]["containers"]] == ["init", "nginx", "log"]


def test_kubectl_apply_configured_resource_claim_template_replaces_atomic_requests() -> None:
    live = {
        "apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": "default", "annotations": {LA: "{}\n"}},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1},
        ]}}},
    }
    body = {
        "metadata": {"annotations": {LA: "{...}\n"}},
        "spec": {"spec": {"devices": {"requests": [{"deviceClassName": "gpu2.example.com", "name": "gpu"}]}}},
    }
    result = strategic_merge_patch(live, body, api_version="resource.k8s.io/v1alpha3", kind="ResourceClaimTemplate")
    assert result["spec"]["spec"]["devices"]["requests"] == [{"deviceClassName": "gpu2.example.com", "name": "gpu"}]


# ---------------------------------------------------------------- resource.k8s.io/v1alpha3

CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "default"},
    "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    "status": {"reservedFor": [{"resource": "pods", "name": "a", "uid": "1"}]},
}


@pytest.mark.parametrize(
    ("patch", "path", "expected"),
    [
        ({"status": {"reservedFor": [{"resource": "pods", "name": "b", "uid": "2"}]}}, "status.reservedFor",
         [{"resource": "pods", "name": "b", "uid": "2"}, {"resource": "pods", "name": "a", "uid": "1"}]),
        ({"status": {"reservedFor": [{"$patch": "delete", "uid": "1"}]}}, "status.reservedFor", []),
        ({"spec": {"devices": {"requests": [{"name": "gpu", "count": 2}]}}}, "spec.devices.requests",
         [{"name": "gpu", "count": 2}]),
    ],
)
def test_resource_claim_patches(patch: dict[str, Any], path: str, expected: Any) -> None:
    result = strategic_merge_patch(CLAIM, patch, api_version="resource.k8s.io/v1alpha3", kind="ResourceClaim")
    assert at(result, path) == expected


def test_pod_scheduling_context_resource_claims_have_no_merge_strategy() -> None:
    psc = {
        "apiVersion": "resource.k8s.io/v1alpha3", "kind": "PodSchedulingContext",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"selectedNode": "n1", "potentialNodes": ["n1", "n2"]},
        "status": {"resourceClaims": [{"name": "a", "unsuitableNodes": ["n2"]}]},
    }
    patch = {"status": {"resourceClaims": [{"name": "b", "unsuitableNodes": ["n1"]}]}}
    result = strategic_merge_patch(psc, patch, api_version="resource.k8s.io/v1alpha3", kind="PodSchedulingContext")
    assert result["status"]["resourceClaims"] == [{"name": "b", "unsuitableNodes": ["n1"]}]


def test_unknown_kind_falls_back_to_merge_patch() -> None:
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"items": [{"name": "a"}], "x": 1}}
    result = strategic_merge_patch(obj, {"spec": {"items": [{"name": "b"}], "x": None}},
                                   api_version="example.com/v1", kind="Widget")
    assert result == {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"items": [{"name": "b"}]}}


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("patch", "code", "message"),
    [
        ({"spec": {"containers": [{"$patch": "merge", "name": "app"}]}}, 400,
         "merging lists cannot yet be specified in the patch"),
        ({"metadata": {"labels": {"$patch": "merge"}}}, 400, "unknown patch type: merge in map: map[$patch:merge]"),
        ({"spec": {"containers": [{"$patch": "bogus", "name": "app"}]}}, 400,
         "unknown patch type: bogus in map: map[$patch:bogus name:app]"),
        ({"spec": {"containers": [{"image": "x"}]}}, 400,
         "map: map[image:x] does not contain declared merge key: name"),
        ({"spec": {"containers": [{"$patch": "delete"}]}}, 400,
         "map: map[$patch:delete] does not contain declared merge key: name"),
        ({"spec": {"volumes": [{"name": "data", "$retainKeys": "configMap"}]}}, 400,
         "invalid patch format of retainKeys"),
        ({"spec": {"volumes": [{"name": "data", "$retainKeys": ["name"], "configMap": {"name": "x"}}]}}, 400,
         "invalid patch format of retainKeys"),
        ({"metadata": {"$deleteFromPrimitiveList": ["a"]}}, 400, "invalid patch format of primitive list"),
        ({"spec": {"$setElementOrder": [{"name": "app"}]}}, 400, "invalid patch format of setElementOrder list"),
        ({"spec": {"$setElementOrder/containers": [{"name": "app"}],
                   "containers": [{"name": "sidecar", "image": "s"}]}}, 400,
         "The order in patch list:\n[map[image:s name:sidecar]]\n doesn't match $setElementOrder list:\n"
         "[map[name:app]]\n"),
        ({"spec": {"$setElementOrder/containers": "app"}}, 400,
         "expected a []interface {}, but received a string"),
        ({"spec": {"containers": ["app"]}}, 400,
         "list element types are not identical: "
         "[[map[env:[map[name:A value:1] map[name:B value:2]] image:app:1 name:app "
         "ports:[map[containerPort:80 protocol:TCP]]] map[image:side:1 name:sidecar]] [app]]"),
    ],
)
def test_errors(patch: dict[str, Any], code: int, message: str) -> None:
    with pytest.raises(StatusError) as info:
        pod_patch(patch)
    assert info.value.code == code
    assert info.value.status["message"] == message
    assert info.value.reason == "BadRequest"


def test_list_of_lists_is_a_generic_422() -> None:
    pod = {**POD, "metadata": {**POD["metadata"], "finalizers": []}}
    with pytest.raises(StatusError) as info:
        strategic_merge_patch(pod, {"metadata": {"finalizers": [["x"]]}}, api_version="v1", kind="Pod")
    assert info.value.code == 422
    assert info.value.status["message"] == "the server rejected our request due to an error in our request"
    assert str(info.value.__cause__) == "lists of lists are not supported"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        (b'"x"', "json: cannot unmarshal string into Go value of type map[string]interface {}"),
        (b"{", "unexpected end of JSON input"),
    ],
)
def test_bodies_that_are_not_objects_are_400(body: bytes, message: str) -> None:
    with pytest.raises(StatusError) as info:
        parse_strategic_merge_patch(body)
    assert (info.value.code, info.value.status["message"]) == (400, message)


def test_null_body_is_a_no_op() -> None:
    assert parse_strategic_merge_patch(b"null") is None
    assert strategic_merge_patch(POD, None, api_version="v1", kind="Pod") == POD


def test_service_ports_merge_by_port_and_delete_by_directive() -> None:
    """ServicePort's merge key is port (k8s.io/api core/v1); oracle smp-service-ports-merge-by-port."""
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "https", "port": 443}]}}
    merged = strategic_merge_patch(svc, {"spec": {"ports": [{"port": 80, "targetPort": 9090}, {"port": 8443}]}},
                                   api_version="v1", kind="Service")
    assert merged["spec"]["ports"] == [
        {"name": "http", "port": 80, "targetPort": 9090}, {"port": 8443}, {"name": "https", "port": 443},
    ]
    deleted = strategic_merge_patch(svc, {"spec": {"ports": [{"port": 443, "$patch": "delete"}]}},
                                    api_version="v1", kind="Service")
    assert deleted["spec"]["ports"] == [{"name": "http", "port": 80, "targetPort": 8080}]
