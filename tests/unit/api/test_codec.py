"""The decode edge: Kubernetes' field validation, its error texts, and conversion at the edge."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.api.machinery.codec import check_field_validation, decode_object, encode_object, from_model, to_model
from services.api.machinery.conversion import (
    INTERNAL,
    ConversionError,
    convert,
    from_storage,
    storage_version,
    to_storage,
)
from services.api.machinery.status import StatusError
from services.api.types import registry
from services.kube.quantity import FORMAT_WRONG as QUANTITY_FORMAT_ERROR
from services.kube.quantity import SUFFIX as QUANTITY_SUFFIX_ERROR
from services.kube.quantity import quantity_error
from services.kube.times import time_error
from tests.support import samples


def registry_kind(group: str, kind: str) -> registry.ResourceType:
    rt = registry.by_kind(group, kind)
    assert rt is not None
    if group:
        # These cases decode bodies sent to a v1alpha3 URL: a row whose default version is v1alpha3.
        rt = dataclasses.replace(rt, version="v1alpha3", stored_as="")
    return rt


def v1alpha3(obj: dict[str, Any]) -> dict[str, Any]:
    """A sample (stored form) as a v1alpha3 client sends it."""
    return from_storage(obj, group="resource.k8s.io", kind=obj["kind"], version="v1alpha3")


CLAIM = registry_kind("resource.k8s.io", "ResourceClaim")
POD = registry_kind("", "Pod")
SLICE = registry_kind("resource.k8s.io", "ResourceSlice")
EVENT = registry_kind("", "Event")

CLAIM_PREFIX = 'ResourceClaim in version "v1alpha3" cannot be handled as a ResourceClaim: '
POD_PREFIX = 'Pod in version "v1" cannot be handled as a Pod: '


def error_of(rt: registry.ResourceType, body: bytes | dict[str, Any], **kwargs: Any) -> StatusError:
    with pytest.raises(StatusError) as err:
        decode_object(rt, body, **kwargs)
    return err.value


# --------------------------------------------------------------------------
# unknown and duplicate fields

MESSY_CLAIM = (
    b'{"apiVersion":"resource.k8s.io/v1alpha3","kind":"ResourceClaim",'
    b'"metadata":{"name":"a","labels":{"x":"1","x":"2"},"name":"b","nmae":"c"},'
    b'"spec":{"foo":1,"devices":{"requests":[{"name":"gpu","deviceClassName":"c"},'
    b'{"name":"nic","deviceClassName":"c","count":2,"count":3,"bar":{"deep":true}}],'
    b'"config":[{"opaque":{"driver":"d","parameters":{"free":"form","dup":1,"dup":2}}}]}},'
    b'"status":{"reservedFor":[{"resource":"pods","Name":"x"}]},"foo":true}'
)
MESSY_ERRORS = [
    'duplicate field "metadata.labels.x"',
    'duplicate field "metadata.name"',
    'unknown field "metadata.nmae"',
    'unknown field "spec.foo"',
    'duplicate field "spec.devices.requests[1].count"',
    'unknown field "spec.devices.requests[1].bar"',
    'unknown field "status.reservedFor[0].Name"',
    'unknown field "foo"',
]


def test_strict_rejects_with_every_unknown_and_duplicate_field_in_document_order() -> None:
    err = error_of(CLAIM, MESSY_CLAIM, field_validation="Strict")
    assert err.code == 400
    assert err.reason == "BadRequest"
    assert err.status["message"] == CLAIM_PREFIX + "strict decoding error: " + ", ".join(MESSY_ERRORS)
    assert err.status["kind"] == "Status" and err.status["status"] == "Failure"


def test_warn_returns_the_same_texts_as_warnings_and_keeps_the_last_duplicate() -> None:
    out, warnings = decode_object(CLAIM, MESSY_CLAIM, field_validation="Warn")
    assert warnings == MESSY_ERRORS
    assert out["metadata"] == {"name": "b", "labels": {"x": "2"}}
    assert "foo" not in out and "foo" not in out["spec"]
    assert out["spec"]["devices"]["requests"][1] == {"name": "nic", "deviceClassName": "c", "count": 3}
    # Raw JSON (RawExtension) is not checked; its last duplicate wins like everywhere else.
    assert out["spec"]["devices"]["config"][0]["opaque"]["parameters"] == {"free": "form", "dup": 2}
    assert out["status"] == {"reservedFor": [{"resource": "pods"}]}


def test_ignore_drops_silently() -> None:
    warned, _ = decode_object(CLAIM, MESSY_CLAIM, field_validation="Warn")
    out, warnings = decode_object(CLAIM, MESSY_CLAIM, field_validation="Ignore")
    assert warnings == []
    assert out == warned


def test_field_names_are_case_sensitive() -> None:
    err = error_of(POD, b'{"metadata":{"Name":"x"},"spec":{"NodeName":"n"}}')
    assert (
        err.status["message"]
        == POD_PREFIX + 'strict decoding error: unknown field "metadata.Name", unknown field "spec.NodeName"'
    )


def test_unknown_fields_in_maps_of_structs_and_nested_lists() -> None:
    body = {
        "spec": {
            "driver": "d",
            "devices": [{"name": "a", "basic": {"attributes": {"model": {"string": "x", "float": 1.5}}}}],
            "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "op": "In"}]}]},
        }
    }
    err = error_of(SLICE, body)
    assert err.status["message"].endswith(
        'strict decoding error: unknown field "spec.devices[0].basic.attributes.model.float", '
        'unknown field "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].op"'
    )


def test_the_strict_error_list_is_capped_at_100() -> None:
    body = {"metadata": {"name": "x"}, **{f"field{i:03d}": i for i in range(150)}}
    _, warnings = decode_object(POD, body, field_validation="Warn")
    assert len(warnings) == 100
    assert warnings[0] == 'unknown field "field000"' and warnings[-1] == 'unknown field "field099"'


def test_same_unknown_field_is_reported_once() -> None:
    _, warnings = decode_object(POD, b'{"foo":1,"foo":2,"spec":{"bar":1,"bar":2}}', field_validation="Warn")
    assert warnings == ['unknown field "foo"', 'unknown field "spec.bar"']


@pytest.mark.parametrize(
    "body",
    [
        b'{"metadata":{"name":"a","name":"a"}}',
        b'{"metadata":{"name":null,"name":"a"}}',
        b'{"metadata":{"name":"a","name":null}}',
        b'{"metadata":{"name" :"a","name":"b"}}',
        b'{"metadata":{"name":"a\\u003a","name":"b"}}',
        b'{"spec":{"nodeName":"a"},"spec":{"nodeName":"a"}}',
        b'{"metadata":{"name":"a","name":"b"},"spec":{"overhead":{"cpu":"1"}}, "status": {"message": "x\\":null"}}',
    ],
)
def test_duplicates_are_never_missed_by_the_fast_path(body: bytes) -> None:
    err = error_of(POD, body)
    assert "duplicate field" in err.status["message"]


def test_kubectl_and_go_client_bodies_decode() -> None:
    # A Go client sends zero timestamps as null and empty structs as {}.
    body = (
        b'{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","creationTimestamp":null},'
        b'"spec":{"containers":[{"name":"c","image":"i","resources":{}}]},"status":{}}'
    )
    out, warnings = decode_object(POD, body)
    assert warnings == []
    assert out == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {}}]},
        "status": {},
    }
    # kubectl pretty-prints with a space after the colon and non-ASCII escaped.
    pretty = orjson.dumps(
        {"metadata": {"name": "p", "annotations": {"a": "caf\u00e9 : x"}}}, option=orjson.OPT_INDENT_2
    )
    out, _ = decode_object(POD, pretty.replace("é".encode(), b"\\u00e9"))
    assert out["metadata"]["annotations"] == {"a": "café : x"}


def test_null_list_items_and_map_values_become_zero_values_as_in_go() -> None:
    body = b'{"metadata":{"labels":{"a":null},"finalizers":[null,"f"]},"spec":{"containers":[null]}}'
    out, _ = decode_object(POD, body)
    assert out["metadata"] == {"labels": {"a": ""}, "finalizers": ["", "f"]}
    assert out["spec"] == {"containers": [{}]}


def test_null_body_is_an_empty_object() -> None:
    out, _ = decode_object(POD, b"null")
    assert out == {"apiVersion": "v1", "kind": "Pod"}


# --------------------------------------------------------------------------
# type errors, quantities, timestamps


@pytest.mark.parametrize(
    ("rt", "body", "detail"),
    [
        (
            CLAIM,
            b'{"spec":{"devices":{"requests":[{"name":5}]}}}',
            "json: cannot unmarshal number into Go struct field"
            " DeviceRequest.spec.devices.requests.name of type string",
        ),
        (
            CLAIM,
            b'{"spec":{"devices":{"requests":[{"count":"2"}]}}}',
            "json: cannot unmarshal string into Go struct field"
            " DeviceRequest.spec.devices.requests.count of type int64",
        ),
        (
            CLAIM,
            b'{"spec":{"devices":{"requests":[{"count":1.5}]}}}',
            "json: cannot unmarshal number 1.5 into Go struct field"
            " DeviceRequest.spec.devices.requests.count of type int64",
        ),
        (
            CLAIM,
            b'{"spec":{"devices":{"requests":[{"adminAccess":"yes"}]}}}',
            "json: cannot unmarshal string into Go struct field"
            " DeviceRequest.spec.devices.requests.adminAccess of type bool",
        ),
        (
            CLAIM,
            b'{"spec":{"devices":"gpu"}}',
            "json: cannot unmarshal string into Go struct field ResourceClaimSpec.spec.devices of"
            " type v1alpha3.DeviceClaim",
        ),
        (
            CLAIM,
            b'{"spec":{"devices":{"requests":{"name":"x"}}}}',
            "json: cannot unmarshal object into Go struct field DeviceClaim.spec.devices.requests"
            " of type []v1alpha3.DeviceRequest",
        ),
        (
            CLAIM,
            b'{"metadata":{"labels":{"a":1}}}',
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            CLAIM,
            b'{"metadata":"x"}',
            "json: cannot unmarshal string into Go struct field ResourceClaim.metadata of type v1.ObjectMeta",
        ),
        (
            POD,
            b'{"spec":{"containers":[{"ports":[{"containerPort":99999999999}]}]}}',
            "json: cannot unmarshal number 99999999999 into Go struct field"
            " ContainerPort.spec.containers.ports.containerPort"
            " of type int32",
        ),
        (
            POD,
            b'{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":true}}}]}}',
            "json: cannot unmarshal bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port"
            " of type int32",
        ),
        (POD, b'{"spec":{"overhead":{"cpu":"1x"}}}', QUANTITY_FORMAT_ERROR),
        (POD, b'{"spec":{"overhead":{"cpu":"1Ki5"}}}', QUANTITY_SUFFIX_ERROR),
        (POD, b'{"spec":{"overhead":{"cpu":true}}}', QUANTITY_FORMAT_ERROR),
        (
            POD,
            b'{"status":{"startTime":"yesterday"}}',
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
        ),
        (
            POD,
            b'{"status":{"startTime":"2023-02-29T00:00:00Z"}}',
            'parsing time "2023-02-29T00:00:00Z": day out of range',
        ),
        (
            POD,
            b'{"status":{"startTime":5}}',
            "json: cannot unmarshal number into Go struct field PodStatus.status.startTime of type string",
        ),
        (
            EVENT,
            b'{"eventTime":"2024-08-13T09:21:07Z"}',
            'parsing time "2024-08-13T09:21:07Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
        ),
    ],
)
def test_type_and_format_errors_are_worded_as_go(rt: registry.ResourceType, body: bytes, detail: str) -> None:
    err = error_of(rt, body)
    assert err.code == 400
    assert err.status["message"] == f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {detail}'
    # The same for dict bodies and in every fieldValidation mode.
    for mode in ("Warn", "Ignore"):
        assert error_of(rt, orjson.loads(body), field_validation=mode).status["message"] == err.status["message"]


def test_a_type_error_wins_over_strict_errors() -> None:
    err = error_of(CLAIM, b'{"foo":1,"spec":{"controller":5}}')
    assert err.status["message"] == CLAIM_PREFIX + (
        "json: cannot unmarshal number into Go struct field ResourceClaimSpec.spec.controller of type string"
    )


def test_a_malformed_quantity_wins_over_an_earlier_type_error() -> None:
    err = error_of(POD, b'{"spec":{"nodeName":1,"overhead":{"cpu":"abc"}}}')
    assert err.status["message"] == POD_PREFIX + QUANTITY_FORMAT_ERROR


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("1", None),
        ("0", None),
        ("-1.5Gi", None),
        ("1e3", None),
        ("1E-3", None),
        ("500m", None),
        (" 2 ", None),
        ("+", None),
        ("Ki", None),
        ("", QUANTITY_FORMAT_ERROR),
        ("1.5.5", QUANTITY_FORMAT_ERROR),
        ("1 Gi", QUANTITY_FORMAT_ERROR),
        ("1ki", QUANTITY_SUFFIX_ERROR),
        ("1e", QUANTITY_SUFFIX_ERROR),
        ("1Mi5", QUANTITY_SUFFIX_ERROR),
    ],
)
def test_quantity_parsing_follows_parse_quantity(text: str, error: str | None) -> None:
    assert quantity_error(text) == error


@pytest.mark.parametrize(
    ("text", "micro", "error"),
    [
        ("2024-08-13T09:21:07Z", False, None),
        ("2024-08-13T9:21:07.5+02:00", False, None),
        ("2024-02-29T00:00:00-24:00", False, None),
        ("2024-08-13T09:21:07.123456Z", True, None),
        ("2024-13-01T00:00:00Z", False, 'parsing time "2024-13-01T00:00:00Z": month out of range'),
        ("2024-01-01T24:00:00Z", False, 'parsing time "2024-01-01T24:00:00Z": hour out of range'),
        (
            "2024-01-01 00:00:00Z",
            False,
            'parsing time "2024-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T"',
        ),
        (
            "2024-01-01T00:00:00",
            False,
            'parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
        ),
        ("2024-01-01T00:00:00Zjunk", False, 'parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk"'),
        (
            "2024-01-01T00:00:00+01:61",
            False,
            'parsing time "2024-01-01T00:00:00+01:61": time zone offset minute out of range',
        ),
    ],
)
def test_time_parsing_follows_go(text: str, micro: bool, error: str | None) -> None:
    assert time_error(text, micro=micro) == error


# --------------------------------------------------------------------------
# apiVersion and kind


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b'{"apiVersion":"v1","kind":"Pod"}',
            'Pod in version "v1" cannot be handled as a ResourceClaim: converting (v1.Pod) to (resource.ResourceClaim):'
            " unknown conversion",
        ),
        (
            b'{"kind":"DeviceClass"}',
            'DeviceClass in version "v1alpha3" cannot be handled as a ResourceClaim: converting (v1alpha3.DeviceClass)'
            " to (resource.ResourceClaim): unknown conversion",
        ),
        (
            b'{"kind":"Claim"}',
            'Claim in version "v1alpha3" cannot be handled as a ResourceClaim: no kind "Claim" is'
            " registered for version"
            ' "resource.k8s.io/v1alpha3" in scheme "pkg/api/legacyscheme/scheme.go:30"',
        ),
        (
            b'{"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceClaim"}',
            "the API version in the data (resource.k8s.io/v1beta1) does not match the expected API version"
            " (resource.k8s.io/v1alpha3)",
        ),
        (
            b'{"apiVersion":"resource.k8s.io/v1beta3","kind":"ResourceClaim"}',
            'ResourceClaim in version "v1beta3" cannot be handled as a ResourceClaim: no kind "ResourceClaim" is'
            ' registered for version "resource.k8s.io/v1beta3" in scheme "pkg/api/legacyscheme/scheme.go:30"',
        ),
        (
            b'{"apiVersion":"a/b/c"}',
            "the object provided is unrecognized (must be of type ResourceClaim): unexpected"
            ' GroupVersion string: a/b/c ({"apiVersion":"a/b/c"})',
        ),
        (
            b'{"apiVersion":5,"kind":"ResourceClaim","metadata":{"name":"claim-with-a-long-name"}}',
            "the object provided is unrecognized (must be of type ResourceClaim): couldn't get version/kind; json parse"
            " error: json: cannot unmarshal number into Go struct field .apiVersion of type string"
            ' ({"apiVersion":5,"kind":"Resour ...)',
        ),
        (
            b'{"apiVersion":"example.com/","kind":"ResourceClaim"}',
            """ResourceClaim in version "" cannot be handled as a ResourceClaim: Object 'apiVersion' is missing in"""
            """ '{"apiVersion":"example.com/","kind":"ResourceClaim"}'""",
        ),
        (
            b'{"metadata":',
            "the object provided is unrecognized (must be of type ResourceClaim): couldn't get version/kind; json parse"
            ' error: unexpected end of JSON input ({"metadata":)',
        ),
        (
            b"[1]",
            "the object provided is unrecognized (must be of type ResourceClaim): couldn't get version/kind; json parse"
            ' error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,'
            'omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b315d)',
        ),
    ],
)
def test_group_version_kind_errors(body: bytes, message: str) -> None:
    err = error_of(CLAIM, body)
    assert (err.code, err.status["message"]) == (400, message)


def test_missing_type_meta_defaults_to_the_url() -> None:
    out, _ = decode_object(CLAIM, b'{"metadata":{"name":"x"}}')
    assert (out["apiVersion"], out["kind"]) == ("resource.k8s.io/v1alpha3", "ResourceClaim")
    # Without a slash the apiVersion is a version of the core group, as in Go's ParseGroupVersion.
    err = error_of(CLAIM, b'{"apiVersion":"resource.k8s.io","kind":"ResourceClaim"}')
    assert 'is registered for version "resource.k8s.io"' in err.status["message"]
    out, _ = decode_object(POD, {"apiVersion": "", "kind": ""})
    assert (out["apiVersion"], out["kind"]) == ("v1", "Pod")


def test_gvk_errors_come_before_field_errors() -> None:
    err = error_of(CLAIM, b'{"kind":"Pod","apiVersion":"v1","spec":{"foo":1}}')
    assert "unknown conversion" in err.status["message"]


# --------------------------------------------------------------------------
# fieldValidation values


def test_field_validation_values() -> None:
    assert check_field_validation("") == "Warn"
    assert [check_field_validation(v) for v in ("Ignore", "Strict", "Warn")] == ["Ignore", "Strict", "Warn"]
    with pytest.raises(StatusError) as err:
        check_field_validation("strict", options_kind="UpdateOptions")
    assert err.value.code == 422
    assert err.value.status["message"] == (
        'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )
    _, warnings = decode_object(POD, b'{"foo":1}', field_validation="")
    assert warnings == ['unknown field "foo"']


# --------------------------------------------------------------------------
# models and encoding helpers


def test_to_model_is_strict_and_from_model_inverts_it() -> None:
    import msgspec

    claim = v1alpha3(samples.resource_claim())
    assert from_model(to_model(CLAIM, claim)) == claim
    with pytest.raises(msgspec.ValidationError):
        to_model(CLAIM, {"spec": {"foo": 1}})
    with pytest.raises(LookupError):
        to_model(CLAIM, claim, version="v2")


def test_encode_object_accepts_dicts_and_models() -> None:
    claim = v1alpha3(samples.resource_claim())
    assert orjson.loads(encode_object(claim)) == claim
    assert orjson.loads(encode_object(to_model(CLAIM, claim))) == claim


def test_bytearray_and_memoryview_bodies() -> None:
    body = orjson.dumps(v1alpha3(samples.resource_claim()))
    expected, _ = decode_object(CLAIM, body)
    assert decode_object(CLAIM, bytearray(body))[0] == expected
    assert decode_object(CLAIM, memoryview(body))[0] == expected


# --------------------------------------------------------------------------
# conversion at the edge


def test_conversion_is_the_identity_for_the_storage_version() -> None:
    claim = samples.resource_claim()
    assert storage_version("resource.k8s.io", "ResourceClaim") == INTERNAL
    assert storage_version("", "Pod") == "v1"
    assert to_storage(claim, group="resource.k8s.io", kind="ResourceClaim", version=INTERNAL) is claim
    assert from_storage(claim, group="resource.k8s.io", kind="ResourceClaim", version=INTERNAL) is claim


def test_conversion_stamps_api_version() -> None:
    out = convert({"kind": "Pod"}, group="", kind="Pod", from_version="v1", to_version="v1")
    assert out == {"kind": "Pod", "apiVersion": "v1"}


def test_unknown_conversion_is_an_error() -> None:
    with pytest.raises(
        ConversionError,
        match=r"converting ResourceClaim from resource.k8s.io/v2 to resource.k8s.io/__internal: unknown conversion",
    ):
        to_storage({}, group="resource.k8s.io", kind="ResourceClaim", version="v2")
    with pytest.raises(ConversionError):
        storage_version("resource.k8s.io", "Widget")


def _to_json(value: Any, duplicate: tuple[int, str, Any] | None, counter: list[int]) -> str:
    """JSON text of ``value``; the object numbered ``duplicate[0]`` gets key ``duplicate[1]`` a second time."""
    if isinstance(value, dict):
        index = counter[0]
        counter[0] += 1
        items = [f"{orjson.dumps(k).decode()}:{_to_json(v, duplicate, counter)}" for k, v in value.items()]
        if duplicate is not None and duplicate[0] == index:
            items.append(f"{orjson.dumps(duplicate[1]).decode()}:{orjson.dumps(duplicate[2]).decode()}")
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_to_json(v, duplicate, counter) for v in value) + "]"
    return orjson.dumps(value).decode()


def _struct_objects(
    value: Any, path: str, node: Any, out: list[tuple[int, str, dict[str, Any], Any]], counter: list[int]
) -> None:
    """Number every JSON object like `_to_json` does, recording the struct (not map, not raw JSON) ones."""
    from services.api.types.schema import ListNode, MapNode, ScalarNode, StructNode

    if isinstance(value, dict):
        index = counter[0]
        counter[0] += 1
        if isinstance(node, StructNode):
            out.append((index, path, value, node))
        for key, item in value.items():
            child = f"{path}.{key}" if path else key
            if isinstance(node, StructNode):
                _struct_objects(item, child, node.fields[key].node, out, counter)
            elif isinstance(node, MapNode):
                _struct_objects(item, child, node.value, out, counter)
            else:
                assert isinstance(node, ScalarNode)
                _struct_objects(item, child, node, out, counter)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _struct_objects(item, f"{path}[{i}]", node.item if isinstance(node, ListNode) else node, out, counter)


@pytest.mark.parametrize(
    ("rt", "make"),
    [(CLAIM, lambda: v1alpha3(samples.resource_claim())), (POD, samples.pod), (EVENT, samples.event)],
    ids=["claim", "pod", "event"],
)
def test_every_duplicated_key_of_a_realistic_object_is_caught(rt: registry.ResourceType, make: Any) -> None:
    from services.api.types import model_for
    from services.api.types.schema import struct_node

    obj = make()
    cls = model_for(rt.group, rt.version, rt.kind)
    assert cls is not None
    positions: list[tuple[int, str, dict[str, Any], Any]] = []
    _struct_objects(obj, "", struct_node(cls), positions, [0])
    checked = 0
    for index, path, target, node in positions:
        for key, value in target.items():
            field = node.fields[key].node
            plain_string = getattr(field, "kind", None) == "string" and key not in ("apiVersion", "kind")
            other = ["other"] if plain_string else []
            for again in [value, None, *other]:
                body = _to_json(obj, (index, key, again), [0]).encode()
                _, warnings = decode_object(rt, body, field_validation="Warn")
                assert f'duplicate field "{path + "." if path else ""}{key}"' in warnings, (path, key, again)
                checked += 1
    assert checked > 90


def test_valid_bodies_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import services.api.machinery.codec as codec

    def no_slow_path(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("slow path taken")

    monkeypatch.setattr(codec, "_decode_slow", no_slow_path)
    for rt, obj in [
        (POD, samples.pod()),
        (CLAIM, v1alpha3(samples.resource_claim())),
        (SLICE, v1alpha3(samples.resource_slice())),
    ]:
        decode_object(rt, orjson.dumps(obj))  # includes nulls (Go clients send "creationTimestamp": null)
        decode_object(rt, orjson.dumps(obj, option=orjson.OPT_INDENT_2))
        decode_object(rt, obj)
    with pytest.raises(AssertionError, match="slow path"):
        decode_object(POD, b'{"metadata":{"name":"a","name":"b"}}')


@pytest.mark.parametrize(
    "body",
    [
        # Strings that look like keys or nulls to a byte count.
        b'{"metadata":{"name":"a","name":"b","annotations":{"x":"v\\": null"}}}',
        b'{"metadata":{"name":"a","name":"b","annotations":{"x":"v\\":null, \\": null"}}}',
        b'{"metadata":{"name":null,"name":"b","annotations":{"x":"\\u0022:null"}}}',
        b'{"metadata":{"name":null,"name":"b","annotations":{"x":"\\u0022: null"}}}',
        b'{"metadata":{"name":"a","name":"b","annotations":{"x":"\\u003a"}}}',
        # Null keys written in unusual ways.
        b'{"metadata":{"name":"a","name":"b","uid":\n null, "namespace" :null}}',
        b'{"metadata":{"name": null,"name":"b"}}',
    ],
)
def test_duplicates_hidden_behind_strings_and_whitespace_are_caught(body: bytes) -> None:
    err = error_of(POD, body)
    assert 'duplicate field "metadata.name"' in err.status["message"]


@pytest.mark.parametrize("depth", [101, 2000, 20000])
@pytest.mark.parametrize("extra", ["", '"foo":1,', '"controller":null,'], ids=["fast", "slow", "nulls"])
def test_raw_json_nested_too_deep_is_a_400(depth: int, extra: str) -> None:
    nested = "[" * depth + "]" * depth
    body = f'{{"spec":{{{extra}"devices":{{"config":[{{"opaque":{{"driver":"d","parameters":{nested}}}}}]}}}}}}'
    err = error_of(CLAIM, body.encode(), field_validation="Warn")
    assert err.code == 400
    assert "couldn't get version/kind; json parse error: exceeded max depth" in err.status["message"]
    deep: Any = []
    for _ in range(depth if depth < 500 else 500):
        deep = [deep]
    with pytest.raises(StatusError, match="exceeded max depth"):
        decode_object(CLAIM, {"metadata": {"managedFields": [{"fieldsV1": deep}]}})


def test_raw_json_up_to_the_limit_is_kept() -> None:
    nested: Any = {"leaf": True}
    for _ in range(99):
        nested = {"n": nested}
    claim = {"spec": {"devices": {"config": [{"opaque": {"driver": "d", "parameters": nested}}]}}}
    out, _ = decode_object(CLAIM, orjson.dumps(claim))
    assert out["spec"] == claim["spec"]
    assert orjson.loads(encode_object(out)) == out


def _claim_with_parameters(parameters: str) -> bytes:
    return f'{{"spec":{{"devices":{{"config":[{{"opaque":{{"driver":"d","parameters":{parameters}}}}}]}}}}}}'.encode()


def test_numbers_the_log_cannot_hold_are_a_400() -> None:
    err = error_of(CLAIM, _claim_with_parameters('{"x":123456789012345678901234567890}'))
    assert err.status["message"] == CLAIM_PREFIX + (
        "json: cannot unmarshal number 123456789012345678901234567890 into Go value of type int64"
    )
    err = error_of(SLICE, b'{"spec":{"devices":[{"name":"d","basic":{"capacity":{"m":-99999999999999999999999}}}]}}')
    assert "cannot unmarshal number -99999999999999999999999" in err.status["message"]
    err = error_of(CLAIM, _claim_with_parameters('{"x":1e400}'))
    assert (
        "json parse error: json: cannot unmarshal number 1e400 into Go value of type float64" in err.status["message"]
    )
    out, _ = decode_object(CLAIM, _claim_with_parameters('{"u":18446744073709551615,"i":-9223372036854775808}'))
    parameters = out["spec"]["devices"]["config"][0]["opaque"]["parameters"]
    assert parameters == {"u": 2**64 - 1, "i": -(2**63)}
    assert orjson.loads(encode_object(out)) == out


def test_invalid_text_becomes_the_replacement_character_as_in_go() -> None:
    out, _ = decode_object(CLAIM, b'{"metadata":{"name":"a\xffb","labels":{"k\\udc00":"\\ud800x"}}}')
    assert out["metadata"] == {"name": "a\ufffdb", "labels": {"k\ufffd": "\ufffdx"}}
    assert orjson.loads(encode_object(out)) == out
    out, _ = decode_object(CLAIM, b'{"metadata":{"name":"\\ud83d\\ude00"}}')
    assert out["metadata"]["name"] == "\U0001f600"


def _field_names() -> list[str]:
    from services.api.types import model_for
    from services.api.types.schema import walk_fields

    names: set[str] = set()
    for rt in registry.RESOURCES:
        cls = model_for(rt.group, rt.version, rt.kind)
        assert cls is not None
        for path, _ in walk_fields(cls):
            names.add(path.replace("[]", "").rsplit(".", 1)[-1])
    return sorted(names - {"*"})


_NAMES = [*_field_names(), "zz", "Name", ""]
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | st.sampled_from(["1Gi", "2024-01-01T00:00:00Z", "v1", "resource.k8s.io/v1alpha3", "ResourceClaim", "Pod"])
)
_DOCS = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_NAMES), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=_DOCS, rt=st.sampled_from(registry.RESOURCES), mode=st.sampled_from(["Strict", "Warn", "Ignore"]))
def test_any_json_body_is_decoded_or_refused_with_a_400(doc: Any, rt: registry.ResourceType, mode: str) -> None:
    for body in (_dumps(doc), doc):
        if not isinstance(body, bytes | dict):
            continue
        try:
            out, warnings = decode_object(rt, body, field_validation=mode)
        except StatusError as err:
            assert err.code == 400, err.status
            continue
        assert (out["apiVersion"], out["kind"]) == (rt.api_version, rt.kind)
        assert mode == "Warn" or warnings == []
        # What was accepted can be stored, and decodes to itself.
        again, more = decode_object(rt, encode_object(out), field_validation="Strict")
        assert (again, more) == (out, [])


def _dumps(doc: Any) -> bytes:
    import json

    return json.dumps(doc).encode()
