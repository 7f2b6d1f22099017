"""The protobuf codec's rules: envelope errors, unknown kinds, Go's presence rules, special types, watch frames.

Expectations come from k8s.io/apimachinery v0.37.2: the serializer's error
texts (runtime/serializer/protobuf/protobuf.go), metav1.Time / MicroTime /
Duration, resource.Quantity and intstr.IntOrString's marshalling, and
time.Duration.String() — the golden vectors (test_proto_golden.py) check the
rest against Go itself.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.api import protobuf
from services.api.protobuf import (
    MAGIC,
    ProtobufDecodeError,
    ProtobufEncodeError,
    UnsupportedKindError,
    decode,
    decode_watch_frames,
    encode,
    encode_watch_frame,
    supports,
)
from services.api.protobuf.pools import DESCRIPTORS, message_name, pool_for, pools
from services.api.protobuf.special import SPECIAL, format_duration, format_time, parse_duration, parse_time
from tests.support import proto_corpus, samples, stored_kinds


def _unknown(api_version: str, kind: str, raw: bytes) -> bytes:
    """An envelope built with the runtime.Unknown message class itself."""
    cls = pools()[0].message_class("k8s.io.apimachinery.pkg.runtime.Unknown")
    unknown = cls()
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind, unknown.raw = api_version, kind, raw
    return MAGIC + unknown.SerializeToString()


# ---- what has a message ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("group", "version", "kind"), proto_corpus.served())
def test_every_served_kind_and_its_list_is_supported(group: str, version: str, kind: str) -> None:
    api_version = f"{group}/{version}" if group else version
    assert supports(api_version, kind)
    assert supports(api_version, kind + "List")


@pytest.mark.parametrize(
    ("api_version", "kind", "release"),
    [
        ("resource.k8s.io/v1alpha3", "ResourceClaim", "v0.31.14"),  # gone from k8s.io/api at 1.37
        ("resource.k8s.io/v1alpha3", "PodSchedulingContext", "v0.31.14"),
        ("resource.k8s.io/v1", "ResourceClaim", "v0.37.2"),
        ("resource.k8s.io/v1beta2", "DeviceTaintRule", "v0.37.2"),
        ("v1", "Pod", "v0.37.2"),
        ("v1", "Status", "v0.37.2"),
        ("meta.k8s.io/v1", "PartialObjectMetadataList", "v0.37.2"),
        ("apidiscovery.k8s.io/v2", "APIGroupDiscoveryList", "v0.37.2"),
    ],
)
def test_the_newest_release_with_the_message_is_used(api_version: str, kind: str, release: str) -> None:
    found = pool_for(api_version, kind)
    assert found is not None and found[0].release == release


@pytest.mark.parametrize(
    ("api_version", "kind", "message"),
    [
        ("v1", "Status", "k8s.io.apimachinery.pkg.apis.meta.v1.Status"),
        ("resource.k8s.io/v1", "DeleteOptions", "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions"),
        (
            "meta.k8s.io/v1beta1",
            "PartialObjectMetadataList",
            "k8s.io.apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList",
        ),
        ("apps/v1", "ReplicaSet", "k8s.io.api.apps.v1.ReplicaSet"),
        ("events.k8s.io/v1", "Event", "k8s.io.api.events.v1.Event"),
        ("v1", "", None),
        ("", "Pod", None),
        ("example.com/v1", "Widget", None),
    ],
)
def test_message_names_follow_kubernetes_packages(api_version: str, kind: str, message: str | None) -> None:
    assert message_name(api_version, kind) == message


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("meta.k8s.io/v1", "Table"),  # Tables have no protobuf: kube-apiserver answers 406, clients fall back to JSON
        ("meta.k8s.io/v1beta1", "Table"),
        ("v1", "Widget"),
        ("example.com/v1", "Widget"),
        ("resource.k8s.io/v1alpha2", "ResourceClaim"),  # no release we load has it
        ("", ""),
    ],
)
def test_kinds_without_a_message_are_refused(api_version: str, kind: str) -> None:
    assert not supports(api_version, kind)
    with pytest.raises(UnsupportedKindError, match="does not implement the protobuf marshalling interface") as e:
        encode({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}})
    assert (e.value.api_version, e.value.kind) == (api_version, kind)


# ---- the envelope ------------------------------------------------------------------------------------------------


def test_the_envelope_is_magic_then_runtime_unknown() -> None:
    lease = samples.lease()
    data = encode(lease)
    assert data.startswith(b"k8s\x00")
    cls = pools()[0].message_class("k8s.io.apimachinery.pkg.runtime.Unknown")
    unknown = cls.FromString(data[4:])
    assert (unknown.typeMeta.apiVersion, unknown.typeMeta.kind) == ("coordination.k8s.io/v1", "Lease")
    assert (unknown.contentEncoding, unknown.contentType) == ("", "")
    assert unknown.raw == protobuf.encode_message(lease)
    assert protobuf.decode_message(unknown.raw, api_version="coordination.k8s.io/v1", kind="Lease") == decode(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty data"),
        (b"k8s", "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"),
        (b'{"kind":"Pod"}', "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"),
        (b"k8s\x01\x0a\x00", "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"),
        (b"k8s\x00", "empty body"),
        (b"k8s\x00\x0a\x05\x0a\x02v1", "unexpected EOF"),  # typeMeta's length runs past the end
        (b"k8s\x00\x12\x00", "Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:\"\", Kind:\"\"}'"),
    ],
)
def test_bytes_that_are_no_envelope_are_refused_in_kubernetes_words(data: bytes, message: str) -> None:
    with pytest.raises(ProtobufDecodeError) as e:
        decode(data)
    assert str(e.value) == message


def test_an_envelope_without_apiversion_is_refused() -> None:
    with pytest.raises(ProtobufDecodeError) as e:
        decode(_unknown("", "Pod", b""))
    assert str(e.value) == "Object 'apiVersion' is missing in 'runtime.TypeMeta{APIVersion:\"\", Kind:\"Pod\"}'"
    assert e.value.kind == "Pod"


def test_an_envelope_naming_an_unknown_kind_is_refused_with_its_kind() -> None:
    with pytest.raises(ProtobufDecodeError) as e:
        decode(_unknown("example.com/v1", "Widget", b""))
    assert str(e.value) == 'no kind "Widget" is registered for version "example.com/v1"'
    assert (e.value.api_version, e.value.kind) == ("example.com/v1", "Widget")


def test_a_message_that_is_not_its_kind_is_refused() -> None:
    # Field 1 (metadata) with a length running past the end.
    with pytest.raises(ProtobufDecodeError, match="unexpected EOF") as e:
        decode(_unknown("v1", "Pod", b"\x0a\x10\x0a"))
    assert (e.value.api_version, e.value.kind) == ("v1", "Pod")


def test_an_empty_message_decodes_to_gos_zero_object() -> None:
    assert decode(_unknown("coordination.k8s.io/v1", "Lease", b"")) == {
        "kind": "Lease",
        "apiVersion": "coordination.k8s.io/v1",
        "metadata": {},
        "spec": {},
    }


@pytest.mark.parametrize(
    ("obj", "text"),
    [
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 5}}, "cannot be encoded"),
        ({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": "main"}}, "cannot be encoded"),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"creationTimestamp": "yesterday"}}, "not RFC 3339"),
        ({"apiVersion": "v1", "kind": "Pod", "spec": {"overhead": {"cpu": [1]}}}, "invalid quantity"),
        ({"apiVersion": "v1", "kind": "Pod", "spec": {"priority": 2**40}}, "cannot be encoded"),
    ],
)
def test_values_of_the_wrong_type_are_refused(obj: dict[str, Any], text: str) -> None:
    with pytest.raises(ProtobufEncodeError, match=text):
        encode(obj)


# ---- Go's presence rules -----------------------------------------------------------------------------------------


def test_a_pointer_set_to_zero_stays_set_and_an_absent_one_stays_absent() -> None:
    rs = stored_kinds.replica_set()
    rs["spec"]["replicas"] = 0  # *int32: 0 is not "unset" (defaulting would make it 1)
    rs["spec"].pop("minReadySeconds", None)
    out = decode(encode(rs))
    assert out["spec"]["replicas"] == 0
    assert "minReadySeconds" not in out["spec"]  # int32 omitempty: Go's JSON leaves a zero out
    del rs["spec"]["replicas"]
    assert "replicas" not in decode(encode(rs))["spec"]


def test_values_without_omitempty_show_their_zero_and_nil_lists_show_null() -> None:
    rs = stored_kinds.replica_set()
    rs["status"] = {}
    out = decode(encode(rs))
    assert out["status"] == {"replicas": 0}  # ReplicaSetStatus.Replicas is `json:"replicas"`
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    spec = decode(encode(pod))["spec"]
    assert spec["containers"] is None  # `json:"containers"` on a nil slice


def test_empty_strings_and_false_are_left_out_where_go_omits_them() -> None:
    pod = samples.pod()
    pod["status"]["reason"] = ""
    pod["spec"]["hostNetwork"] = False
    out = decode(encode(pod))
    assert "reason" not in out["status"]
    assert "hostNetwork" not in out["spec"]


def test_creation_timestamp_is_left_out_when_zero_at_1_37_and_null_at_1_31() -> None:
    claim = proto_corpus._realistic(_row("resource.k8s.io", "ResourceClaim"), "v1")
    assert claim is not None
    del claim["metadata"]["creationTimestamp"]
    assert "creationTimestamp" not in decode(encode(claim))["metadata"]  # omitzero since 1.33
    old = proto_corpus._realistic(_row("resource.k8s.io", "ResourceClaim"), "v1alpha3")
    assert old is not None
    del old["metadata"]["creationTimestamp"]
    assert decode(encode(old))["metadata"]["creationTimestamp"] is None  # 1.31's k8s.io/apimachinery


def _row(group: str, kind: str) -> Any:
    from services.api.types import registry

    row = registry.by_kind(group, kind)
    assert row is not None
    return row


def test_inline_structs_are_flat_in_json() -> None:
    pod = samples.pod()
    volumes = [{"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}}, {"name": "cfg", "configMap": {"name": "c"}}]
    pod["spec"]["volumes"] = volumes
    assert decode(encode(pod))["spec"]["volumes"] == volumes


@pytest.mark.parametrize("obj", [o for _, o in proto_corpus.objects()], ids=[n for n, _ in proto_corpus.objects()])
def test_decoding_what_we_encoded_is_stable(obj: dict[str, Any]) -> None:
    once = decode(encode(obj))
    assert decode(encode(once)) == once


# ---- special types -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds", "nanos", "shown"),
    [
        ("2024-08-13T09:21:07Z", 1723540867, 0, "2024-08-13T09:21:07Z"),
        ("2024-08-13T11:21:07+02:00", 1723540867, 0, "2024-08-13T09:21:07Z"),
        ("2024-08-13T09:21:07.123456789Z", 1723540867, 123456789, "2024-08-13T09:21:07Z"),
        ("1970-01-01T00:00:00Z", 0, 0, None),  # Go reads seconds and nanos 0 as the zero time: null
        ("1969-12-31T23:59:59Z", -1, 0, "1969-12-31T23:59:59Z"),
    ],
)
def test_time_is_rfc3339_in_json_and_seconds_nanos_on_the_wire(
    text: str, seconds: int, nanos: int, shown: str | None
) -> None:
    assert parse_time(text) == (seconds, nanos)
    event = samples.event()
    event["lastTimestamp"] = text
    assert decode(encode(event))["lastTimestamp"] == shown


def test_micro_time_keeps_six_fraction_digits() -> None:
    assert format_time(1723540867, 123456789, micro=True) == "2024-08-13T09:21:07.123456Z"
    assert format_time(1723540867, 0, micro=True) == "2024-08-13T09:21:07.000000Z"
    lease = samples.lease()
    assert decode(encode(lease))["spec"]["renewTime"] == "2024-08-13T09:31:17.123456Z"


@pytest.mark.parametrize(
    ("nanos", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1_000, "1µs"),
        (1_500_000, "1.5ms"),
        (500_000_000, "500ms"),
        (1_500_000_000, "1.5s"),
        (90 * 10**9, "1m30s"),
        (3600 * 10**9, "1h0m0s"),
        (100 * 3600 * 10**9 + 1, "100h0m0.000000001s"),
        (-90 * 10**9, "-1m30s"),
    ],
)
def test_durations_as_gos_time_duration(nanos: int, text: str) -> None:
    assert format_duration(nanos) == text
    assert parse_duration(text) == nanos


@pytest.mark.parametrize("text", ["", "1", "h", "1x", "--1s"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ProtobufEncodeError, match="invalid duration"):
        parse_duration(text)


def test_int_or_string_and_quantities() -> None:
    pdb = stored_kinds.pod_disruption_budget()
    pdb["spec"] = {"minAvailable": 2, "maxUnavailable": "25%"}
    assert decode(encode(pdb))["spec"] == {"minAvailable": 2, "maxUnavailable": "25%"}
    pvc = stored_kinds.persistent_volume_claim()
    pvc["spec"]["resources"]["requests"]["storage"] = 1024  # a JSON number is a quantity too
    assert decode(encode(pvc))["spec"]["resources"]["requests"] == {"storage": "1024"}


def test_raw_extensions_carry_json() -> None:
    claim = samples.resource_claim()
    parameters = {"f": 1.5, "neg": -3, "nested": [None, {"x": None}], "s": 'q":null'}
    claim["spec"]["devices"]["config"][0]["opaque"]["parameters"] = parameters
    out = decode(encode(claim))
    assert out["spec"]["devices"]["config"][0]["opaque"]["parameters"] == parameters


# ---- watch frames ------------------------------------------------------------------------------------------------


def test_watch_frames_split_anywhere() -> None:
    pod, lease = samples.pod(), samples.lease()
    bookmark = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"resourceVersion": "1043", "annotations": {"k8s.io/initial-events-end": "true"}},
    }
    expired = {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": "too old resource version: 5 (12)",
        "reason": "Expired",
        "code": 410,
    }
    stream = b"".join(
        [
            encode_watch_frame("ADDED", pod),
            encode_watch_frame("MODIFIED", lease),
            encode_watch_frame("BOOKMARK", bookmark),
            encode_watch_frame("ERROR", expired),
        ]
    )
    expected = [
        ("ADDED", decode(encode(pod))),
        ("MODIFIED", decode(encode(lease))),
        ("BOOKMARK", decode(encode(bookmark))),
        ("ERROR", decode(encode(expired))),
    ]
    assert decode_watch_frames(stream) == (expected, b"")
    for cut in (0, 1, 3, 4, 5, len(stream) // 2, len(stream) - 1):
        first, rest = decode_watch_frames(stream[:cut])
        second, left = decode_watch_frames(rest + stream[cut:])
        assert (first + second, left) == (expected, b"")
        assert len(rest) < len(stream)


def test_a_frame_is_a_big_endian_length_and_a_watch_event_without_envelope() -> None:
    frame = encode_watch_frame("DELETED", samples.lease())
    size = int.from_bytes(frame[:4], "big")
    assert size == len(frame) - 4
    cls = pools()[0].message_class("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent")
    event = cls.FromString(frame[4:])
    assert event.type == "DELETED"
    assert event.object.raw == encode(samples.lease())


def test_a_frame_holding_garbage_is_refused() -> None:
    with pytest.raises(ProtobufDecodeError, match="unexpected EOF"):
        decode_watch_frames(b"\x00\x00\x00\x02\x0a\x09")
    with pytest.raises(ProtobufDecodeError, match="expected prefix"):
        decode_watch_frames(b"\x00\x00\x00\x07\x12\x05\x0a\x03abc")  # object.raw = "abc"


# ---- the generated descriptors and Go tables agree ---------------------------------------------------------------


def _reachable(pool: Any, name: str, seen: set[str]) -> None:
    if name in seen or name in SPECIAL:
        return
    seen.add(name)
    desc = pool.descriptor(name)
    for fd in desc.fields:
        if fd.message_type is not None:
            target = fd.message_type
            if target.GetOptions().map_entry:
                target = target.fields_by_name["value"].message_type
                if target is None:
                    continue
            _reachable(pool, target.full_name, seen)


@pytest.mark.parametrize(("group", "version", "kind"), proto_corpus.served())
def test_every_message_of_a_served_kind_has_a_go_table_for_every_field(group: str, version: str, kind: str) -> None:
    """A message or field without Go's table entry would silently vanish from both directions."""
    found = pool_for(f"{group}/{version}" if group else version, kind)
    assert found is not None
    pool, name = found
    seen: set[str] = set()
    _reachable(pool, name, seen)
    for message in seen:
        assert message in pool.fields, message
        numbers = {f.number for f in pool.fields[message]}
        assert numbers == {fd.number for fd in pool.descriptor(message).fields}, message


def test_the_manifest_names_the_releases_newest_first() -> None:
    manifest = json.loads((DESCRIPTORS / "manifest.json").read_text())
    releases = [p["k8s.io/api"] for p in manifest["pools"]]
    assert releases == ["v0.37.2", "v0.31.14"]
    assert [p.release for p in pools()] == releases
    for entry in manifest["pools"]:
        assert entry["k8s.io/apimachinery"] == entry["k8s.io/api"]
        assert (DESCRIPTORS / entry["descriptors"]).is_file()
        assert (DESCRIPTORS / entry["fields"]).is_file()


def test_strings_that_are_not_utf8_show_replacement_characters_as_gos_json_does() -> None:
    ns = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "NAME", "labels": {"a": "LABEL"}, "finalizers": ["FIN"]},
    }
    data = encode(ns).replace(b"NAME", b"N\xffME").replace(b"LABEL", b"L\xfeBEL").replace(b"FIN", b"F\xffN")
    meta = decode(data)["metadata"]
    assert meta["name"] == "N\ufffdME"
    assert meta["labels"] == {"a": "L\ufffdBEL"}
    assert meta["finalizers"] == ["F\ufffdN"]
    bad_key = encode(ns).replace(b"\x0a\x01a", b"\x0a\x01\xff")
    with pytest.raises(ProtobufDecodeError):
        decode(bad_key)


# ---- bad input never crashes -------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["Pod", "Namespace", "Lease", "Status"]), raw=st.binary(max_size=200))
def test_any_bytes_decode_or_raise_a_decode_error(kind: str, raw: bytes) -> None:
    api_version = "coordination.k8s.io/v1" if kind == "Lease" else "v1"
    for data in (MAGIC + raw, _unknown(api_version, kind, raw)):
        try:
            out = decode(data)
        except ProtobufDecodeError:
            continue
        orjson.dumps(out)  # what the apiserver does next: JSON-safe all the way down


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=st.dictionaries(
        st.sampled_from(["containers", "nodeName", "priority", "overhead", "volumes", "affinity", "x"]), _json
    )
)
def test_any_json_encodes_or_raises_a_protobuf_error(spec: dict[str, Any]) -> None:
    try:
        encode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
    except protobuf.ProtobufError:
        pass


def test_an_envelope_without_kind_or_apiversion_takes_the_urls() -> None:
    """kube-apiserver's decoder defaults both from the request's group/version/kind (copyKindDefaults)."""
    raw = protobuf.encode_message(samples.lease())
    out = decode(_unknown("", "", raw), default_api_version="coordination.k8s.io/v1", default_kind="Lease")
    assert out == decode(encode(samples.lease()))
    named = decode(_unknown("coordination.k8s.io/v1", "Lease", raw), default_api_version="v1", default_kind="Pod")
    assert (named["apiVersion"], named["kind"]) == ("coordination.k8s.io/v1", "Lease")
    with pytest.raises(ProtobufDecodeError) as e:
        decode(_unknown("", "", raw), default_api_version="coordination.k8s.io/v1")
    assert str(e.value) == "Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:\"\", Kind:\"\"}'"


# ---- bytes assembled from kept encodings (the apiserver encodes each object version once) ----------------------

LISTS = [(n, o) for n, o in proto_corpus.objects() if isinstance(o.get("items"), list)]


@pytest.mark.parametrize("doc", [o for _, o in LISTS], ids=[n for n, _ in LISTS])
def test_a_list_from_its_items_message_bytes_is_the_list_encoded_whole(doc: dict[str, Any]) -> None:
    item_kind = doc["kind"].removesuffix("List")
    # meta.k8s.io/v1beta1's PartialObjectMetadataList holds v1's PartialObjectMetadata (its .proto says so).
    item_version = "meta.k8s.io/v1" if doc["apiVersion"] == "meta.k8s.io/v1beta1" else doc["apiVersion"]
    items = [protobuf.encode_message({**i, "apiVersion": item_version, "kind": item_kind}) for i in doc["items"]]
    head = {k: v for k, v in doc.items() if k != "items"}
    assert protobuf.encode_list_message(head, items) == protobuf.encode_message(doc)
    assert protobuf.enveloped(protobuf.encode_list_message(head, items), **_type(doc)) == protobuf.encode(doc)


def test_lists_are_in_the_corpus() -> None:
    names = {n for n, _ in LISTS}
    assert {
        "core.v1.Pod.list",
        "meta.partial-object-metadata-list",
        "meta.partial-object-metadata-list-v1beta1",
    } <= names


@pytest.mark.parametrize("obj", [o for _, o in proto_corpus.objects()][:40])
def test_envelope_and_frame_around_message_bytes(obj: dict[str, Any]) -> None:
    raw = protobuf.encode_message(obj)
    assert protobuf.enveloped(raw, **_type(obj)) == protobuf.encode(obj)
    assert protobuf.watch_frame("MODIFIED", protobuf.encode(obj)) == protobuf.encode_watch_frame("MODIFIED", obj)
    assert protobuf.decode_watch_frames(protobuf.watch_frame("DELETED", protobuf.encode(obj)))[0][0][0] == "DELETED"


def _type(doc: dict[str, Any]) -> dict[str, str]:
    return {"api_version": doc["apiVersion"], "kind": doc["kind"]}
