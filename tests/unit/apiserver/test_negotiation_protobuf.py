"""Content negotiation with protobuf, as kube-apiserver negotiates (pure, table-driven).

Expectations come from k8s.io/apiserver@v0.37.2 pkg/endpoints/handlers/negotiation/negotiate.go
(``NegotiateMediaTypeOptions``, ``acceptMediaTypeOptions``), handlers/rest.go
(``RequestScope.AllowsMediaTypeTransform``: Table only in JSON/YAML, PartialObjectMetadata in any
format, no protobuf for kinds without messages), responsewriters/writers.go (``ErrorNegotiated``
negotiates errors with the default restrictions), watch.go (stream Content-Types) and
github.com/munnerz/goautoneg's ``ParseAccept`` (clause order).
"""

from __future__ import annotations

from typing import Any

import pytest

from services.api import protobuf
from services.api.machinery.status import StatusError
from services.apiserver.http import negotiation
from services.apiserver.http.negotiation import (
    DISCOVERY_V2,
    DISCOVERY_V2_PROTOBUF,
    PROTOBUF,
    PROTOBUF_WATCH,
    Output,
    decode_body,
    error_format,
    negotiate,
    parse_accept,
)

PB = "application/vnd.kubernetes.protobuf"
TABLE_V1 = "as=Table;v=v1;g=meta.k8s.io"
PARTIAL_LIST = "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
DISCO = "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
# What kube-scheduler and kube-controller-manager send (client-go with protobuf content config).
CLIENT_GO_PROTOBUF = "application/vnd.kubernetes.protobuf, */*"
CLIENT_GO_ACCEPT = "application/vnd.kubernetes.protobuf,application/json"
# client-go's metadata client (metadata.ConfigFor) for lists.
METADATA_LIST = f"{PB};{PARTIAL_LIST},application/json;{PARTIAL_LIST},application/json"


@pytest.fixture
def codec() -> Any:
    return protobuf


# (accept, endpoint flags, expected (format, shape)) — a built-in kind's resource endpoint unless the flags say.
CASES: list[tuple[str | None, dict[str, Any], tuple[str, str]]] = [
    (None, {}, ("json", "object")),
    ("", {}, ("json", "object")),
    ("*/*", {"protobuf": True}, ("json", "object")),  # the server's first type
    ("application/*", {"protobuf": True}, ("json", "object")),
    (PB, {"protobuf": True}, ("protobuf", "object")),
    (CLIENT_GO_PROTOBUF, {"protobuf": True}, ("protobuf", "object")),
    (CLIENT_GO_ACCEPT, {"protobuf": True}, ("protobuf", "object")),
    # A kind without protobuf messages (a CRD's): the protobuf clause is skipped.
    (CLIENT_GO_PROTOBUF, {"protobuf": False}, ("json", "object")),
    (CLIENT_GO_ACCEPT, {"protobuf": False}, ("json", "object")),
    # q orders clauses; at equal q a concrete type goes before a wildcard.
    (f"application/json;q=0.5, {PB}", {"protobuf": True}, ("protobuf", "object")),
    (f"{PB};q=0.1, application/json", {"protobuf": True}, ("json", "object")),
    (f"*/*, {PB}", {"protobuf": True}, ("protobuf", "object")),
    ("*/*;q=0.8, application/yaml", {"protobuf": True}, ("yaml", "object")),
    (f"{PB};q=abc, application/json", {"protobuf": True}, ("json", "object")),  # an unparsable q is 0
    # Table has no protobuf encoding: the clause is skipped, the next one answers.
    (f"{PB};{TABLE_V1},application/json", {"protobuf": True, "table": True}, ("json", "object")),
    (f"application/json;{TABLE_V1},application/json", {"protobuf": True, "table": True}, ("json", "table")),
    (f"application/yaml;{TABLE_V1}", {"table": True}, ("yaml", "table")),
    # PartialObjectMetadata(List) in protobuf: the metadata informers' and garbage collector's lists.
    (METADATA_LIST, {"protobuf": True, "partial": True}, ("protobuf", "partial")),
    (METADATA_LIST, {"protobuf": False, "partial": True}, ("protobuf", "partial")),  # allowed for CRDs too
    (METADATA_LIST, {"protobuf": True}, ("json", "object")),  # an endpoint that cannot: plain JSON
    # Watches: stream=watch is allowed for the types that stream (JSON, protobuf).
    (f"{PB};stream=watch", {"protobuf": True, "stream": True}, ("protobuf", "object")),
    (f"{PB};stream=watch", {"protobuf": True}, ("protobuf", "object")),  # a GET ignores it
    ("application/json;stream=watch", {"stream": True}, ("json", "object")),
    ("application/yaml, application/json", {"stream": True}, ("json", "object")),  # YAML cannot stream
    ("application/json;stream=other, application/yaml", {}, ("yaml", "object")),
    ("application/json;sv=v1", {}, ("json", "object")),
    ("application/json;sv=v2, application/yaml", {}, ("yaml", "object")),
    # Discovery: the aggregated list in JSON or protobuf; other transformations skipped.
    (f"application/json;{DISCO},application/json", {"discovery": True}, ("json", "discovery")),
    (f"{PB};{DISCO},application/json", {"discovery": True, "protobuf": True}, ("protobuf", "discovery")),
    (f"application/json;{DISCO},application/json", {}, ("json", "object")),  # aggregated discovery off
    (f"application/json;{TABLE_V1},application/json", {"discovery": True}, ("json", "object")),
]


@pytest.mark.parametrize(("accept", "flags", "expected"), CASES)
def test_negotiate(accept: str | None, flags: dict[str, Any], expected: tuple[str, str]) -> None:
    out = negotiate(accept, **flags)
    assert (out.format, out.shape) == expected


NOT_ACCEPTABLE: list[tuple[str, dict[str, Any], str]] = [
    (PB, {"protobuf": False}, "application/json, application/yaml, application/vnd.kubernetes.protobuf"),
    (f"{PB};{TABLE_V1}", {"protobuf": True, "table": True}, "application/json, application/yaml, " + PB),
    ("text/plain", {}, "application/json, application/yaml, " + PB),
    (
        "application/json;as=Foo;g=meta.k8s.io;v=v1",
        {"table": True, "partial": True},
        "application/json, application/yaml, " + PB,
    ),
    (
        "application/yaml",
        {"stream": True},
        "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
    ),
]


@pytest.mark.parametrize(("accept", "flags", "listed"), NOT_ACCEPTABLE)
def test_not_acceptable(accept: str, flags: dict[str, Any], listed: str) -> None:
    with pytest.raises(StatusError) as caught:
        negotiate(accept, **flags)
    assert caught.value.code == 406
    assert caught.value.status["reason"] == "NotAcceptable"
    assert caught.value.status["message"] == f"only the following media types are accepted: {listed}"


def test_protobuf_check_is_asked_only_for_a_protobuf_clause() -> None:
    asked: list[int] = []

    def check() -> bool:
        asked.append(1)
        return True

    assert negotiate("application/json, application/vnd.kubernetes.protobuf", protobuf=check).format == "json"
    assert asked == []
    assert negotiate(CLIENT_GO_PROTOBUF, protobuf=check).format == "protobuf"
    assert asked == [1]


@pytest.mark.parametrize(
    ("output", "content_type", "watch_content_type"),
    [
        (Output(), "application/json", "application/json"),
        (Output(format="yaml"), "application/yaml", "application/json"),
        (Output(format="protobuf"), PROTOBUF, PROTOBUF_WATCH),
        (Output(format="protobuf", shape="partial"), PROTOBUF, PROTOBUF_WATCH),
        (Output(shape="discovery"), DISCOVERY_V2, "application/json"),
        (Output(format="protobuf", shape="discovery"), DISCOVERY_V2_PROTOBUF, PROTOBUF_WATCH),
    ],
)
def test_content_types(output: Output, content_type: str, watch_content_type: str) -> None:
    # kube-apiserver: responses carry the serializer's media type (a PartialObjectMetadataList is plain
    # protobuf); aggregated discovery adds ;g=;v=;as= (generateMediaTypeWithGVK); a watch is plain
    # application/json, other types get ;stream=watch (watch.go serveWatchHandler).
    assert output.content_type == content_type
    assert output.watch_content_type == watch_content_type
    assert DISCOVERY_V2_PROTOBUF == f"{PB};{DISCO}"


@pytest.mark.parametrize(
    ("accept", "fmt"),
    [
        (None, "json"),
        ("application/json", "json"),
        (CLIENT_GO_PROTOBUF, "protobuf"),
        ("application/yaml", "yaml"),
        # Errors are negotiated without transformations: a Table or metadata clause is passed over.
        (f"application/json;{TABLE_V1},application/json", "json"),
        (METADATA_LIST, "json"),
        (f"{PB};{PARTIAL_LIST},{PB}", "protobuf"),
        (f"{PB};{PARTIAL_LIST}", "json"),  # nothing left: raw JSON
        ("text/plain", "json"),
        (f"{PB};stream=watch", "protobuf"),
    ],
)
def test_error_format(accept: str | None, fmt: str) -> None:
    assert error_format(accept) == fmt


def test_parse_accept_as_goautoneg() -> None:
    clauses = parse_accept(" application/json;q=0.5 ,*/*, bogus, a/b/c, application/yaml;x;y=1=2;z = 3 ")
    assert [(c.type, c.subtype, c.q, c.params) for c in clauses] == [
        ("application", "yaml", 1.0, {"z": "3"}),
        ("*", "*", 1.0, {}),
        ("application", "json", 0.5, {}),
    ]
    # A lone "*" is */*; Go's insertion sort with its comparison keeps equal clauses in order.
    assert [(c.type, c.subtype) for c in parse_accept("*, text/plain, application/json")] == [
        ("text", "plain"),
        ("application", "json"),
        ("*", "*"),
    ]


# ------------------------------------------------------------------ request bodies


def _bad(body: bytes, kind: str = "Pod") -> str:
    with pytest.raises(StatusError) as caught:
        decode_body(body, "application/vnd.kubernetes.protobuf", kind=kind)
    assert caught.value.code == 400 and caught.value.status["reason"] == "BadRequest"
    return str(caught.value.status["message"])


def test_malformed_protobuf_bodies() -> None:
    # create.go's transformDecodeError around the protobuf serializer's errors; summarizeData shows
    # up to 30 bytes, as text when the body starts with "{", else in hex.
    assert _bad(b'{"apiVersion":"v1","kind":"Pod","metadata":{}}') == (
        "the object provided is unrecognized (must be of type Pod): provided data does not appear to be a "
        'protobuf message, expected prefix [107 56 115 0] ({"apiVersion":"v1","kind":"Pod ...)'
    )
    assert _bad(b"k8s\x00", kind="DeleteOptions") == (
        "the object provided is unrecognized (must be of type DeleteOptions): empty body (6b387300)"
    )
    message = _bad(b"k8s\x00\xff\xff\xff")
    assert message.startswith("the object provided is unrecognized (must be of type Pod): ")
    assert message.endswith("(6b387300ffffff)")


def test_protobuf_body_round_trip(codec: Any) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
    for content_type in ("application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;foo=bar"):
        doc = decode_body(codec.encode(pod), content_type, kind="Pod")
        assert (doc["apiVersion"], doc["kind"], doc["metadata"]) == ("v1", "Pod", pod["metadata"])


def envelope(api_version: str, kind: str, raw: bytes = b"") -> bytes:
    """runtime.Unknown by hand: typeMeta (1: apiVersion, 2: kind), raw (2), after the magic."""

    def field(number: int, value: bytes) -> bytes:
        return bytes([number << 3 | 2, len(value)]) + value

    return b"k8s\x00" + field(1, field(1, api_version.encode()) + field(2, kind.encode())) + field(2, raw)


def test_an_envelope_of_a_kind_nobody_has() -> None:
    # The serializer's "no kind is registered" error once the envelope named a kind (transformDecodeError).
    assert _bad(envelope("v2", "Pod")) == (
        'Pod in version "v2" cannot be handled as a Pod: no kind "Pod" is registered for version "v2"'
    )
    assert _bad(envelope("v1", "Nope"), kind="DeleteOptions") == (
        'Nope in version "v1" cannot be handled as a DeleteOptions: no kind "Nope" is registered for version "v1"'
    )


def test_unknown_body_type_is_415() -> None:
    with pytest.raises(StatusError) as caught:
        decode_body(b"x", "text/plain")
    assert caught.value.code == 415
    # negotiation.NewUnsupportedMediaTypeError over the serializer's types.
    assert caught.value.status["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )


def test_json_needs_no_codec(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> Any:
        raise AssertionError("the codec was loaded for a JSON request")

    monkeypatch.setattr(negotiation, "protobuf_codec", boom)
    assert negotiate("application/json", protobuf=lambda: boom()) == Output()
    assert negotiation.encode({"kind": "Pod"}) == b'{"kind":"Pod"}'
