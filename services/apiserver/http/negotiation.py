"""Content negotiation: which format a response is written in, how a body is read.

Kubernetes clients steer the response format with ``Accept`` parameters rather
than with URLs: ``as=Table;g=meta.k8s.io;v=v1`` asks for server-side printing
(``kubectl get``), ``as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2`` asks
for aggregated discovery, ``as=PartialObjectMetadata`` for metadata-only
objects (kube-controller-manager's metadata informers and garbage collector).

The rules are kube-apiserver's (``k8s.io/apiserver/pkg/endpoints/handlers/negotiation``):
the ``Accept`` clauses are sorted as goautoneg's ``ParseAccept`` sorts them
(higher ``q`` first, then concrete types before wildcards, otherwise in the
order given) and each is tried against the server's media types in their order
— ``application/json``, ``application/yaml``, ``application/vnd.kubernetes.protobuf``
— so ``*/*`` and ``application/*`` mean JSON. A clause whose ``as=`` the
endpoint cannot produce is skipped: Tables only in JSON or YAML, protobuf only
for kinds that have protobuf messages (`services.api.protobuf`; an endpoint
says so with ``protobuf=``), PartialObjectMetadata in any format. Nothing
acceptable is 406 listing the server's types. Errors are negotiated apart
(`error_format`): the first clause without a transformation, else JSON.

Protobuf is Kubernetes' envelope (``k8s\\x00`` + ``runtime.Unknown``); a watch in
protobuf is length-prefixed ``WatchEvent`` frames. The codec is imported only
when a client asks for protobuf, so JSON requests pay nothing for it.
Request bodies may be JSON, YAML or protobuf (creates, updates, subresources,
DeleteOptions); patches stay JSON/YAML, as in Kubernetes.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

import orjson
import yaml

from services.api.machinery.status import StatusError, bad_request, make_status, unsupported_media_type

Format = Literal["json", "yaml", "protobuf"]
Shape = Literal["object", "table", "discovery", "partial"]

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
PROTOBUF_WATCH = PROTOBUF + ";stream=watch"
DISCOVERY_PARAMS = ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
DISCOVERY_V2 = JSON + DISCOVERY_PARAMS
DISCOVERY_V2_PROTOBUF = PROTOBUF + DISCOVERY_PARAMS

# kube-apiserver's media types in the order it offers them (CodecFactory.SupportedMediaTypes,
# CBOR off as by default), and the ones it streams a watch in.
MEDIA_TYPES: tuple[str, ...] = (JSON, YAML, PROTOBUF)
STREAM_MEDIA_TYPES: tuple[str, ...] = (JSON + ";stream=watch", PROTOBUF_WATCH)
_FORMAT_OF: dict[str, Format] = {JSON: "json", YAML: "yaml", PROTOBUF: "protobuf"}

_YAML_TYPES = frozenset({"application/yaml", "application/x-yaml", "text/yaml"})
_JSON_TYPES = frozenset({"application/json", "*/*", "application/*", ""})

try:  # libyaml when present: an order of magnitude faster
    _YamlLoader: Any = yaml.CSafeLoader
    _YamlDumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _YamlLoader = yaml.SafeLoader
    _YamlDumper = yaml.SafeDumper


@dataclass(frozen=True, slots=True)
class Output:
    """What the client asked the response to be."""

    format: Format = "json"
    shape: Shape = "object"
    include_object: str = "Metadata"  # Table rows: None, Metadata or Object

    @property
    def content_type(self) -> str:
        """The response's ``Content-Type``, as kube-apiserver writes it."""
        if self.shape == "discovery":
            return DISCOVERY_V2_PROTOBUF if self.format == "protobuf" else DISCOVERY_V2
        if self.format == "protobuf":
            return PROTOBUF
        return YAML if self.format == "yaml" else JSON

    @property
    def watch_content_type(self) -> str:
        """A watch stream's ``Content-Type``: plain JSON, or protobuf with ``;stream=watch``."""
        return PROTOBUF_WATCH if self.format == "protobuf" else JSON


DEFAULT_OUTPUT = Output()


@dataclass(frozen=True, slots=True)
class Clause:
    """One ``Accept`` clause as goautoneg parses it."""

    type: str
    subtype: str
    q: float
    params: dict[str, str]


def parse_accept(accept: str) -> list[Clause]:
    """goautoneg's ``ParseAccept``: the clauses, sorted as its insertion sort leaves them.

    Clauses without ``/`` (other than ``*``) or with two are dropped; a parameter
    without ``=`` (or with two) is ignored; a ``q`` that is not a number is 0.
    Go's ``sort.Sort`` is an insertion sort below 12 clauses, so the order is
    reproduced with the same comparison (which is not a strict order: a
    wildcard of higher ``q`` may still follow a concrete type).
    """
    clauses: list[Clause] = []
    for raw_part in accept.split(","):
        part = raw_part.strip(" ")
        media, _, rest = part.partition(";")
        type_, slash, subtype = media.partition("/")
        type_ = type_.strip(" ")
        if not slash:
            if type_ != "*":
                continue
            subtype = "*"
        else:
            if "/" in subtype:
                continue
            subtype = subtype.strip(" ")
        q = 1.0
        params: dict[str, str] = {}
        if rest:
            for param in rest.split(";"):
                key, eq, value = param.partition("=")
                if not eq or "=" in value:
                    continue
                key = key.strip(" ")
                if key == "q":
                    q = _parse_q(value)
                else:
                    params[key] = value.strip(" ")
        clauses.append(Clause(type_, subtype, q, params))
    for i in range(1, len(clauses)):  # Go's insertionSort with acceptSlice.Less
        j = i
        while j > 0 and _less(clauses[j], clauses[j - 1]):
            clauses[j], clauses[j - 1] = clauses[j - 1], clauses[j]
            j -= 1
    return clauses


def _parse_q(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return 0.0


def _less(a: Clause, b: Clause) -> bool:
    if a.q > b.q:
        return True
    if a.type != "*" and b.type == "*":
        return True
    return a.subtype != "*" and b.subtype == "*"


def _offered(clause: Clause) -> list[str]:
    """The server's media types this clause matches, in the server's order.

    Beyond kube-apiserver's exact types, ``+json`` suffixes and the other YAML
    spellings (``text/yaml``, ``application/x-yaml``) are taken as JSON and YAML,
    as draplane always has.
    """
    t, s = clause.type, clause.subtype
    if t == "*" and s == "*":
        return list(MEDIA_TYPES)
    if t == "application" and s == "*":
        return list(MEDIA_TYPES)
    media = f"{t}/{s}".lower()
    if media == PROTOBUF:
        return [PROTOBUF]
    if media in _JSON_TYPES or media.endswith("+json"):
        return [JSON]
    if media in _YAML_TYPES:
        return [YAML]
    return []


def not_acceptable(media_types: tuple[str, ...] = MEDIA_TYPES) -> StatusError:
    """406 worded as kube-apiserver's ``NewNotAcceptableError``."""
    return StatusError(
        make_status(406, "NotAcceptable", f"only the following media types are accepted: {', '.join(media_types)}")
    )


ProtobufCheck = bool | Callable[[], bool]


def negotiate(
    accept: str | None,
    *,
    table: bool = False,
    discovery: bool = False,
    partial: bool = False,
    protobuf: ProtobufCheck = False,
    stream: bool = False,
) -> Output:
    """The response format for ``accept`` on an endpoint that can produce what the flags say.

    ``table``/``discovery``/``partial`` say whether the endpoint can produce that
    shape; ``protobuf`` whether its own objects have protobuf messages (a callable
    is asked only when a protobuf clause is reached, so JSON requests never load
    the codec). ``discovery`` endpoints produce only the aggregated list as a
    transformation. ``stream`` is a watch: YAML cannot be streamed, and the 406
    lists the stream types.
    """
    if not accept:
        return DEFAULT_OUTPUT
    if accept == JSON or accept == "*/*":  # the common cases, without parsing
        return DEFAULT_OUTPUT
    checked: bool | None = protobuf if isinstance(protobuf, bool) else None
    for clause in parse_accept(accept):
        for media in _offered(clause):
            fmt = _FORMAT_OF[media]
            if stream and fmt == "yaml":
                continue
            params = clause.params
            if params.get("stream") and (fmt == "yaml" or params["stream"] != "watch"):
                continue
            if params.get("sv") and (discovery or params["sv"] != "v1"):
                continue
            as_ = params.get("as")
            group, version = params.get("g"), params.get("v")
            if as_ is None and group is None and version is None:  # no transformation
                if fmt == "protobuf":
                    if checked is None:
                        assert callable(protobuf)
                        checked = bool(protobuf())
                    if not checked:
                        continue
                return Output(format=fmt)
            out = _transformed(
                fmt, as_ or "", group or "", version or "", table=table, discovery=discovery, partial=partial
            )
            if out is not None and (fmt != "protobuf" or _transform_in_protobuf(out.shape)):
                return out
    raise not_acceptable(STREAM_MEDIA_TYPES if stream else MEDIA_TYPES)


def _transformed(
    fmt: Format, as_: str, group: str, version: str, *, table: bool, discovery: bool, partial: bool
) -> Output | None:
    """The Output for an ``as=``/``g=``/``v=`` clause this endpoint allows (``AllowsMediaTypeTransform``)."""
    if discovery:
        if as_ == "APIGroupDiscoveryList" and group == "apidiscovery.k8s.io" and version == "v2" and fmt != "yaml":
            return Output(format=fmt, shape="discovery")
        return None
    if group != "meta.k8s.io" or version not in ("v1", "v1beta1"):
        return None
    if as_ == "Table" and table and fmt != "protobuf":  # Table has no protobuf encoding in kube-apiserver
        return Output(format=fmt, shape="table")
    if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList") and partial:
        return Output(format=fmt, shape="partial")
    return None


def _transform_in_protobuf(shape: Shape) -> bool:
    """Whether the codec has the message a transformation produces (asked only for protobuf clauses)."""
    if shape == "discovery":
        return protobuf_supports("apidiscovery.k8s.io/v2", "APIGroupDiscoveryList")
    return protobuf_supports("meta.k8s.io/v1", "PartialObjectMetadataList")


def error_format(accept: str | None) -> Format:
    """The format a Status error is written in (``responsewriters.ErrorNegotiated``).

    Errors are negotiated with the default restrictions: the first clause that
    asks for no transformation, else JSON. Status has a protobuf message, so a
    client that asked for protobuf gets its errors in protobuf.
    """
    if not accept or accept == JSON:
        return "json"
    for clause in parse_accept(accept):
        params = clause.params
        if "as" in params or "g" in params or "v" in params or params.get("sv"):
            continue
        for media in _offered(clause):
            fmt = _FORMAT_OF[media]
            if params.get("stream") and (fmt == "yaml" or params["stream"] != "watch"):
                continue
            return fmt
    return "json"


def protobuf_codec() -> ModuleType:
    """`services.api.protobuf`, imported the first time a client speaks protobuf (JSON requests never load it)."""
    from services.api import protobuf

    return protobuf


def protobuf_supports(api_version: str, kind: str) -> bool:
    """Whether ``kind`` in ``api_version`` has a protobuf message (built-in kinds do, CRDs and Tables do not)."""
    return protobuf_codec().supports(api_version, kind)


def encode(doc: Any, fmt: Format = "json") -> bytes:
    if fmt == "protobuf":
        return bytes(protobuf_codec().encode(doc))
    if fmt == "yaml":
        return yaml.dump(doc, Dumper=_YamlDumper, sort_keys=False, allow_unicode=True).encode()
    return orjson.dumps(doc)


# ----------------------------------------------------------------- request bodies

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "",  # named so the 415 is explicit
}


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


# How deep a request body may nest. Everything a body turns into is stored through
# orjson, which refuses more than 255 levels, and the request and log envelopes add
# levels of their own; typed objects need far fewer (raw JSON is limited to 100
# levels by `services.api.machinery.json_limits`). Kubernetes' decoder stops at 10 000.
MAX_BODY_DEPTH = 200
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1  # the integers orjson encodes


def decode_body(body: bytes, content_type: str | None, *, kind: str = "") -> Any:
    """Decode a JSON, YAML (any ``+json`` / ``+yaml`` type) or protobuf request body.

    ``kind`` is what the endpoint expects, named in a malformed protobuf body's 400.
    Any other type is 415 listing the types kube-apiserver decodes.
    """
    media = media_type(content_type)
    if media == PROTOBUF:
        return decode_protobuf(body, kind=kind)
    if media in ("", "application/json") or media.endswith("+json"):
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            if media == "":
                return _load_yaml(body)
            raise bad_request(f"couldn't get version/kind; json parse error: {exc}") from None
        return check_json_depth(doc)
    if media in _YAML_TYPES or media.endswith("+yaml"):
        return _load_yaml(body)
    raise unsupported_media_type(content_type or "", accepted=MEDIA_TYPES)


def decode_protobuf(body: bytes, *, kind: str) -> dict[str, Any]:
    """A protobuf body as the dict its JSON would decode to, or kube-apiserver's 400.

    Worded as the create handler's ``transformDecodeError`` around the protobuf
    serializer's errors (`services.api.protobuf.ProtobufDecodeError` words them as
    Go does): ``the object provided is unrecognized (must be of type Pod):
    provided data does not appear to be a protobuf message, expected prefix
    [107 56 115 0] ({"kind":...)``, or, once the envelope named a kind,
    ``Foo in version "v1" cannot be handled as a Pod: no kind "Foo" is registered
    for version "v1"``. An envelope naming another served kind decodes, and the
    handler refuses it as it refuses the same JSON.
    """
    codec = protobuf_codec()
    try:
        return codec.decode(body)
    except codec.ProtobufDecodeError as exc:
        if exc.kind:
            version = exc.api_version.rpartition("/")[2]
            raise bad_request(f'{exc.kind} in version "{version}" cannot be handled as a {kind}: {exc}') from None
        raise bad_request(
            f"the object provided is unrecognized (must be of type {kind}): {exc} ({_summary(body)})"
        ) from None


def _summary(data: bytes, limit: int = 30) -> str:
    """apiserver's ``summarizeData``: the body's start, as text when it is JSON, else in hex."""
    if not data:
        return "<empty>"
    head = data[:limit]
    text = head.decode("utf-8", "replace") if data[:1] == b"{" else head.hex()
    return text + " ..." if len(data) > limit else text


def check_json_depth(doc: Any) -> Any:
    """``doc`` itself, or a 400 when it nests deeper than `MAX_BODY_DEPTH`."""
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_BODY_DEPTH:
                raise bad_request("couldn't get version/kind; json parse error: exceeded max depth")
            stack.extend((child, depth + 1) for child in (value.values() if isinstance(value, dict) else value))
    return doc


def _load_yaml(body: bytes) -> Any:
    try:
        doc = yaml.load(body, Loader=_YamlLoader)
    except yaml.YAMLError as exc:
        raise bad_request(f"error converting YAML to JSON: {exc}") from None
    except RecursionError:
        raise bad_request("error converting YAML to JSON: exceeded max depth") from None
    return _yaml_to_json(doc, budget=4 * len(body) + 10_000)


def _yaml_to_json(doc: Any, *, budget: int) -> Any:
    """What sigs.k8s.io/yaml's YAMLToJSON makes of a loaded document, or a 400.

    Map keys that are numbers or booleans become strings, as there; values JSON
    cannot hold (binary, sets, integers beyond 64 bits, unhashable or null keys)
    and nesting beyond `MAX_BODY_DEPTH` are refused instead of failing later.
    Aliases are expanded, so at most ``budget`` values may come out: a small
    document of nested aliases ("billion laughs") is refused as go-yaml does.
    """
    produced = 0

    def convert(value: Any, depth: int) -> Any:
        nonlocal produced
        produced += 1
        if produced > budget:
            raise bad_request("error converting YAML to JSON: yaml: document contains excessive aliasing")
        if isinstance(value, dict):
            if depth > MAX_BODY_DEPTH:
                raise bad_request("error converting YAML to JSON: exceeded max depth")
            return {_yaml_key(k, v): convert(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple):
            if depth > MAX_BODY_DEPTH:
                raise bad_request("error converting YAML to JSON: exceeded max depth")
            return [convert(v, depth + 1) for v in value]
        if isinstance(value, bool) or value is None or isinstance(value, str | float):
            return value
        if isinstance(value, int):
            if not _INT64_MIN <= value <= _UINT64_MAX:
                raise bad_request(f"error converting YAML to JSON: integer {value} is out of range")
            return value
        if isinstance(value, datetime.date):  # explicit !!timestamp; orjson writes it as RFC 3339
            return value.isoformat()
        raise bad_request(f"error converting YAML to JSON: unsupported value of type {type(value).__name__}")

    try:
        return convert(doc, 1)
    except RecursionError:
        raise bad_request("error converting YAML to JSON: exceeded max depth") from None


def _yaml_key(key: Any, value: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        return str(key)
    raise bad_request(
        f"error converting YAML to JSON: unsupported map key of type: {type(key).__name__}, key: {key!r}, "
        f"value: {value!r}"[:1024]
    )
