"""Content negotiation: which format a response is written in, how a body is read.

Kubernetes clients steer the response format with ``Accept`` parameters rather
than with URLs: ``as=Table;g=meta.k8s.io;v=v1`` asks for server-side printing
(``kubectl get``), ``as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2`` asks
for aggregated discovery, ``as=PartialObjectMetadata`` for metadata-only
objects. Protobuf is not spoken; a client that offers JSON as well gets JSON,
one that offers nothing we speak gets 406. Request bodies may be JSON or YAML.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson
import yaml

from services.api.status import StatusError, bad_request, make_status, unsupported_media_type

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


def decode_body(body: bytes, content_type: str | None) -> Any:
    """Decode a JSON or YAML request body (any ``+json`` / ``+yaml`` type)."""
    media = media_type(content_type)
    if media in ("", "application/json") or media.endswith("+json"):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            if media == "":
                return _load_yaml(body)
            raise bad_request(f"couldn't get version/kind; json parse error: {exc}") from None
    if media in _YAML_TYPES or media.endswith("+yaml"):
        return _load_yaml(body)
    raise unsupported_media_type(content_type or "")


def _load_yaml(body: bytes) -> Any:
    try:
        return yaml.load(body, Loader=_YamlLoader)
    except yaml.YAMLError as exc:
        raise bad_request(f"error converting YAML to JSON: {exc}") from None
