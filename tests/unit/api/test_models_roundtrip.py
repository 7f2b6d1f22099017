"""JSON → model → JSON is lossless for every field of every kind.

Three angles: realistic manifests, an object of each kind with *every* field
of the schema set (checked to really cover every path), and random objects
drawn by hypothesis from the schema itself.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from functools import cache
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.api.machinery.codec import decode_object, from_model, to_model
from services.api.machinery.status import StatusError
from services.api.types import K8sStruct, core_v1, model_for, registry, resource_hub
from services.api.types.base import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    QUANTITY_PATTERN,
    RFC3339_MICRO_PATTERN,
    RFC3339_PATTERN,
)
from services.api.types.schema import ListNode, MapNode, Node, ScalarNode, StructNode, struct_node, walk_fields
from services.kube.quantity import quantity_error
from services.kube.times import time_error
from tests.support import samples

Obj = dict[str, Any]

SAMPLES: list[tuple[str, str, Callable[[], Obj]]] = [
    ("", "Pod", samples.pod),
    ("", "Node", samples.node),
    ("", "Namespace", samples.namespace),
    ("", "Event", samples.event),
    ("resource.k8s.io", "DeviceClass", samples.device_class),
    ("resource.k8s.io", "ResourceClaim", samples.resource_claim),
    ("resource.k8s.io", "ResourceClaimTemplate", samples.resource_claim_template),
    ("resource.k8s.io", "ResourceSlice", samples.resource_slice),
    ("resource.k8s.io", "PodSchedulingContext", samples.pod_scheduling_context),
    ("coordination.k8s.io", "Lease", samples.lease),
]
KINDS = [(rt.group, rt.kind) for rt in registry.RESOURCES]


def rt_of(group: str, kind: str) -> registry.ResourceType:
    rt = registry.by_kind(group, kind)
    assert rt is not None
    return rt


def model_of(group: str, kind: str) -> type[K8sStruct]:
    rt = rt_of(group, kind)
    cls = model_for(group, rt.version, kind)
    assert cls is not None
    return cls


def without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


# --------------------------------------------------------------------------
# realistic manifests


@pytest.mark.parametrize(("group", "kind", "make"), SAMPLES, ids=[k for _, k, _ in SAMPLES])
def test_realistic_manifest_round_trips_from_bytes_and_dict(group: str, kind: str, make: Callable[[], Obj]) -> None:
    rt = rt_of(group, kind)
    obj = make()
    expected = without_nulls(obj)  # null means unset, as in Kubernetes
    from_bytes, warnings = decode_object(rt, orjson.dumps(obj))
    assert warnings == []
    assert from_bytes == expected
    from_dict, _ = decode_object(rt, obj)
    assert from_dict == expected
    # Keys come out in one order, the models' (the schemas' alphabetical order, which is also the order
    # kubectl prints), whatever order the body used.
    assert list(obj["metadata"]) != sorted(obj["metadata"]) or len(obj["metadata"]) < 2
    assert list(from_bytes["metadata"]) == sorted(from_bytes["metadata"])


def test_manifest_without_type_meta_gets_it_filled_in() -> None:
    claim = samples.resource_claim()
    del claim["apiVersion"], claim["kind"]
    out, _ = decode_object(rt_of("resource.k8s.io", "ResourceClaim"), orjson.dumps(claim))
    # The registry row's version is the storage (hub) form, whose records say v1beta1.
    assert (out["apiVersion"], out["kind"]) == ("resource.k8s.io/v1beta1", "ResourceClaim")
    assert list(out)[:2] == ["apiVersion", "kind"]
    assert out["spec"] == claim["spec"]


def test_set_empty_values_are_kept_and_nulls_dropped() -> None:
    pod = {
        "metadata": {"name": "p", "labels": {}, "finalizers": [], "creationTimestamp": None},
        "spec": {"nodeName": "", "hostNetwork": False, "priority": 0, "containers": [{"name": "c", "resources": {}}]},
        "status": {},
    }
    out, _ = decode_object(rt_of("", "Pod"), orjson.dumps(pod))
    assert out["metadata"] == {"name": "p", "labels": {}, "finalizers": []}
    assert out["spec"] == pod["spec"]
    assert out["status"] == {}


def test_numbers_and_raw_json_survive_exactly() -> None:
    claim = samples.resource_claim()
    parameters = {"f": 1.5, "big": INT64_MAX, "neg": -3, "nested": [None, {"x": None}], "s": 'q":null\\'}
    claim["spec"]["devices"]["config"][0]["opaque"]["parameters"] = parameters
    out, _ = decode_object(rt_of("resource.k8s.io", "ResourceClaim"), orjson.dumps(claim))
    assert out["spec"]["devices"]["config"][0]["opaque"]["parameters"] == parameters
    slice_ = samples.resource_slice(devices=1)
    capacity = {k: {"value": v} for k, v in {"a": 1, "b": 2.5, "c": "500m", "d": " 1Gi "}.items()}
    slice_["spec"]["devices"][0]["basic"]["capacity"] = capacity
    out, _ = decode_object(rt_of("resource.k8s.io", "ResourceSlice"), orjson.dumps(slice_))
    assert out["spec"]["devices"][0]["basic"]["capacity"] == capacity


# --------------------------------------------------------------------------
# every field of every kind


@pytest.mark.parametrize(("group", "kind"), KINDS, ids=[k for _, k in KINDS])
def test_object_with_every_field_round_trips(group: str, kind: str) -> None:
    rt = rt_of(group, kind)
    cls = model_of(group, kind)
    obj = {**samples.exemplar(cls), "apiVersion": rt.api_version, "kind": kind}
    present = set(_paths(obj, struct_node(cls), ""))
    every = {path for path, _ in walk_fields(cls)}
    assert every <= present, sorted(every - present)[:10]
    out, warnings = decode_object(rt, orjson.dumps(obj))
    assert (out, warnings) == (obj, [])
    assert from_model(to_model(rt, obj)) == obj


def test_binding_with_every_field_round_trips() -> None:
    obj = {**samples.exemplar(core_v1.Binding), "apiVersion": "v1", "kind": "Binding"}
    assert {p for p, _ in walk_fields(core_v1.Binding)} <= set(_paths(obj, struct_node(core_v1.Binding), ""))
    assert from_model(msgspec.convert(obj, type=core_v1.Binding)) == obj
    assert from_model(msgspec.convert(samples.binding(), type=core_v1.Binding)) == samples.binding()


def _paths(value: Any, node: Node, path: str) -> list[str]:
    """The schema paths present in ``value`` (``[]`` for list items, ``.*`` for map values)."""
    out: list[str] = []
    if isinstance(node, StructNode) and isinstance(value, dict):
        for key, item in value.items():
            spec = node.fields[key]
            child = f"{path}.{key}" if path else key
            out.append(child)
            out += _paths(item, spec.node, child)
    elif isinstance(node, ListNode) and isinstance(value, list):
        for item in value:
            out.append(path + "[]")
            out += _paths(item, node.item, path + "[]")
    elif isinstance(node, MapNode) and isinstance(value, dict):
        for item in value.values():
            out.append(path + ".*")
            out += _paths(item, node.value, path + ".*")
    return out


def test_typed_access_reads_kubernetes_fields() -> None:
    claim = to_model(rt_of("resource.k8s.io", "ResourceClaim"), samples.resource_claim())
    assert isinstance(claim, resource_hub.ResourceClaim)
    assert claim.spec is not None and claim.spec.devices is not None and claim.spec.devices.requests
    request = claim.spec.devices.requests[0]
    assert (request.device_class_name, request.allocation_mode, request.count) == ("gpu.example.com", "ExactCount", 2)
    assert claim.status is not None and claim.status.allocation is not None
    assert claim.status.allocation.devices is not None and claim.status.allocation.devices.results
    assert claim.status.allocation.devices.results[1].device == "gpu-1"
    slice_ = to_model(rt_of("resource.k8s.io", "ResourceSlice"), samples.resource_slice(devices=2))
    assert isinstance(slice_, resource_hub.ResourceSlice)
    assert slice_.spec is not None and slice_.spec.devices is not None
    basic = slice_.spec.devices[1].basic
    assert basic is not None and basic.attributes is not None
    assert basic.attributes["index"].int_value == 1
    assert basic.attributes["driverVersion"].version == "1.0.0"
    node = to_model(rt_of("", "Node"), samples.node())
    assert isinstance(node, core_v1.Node)
    assert node.spec is not None and node.spec.pod_cidr == "10.244.1.0/24"
    assert node.status is not None and node.status.daemon_endpoints is not None
    assert node.status.daemon_endpoints.kubelet_endpoint is not None
    assert node.status.daemon_endpoints.kubelet_endpoint.port == 10250


def test_typed_model_edits_encode_back_to_wire_names() -> None:
    rt = rt_of("", "Pod")
    pod = to_model(rt, samples.pod())
    assert isinstance(pod, core_v1.Pod) and pod.status is not None
    pod.status.resource_claim_statuses = [core_v1.PodResourceClaimStatus(name="gpu", resource_claim_name="x-gpu")]
    pod.status.host_ip = "10.0.0.12"
    out = from_model(pod)
    assert out["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": "x-gpu"}]
    assert out["status"]["hostIP"] == "10.0.0.12"


# --------------------------------------------------------------------------
# property-based: random objects drawn from the schema

_TEXT = st.text(st.characters(codec="utf-8"), max_size=8) | st.sampled_from(
    ['":null', '"', "\\", ":", "\\u003a", "a:b", ""]
)
_KEYS = st.text(string.ascii_letters + string.digits + "./-_:", min_size=1, max_size=10)
_JSON: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(INT64_MIN, INT64_MAX)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
_QUANTITY_STRINGS = st.builds(
    lambda sign, whole, frac, suffix: f"{sign}{whole}{frac}{suffix}",
    st.sampled_from(["", "+", "-"]),
    st.integers(0, 10**6).map(str),
    st.sampled_from(["", ".5", ".", ".125"]),
    st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E", "e3", "E-2"]),
)
_TIMES = st.datetimes().map(lambda d: f"{d.year:04d}-" + d.strftime("%m-%dT%H:%M:%S") + "Z")
_MICRO_TIMES = st.datetimes().map(lambda d: f"{d.year:04d}-" + d.strftime("%m-%dT%H:%M:%S.%f") + "+02:00")


def _scalar(node: ScalarNode) -> st.SearchStrategy[Any]:
    return {
        "string": _TEXT,
        "bool": st.booleans(),
        "int32": st.integers(INT32_MIN, INT32_MAX),
        "int64": st.integers(INT64_MIN, INT64_MAX),
        "float": st.floats(allow_nan=False, allow_infinity=False),
        "quantity": _QUANTITY_STRINGS | st.integers(-(10**9), 10**9) | st.floats(-1e9, 1e9),
        "time": _TIMES,
        "microtime": _MICRO_TIMES,
        "intorstring": st.integers(INT32_MIN, INT32_MAX) | _TEXT,
        "any": _JSON,
    }[node.kind]


MAX_DEPTH = 4


@cache
def _strategy(node: Node, depth: int) -> st.SearchStrategy[Any]:
    if isinstance(node, ScalarNode):
        # A struct field set to null is unset; null is only kept inside raw JSON.
        return _JSON.filter(lambda v: v is not None) if node.kind == "any" else _scalar(node)
    if isinstance(node, ListNode):
        return st.lists(_strategy(node.item, depth), max_size=2) if depth < MAX_DEPTH else st.builds(list)
    if isinstance(node, MapNode):
        return (
            st.dictionaries(_KEYS, _strategy(node.value, depth), max_size=2) if depth < MAX_DEPTH else st.builds(dict)
        )
    if depth >= MAX_DEPTH:
        return st.builds(dict)
    optional = {spec.wire: _strategy(spec.node, depth + 1) for spec in node.fields.values()}
    return st.fixed_dictionaries({}, optional=optional)


def objects(group: str, kind: str) -> st.SearchStrategy[Obj]:
    rt = rt_of(group, kind)
    node = struct_node(model_of(group, kind))
    type_meta = st.fixed_dictionaries({}, optional={"apiVersion": st.just(rt.api_version), "kind": st.just(kind)})
    return st.builds(
        lambda tm, body: {**tm, **{k: v for k, v in body.items() if k not in ("apiVersion", "kind")}},
        type_meta,
        _strategy(node, 0),
    )


PROPERTY = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@pytest.mark.parametrize(("group", "kind"), KINDS, ids=[k for _, k in KINDS])
@PROPERTY
@given(data=st.data())
def test_random_objects_round_trip_exactly(group: str, kind: str, data: st.DataObject) -> None:
    obj = data.draw(objects(group, kind))
    rt = rt_of(group, kind)
    expected = {"apiVersion": rt.api_version, "kind": kind, **obj}
    out, warnings = decode_object(rt, orjson.dumps(obj))
    assert warnings == []
    assert out == expected
    out_dict, _ = decode_object(rt, obj)
    assert out_dict == expected


def _struct_positions(value: Any, node: Node, path: str) -> list[tuple[str, Obj]]:
    """Every object in ``value`` that is a struct (not a map), with its strict-error path."""
    out: list[tuple[str, Obj]] = []
    if isinstance(node, StructNode) and isinstance(value, dict):
        out.append((path, value))
        for key, item in value.items():
            out += _struct_positions(item, node.fields[key].node, f"{path}.{key}" if path else key)
    elif isinstance(node, ListNode) and isinstance(value, list):
        for i, item in enumerate(value):
            out += _struct_positions(item, node.item, f"{path}[{i}]")
    elif isinstance(node, MapNode) and isinstance(value, dict):
        for key, item in value.items():
            out += _struct_positions(item, node.value, f"{path}.{key}")
    return out


@pytest.mark.parametrize(("group", "kind"), KINDS, ids=[k for _, k in KINDS])
@PROPERTY
@given(data=st.data())
def test_an_unknown_field_anywhere_is_reported_with_its_path(group: str, kind: str, data: st.DataObject) -> None:
    obj = data.draw(objects(group, kind))
    rt = rt_of(group, kind)
    positions = _struct_positions(obj, struct_node(model_of(group, kind)), "")
    path, target = data.draw(st.sampled_from(positions))
    target["zzUnknown"] = data.draw(_JSON)
    body = orjson.dumps(obj)
    expected_warning = f'unknown field "{path + "." if path else ""}zzUnknown"'
    with pytest.raises(StatusError) as err:
        decode_object(rt, body)
    assert err.value.code == 400
    assert err.value.status["message"] == (
        f'{kind} in version "{rt.api_version.rpartition("/")[2]}" cannot be handled as a {kind}: '
        f"strict decoding error: {expected_warning}"
    )
    del target["zzUnknown"]
    out, warnings = decode_object(rt, body, field_validation="Warn")
    assert warnings == [expected_warning]
    assert out == {"apiVersion": rt.api_version, "kind": kind, **obj}
    out, warnings = decode_object(rt, body, field_validation="Ignore")
    assert warnings == []
    assert out == {"apiVersion": rt.api_version, "kind": kind, **obj}


# --------------------------------------------------------------------------
# the fast-path patterns agree with the Go-faithful slow-path parsers

_QUANTITY_ALPHABET = "0123456789+-.eEinumkKMGTPx "


@settings(max_examples=500, deadline=None)
@given(text=st.text(_QUANTITY_ALPHABET, max_size=8) | _QUANTITY_STRINGS)
def test_quantity_pattern_accepts_exactly_what_parse_quantity_accepts(text: str) -> None:
    matched, valid = bool(re.search(QUANTITY_PATTERN, text)), quantity_error(text) is None
    assert not matched or valid, text  # the fast path never lets a malformed quantity through
    if not _LONG_EXPONENT.search(text):  # longer exponents are left to the exact parser on purpose
        assert matched == valid, text


_LONG_EXPONENT = re.compile(r"[eE]\+?0*[1-9][0-9]{3}|[eE]-0*[1-9][0-9]{18}")


@settings(max_examples=500, deadline=None)
@given(
    text=st.builds(
        lambda y, mo, d, h, mi, s, frac, zone: f"{y}-{mo}-{d}T{h}:{mi}:{s}{frac}{zone}",
        st.sampled_from(["2024", "2023", "1900", "2000", "0000", "24"]),
        st.sampled_from(["01", "02", "12", "13", "00", "2"]),
        st.sampled_from(["01", "28", "29", "30", "31", "32", "00", "9"]),
        st.sampled_from(["00", "9", "23", "24", "19"]),
        st.sampled_from(["00", "59", "60", "5"]),
        st.sampled_from(["00", "59", "60"]),
        st.sampled_from(["", ".1", ".123456", ",123456", ".", ".1234567"]),
        st.sampled_from(["Z", "z", "+01:00", "-24:00", "+25:00", "+01:61", "+0100", "", "Zx", "+01:60"]),
    )
)
def test_time_patterns_accept_exactly_what_go_time_parse_accepts(text: str) -> None:
    assert bool(re.search(RFC3339_PATTERN, text)) == (time_error(text, micro=False) is None), text
    assert bool(re.search(RFC3339_MICRO_PATTERN, text)) == (time_error(text, micro=True) is None), text


def _json_with_duplicate(value: Any, target: Obj, key: str, again: Any) -> str:
    """JSON text of ``value`` where the object ``target`` (by identity) repeats ``key`` with ``again``."""
    if isinstance(value, dict):
        items = [f"{orjson.dumps(k).decode()}:{_json_with_duplicate(v, target, key, again)}" for k, v in value.items()]
        if value is target:
            items.append(f"{orjson.dumps(key).decode()}:{orjson.dumps(again).decode()}")
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_json_with_duplicate(v, target, key, again) for v in value) + "]"
    return orjson.dumps(value).decode()


@pytest.mark.parametrize(("group", "kind"), KINDS, ids=[k for _, k in KINDS])
@PROPERTY
@given(data=st.data())
def test_a_duplicate_key_anywhere_is_reported_with_its_path(group: str, kind: str, data: st.DataObject) -> None:
    obj = data.draw(objects(group, kind))
    rt = rt_of(group, kind)
    positions = [(p, t) for p, t in _struct_positions(obj, struct_node(model_of(group, kind)), "") if t]
    if not positions:
        return
    path, target = data.draw(st.sampled_from(positions))
    key = data.draw(st.sampled_from(sorted(target)))
    again = data.draw(st.sampled_from([target[key], None]))
    body = _json_with_duplicate(obj, target, key, again).encode()
    expected = f'duplicate field "{path + "." if path else ""}{key}"'
    _, warnings = decode_object(rt, body, field_validation="Warn")
    assert expected in warnings
