"""Content negotiation: which format a response is written in, how a body is read.

Kubernetes clients steer the response format with ``Accept`` parameters rather
than with URLs: ``as=Table;g=meta.k8s.io;v=v1`` asks for server-side printing
(``kubectl get``), ``as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2`` asks
for aggregated discovery, ``as=PartialObjectMetadata`` for metadata-only
objects. Protobuf is not spoken; a client that offers JSON as well gets JSON,
one that offers nothing we speak gets 406. Request bodies may be JSON or YAML.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Literal

import orjson
import yaml

from services.api.machinery.status import StatusError, bad_request, make_status, unsupported_media_type

Format = Literal["json", "yaml"]
Shape = Literal["object", "table", "discovery", "partial"]

JSON = "application/json"
YAML = "application/yaml"
DISCOVERY_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

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
        if self.shape == "discovery":
            return DISCOVERY_V2
        return YAML if self.format == "yaml" else JSON


DEFAULT_OUTPUT = Output()


def _media_types(accept: str) -> list[tuple[str, dict[str, str]]]:
    out: list[tuple[str, dict[str, str]]] = []
    for clause in accept.split(","):
        parts = [p.strip() for p in clause.split(";")]
        if not parts or (not parts[0] and len(parts) == 1):
            continue
        params: dict[str, str] = {}
        for p in parts[1:]:
            if "=" in p:
                k, v = p.split("=", 1)
                params[k.strip().lower()] = v.strip().strip('"')
        out.append((parts[0].lower(), params))
    return out


def not_acceptable() -> StatusError:
    return StatusError(
        make_status(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json, application/yaml",
        )
    )


def negotiate(
    accept: str | None,
    *,
    table: bool = False,
    discovery: bool = False,
    partial: bool = False,
) -> Output:
    """Pick the first acceptable media type in ``accept`` order.

    ``table``/``discovery``/``partial`` say whether the endpoint can produce that
    shape; an ``as=`` the endpoint cannot produce is skipped, as Kubernetes does,
    so the client's plain-JSON fallback is used.
    """
    if not accept:
        return DEFAULT_OUTPUT
    for media, params in _media_types(accept):
        if media in _JSON_TYPES or media.endswith("+json"):
            fmt: Format = "json"
        elif media in _YAML_TYPES:
            fmt = "yaml"
        else:
            continue
        as_ = params.get("as")
        if not as_:
            return DEFAULT_OUTPUT if fmt == "json" else Output(format="yaml")
        group, version = params.get("g", ""), params.get("v", "")
        if as_ == "Table" and table and group == "meta.k8s.io" and version in ("v1", "v1beta1"):
            return Output(format=fmt, shape="table", include_object=params.get("includeobject", ""))
        if (
            as_ == "APIGroupDiscoveryList"
            and discovery
            and group == "apidiscovery.k8s.io"
            and version == "v2"
            and fmt == "json"
        ):
            return Output(shape="discovery")
        if (
            as_ in ("PartialObjectMetadata", "PartialObjectMetadataList")
            and partial
            and group == "meta.k8s.io"
            and version in ("v1", "v1beta1")
        ):
            return Output(format=fmt, shape="partial")
    raise not_acceptable()


def encode(doc: Any, fmt: Format = "json") -> bytes:
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


def decode_body(body: bytes, content_type: str | None) -> Any:
    """Decode a JSON or YAML request body (any ``+json`` / ``+yaml`` type)."""
    media = media_type(content_type)
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
    raise unsupported_media_type(content_type or "")


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
