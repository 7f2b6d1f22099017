"""The decode/encode edge: request bodies in, normalized wire dicts out.

Why this module exists: every write passes through here, so it must be both
exact and fast. `decode_object` turns a body into the dict the rest of
draplane works with, and reproduces what kube-apiserver's decoder does on the
way:

- the body's ``apiVersion``/``kind`` are read (defaulting to the URL's) and
  must name this resource (Kubernetes' messages for "no kind registered",
  "unknown conversion" and "the API version in the data ... does not match");
- unknown and duplicate fields are handled per ``fieldValidation``: ``Strict``
  → 400 BadRequest listing every one of them, ``Warn`` → the same texts as
  warnings (the REST layer sends them as ``Warning: 299 - "..."`` headers),
  ``Ignore`` → dropped silently. Kubernetes' own default, when the query
  parameter is absent, is ``Warn``;
- type errors and malformed quantities or timestamps are 400s worded as Go's
  decoder words them.

Fast path: one msgspec decode into the strict model (unknown fields and types
checked in C), one encode, and a byte-count check for duplicate keys. Only a
body that fails there takes the slow path in `services.api.machinery.decode_errors`,
which walks it to find *all* problems with their paths. Values the log cannot
hold (raw JSON nested over 100 levels, integers beyond 64 bits) are refused
(`services.api.machinery.json_limits`). Measured in ``ops/bench/api_objects.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import msgspec
import orjson

from services.api.machinery import status
from services.api.machinery.decode_errors import (
    JSONSyntaxError,
    Pairs,
    inspect,
    json_kind,
    out_of_range_number,
    parse_pairs,
    type_error_text,
)
from services.api.machinery.field_errors import not_supported
from services.api.machinery.json_limits import Excess, find_excess
from services.api.types import MODELS, K8sStruct, model_for, registry
from services.api.types.registry import ResourceType
from services.api.types.schema import struct_node

__all__ = [
    "FIELD_VALIDATION_VALUES",
    "check_field_validation",
    "decode_object",
    "encode_object",
    "from_model",
    "to_model",
]

FIELD_VALIDATION_VALUES = ("Ignore", "Strict", "Warn")

# Where kube-apiserver's scheme is declared; it appears in "no kind registered" errors.
SCHEME_NAME = "pkg/api/legacyscheme/scheme.go:30"
# Go package of each group's internal types, for "unknown conversion" errors.
_INTERNAL_PACKAGES = MappingProxyType({"": "core", "resource.k8s.io": "resource"})
_INTERPRET_STRUCT = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
)

_DECODERS: Mapping[type[K8sStruct], msgspec.json.Decoder[Any]] = MappingProxyType(
    {cls: msgspec.json.Decoder(cls) for cls in set(MODELS.values())}
)
_ENCODER = msgspec.json.Encoder()
# Escapes that hide a quote or a colon from a byte count (see `_no_duplicates`).
_ESCAPED_QUOTE_OR_COLON = re.compile(rb"\\u00(?:22|3[aA])")


def check_field_validation(value: str, *, options_kind: str = "CreateOptions") -> str:
    """The effective fieldValidation directive: "" means Kubernetes' default, Warn.

    Anything else but Ignore/Strict/Warn is Kubernetes' 422 on the options object.
    """
    if value == "":
        return "Warn"
    if value not in FIELD_VALIDATION_VALUES:
        raise status.invalid(
            "meta.k8s.io", options_kind, "", [not_supported("fieldValidation", value, ["", *FIELD_VALIDATION_VALUES])]
        )
    return value


def decode_object(
    rt: ResourceType,
    body: bytes | bytearray | memoryview | dict[str, Any],
    *,
    field_validation: str = "Strict",
    version: str | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Decode a request body for ``rt`` into its normalized wire dict, plus warnings.

    ``version`` is the API version of the request URL (default: the storage
    version, whose body carries the apiVersion stored records are stamped
    with). The result has ``apiVersion`` and ``kind`` set, passed one round
    trip through the typed model: unknown fields are gone (Warn/Ignore), and
    every value that was set comes back exactly. Raises `StatusError` 400 for
    everything Kubernetes' decoder rejects.
    """
    directive = check_field_validation(field_validation)
    # A view's qualified version (events.k8s.io/v1 of core Events) decodes as the view's own kind.
    rt, url_version = registry.view_for(rt, version or rt.version)
    cls = model_for(rt.group, url_version, rt.kind)
    if cls is None:
        raise status.internal_error(f"no model for {rt.kind} in version {url_version!r}")
    payload = bytes(body) if isinstance(body, bytes | bytearray | memoryview) else body
    # The storage version of resource.k8s.io (the hub) is never on the wire: its bodies say `rt.api_version`.
    url_version = rt.api_version_of(url_version).rpartition("/")[2]
    try:
        out, warnings = _decode(rt, cls, payload, directive, url_version)
        excess = find_excess(cls, out)
    except RecursionError:
        excess = Excess("depth")
    if excess is not None and excess.kind == "depth":
        raise _unrecognized(rt, "couldn't get version/kind; json parse error: exceeded max depth", payload)
    if excess is not None:  # an integer beyond 64 bits in raw JSON or a quantity
        raise status.bad_request(
            f"{rt.kind} in version {_quote(url_version)} cannot be handled as a {rt.kind}: "
            + out_of_range_number(excess.value)
        )
    return out, warnings


def _decode(
    rt: ResourceType, cls: type[K8sStruct], body: bytes | dict[str, Any], directive: str, url_version: str
) -> tuple[dict[str, Any], list[str]]:
    if isinstance(body, bytes):
        try:
            model: Any = _DECODERS[cls].decode(body)
        except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError):
            return _decode_slow(rt, cls, body, directive, url_version)
        _check_kind(rt, url_version, model.api_version, model.kind, body)
        added = _fill_type_meta(model, rt, url_version)
        encoded = _ENCODER.encode(model)
        if not _no_duplicates(body, encoded, added):
            return _decode_slow(rt, cls, body, directive, url_version)
        return msgspec.to_builtins(model), []
    if not isinstance(body, dict):
        raise _unrecognized(rt, "couldn't get version/kind; json parse error: " + _not_an_object(body), body)
    try:
        typed: Any = msgspec.convert(body, type=cls)
    except msgspec.ValidationError:
        return _decode_slow(rt, cls, body, directive, url_version)
    _check_kind(rt, url_version, typed.api_version, typed.kind, body)
    _fill_type_meta(typed, rt, url_version)
    return msgspec.to_builtins(typed), []


def to_model(rt: ResourceType, obj: Mapping[str, Any], *, version: str | None = None) -> K8sStruct:
    """Typed view of a wire dict (strict: raises msgspec.ValidationError on unknown fields or bad types)."""
    cls = model_for(rt.group, version or rt.version, rt.kind)
    if cls is None:
        raise LookupError(f"no model for {rt.kind} in version {version or rt.version!r}")
    return msgspec.convert(obj, type=cls)


def from_model(model: K8sStruct) -> dict[str, Any]:
    """The wire dict of a model (unset fields omitted)."""
    out = msgspec.to_builtins(model)
    assert isinstance(out, dict)
    return out


def encode_object(obj: Mapping[str, Any] | K8sStruct) -> bytes:
    """JSON bytes of a wire dict or a model."""
    if isinstance(obj, K8sStruct):
        return _ENCODER.encode(obj)
    return orjson.dumps(obj)


# --------------------------------------------------------------------------
# fast-path helpers


def _fill_type_meta(model: Any, rt: ResourceType, version: str) -> int:
    """Set apiVersion/kind when the body left them out; return how many were added."""
    added = 0
    if not model.api_version:
        model.api_version = f"{rt.group}/{version}" if rt.group else version
        added += 1
    if not model.kind:
        model.kind = rt.kind
        added += 1
    return added


def _no_duplicates(raw: bytes, encoded: bytes, added: int) -> bool:
    """True when ``raw`` provably has no duplicate keys (False sends the body to the slow path).

    Every key is followed by one colon; all other colons, and every ``":null``
    or ``": null`` that is not a null-valued key, sit inside strings, which
    re-encoding keeps byte for byte (a ``"`` is always escaped, so a string
    cannot fake a key). Re-encoding drops only null-valued fields — each takes
    one colon and one null away — and adds the ``apiVersion``/``kind`` that
    were filled in. So ``colons - nulls`` is the same on both sides unless a
    key occurrence was collapsed: a collapsed occurrence with a non-null value
    always lowers the encoded side. One with a null value does not, but then a
    null went missing; only then is the body parsed again (by orjson, which
    keeps nulls and collapses duplicates) to compare plain colon counts. Other
    whitespace around a colon only makes the counts differ (slow path), and
    ``\\u0022``/``\\u003a`` escapes, which hide a quote or colon from the raw
    count, are left to the slow path too.
    """
    if b"\\u00" in raw and _ESCAPED_QUOTE_OR_COLON.search(raw):
        return False
    colons = raw.count(b":")
    # Pretty-printed null keys (": null"), net of the same text inside strings, which both sides have.
    spaced = raw.count(b'": null') - encoded.count(b'": null')
    raw_nulls = raw.count(b'":null') + spaced
    encoded_nulls = encoded.count(b'":null')
    if colons - raw_nulls != encoded.count(b":") - encoded_nulls - added:
        return False
    if raw_nulls == encoded_nulls:
        return True
    try:
        reparsed = orjson.dumps(orjson.loads(raw))
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # a huge integer, deep nesting: let the slow path decide
        return False
    return reparsed.count(b":") == colons


# --------------------------------------------------------------------------
# slow path


def _decode_slow(
    rt: ResourceType,
    cls: type[K8sStruct],
    body: bytes | dict[str, Any],
    directive: str,
    version: str,
) -> tuple[dict[str, Any], list[str]]:
    if isinstance(body, bytes):
        try:
            doc = parse_pairs(body)
        except JSONSyntaxError as exc:
            raise _unrecognized(rt, f"couldn't get version/kind; json parse error: {exc}", body) from None
    else:
        doc = body
    if doc is None:  # Go decodes `null` into an object as a no-op: an empty object
        doc = Pairs()
    if not isinstance(doc, Pairs | dict):
        raise _unrecognized(rt, "couldn't get version/kind; json parse error: " + _not_an_object(doc), body)
    last = dict(doc) if isinstance(doc, Pairs) else doc
    api_version, kind = last.get("apiVersion"), last.get("kind")
    for name, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            got = type_error_text(json_kind(value), "string", (name,), "")
            raise _unrecognized(rt, f"couldn't get version/kind; json parse error: {got}", body)
    data_kind, data_version = _check_kind(rt, version, api_version, kind, body)

    report = inspect(doc, struct_node(cls))
    prefix = f"{data_kind} in version {_quote(data_version)} cannot be handled as a {rt.kind}: "
    if report.error:
        raise status.bad_request(prefix + report.error)
    warnings: list[str] = []
    if report.strict:
        if directive == "Strict":
            raise status.bad_request(prefix + "strict decoding error: " + ", ".join(report.strict))
        if directive == "Warn":
            warnings = list(report.strict)
    try:
        model = msgspec.convert(report.value, type=cls)
    except msgspec.ValidationError as exc:  # the walker and msgspec disagree: still a 400, never a crash
        raise status.bad_request(prefix + str(exc)) from None
    _fill_type_meta(model, rt, version)
    return from_model(model), warnings


def _check_kind(
    rt: ResourceType, url_version: str, api_version: str | None, kind: str | None, body: Any
) -> tuple[str, str]:
    """Kubernetes' group/version/kind checks; returns the body's (kind, version) after defaulting."""
    group, version = _parse_group_version(rt, api_version or "", body)
    kind = kind or rt.kind
    if not version and not group:
        group, version = rt.group, url_version
    elif not version and group == rt.group:
        version = url_version
    if (group, version, kind) == (rt.group, url_version, rt.kind):
        return kind, version
    prefix = f"{kind} in version {_quote(version)} cannot be handled as a {rt.kind}: "
    if not version:
        text = _body_bytes(body).decode(errors="replace")
        raise status.bad_request(prefix + f"Object 'apiVersion' is missing in '{text}'")
    gv = f"{group}/{version}" if group else version
    other = model_for(group, version, kind)
    if other is None:
        raise status.bad_request(
            prefix + f"no kind {_quote(kind)} is registered for version {_quote(gv)} in scheme {_quote(SCHEME_NAME)}"
        )
    if (group, kind) != (rt.group, rt.kind):
        internal = _INTERNAL_PACKAGES.get(rt.group, rt.group.split(".")[0])
        source = struct_node(other).go_type
        raise status.bad_request(prefix + f"converting ({source}) to ({internal}.{rt.kind}): unknown conversion")
    expected = f"{rt.group}/{url_version}" if rt.group else url_version
    raise status.bad_request(f"the API version in the data ({gv}) does not match the expected API version ({expected})")


def _parse_group_version(rt: ResourceType, value: str, body: Any) -> tuple[str, str]:
    if value in ("", "/"):
        return "", ""
    slashes = value.count("/")
    if slashes == 0:
        return "", value
    if slashes == 1:
        group, version = value.split("/")
        return group, version
    raise _unrecognized(rt, f"unexpected GroupVersion string: {value}", body)


def _unrecognized(rt: ResourceType, message: str, body: Any) -> status.StatusError:
    return status.bad_request(
        f"the object provided is unrecognized (must be of type {rt.kind}): {message} ({_summarize(_body_bytes(body))})"
    )


def _body_bytes(body: Any) -> bytes:
    """The request body as bytes, for error messages (dict bodies are re-encoded)."""
    if isinstance(body, bytes):
        return body
    try:
        return orjson.dumps(body)
    except TypeError:  # orjson.JSONEncodeError, e.g. nested beyond its limit
        return repr(body).encode()


def _summarize(data: bytes, max_length: int = 30) -> str:
    if not data:
        return "<empty>"
    if data[:1] == b"{":
        text = data[:max_length].decode(errors="replace")
        return text + " ..." if len(data) > max_length else text
    return data[:max_length].hex() + " ..." if len(data) > max_length else data.hex()


def _not_an_object(value: Any) -> str:
    return f"json: cannot unmarshal {json_kind(value)} into Go value of type {_INTERPRET_STRUCT}"


def _quote(text: str) -> str:
    return orjson.dumps(text).decode()
