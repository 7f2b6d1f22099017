"""FieldsV1 encoding, path printing and set algebra (structured-merge-diff's fieldpath)."""

from __future__ import annotations

import orjson
import pytest

from services.api.machinery.patch.fieldpath import (
    DeserializeError,
    FieldSet,
    PathElement,
    deserialize_path_element,
    make_path,
    path_string,
)

# What Kubernetes 1.31 records for `kubectl apply -f nginx.yaml` creating a Pod
KUBECTL_CREATE_FIELDS_V1 = (
    '{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},'
    '"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},'
    '"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},'
    '"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{},"f:protocol":{}}},'
    '"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},'
    '"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},'
    '"f:terminationGracePeriodSeconds":{}}}'
)

NGINX = PathElement.keyed([("name", "nginx")])
PORT = PathElement.keyed([("protocol", "TCP"), ("containerPort", 80)])


def test_fields_v1_round_trips_byte_for_byte() -> None:
    fields = FieldSet.from_fields_v1(orjson.loads(KUBECTL_CREATE_FIELDS_V1))
    assert orjson.dumps(fields.to_fields_v1()).decode() == KUBECTL_CREATE_FIELDS_V1
    assert fields.has(make_path("spec", "containers", NGINX, "ports", PORT, "protocol"))
    assert fields.has(make_path("metadata", "labels"))  # "." makes the map itself a member
    assert not fields.has(make_path("spec", "containers"))  # no "." there
    assert fields.has(make_path("spec", "securityContext"))


def test_serialization_of_every_element_kind() -> None:
    fields = FieldSet([
        make_path("metadata", "finalizers", PathElement.of_value("a.example.com/<f>")),
        make_path("spec", "args", 0),
        make_path("spec", "containers", PORT),
    ])
    assert fields.to_fields_v1() == {
        "f:metadata": {"f:finalizers": {'v:"a.example.com/\\u003cf\\u003e"': {}}},
        "f:spec": {"f:args": {"i:0": {}}, "f:containers": {'k:{"containerPort":80,"protocol":"TCP"}': {}}},
    }


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (make_path("spec", "containers", NGINX, "image"), '.spec.containers[name="nginx"].image'),
        (make_path("spec", "ports", PORT), '.spec.ports[containerPort=80,protocol="TCP"]'),
        (make_path("metadata", "finalizers", PathElement.of_value("x/y")), '.metadata.finalizers[="x/y"]'),
        (make_path("spec", "args", 2), ".spec.args[2]"),
        (make_path("metadata", "labels", "app.kubernetes.io/name"), ".metadata.labels.app.kubernetes.io/name"),
    ],
)
def test_path_strings(path: tuple[PathElement, ...], text: str) -> None:
    assert path_string(path) == text


def test_element_order_is_names_keys_values_indices() -> None:
    elements = [
        PathElement.of_index(0),
        PathElement.of_value(None),
        PathElement.of_value(True),
        PathElement.of_value("a"),
        PathElement.of_value(2),
        PathElement.keyed([("name", "b")]),
        PathElement.keyed([("name", "a")]),
        PathElement.field("b"),
        PathElement.field("a"),
    ]
    assert [pe.serialize() for pe in sorted(elements)] == [
        "f:a", "f:b", 'k:{"name":"a"}', 'k:{"name":"b"}', "v:2", 'v:"a"', "v:true", "v:null", "i:0",
    ]


def test_numbers_in_keys_compare_numerically_but_booleans_do_not() -> None:
    assert PathElement.keyed([("port", 80)]) == PathElement.keyed([("port", 80.0)])
    assert PathElement.of_value(1) != PathElement.of_value(True)


def test_set_algebra() -> None:
    a, ab, abc, c = make_path("a"), make_path("a", "b"), make_path("a", "b", "c"), make_path("c")
    assert FieldSet([ab]).difference(FieldSet([a])) == FieldSet([ab])  # child - parent = child
    assert FieldSet([a, ab]).difference(FieldSet([a])) == FieldSet([ab])
    assert FieldSet([a, ab, abc, c]).recursive_difference(FieldSet([ab])) == FieldSet([a, c])
    assert FieldSet([ab, c]).intersection(FieldSet([ab, a])) == FieldSet([ab])
    assert FieldSet([abc]).with_prefix(PathElement.field("a")) == FieldSet([make_path("b", "c")])
    assert FieldSet([()]).empty()  # the whole object is never a member


def test_ensure_named_fields_are_members_adds_parents_reached_by_name() -> None:
    image = make_path("spec", "containers", NGINX, "image")
    ensured = FieldSet([image]).ensure_named_fields_are_members()
    assert ensured == FieldSet([image, make_path("spec"), make_path("spec", "containers")])


def test_iteration_lists_members_before_subtrees() -> None:
    fields = FieldSet([make_path("b", "x"), make_path("c"), make_path("a")])
    assert [path_string(p) for p in fields] == [".a", ".c", ".b.x"]


@pytest.mark.parametrize("key", ["f", "fx", 'k:[1]', "i:x", "v:{"])
def test_malformed_keys(key: str) -> None:
    with pytest.raises(DeserializeError):
        deserialize_path_element(key)


def test_unknown_element_types_are_ignored() -> None:
    assert deserialize_path_element("z:whatever") is None
    assert FieldSet.from_fields_v1({"f:a": {"z:x": {}}}) == FieldSet([make_path("a")])
